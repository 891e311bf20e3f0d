"""Shared fixtures: the corpus location, a recording interpreter, building specs into a tree."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from tipcgen.migrate.shims import bash_by_path

REPO = Path(__file__).resolve().parents[1]

# pytest caches the test modules it rewrites for assert messages only where bytecode may be
# written; under PYTHONDONTWRITEBYTECODE (set on many CI images) every worker of every run
# rewrote them all again (~5 s of CPU a worker). The cache is tests/__pycache__ (git-ignored).
sys.dont_write_bytecode = False

# `python3` in a config is this interpreter, as in an activated venv, whichever way pytest was
# started (`.venv/bin/python -m pytest` too): configs name `python3`, the runs need its paddle.
_BIN = str(Path(sys.executable).parent)
if os.environ.get("PATH", "").split(os.pathsep)[:1] != [_BIN]:
    os.environ["PATH"] = _BIN + os.pathsep + os.environ.get("PATH", "")
SPECS = REPO / "specs"
GENERATED = REPO / "generated"


# Seed 000's two status-line commands (legacy-format.md §4), verbatim; the inference line's
# redirect is what upstream appends to the command it logs.
SEED_000_TRAIN = (
    "python3.7 -m paddle.distributed.launch --ips=192.168.0.1,192.168.0.2 --gpus=0,1 tools/train.py -c "
    "test_tipc/configs/ch_PP-OCRv3_rec/ch_PP-OCRv3_rec_distillation.yml -o  Global.use_gpu=True "
    "Global.save_model_dir=./test_tipc/output/ch_PP-OCRv3_rec/lite_train_lite_infer/norm_train_gpus_0,1_autocast_fp32_nodes_2"
    "   Global.epoch_num=3 Global.auto_cast=fp32 Train.loader.batch_size_per_card=16    "
)
SEED_000_INFER = (
    'python3.7 tools/infer/predict_rec.py --rec_image_shape="3,48,320" --use_gpu=False --enable_mkldnn=False '
    "--cpu_threads=6 --rec_model_dir=./test_tipc/output/ch_PP-OCRv3_rec/lite_train_lite_infer/"
    "norm_train_gpus_0,1_autocast_fp32_nodes_2/Student --rec_batch_num=1   --image_dir=./inference/rec_inference "
    "--benchmark=True --precision=fp32   "
)
SEED_000_INFER_REDIRECT = (
    "> ./test_tipc/output/ch_PP-OCRv3_rec/lite_train_lite_infer/"
    "python_infer_cpu_usemkldnn_False_threads_6_precision_fp32_batchsize_1.log 2>&1 "
)


def corpus_dir() -> Path:
    return Path(os.environ.get("TIPC_CORPUS", REPO.parent / "shared" / "corpus")).resolve()


@pytest.fixture(scope="session")
def corpus() -> Path:
    path = corpus_dir()
    if not (path / "MANIFEST.tsv").is_file():
        if os.environ.get("TIPC_REQUIRE_CORPUS"):
            pytest.fail(f"TIPC_REQUIRE_CORPUS is set but the corpus is missing at {path}")
        pytest.skip(
            f"legacy corpus not found at {path} (set TIPC_CORPUS to ../shared/corpus); "
            "CI always has it and .ci/run fails without it"
        )
    return path


# The recorder stands in for `python3.7`: it appends its argv, CUDA_VISIBLE_DEVICES and cwd
# to $TIPC_RECORD, and exits 1 when an argument contains $TIPC_RECORD_FAIL. Written in bash
# so thousands of steps cost milliseconds each.
RECORDER = r"""#!/usr/bin/env bash
{
    if [[ -n ${CUDA_VISIBLE_DEVICES+x} ]]; then printf 'set\x1f%s' "$CUDA_VISIBLE_DEVICES"; else printf 'unset\x1f'; fi
    printf '\x1f%s' "$PWD" "$@"
    printf '\x1e'
} >>"$TIPC_RECORD"
if [[ -n ${TIPC_RECORD_FAIL:-} ]]; then
    for arg in "$@"; do
        if [[ $arg == *"$TIPC_RECORD_FAIL"* ]]; then
            exit 1
        fi
    done
fi
exit 0
"""
RECORDER = bash_by_path(RECORDER)  # one exec fewer per recorded command than `env` finding bash


class Recorder:
    def __init__(self, root: Path):
        self.bin = root / "bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        self.log = root / "record.bin"

    def install(self, name: str) -> None:
        path = self.bin / name
        path.write_text(RECORDER)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    def env(self, fail: str | None = None, cuda: str | None = None) -> dict:
        env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["TIPC_RECORD"] = str(self.log)
        env.pop("TIPC_RECORD_FAIL", None)
        if fail:
            env["TIPC_RECORD_FAIL"] = fail
        if cuda is not None:
            env["CUDA_VISIBLE_DEVICES"] = cuda
        return env

    def records(self) -> list[dict]:
        if not self.log.exists():
            return []
        out = []
        for rec in self.log.read_bytes().decode("utf-8").split("\x1e"):
            if not rec:
                continue
            flag, cvd, cwd, *argv = rec.split("\x1f")
            out.append({"cvd": cvd if flag == "set" else None, "cwd": cwd, "argv": argv})
        return out

    def reset(self) -> None:
        if self.log.exists():
            self.log.unlink()


@pytest.fixture
def recorder(tmp_path) -> Recorder:
    return Recorder(tmp_path / "rec")


def copy_suite(generated_model_dir: Path, workdir: Path) -> Path:
    """Lay a generated test_tipc/ tree into a scratch 'model repo' root."""
    shutil.copytree(generated_model_dir / "test_tipc", workdir / "test_tipc")
    return workdir


def run_bash(script: Path, args: list[str], cwd: Path, env: dict, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(script), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


# Property tests draw the same examples on every machine and every run (derandomize), so a
# failure seen in CI reproduces locally and a fresh clone cannot turn CI red by luck. A failing
# example is printed with its reproduction blob; add it as an explicit @example.
settings.register_profile("tipcgen", derandomize=True, database=None, print_blob=True, deadline=None)
settings.load_profile("tipcgen")


_SANDBOX_WHY: list[str] = []


def sandbox_why() -> str:
    """Why the sandbox (bubblewrap, user namespaces) cannot be made on this machine; "" when it can."""
    if not _SANDBOX_WHY:
        from tipcgen.sandbox import SandboxUnavailable, require

        try:
            require()
            _SANDBOX_WHY.append("")
        except SandboxUnavailable as exc:
            _SANDBOX_WHY.append(f"the sandbox cannot be made here: {str(exc)[:300]}")
    return _SANDBOX_WHY[0]


def pytest_runtest_setup(item):
    """A test marked `sandbox` runs a repo's scripts through tipcgen's sandbox: skipped saying why
    where bubblewrap or user namespaces are missing (a fresh laptop), failed under
    TIPC_REQUIRE_TOOLS (CI installs bubblewrap)."""
    if item.get_closest_marker("sandbox"):
        from helpers.tools import require as require_tool

        require_tool(sandbox_why())


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: a worker per core, at most 4, and in the fast tier (pyproject's `-m`) one more:
    its tests often wait on a subprocess (a bound, a script's `sleep`, a node's start) and the extra
    worker runs meanwhile (2 cores: 184-196 s with 3 workers, 210-222 s with 2, 204 s with 4). The
    marked tier is CPU-bound (real Paddle, thousands of script runs): 598 s with 2, 631 s with 3."""
    cores = os.cpu_count() or 1
    addopts = config.getini("addopts")
    fast_tier = addopts[addopts.index("-m") + 1] if "-m" in addopts[:-1] else None
    fast = fast_tier is not None and config.getoption("markexpr", "") == fast_tier
    return min(4, cores + 1 if fast else cores)


def pytest_collection_modifyitems(config, items):
    """The longest files first (tests/durations.json, measured; `scripts/test_durations.py` writes
    it), each file's tests in their own order: `--dist loadfile` with `--no-loadscope-reorder` then
    hands them out in this order, and the tier does not end with one worker alone on a long file
    (xdist's own order, by number of tests, put the real-Paddle files last; a simulation over the
    measured times of the marked tier on 2 cores: 586 s -> 570 s). A file not measured yet goes last."""
    path = Path(__file__).with_name("durations.json")
    try:
        seconds = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    rank: dict = {}
    for item in items:
        rank.setdefault(item.nodeid.split("::", 1)[0], len(rank))
    # files by measured seconds, longest first; ties (and the unmeasured) in collection order
    order = {name: (-float(seconds.get(name, 0.0)), i) for name, i in rank.items()}
    items.sort(key=lambda item: order[item.nodeid.split("::", 1)[0]])
