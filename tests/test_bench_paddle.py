"""Real runs: `tipcgen bench` and `tipcgen report` on the tiny_rec example with PaddlePaddle on
CPU, and the convergence check passing at the spec's target and failing at learning rate 0.

A module fixture copies examples/tiny_rec to a scratch repo and makes its data. `tipcgen bench
specs/tiny_rec.yml` then trains 1 process, 2 processes and 2 loopback "nodes" (127.0.0.2 and
127.0.0.3) at the same global batch of 32, 4 epochs each. Each record's ips (from the trainer's
`ips:` lines) must agree with what benchmarks/scaling.py measures on the same log (the
trainer's own per-epoch samples/s lines, first epoch left out). Every command runs with a
timeout; `tipcgen bench --timeout` kills a run's whole process tree itself.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import TIPCGEN  # the real exec, by this interpreter (the one that has paddle)
from test_run_e2e_paddle import loopback_aliases_usable

pytestmark = [pytest.mark.paddle, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "tiny_rec"
SPEC = REPO / "specs" / "tiny_rec.yml"
PY = sys.executable
RUN_IDS = ("tiny_rec_bs32_fp32_sp_N1C1", "tiny_rec_bs16_fp32_mp_N1C2", "tiny_rec_bs16_fp32_mp_N2C2")
AGREE = 0.25  # ips lines vs the trainer's epoch lines: same run, different windows (see below)


def _env() -> dict:
    drop = ("CUDA_VISIBLE_DEVICES", "PADDLE_TRAINER_ENDPOINTS", "PADDLE_MASTER", "FLAGS_START_PORT", "TIPC_NODE_IP")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(cmd, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(c) for c in cmd],
        cwd=str(cwd),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def _scaling():
    """benchmarks/scaling.py, whose parse() is what the scaling benchmark measures."""
    spec = importlib.util.spec_from_file_location("scaling", REPO / "benchmarks" / "scaling.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    probe = _run([PY, "-c", "import paddle"], REPO, timeout=180)
    if probe.returncode != 0:
        pytest.skip(f"`import paddle` fails with {PY}: {(probe.stderr.strip().splitlines() or ['?'])[-1]}")
    root = tmp_path_factory.mktemp("bench") / "tiny_rec"
    shutil.copytree(
        EXAMPLE,
        root,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "train_data", "inference", "output", "log", "test_tipc"),
    )
    made = _run([PY, "tools/make_data.py", "--out", ".", "--infer", "1"], root, timeout=180)
    assert made.returncode == 0, made.stderr
    return root


@pytest.fixture(scope="module")
def bench_records(repo) -> dict:
    why = loopback_aliases_usable()  # the e2e tests' check: both addresses bind and connect
    if why:
        pytest.skip(why)
    out = repo.parent / "results"
    proc = _run([*TIPCGEN, "bench", SPEC, "--root", repo, "--python", PY, "--out", out, "--timeout", "240"], REPO)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    records = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in out.glob("*.json")}
    assert sorted(records) == sorted(RUN_IDS), proc.stdout
    return {"out": out, "records": records, "stdout": proc.stdout}


def test_bench_runs_three_real_configurations_at_one_global_batch(bench_records):
    records = bench_records["records"]
    sp, mp, nodes = (records[i] for i in RUN_IDS)
    for r, (workers, n, per_card) in zip((sp, mp, nodes), ((1, 1, 32), (2, 1, 16), (2, 2, 16))):
        assert r["status"] == "passed" and r["returncodes"] == [0] * n
        assert (r["workers"], r["nodes"], r["batch_size"], r["global_batch_size"]) == (workers, n, per_card, 32)
        assert r["device_num"] == f"N{n}C{workers}" and r["speed_unit"] == "samples/s"
        assert r["ips_records"] == 4 * 7  # 4 epochs x ceil(200 / 32) steps, all printed (print_batch_step=1)
        assert r["ips"] > 0 and r["ips_min"] <= r["ips"] <= r["ips_max"]
        assert len(r["epoch_loss"]) == 4 and r["epoch_loss"][-1][1] < r["epoch_loss"][0][1]  # it learns
        assert r["peak_rss_mb"] > 100  # paddle itself takes more than that
        assert r["frame_version"]  # read from the trainer's start-up line
    assert (sp["run_process_type"], mp["run_process_type"]) == ("SingleP", "MultiP")
    # the two-node run really had two ranks, one per node, ending with the same weights
    logs = [Path(nodes["log_file"]).parents[1] / f"launch_node{i}" / "workerlog.0" for i in (0, 1)]
    sums = [
        [ln.split("value=")[1] for ln in p.read_text(errors="replace").splitlines() if "param checksum" in ln]
        for p in logs
    ]
    assert "rank=0 world=2" in logs[0].read_text(errors="replace")
    assert "rank=1 world=2" in logs[1].read_text(errors="replace")
    assert sums[0] == sums[1] and len(sums[0]) == 1, sums


def test_ips_agree_with_what_the_scaling_benchmark_measures(bench_records):
    """benchmarks/scaling.py reports the mean of the trainer's epoch samples/s lines (epochs 2..);
    the record's ips is upstream's: the mean of the `ips:` lines after the warm-up steps, times
    the processes. Same run, different windows (per step vs per epoch, which adds the loss
    all-reduce and the checkpoint between epochs), so they agree within noise, not exactly."""
    scaling = _scaling()
    for run_id, r in bench_records["records"].items():
        measured = scaling.parse(Path(r["log_file"]).read_text(errors="replace"), run_id)["sps"]
        assert r["trainer_samples_per_s"] == pytest.approx(measured, rel=1e-3)
        assert abs(r["ips"] - measured) / measured < AGREE, (run_id, r["ips"], measured)


def test_report_of_the_real_records(bench_records, tmp_path):
    from PIL import Image

    proc = _run([*TIPCGEN, "report", bench_records["out"], "--out", tmp_path], REPO, timeout=180)
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "report.zh.md").read_text(encoding="utf-8")
    for run_id in RUN_IDS:
        r = bench_records["records"][run_id]
        assert f"({r['device_num']}) |" in md and f"| {r['ips']:.1f} |" in md
    with Image.open(tmp_path / "throughput.png") as img:
        assert img.size == (700, 450) and len(img.convert("RGB").getcolors(1 << 16) or range(999)) > 50
    assert 'id="ideal-line"' in (tmp_path / "throughput.svg").read_text(encoding="utf-8")


def test_convergence_passes_at_the_declared_target(repo, tmp_path):
    proc = _run(
        [*TIPCGEN, "bench", SPEC, "--converge", "--root", repo, "--python", PY, "--out", tmp_path, "--timeout", "300"],
        REPO,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-3000:]
    assert "convergence PASS: loss <= 1 within 25 epochs: reached " in proc.stdout
    record = json.loads((tmp_path / "tiny_rec_bs16_fp32_sp_N1C1_converge.json").read_text(encoding="utf-8"))
    assert record["convergence"]["verdict"] == "PASS" and record["convergence"]["best_value"] <= 1.0
    assert len(record["convergence"]["curve"]) >= record["convergence"]["reached_epoch"]


def test_convergence_fails_with_learning_rate_zero(repo, tmp_path):
    spec = tmp_path / "tiny_rec_lr0.yml"
    text = SPEC.read_text(encoding="utf-8").replace("../generated/", str(REPO / "generated") + "/")
    assert "  batch_size: 16\n" in text and "  within: {epochs: 25}\n" in text
    # No learning shows in any number of epochs: 5 of them (the check's budget is the spec's, so the
    # run stops there and says so), not the 25 a learning run may need.
    text = text.replace("  within: {epochs: 25}\n", "  within: {epochs: 5}\n")
    spec.write_text(
        text.replace("  batch_size: 16\n", "  batch_size: 16\n  overrides: {Optimizer.lr.learning_rate: 0}\n"),
        encoding="utf-8",
    )
    proc = _run(
        [
            *TIPCGEN,
            "bench",
            spec,
            "--converge",
            "--root",
            repo,
            "--python",
            PY,
            "--out",
            tmp_path / "out",
            "--timeout",
            "300",
        ],
        REPO,
    )
    assert proc.returncode == 1, proc.stdout[-4000:] + proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("convergence "))
    assert line.startswith("convergence FAIL: loss <= 1 not reached within 5 epochs: best value ")
    best = float(line.split("best value ")[1].split()[0])
    assert best > 10, line  # with no learning the CTC loss stays where it starts
    record = json.loads((tmp_path / "out" / "tiny_rec_bs16_fp32_sp_N1C1_converge.json").read_text(encoding="utf-8"))
    assert record["convergence"]["verdict"] == "FAIL" and len(record["convergence"]["curve"]) == 5
