"""The PaddleVideo runner against PaddleVideo's REAL test_train_inference_python.sh (the upstream
oracle, tests/helpers/upstream.py): every train-type corpus config in the 4 modes and whole_infer
with GPUID 1 and klquant_whole_infer, the same with a failing export, and hypothesis-mutated corpus configs: every run
faithful (each difference explained by a deliberate deviation of runners/paddlevideo.py)."""

from __future__ import annotations

import pytest

from helpers.oracle_runs import MUTATION_EXAMPLES, Tally, check_mutations, oracle
from helpers.sweep import by_shape, rotate
from helpers.upstream import MODES, train_configs
from test_upstream_oracle import upstream  # noqa: F401 (the oracle's fixture: the scripts, or a skip)

pytestmark = [pytest.mark.corpus, pytest.mark.usefixtures("upstream"), pytest.mark.sandbox]

REPO = "PaddleVideo"
# klquant_whole_infer: upstream reads no line of the config in it (an awk program that prints none).
RUNS = [*((mode, None) for mode in MODES), ("whole_infer", "1"), ("klquant_whole_infer", None)]


def _oracle(runs: list) -> Tally:
    return oracle(REPO, runs)


def test_every_corpus_config_runs_faithfully_in_every_mode(corpus):
    """A config of each shape in three of RUNS, in turn (helpers/sweep.py; TIPC_FULL_SWEEP=1: every
    config in every run)."""
    configs = by_shape(train_configs(corpus, REPO))
    assert configs, "the corpus has no PaddleVideo train config"
    runs = [(config, mode, gpuid, None) for n, config in enumerate(configs) for mode, gpuid in rotate(n, RUNS, per=3)]
    assert {(m, g) for _, m, g, _ in runs} == set(RUNS), "a run no config makes"
    tally = _oracle(runs)
    print("\n" + tally.report(f"{len(configs)} corpus configs, {len(runs)} runs"))
    assert tally.runs == len(runs)
    assert not tally.unfaithful, f"{len(tally.unfaithful)} unfaithful; first: {tally.unfaithful[0]}"


def test_every_corpus_config_is_faithful_when_its_export_or_train_fails(corpus):
    configs = train_configs(corpus, REPO)
    runs = [(c, "lite_train_lite_infer", None, "export") for c in configs]
    runs += [(c, "whole_infer", "1", "export") for c in configs]
    runs += [(c, "lite_train_lite_infer", None, "main.py") for c in configs]  # every trainer runs main.py
    tally = _oracle(runs)
    print("\n" + tally.report("failing export (lite_train_lite_infer, whole_infer) and train"))
    assert not tally.unfaithful, f"{len(tally.unfaithful)} unfaithful; first: {tally.unfaithful[0]}"
    assert "train-status-from-trainer" in tally.configs_by_deviation
    assert "whole-infer-export-status" in tally.configs_by_deviation


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
    ],
    4: ["null|null", "True|False|True", "gpu", ""],
    5: ["null", "fp16", "null|fp16", "fp32|fp16"],
    6: ["2", "null", "", "lite_train_lite_infer=1|whole_train_whole_infer=5"],
    8: ["2", "null", "", "lite_train_lite_infer=2|whole_train_whole_infer=16"],
    9: ["null", "'data/pretrained.pdparams'", ""],
    11: ["null", "./data/videos"],
    12: ["null", "'data/a.list' -o DATASET.valid.file_path='data/b.list'"],
    14: [
        "norm_train",
        "amp_train",
        "pact_train",
        "norm_train|amp_train",
        "to_static_train",
        "norm_train|to_static_train",
        "null",
    ],
    15: ["null", "main.py -c a.yaml --seed 1"],
    16: ["null", "main.py -c pact.yaml"],
    19: ["null", "main.py --amp -c amp.yaml"],
    23: ["null", "main.py --test -c a.yaml"],
    29: ["null", "tools/export_model.py -c a.yaml --save_name inference"],
    36: ["./data/a.pdparams", "./data/a.pdparams|./data/b.pdparams", "model.pdparams", "./data/"],
    37: ["null", "tools/export_model.py -c a.yaml", "null|tools/export_model.py -c b.yaml"],
    38: ["False", "True", "False|True", ""],
    40: ["True|False", "False", "True", "gpu|cpu", "xpu"],
    41: ["True|False", "False"],
    42: ["1|6", "4"],
    43: ["1", "1|2", "null"],
    44: ["False", "True|False"],
    45: ["fp32", "fp32|fp16", "fp16|int8", "int8"],
}


@pytest.mark.slow
def test_mutated_corpus_configs_run_faithfully(corpus):
    tally = check_mutations(REPO, train_configs(corpus, REPO), VALUES, RUNS)
    print("\n" + tally.report("mutated corpus configs"))
    assert tally.runs >= MUTATION_EXAMPLES
