"""Make the status page's real-run fixtures: `tipcgen run` of the bundled example (real paddle
on CPU) passing, failing, timed out, and on two simulated nodes at once; each scenario's JSON
report, markdown summary and logs are kept under OUT/<scenario>/ (the logs at their paths
relative to the repo root, so the page finds them beside the record).

    python tests/helpers/real_records.py tests/fixtures/status/real   # about 2 min on 2 cores (the fixtures were made so)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from helpers.cli import TIPCGEN, run_argv

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "tiny_rec"
MODE = "lite_train_lite_infer"
CFG = "test_tipc/configs/tiny_rec"
NORMAL = f"{CFG}/train_infer_python.txt"
FLEET = f"{CFG}/train_linux_cpu_fleet_infer_python.txt"


def run_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "TIPC_NODE_IP")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def base_repo(work: Path) -> Path:
    base = work / "base"
    shutil.copytree(EXAMPLE, base, ignore=shutil.ignore_patterns("__pycache__", "train_data", "inference", "output"))
    run_argv(["build", str(REPO / "specs/tiny_rec.yml"), "--out", str(work / "gen")], check=True)
    shutil.rmtree(base / "test_tipc", ignore_errors=True)
    shutil.copytree(work / "gen/tiny_rec/test_tipc", base / "test_tipc")
    subprocess.run(
        [sys.executable, "tools/make_data.py", "--out", "."], cwd=base, check=True, stdout=subprocess.DEVNULL
    )
    for cmd in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(["git", *cmd], cwd=base, check=True)
    return base


def tipcgen_run(repo: Path, config: str, extra: list, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [*TIPCGEN, "run", config, "--mode", MODE, "--json", "run.json", "--summary", "summary.md", *extra],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def keep(repo: Path, dest: Path) -> None:
    """The record, summary and logs of one scenario (the data and the model are left behind)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("run.json", "summary.md"):
        shutil.copy2(repo / name, dest / name)
    out = repo / "test_tipc/output"
    for path in out.rglob("*"):
        if path.is_file() and (path.suffix in (".log", ".txt") or path.name.startswith("workerlog")):
            target = dest / path.relative_to(repo)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = base_repo(work)
        copies = {name: work / name for name in ("pass", "fail", "timeout", "node_a", "node_b")}
        for w in copies.values():
            shutil.copytree(base, w, symlinks=True)
        # fail: a bug in the repo's export script; train and eval pass, export fails with a
        # traceback in its log, and the inference steps needing its model are skipped
        export = copies["fail"] / "tools/export_model.py"
        export.write_text('raise RuntimeError("export: an operator the exporter does not know")\n' + export.read_text())
        procs = [
            tipcgen_run(copies["pass"], NORMAL, [], run_env()),
            tipcgen_run(copies["fail"], NORMAL, [], run_env()),
            tipcgen_run(copies["timeout"], NORMAL, ["--step-timeout", "3", "--kill-grace", "1"], run_env()),
        ]
        for p in procs:
            p.wait(timeout=600)
        port = 6170
        nodes = [
            tipcgen_run(copies[n], FLEET, [], run_env(TIPC_NODE_IP=ip, FLAGS_START_PORT=port))
            for n, ip in (("node_a", "127.0.0.2"), ("node_b", "127.0.0.3"))
        ]
        for p in nodes:
            p.wait(timeout=600)
        shutil.rmtree(out, ignore_errors=True)
        for name, w in copies.items():
            keep(w, out / name)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
