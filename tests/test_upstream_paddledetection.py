"""The PaddleDetection runner against PaddleDetection's REAL test_train_inference_python.sh (the
upstream oracle, tests/helpers/upstream.py): every train-type corpus config in the 4 modes, whole_infer
with GPUID 1 and, where its infer_mode lists kl_quant, klquant_whole_infer; the same with a failing
export or train; and hypothesis-mutated corpus configs: every run faithful (each difference
explained by a deliberate deviation of runners/paddledetection.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from helpers.oracle_runs import MUTATION_EXAMPLES, Tally, check_mutations, oracle
from helpers.sweep import by_shape, rotate
from helpers.upstream import MODES, compare, run_upstream, train_configs, upstream_dir
from test_upstream_oracle import upstream  # noqa: F401 (the oracle's fixture: the scripts, or a skip)

pytestmark = [pytest.mark.corpus, pytest.mark.usefixtures("upstream"), pytest.mark.sandbox]

REPO = "PaddleDetection"
RUNS = [*((mode, None) for mode in MODES), ("whole_infer", "1")]
KLQUANT = ("klquant_whole_infer", "1")


def _runs(config: Path) -> list:
    """The runs of a config: RUNS, and klquant_whole_infer when its infer_mode (line 37) has kl_quant."""
    lines = [line for line in config.read_text(encoding="utf-8").split("\n") if line]
    kl = len(lines) > 37 and "kl_quant" in lines[37].partition(":")[2].split("|")
    return RUNS + [KLQUANT] if kl else RUNS


def _oracle(runs: list) -> Tally:
    return oracle(REPO, runs)


def test_every_corpus_config_runs_faithfully_in_every_mode(corpus):
    """Every config, each in one of RUNS in turn, and klquant_whole_infer wherever its infer_mode
    has kl_quant: a config of each shape (helpers/sweep.py; TIPC_FULL_SWEEP=1: every run of every
    config)."""
    configs = by_shape(train_configs(corpus, REPO))
    assert configs, "the corpus has no PaddleDetection train config"
    runs = []
    for n, config in enumerate(configs):
        extra = _runs(config)[len(RUNS) :]
        runs += [(config, mode, gpuid, None) for mode, gpuid in rotate(n, RUNS) + extra]
    assert {(m, g) for _, m, g, _ in runs} == {*RUNS, KLQUANT}, "a run no config makes"
    tally = _oracle(runs)
    print("\n" + tally.report(f"{len(configs)} corpus configs, {len(runs)} runs"))
    assert tally.runs == len(runs) > len(configs)  # some configs have kl_quant
    assert not tally.unfaithful, f"{len(tally.unfaithful)} unfaithful; first: {tally.unfaithful[0]}"


FAILS = (
    ("lite_train_lite_infer", None, "export"),
    ("whole_infer", "1", "export"),
    ("lite_train_lite_infer", None, "train.py"),
)


def test_every_corpus_config_is_faithful_when_its_export_or_train_fails(corpus):
    """Every config with one of FAILS in turn (helpers/sweep.py; TIPC_FULL_SWEEP=1: each)."""
    configs = train_configs(corpus, REPO)
    runs = [(c, mode, gpuid, fail) for n, c in enumerate(configs) for mode, gpuid, fail in rotate(n, FAILS)]
    tally = _oracle(runs)
    print("\n" + tally.report("failing export (lite_train_lite_infer, whole_infer) and train"))
    assert not tally.unfaithful, f"{len(tally.unfaithful)} unfaithful; first: {tally.unfaithful[0]}"
    assert "skip-after-failed-train" in tally.configs_by_deviation


def test_without_the_op_build_the_dino_config_is_identical(corpus):
    """The one deviation upstream's own commands show (DINO's op build) is all that differs: with
    the build's commands taken out of upstream's record, every run is identical."""
    configs = [c for c in train_configs(corpus, REPO) if "dino_r50_4scale_1x_coco" in c.read_text(encoding="utf-8")]
    assert configs
    for config in configs:
        for mode in MODES[:3]:
            run = run_upstream(upstream_dir() / REPO, config, mode)
            built = [c for c in run.commands if c.argv[1:2] == ("setup_ms_deformable_attn_op.py",)]
            assert built and all(c.cwd == "ppdet/modeling/transformers/ext_op" for c in built)
            rest = dataclasses.replace(run, commands=[c for c in run.commands if c not in built])
            diff = compare(config, REPO, mode, run=rest)
            assert diff.identical, diff.describe()


# ---- hypothesis: corpus configs with lines replaced (index among the non-empty lines -> values)

VALUES = {
    3: [
        "0",
        "-1",
        "0,1",
        "0|0,1",
        "-1|0",
        "1|0,1|-1",
        "0,1,2,3",
        "192.168.0.1,192.168.0.2;0,1",
        "0|10.0.0.1,10.0.0.2;0",
        "1.1.1.1,2.2.2.2;0,1",
        "10|0",
        "-1|12,13",
        "0,1,2,3,4,5,6,7,8",
    ],
    4: ["True", "False", "gpu", "null", ""],
    5: ["null", "amp", "fp16", "null|amp", "amp|fp16"],
    6: ["2", "null", "", "lite_train_lite_infer=1|whole_train_whole_infer=5"],
    8: ["2", "null", "", "lite_train_lite_infer=2|whole_train_whole_infer=16"],
    9: ["null", "https://example.invalid/a.pdparams", ""],
    12: ["null", "worker_num=2"],
    14: [
        "norm_train",
        "pact_train",
        "norm_train|pact_train",
        "fpgm_train|norm_train",
        "to_static_train",
        "norm_train|to_static_train",
        "norm_train||pact_train",
        "null",
    ],
    16: ["null", "tools/train.py -c a.yml --slim_config _template_pact -o"],
    23: ["null", "tools/eval.py -c a.yml -o"],
    24: ["null", "EvalReader.batch_size=1"],
    29: ["null", "tools/export_model.py -c a.yml -o"],
    35: ["null", "tools/post_quant.py -c a.yml --slim_config b.yml -o"],
    37: ["norm", "null", "norm|kl_quant", "kl_quant|norm", "pact", "pact|kl_quant|norm"],
    38: ["False", "True", "False|True", "True|False", ""],
    40: ["gpu|cpu", "cpu", "gpu", "True|False", "xpu"],
    41: ["False", "True|False"],
    42: ["1|4", "4"],
    43: ["1", "1|2", "null"],
    45: ["paddle", "paddle|trt_fp16", "trt_int8|trt_fp32"],
}
MUTATION_RUNS = [*RUNS, KLQUANT]


@pytest.mark.slow
def test_mutated_corpus_configs_run_faithfully(corpus):
    tally = check_mutations(REPO, train_configs(corpus, REPO), VALUES, MUTATION_RUNS)
    print("\n" + tally.report("mutated corpus configs"))
    assert tally.runs >= MUTATION_EXAMPLES
