"""The upstream oracle: the REAL upstream test_train_inference_python.sh of each repo
(../shared/upstream, see its README.md) runs a corpus config with a recording interpreter, and
tests/helpers/upstream.py compares what it ran with our Plan.

Here: the harness itself, models (identical to its script), PaddleOCR at seed document 000's time
(runner `ocr`) and today (runner `ocr_head`): every run faithful, i.e. each difference is one of the
runner's deliberate deviations (tipcgen.plan.runner.Deviation), and each deviation is seen. The
slow tier compares hypothesis-generated variants of the corpus configs. The whole picture (every
dialect, every mode, categories of differences) is `python benchmarks/upstream_fidelity.py`.
"""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.sweep import examples
from helpers.upstream import MODES, REPOS, RUNNERS, compare, run_upstream, train_configs, upstream_dir

pytestmark = [pytest.mark.corpus, pytest.mark.sandbox]

# (mode, GPUID) of a suite run: the 4 modes, and whole_infer with a GPU id.
RUNS = [(mode, None) for mode in MODES] + [("whole_infer", "1")]
TRAIN_MODES = [m for m in MODES if m != "whole_infer"]

MODELS_STEP6 = "models/tutorials/mobilenetv3_prod/Step6/mobilenet_v3_small"
OCR_REC = "PaddleOCR/ch_PP-OCRv3_rec"

# The upstream folders whose every corpus run is faithful, and the runner each is compared with.
FAITHFUL = ("PaddleOCR/seed-era", "PaddleOCR/head", "models")


@pytest.fixture(scope="session")
def upstream() -> Path:
    path = upstream_dir()
    if not (path / "COMMITS.tsv").is_file():
        if os.environ.get("TIPC_REQUIRE_CORPUS"):
            pytest.fail(f"TIPC_REQUIRE_CORPUS is set but the upstream scripts are missing at {path}")
        pytest.skip(f"upstream scripts not found at {path} (set TIPC_UPSTREAM to ../shared/upstream)")
    return path


def _rel(path: Path, corpus: Path) -> str:
    return path.relative_to(corpus).as_posix()


def _compare_all(jobs: list, upstream: Path) -> list:
    """compare(config, repo, mode, gpuid, fail) for each job, two at a time."""
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda job: compare(*job, upstream=upstream), jobs))


def _tally(repo: str, diffs: list) -> str:
    """Counts of a batch of runs: identical, faithful, and the deviations that explain them."""
    by = Counter(name for d in diffs for name in d.explained_by())
    configs = {name: len({d.config for d in diffs if name in d.explained_by()}) for name in by}
    shown = ", ".join(f"{name}: {n} runs of {configs[name]} configs" for name, n in sorted(by.items()))
    return (
        f"{repo} (runner {RUNNERS.get(repo, 'default')}): {len(diffs)} runs, "
        f"{sum(d.identical for d in diffs)} identical, {sum(d.faithful for d in diffs)} faithful; {shown or '-'}"
    )


# ---- the harness itself


def _program(argv: tuple) -> str:
    while len(argv) > 2 and argv[0] == "timeout":
        argv = argv[2:]
    return argv[0]


def test_every_upstream_script_runs_offline_and_records_its_steps(corpus, upstream):
    """Each upstream folder runs its first train config to the end, in time, without the network:
    every step is recorded under the config's interpreter and a status log is written."""
    for repo in REPOS:
        config = train_configs(corpus, repo)[0]
        run = run_upstream(upstream / repo, config, "lite_train_lite_infer", timeout=60)
        assert not run.timed_out, f"{repo}: upstream ran over 60 s: {run.stderr[-500:]}"
        assert run.commands, f"{repo}: nothing recorded: {run.stderr[-500:]}"
        python = next(line for line in config.read_text().splitlines() if line.startswith("python:"))
        # the interpreter, under the `timeout 5m` it runs in (PaddleDetection's training), and the
        # `sleep`s between steps (PaddleClas's): recorded, not hidden
        programs = {_program(c.argv) for c in run.commands if c.argv[0] != "sleep"}
        assert programs == {python.split(":", 1)[1].strip()}, repo
        assert len(run.status_logs) == 1 and run.status_lines, f"{repo}: no results_python.log"
        assert "not found" not in run.stderr, f"{repo}: {run.stderr[-500:]}"


def test_describe_names_the_step_and_the_argv_element(corpus, upstream):
    config = corpus / MODELS_STEP6 / "train_infer_python.txt"
    run = run_upstream(upstream / "models", config, "lite_train_lite_infer")
    diff = compare(config, "models", "whole_train_whole_infer", run=run)  # another mode's plan
    assert not diff.identical
    first = diff.first
    assert first is not None and first.aspect == "commands"
    assert first.detail.startswith("step 0 (train): argv[2]: upstream '--output-dir=./test_tipc/output/")
    assert "lite_train_lite_infer" in first.detail.split("plan")[0]
    assert "step 0 (train)" in diff.describe()


def test_a_documented_deviation_is_seen(corpus, upstream):
    """`skip-after-failed-train` (docs/reference/deviations.md): after a failed train we skip that run's eval/export/inference; upstream runs them."""
    config = corpus / MODELS_STEP6 / "train_infer_python.txt"
    diff = compare(config, "models", "lite_train_lite_infer", fail="--output-dir", upstream=upstream)
    # Upstream runs the eval, we skip it: the commands are compared all the same (they are the
    # same), the status line says what happened, and the runner's deviation explains it.
    assert diff.commands_identical, diff.describe()
    categories = [d.category for d in diff.differences]
    assert "status: eval verdict upstream 'Run successfully' vs plan 'Run skipped (train failed)'" in categories
    assert not diff.identical and diff.faithful, diff.describe()
    assert diff.explained_by() == ["skip-after-failed-train"]


# ---- every corpus config of the faithful repos


@pytest.mark.parametrize("repo", FAITHFUL)
def test_every_corpus_run_is_faithful(corpus, upstream, repo):
    """Every train config of the repo's corpus (no pinned count) x the 4 modes and whole_infer with
    GPUID 1, and lite_train_lite_infer with a failing export: each run faithful (what differs is
    a deliberate deviation of the runner); models: identical."""
    configs = train_configs(corpus, repo)
    assert configs, f"no train config of {repo} in the corpus"
    jobs = [(c, repo, mode, gpuid, None) for c in configs for mode, gpuid in RUNS]
    jobs += [(c, repo, "lite_train_lite_infer", None, "export") for c in configs]
    diffs = _compare_all(jobs, upstream)
    print(_tally(repo, diffs))
    failures = [d.describe() for d in diffs if not d.faithful or not d.upstream.commands]
    assert not failures, f"{len(failures)} of {len(diffs)} runs are not faithful:\n" + "\n".join(failures[:5])
    if repo == "models":
        assert all(d.identical for d in diffs if not d.upstream.fail), [d.describe() for d in diffs if not d.identical]


# ---- models: the dialect of seed document 001


def test_models_amp_train_runs_are_named_autocast_true(corpus, upstream):
    """Upstream's script sets autocast=True for the trainer amp_train (autocast=False otherwise):
    the run's save directory and its eval/export logs say autocast_True, its commands do not change."""
    config = corpus / MODELS_STEP6 / "train_amp_infer_python.txt"
    diff = compare(config, "models", "lite_train_lite_infer", upstream=upstream)
    assert diff.identical, diff.describe()
    assert diff.plan is not None
    log = "./test_tipc/output/mobilenet_v3_small/lite_train_lite_infer"
    train = diff.plan.steps[0]
    assert train.kind == "train" and f"--output-dir={log}/amp_train_gpus_0_autocast_True_nodes_1.log" in train.argv
    assert f"{log}/amp_train_gpus_0_autocast_True_nodes_1_eval.log" in {s.log for s in diff.plan.steps}
    assert f"--output-dir={log}/amp_train_gpus_0_autocast_True_nodes_1.log" in diff.upstream.commands[0].argv


@pytest.mark.parametrize("gpuid", [None, "1"])
def test_models_whole_infer(corpus, upstream, gpuid):
    """whole_infer: the same commands, CUDA_VISIBLE_DEVICES, logs (the export's is export_0.log) and
    status lines."""
    diff = compare(corpus / MODELS_STEP6 / "train_infer_python.txt", "models", "whole_infer", gpuid, upstream=upstream)
    assert diff.identical, diff.describe()
    assert diff.plan is not None
    export = diff.plan.steps[0]
    assert export.kind == "export" and export.log == "./test_tipc/output/mobilenet_v3_small/whole_infer/export_0.log"


# ---- PaddleOCR at the time of seed document 000 (runner ocr) and today (runner ocr_head)


def test_seed_era_differs_only_by_the_seed_status_lines(corpus, upstream):
    """Seed document 000's status lines end `!  `; the seed-era script's end ` -  `: that trailer
    is the only difference (commands, logs, verdicts and command texts are upstream's)."""
    diff = compare(corpus / OCR_REC / "train_infer_python.txt", "PaddleOCR/seed-era", "lite_train_lite_infer",
                   upstream=upstream)  # fmt: skip
    assert diff.runner is None and diff.commands_identical, diff.describe()
    assert [d.category for d in diff.differences] == ["status: trailer ' -  ' vs '!  '"], diff.describe()
    assert not diff.identical and diff.faithful and diff.explained_by() == ["seed-status-lines"]


@pytest.mark.parametrize("mode", ["lite_train_lite_infer", "whole_train_whole_infer"])
def test_head_differs_only_by_the_train_status(corpus, upstream, mode):
    """Today's script reports the exit code of `cat <save_log>/train.log` for training (no
    train.log under the recorder: Run failed); we report the trainer's. Nothing else differs:
    the argv without the autocast flag, the logs with their GPUs, every status line's log."""
    diff = compare(corpus / OCR_REC / "train_infer_python.txt", "PaddleOCR/head", mode, upstream=upstream)
    assert diff.runner == "ocr_head" and diff.commands_identical, diff.describe()
    assert [d.category for d in diff.differences] == [
        "status: train verdict upstream 'Run failed' vs plan 'Run successfully' (env: "
        "train status = exit of `cat <save_log>/train.log >> <save_log>.log` (absent here: Run failed))"
    ], diff.describe()
    assert diff.faithful and diff.explained_by() == ["train-status-from-trainer"]
    assert not any(a.startswith("Global.auto_cast") for c in diff.upstream.commands for a in c.argv)


@pytest.mark.parametrize("gpuid", [None, "1"])
def test_head_whole_infer_is_identical(corpus, upstream, gpuid):
    for config in train_configs(corpus, "PaddleOCR/head"):
        diff = compare(config, "PaddleOCR/head", "whole_infer", gpuid, upstream=upstream)
        assert diff.identical, diff.describe()
        assert diff.plan is not None and all("_gpus_0_" in s.log for s in diff.plan.steps if s.kind == "infer")


# ---- the slow tier: generated variants of the corpus configs

# Values a mutated config line may take, by 1-based line number of the repo's layout. gpu_list
# entries are the shapes upstream's length tests read as we read them (see the planner's gpu_entry).
GPU_ENTRY = st.sampled_from(["-1", "0", "3", "0,1", "0,1,2,3", "192.168.0.1,192.168.0.2;0,1"])


def _listed(values, max_size: int = 2):
    return st.lists(st.sampled_from(values), min_size=1, max_size=max_size, unique=True).map("|".join)


def _by_mode():
    n = st.integers(1, 9).map(str)
    return st.one_of(
        st.builds(lambda a, b: f"lite_train_lite_infer={a}|whole_train_whole_infer={b}", n, n),
        st.builds(lambda a: f"lite_train_lite_infer={a}", n),
        n,
        st.just("null"),
    )


OCR_LINES = {
    4: st.lists(GPU_ENTRY, min_size=1, max_size=2).map("|".join),
    5: _listed(["True", "False"]),
    6: _listed(["fp32", "amp", "null"]),
    7: _by_mode(),
    9: _by_mode(),
    10: st.sampled_from(["null", "./pretrain_models/x_pretrained"]),
    15: _listed(["norm_train", "pact_train", "fpgm_train"]),
    17: st.sampled_from(["null", "deploy/slim/quantization/quant.py -c a.yml -o"]),
    24: st.sampled_from(["null", "tools/eval.py -c a.yml -o"]),
    31: st.sampled_from(["", "null", "deploy/slim/quantization/export_model.py -c a.yml -o"]),
    36: st.sampled_from(["Student", "null", "##"]),
    37: _listed(["./inference/a_infer", "./inference/b_quant_infer"]),
    38: _listed(["null", "tools/export_model.py -c a.yml -o"]),
    39: _listed(["False", "True"]),
    41: _listed(["True", "False"]),
    42: _listed(["True", "False"]),
    43: _listed(["1", "6"]),
    44: _listed(["1", "6"], 1),
    45: _listed(["False", "True"]),
    46: _listed(["fp32", "fp16", "int8"]),
}
MODELS_LINES = {
    4: st.lists(GPU_ENTRY, min_size=1, max_size=2).map("|".join),
    6: _by_mode(),
    8: _by_mode(),
    9: st.sampled_from(["null", "./pretrain_models/x.pdparams"]),
    13: _listed(["norm_train", "amp_train"]),
    17: st.sampled_from(["null", "train.py --test-only"]),
    22: st.sampled_from(["null", "tools/export_model.py --model=m"]),
    25: st.sampled_from(["null", "tools/export_model.py --model=m"]),
    28: _listed(["True", "False"]),
    29: _listed(["1", "4"]),
}
GENERATED = {"PaddleOCR/seed-era": OCR_LINES, "PaddleOCR/head": OCR_LINES, "models": MODELS_LINES}


def _mutate(draw, base: Path, lines: dict) -> str:
    text = base.read_text()
    out = text.split("\n")
    for number, values in lines.items():
        if number <= len(out) and ":" in out[number - 1] and draw(st.booleans()):
            out[number - 1] = out[number - 1].split(":", 1)[0] + ":" + draw(values)
    return "\n".join(out)


def _generated_runs_are_faithful(corpus, upstream, tmp_path_factory, data, repo):
    """Two variants of the repo's corpus configs per example (compared two at a time), each in a
    mode (and GPUID, and failing step) hypothesis draws: faithful."""
    bases = train_configs(corpus, repo)
    jobs = []
    for _ in range(2):
        base = data.draw(st.sampled_from(bases))
        path = tmp_path_factory.mktemp("gen") / base.parent.name / base.name
        path.parent.mkdir()
        path.write_text(_mutate(data.draw, base, GENERATED[repo]))
        mode = data.draw(st.sampled_from(MODES))
        gpuid = data.draw(st.sampled_from([None, "1"])) if mode == "whole_infer" else None
        fail = data.draw(st.sampled_from([None, None, "export", "train.py"]))
        jobs.append((path, repo, mode, gpuid, fail))
    for diff in _compare_all(jobs, upstream):
        assert diff.upstream.commands or not diff.plan.steps, diff.describe()
        assert diff.faithful, diff.describe() + "\n" + Path(diff.config).read_text()


# examples of 2 variants each: 200 generated configs per runner under TIPC_FULL_SWEEP, a fifth in CI.
@pytest.mark.slow
@pytest.mark.parametrize("repo", FAITHFUL)
@settings(max_examples=examples(100, 5), deadline=None)
@given(data=st.data())
def test_generated_configs_are_faithful(corpus, upstream, tmp_path_factory, repo, data):
    _generated_runs_are_faithful(corpus, upstream, tmp_path_factory, data, repo)
