"""The PaddleClas runner against PaddleClas's REAL test_train_inference_python.sh (the upstream
oracle, tests/helpers/upstream.py): every train-type corpus config in the 4 modes and whole_infer
with a GPUID, the same with a failing export, and hypothesis-mutated configs, each run faithful
(every difference explained by a deliberate deviation of runners/paddleclas.py)."""

from __future__ import annotations

import pytest

from helpers.oracle_runs import MUTATION_EXAMPLES, check_mutations, oracle
from helpers.sweep import by_shape, every_kth, rotate
from helpers.upstream import MODES, train_configs
from test_upstream_oracle import upstream  # noqa: F401 (the oracle tests' fixture: the scripts, or a skip)

# Every test needs the upstream scripts: the `upstream` fixture skips (or fails) without them.
pytestmark = [pytest.mark.corpus, pytest.mark.usefixtures("upstream"), pytest.mark.sandbox]

REPO = "PaddleClas"
# klquant_whole_infer: the repo's docs run it; upstream runs the training branch under it.
RUNS = [(mode, None) for mode in MODES] + [("whole_infer", "1"), ("klquant_whole_infer", None)]


def test_every_corpus_config_runs_faithfully_in_every_mode(corpus):
    """A config of each shape, each in one of RUNS in turn (helpers/sweep.py; TIPC_FULL_SWEEP=1:
    every config in every run)."""
    configs = by_shape(train_configs(corpus, REPO))
    assert configs, "no PaddleClas train config in the corpus"
    runs = [(c, m, g, None) for n, c in enumerate(configs) for m, g in rotate(n, RUNS)]
    assert {(m, g) for _, m, g, _ in runs} == set(RUNS), "a mode no config runs in"
    tally = oracle(REPO, runs)
    print("\n" + tally.report(f"{len(configs)} configs, {len(runs)} runs"))
    assert not tally.unfaithful, (
        f"{len(tally.unfaithful)} of {tally.runs} runs are not faithful; first: {tally.unfaithful[0]}"
    )
    assert tally.runs == len(runs) >= len(configs)


def test_every_corpus_config_is_faithful_when_the_export_fails(corpus):
    """Every other config shape (helpers/sweep.py; TIPC_FULL_SWEEP=1: every config)."""
    configs = every_kth(by_shape(train_configs(corpus, REPO)), 2, offset=1)
    tally = oracle(REPO, [(c, "lite_train_lite_infer", None, "export") for c in configs])
    print("\n" + tally.report("failing export"))
    assert not tally.unfaithful, (
        f"{len(tally.unfaithful)} of {tally.runs} runs are not faithful; first: {tally.unfaithful[0]}"
    )


# ---- hypothesis: corpus configs with mutated lines (index among the non-empty lines -> values)

MUTATIONS = {
    3: [
        "0",
        "-1",
        "0,1",
        "0|0,1",
        "-1|0",
        "10",
        "0,1,2,3",
        "192.168.0.1,192.168.0.2;0,1",
        "0|192.168.0.1,192.168.0.2;0,1",
    ],
    4: ["gpu", "cpu", "npu"],
    5: ["null", "amp", "fp16", "null|amp", "fp32|fp16"],
    6: ["lite_train_lite_infer=2|whole_train_whole_infer=120", "3", "=4|lite_train_lite_infer=1", "null"],
    8: ["8", "null", "", "lite_train_lite_infer=2|whole_train_whole_infer=64"],
    9: ["null", "./pretrained/model"],
    14: ["norm_train", "amp_train", "pact_train", "norm_train|pact_train", "to_static_train", "null"],
    23: ["null", "tools/eval.py -c x.yaml"],
    33: ["null", "False", "deploy/slim/quant_post_static.py -c x.yaml -o Global.save_inference_dir=./q_infer/"],
    36: ["./q_infer/", "../inference/", "./a/b/"],
    40: ["True|False", "False", "True", "gpu|cpu", "xpu"],
    41: ["True|False", "False"],
    43: ["1", "1|16", "null"],
    44: ["False", "True|False"],
    45: ["fp32", "True|False", "fp16|int8"],
}


@pytest.mark.slow
def test_mutated_configs_run_faithfully(corpus):
    tally = check_mutations(REPO, train_configs(corpus, REPO), MUTATIONS, RUNS, most=6)
    print("\n" + tally.report("mutated configs"))
    assert tally.runs >= MUTATION_EXAMPLES
