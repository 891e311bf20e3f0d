"""The paddleseg runner against PaddleSeg's REAL test_train_inference_python.sh (upstream oracle,
tests/helpers/upstream.py): every train-type corpus config in the four modes and whole_infer with a
GPU id and klquant_whole_infer, with a failing export, and hypothesis-mutated configs. Every run must be faithful: each
difference explained by one of the runner's deliberate deviations."""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.oracle_runs import MUTATION_EXAMPLES
from helpers.sweep import by_shape, rotate
from helpers.upstream import MODES, compare, train_configs, upstream_dir

pytestmark = [pytest.mark.corpus, pytest.mark.sandbox]

REPO = "PaddleSeg"
# klquant_whole_infer: upstream runs whole_infer's branch under that name (with its GPU id).
RUNS = [(mode, None) for mode in MODES] + [("whole_infer", "1"), ("klquant_whole_infer", "1")]


@pytest.fixture(scope="module")
def upstream() -> Path:
    path = upstream_dir()
    if not (path / REPO / "test_train_inference_python.sh").is_file():
        if os.environ.get("TIPC_REQUIRE_CORPUS"):
            pytest.fail(f"TIPC_REQUIRE_CORPUS is set but the upstream scripts are missing at {path}")
        pytest.skip(f"upstream scripts not found at {path} (set TIPC_UPSTREAM to ../shared/upstream)")
    return path


def _compare_all(cases: list, upstream: Path) -> list:
    def one(case):
        config, mode, gpuid, fail = case
        return compare(config, REPO, mode, gpuid, fail=fail, upstream=upstream)

    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(one, cases))


def _report(diffs: list, what: str) -> None:
    """Assert every run faithful; print the counts (runs, identical, faithful, per deviation)."""
    unfaithful = [d.describe() for d in diffs if not d.faithful]
    runs, configs = Counter(), {}
    for d in diffs:
        for name in d.explained_by():
            runs[name] += 1
            configs.setdefault(name, set()).add(d.config)
    identical = sum(d.identical for d in diffs)
    print(f"\n{what}: {len(diffs)} runs, {identical} identical, {len(diffs) - len(unfaithful)} faithful")
    for name, n in runs.most_common():
        print(f"  {name}: {n} runs, {len(configs[name])} configs")
    assert not unfaithful, f"{len(unfaithful)} of {len(diffs)} runs unfaithful:\n" + "\n".join(unfaithful[:5])


def test_every_train_config_in_every_mode_is_faithful(corpus, upstream):
    """A config of each shape in two of RUNS, in turn (helpers/sweep.py; TIPC_FULL_SWEEP=1: every
    config in every run)."""
    configs = by_shape(train_configs(corpus, REPO))
    assert configs, "the corpus has PaddleSeg train configs"
    cases = [(c, mode, gpuid, None) for n, c in enumerate(configs) for mode, gpuid in rotate(n, RUNS, per=2)]
    assert {(m, g) for _, m, g, _ in cases} == set(RUNS), "a run no config makes"
    diffs = _compare_all(cases, upstream)
    _report(diffs, f"{REPO}: {len(configs)} configs x {len(RUNS)} runs")


def test_a_failing_export_is_faithful(corpus, upstream):
    """The export fails (and upstream still infers): the same steps, the same failed status lines."""
    configs = train_configs(corpus, REPO)
    diffs = _compare_all([(c, "lite_train_lite_infer", None, "export.py") for c in configs], upstream)
    _report(diffs, f"{REPO}: failing export")
    exporting = [d for d in diffs if any(s.kind == "export" and "export.py" in s.command for s in d.plan.steps)]
    failed = [d for d in diffs if any("Run failed" in line for line in d.upstream.status_lines)]
    assert exporting and len(failed) == len(exporting), "every config that exports failed its export upstream"


def test_a_long_host_name_is_one_node_named_in_the_save_dir(corpus, upstream, tmp_path):
    """`averyveryverylonghostname;0,1`: upstream reads an ip list longer than 15 characters as
    several machines (a launch with --ips) and names the nodes in the save directory, here one:
    `..._nodes_1`. The Plan and the generated bash do the same."""
    from helpers.difftest import Case, Harness

    config = next(c for c in train_configs(corpus, REPO) if c.parent.name == "pp_liteseg_stdc1")
    path = tmp_path / "pp_liteseg_stdc1" / config.name
    path.parent.mkdir()
    path.write_text(_set_value(config.read_text(encoding="utf-8"), 3, "averyveryverylonghostname;0,1"))
    diff = compare(path, REPO, "lite_train_lite_infer", upstream=upstream)
    assert diff.faithful, diff.describe()
    trains = [s for s in diff.plan.steps if s.kind == "train"]
    assert trains and all("--ips=averyveryverylonghostname" in s.command for s in trains)
    assert all("_autocast_" in s.command and "_nodes_1 " in s.command + " " for s in trains), trains[0].command
    mismatches = Harness(tmp_path / "bash").run([Case(str(path), "paddleseg", "lite_train_lite_infer")])
    assert not mismatches, mismatches[0]


# ---- mutated configs


def _set_value(text: str, index: int, value: str) -> str:
    """Replace the value of the script's lines[index] (non-empty lines), keeping its key."""
    rows = text.split("\n")
    positions = [i for i, row in enumerate(rows) if row != ""]
    if index >= len(positions):
        return text
    at = positions[index]
    key = rows[at].split(":", 1)[0]
    rows[at] = f"{key}:{value}"
    return "\n".join(rows)


# gpu_list entries, with those upstream reads by their length in its own way (two-digit ids, 9 ids,
# one id per node, an ip list of 15 characters, an empty entry, one host name of more than 15).
ENTRY = st.sampled_from(
    ["-1", "0", "3", "0,1", "0,1,2,3", "10.0.0.1,10.0.0.2;0,1", "10", "0,1,2,3,4,5,6,7,8", "10.0.0.1,10.0.0.2;0"]
    + ["1.1.1.1,2.2.2.2;0,1", "", "averyveryverylonghostname;0,1"]
)
LISTS = {
    3: st.lists(ENTRY, min_size=1, max_size=3).map("|".join),  # gpu_list
    4: st.sampled_from(["gpu", "cpu", "null", "gpu|gpu", "", "gpu|cpu|gpu"]),  # train device
    5: st.sampled_from(["null", "fp32", "amp", "fp32|amp", "O1"]),  # autocast
    14: st.sampled_from(["norm_train", "norm_train|pact_train", "pact_train|norm_train", "amp_train"]),
    23: st.sampled_from(["null", "tools/val.py --config c.yml"]),  # eval
    29: st.sampled_from(["null", "tools/export.py --config c.yml"]),  # norm export
    38: st.sampled_from(["False", "True", "", "True|False"]),  # whole_infer quant
    40: st.sampled_from(["cpu", "gpu", "cpu|gpu", "True|False", "xpu"]),  # inference device
    41: st.sampled_from(["True", "False", "True|False"]),  # mkldnn
    43: st.sampled_from(["1", "1|2"]),  # batch sizes
    44: st.sampled_from(["False", "True", "False|True"]),  # tensorrt
    45: st.sampled_from(["fp32", "fp16|fp32", "int8", "fp32|int8|fp16"]),  # precisions
}
NULLABLE = [9, 10, 12, 24, 27, 28, 47, 49, 50, 51]


@st.composite
def mutated(draw, configs: list):
    config = draw(st.sampled_from(configs))
    text = config.read_text(encoding="utf-8")
    for index in draw(st.lists(st.sampled_from(sorted(LISTS)), min_size=1, max_size=5, unique=True)):
        text = _set_value(text, index, draw(LISTS[index]))
    if draw(st.booleans()):
        text = _set_value(text, 16, "tools/train.py --config q.yml --slim")  # a pact trainer
    for index in draw(st.lists(st.sampled_from(NULLABLE), max_size=2, unique=True)):
        text = _set_value(text, index, "null")
    mode, gpuid = draw(st.sampled_from(RUNS))
    return config, text, mode, gpuid, draw(st.sampled_from([None, None, "train.py", "export.py"]))


@pytest.mark.slow
def test_mutated_configs_are_faithful(corpus, upstream, tmp_path_factory):
    configs = train_configs(corpus, REPO)
    work = tmp_path_factory.mktemp("seg-mutated")
    seen: Counter = Counter()

    @settings(max_examples=MUTATION_EXAMPLES, deadline=None)
    @given(mutated(configs))
    def check(case):
        config, text, mode, gpuid, fail = case
        path = work / config.parent.name / config.name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        diff = compare(path, REPO, mode, gpuid, fail=fail, upstream=upstream)
        seen["identical" if diff.identical else "faithful" if diff.faithful else "unfaithful"] += 1
        assert diff.faithful, diff.describe()

    check()
    print(f"\n{REPO} mutated configs: {dict(seen)}")
    assert sum(seen.values()) >= MUTATION_EXAMPLES
