"""Trust: nothing is written outside --out (or the model repo), every hostile input is a clean
error (exit 2, one message naming the path, no traceback), the runner refuses what would put
logs elsewhere, and concurrent or killed builds leave a tree `check` and `build` handle.

Everything goes through the real CLI (`python -m tipcgen.cli`) and the real generated bash."""

from __future__ import annotations

import fcntl
import os
import select
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from conftest import SPECS, Recorder, run_bash
from helpers.cli import run_cli
from helpers.machine import bound
from tipcgen.errors import UsageError
from tipcgen.fsio import LOCK_NAME, check_destinations

SPEC = SPECS / "tiny_rec.yml"
CONFIG = "test_tipc/configs/tiny_rec/train_infer_python.txt"
MODE = "lite_train_lite_infer"


def tipcgen(*args, cwd: Path, env: dict | None = None, timeout: float = 10) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd, env=env, timeout=timeout)


def tipcgen_all(calls: list, cwd: Path, env: dict | None = None) -> list:
    """Run independent CLI calls concurrently (each is a fresh process): their results in order."""
    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(lambda args: tipcgen(*args, cwd=cwd, env=env), calls))


def refused(proc: subprocess.CompletedProcess, *names: str, code: int = 2) -> str:
    """Assert a clean refusal: the exit code, no traceback, each of `names` in the message."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == code, out
    assert "Traceback" not in out, out
    for name in names:
        assert name in proc.stderr, (name, proc.stderr)
    return proc.stderr


def snapshot(*roots: Path) -> dict:
    """Every path below the roots (links not followed) -> its kind and content or target."""
    out = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                path = Path(dirpath) / name
                if path.is_symlink():
                    out[str(path)] = ("link", os.readlink(path))
                elif path.is_dir():
                    out[str(path)] = ("dir",)
                else:
                    out[str(path)] = ("file", path.read_bytes())
    return out


def only_below(before: dict, after: dict, allowed: Path) -> None:
    """Nothing changed in the snapshots except below `allowed`."""
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    outside = sorted(p for p in changed if not (p == str(allowed) or p.startswith(str(allowed) + os.sep)))
    assert not outside, f"written outside {allowed}: {outside[:5]}"


@pytest.fixture
def sentinel(tmp_path) -> Path:
    """A directory that must never change: outside --out, outside the model repo."""
    d = tmp_path / "sentinel"
    d.mkdir()
    (d / "keep.txt").write_text("keep")
    return d


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """tiny_rec's generated test_tipc/ tree, built by the CLI."""
    out = tmp_path_factory.mktemp("built")
    proc = tipcgen("build", SPEC, "--out", out, cwd=out)
    assert proc.returncode == 0, proc.stderr
    return out / "tiny_rec"


def _repo(tmp_path: Path, built: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(built / "test_tipc", repo / "test_tipc")
    return repo


def _config_text() -> str:
    return (SPECS.parent / "generated/tiny_rec" / CONFIG).read_text()


# ---------------------------------------------------------------------------------------------
# 1. build writes below --out/<model>/ only


def test_build_writes_nothing_outside_out(tmp_path, sentinel):
    before = snapshot(tmp_path)
    proc = tipcgen("build", SPECS, "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    after = snapshot(tmp_path)
    only_below(before, after, tmp_path / "out")
    assert not (tmp_path / "out" / LOCK_NAME).exists(), "the lock file is removed after the build"
    out = str(tmp_path / "out") + os.sep
    assert {Path(p[len(out) :]).parts[0] for p in after if p.startswith(out)} == {p.stem for p in SPECS.glob("*.yml")}


@pytest.mark.parametrize("link", ["tiny_rec", "tiny_rec/test_tipc", "tiny_rec/test_tipc/configs"])
def test_build_refuses_a_symlink_leading_outside_out(tmp_path, sentinel, link):
    out = tmp_path / "out"
    (out / link).parent.mkdir(parents=True, exist_ok=True)
    (out / link).symlink_to(sentinel)
    before = snapshot(tmp_path)
    err = refused(tipcgen("build", SPEC, "--out", out, cwd=tmp_path), str(out / link), "outside")
    assert "refusing" in err
    assert snapshot(tmp_path) == before


def test_build_accepts_a_symlink_that_stays_inside_out(tmp_path, sentinel):
    out = tmp_path / "out"
    (out / "elsewhere").mkdir(parents=True)
    (out / "tiny_rec").symlink_to("elsewhere")
    before = snapshot(tmp_path)
    assert tipcgen("build", SPEC, "--out", out, cwd=tmp_path).returncode == 0
    only_below(before, snapshot(tmp_path), out)
    assert (out / "elsewhere/test_tipc/test_train_inference_python.sh").is_file()


def test_destinations_are_checked_whatever_validation_let_through(tmp_path):
    """Defence in depth: build_files' paths and the model name are checked again at write time."""
    out = str(tmp_path / "out")
    for model, rel in (
        ("../x", "test_tipc/a.txt"),
        ("/abs", "test_tipc/a.txt"),
        ("..", "a"),
        ("", "a"),
        ("m", "../../a.txt"),
        ("m", "/etc/a.txt"),
        ("m", "test_tipc//a.txt"),
        ("m", "test_tipc/./a.txt"),
        ("m", "test_tipc/../../a.txt"),
    ):
        with pytest.raises(UsageError):
            check_destinations(out, model, [rel])
    assert check_destinations(out, "m", ["test_tipc/a.txt"]) == os.path.join(out, "m")
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------
# 1-2. the runner: bash, `tipcgen run` and `tipcgen plan` refuse the same configs


HOSTILE = {
    "up": ("model_name:tiny_rec", "model_name:../../../escaped", "model_name"),
    "absolute": ("model_name:tiny_rec", "model_name:{sentinel}/escaped", "model_name"),
    "slash": ("model_name:tiny_rec", "model_name:a/b", "model_name"),
    "dotdot": ("model_name:tiny_rec", "model_name:..", "model_name"),
    "threads": ("--cpu_threads:2", "--cpu_threads:../../x", "inference.threads"),
    "trainer": ("trainer:norm_train", "trainer:norm_train|../x", "train.run"),
    "nul": ("tools/train.py", "tools/tr\x00ain.py", "NUL"),
    "control": ("tools/eval.py", "tools/ev\x1bal.py", "line 24"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_runner_refuses_what_would_escape_or_cannot_run(tmp_path, built, sentinel, name):
    old, new, says = HOSTILE[name]
    repo = _repo(tmp_path, built)
    config = repo / "hostile.txt"
    text = _config_text()
    assert old in text
    config.write_bytes(text.replace(old, new.format(sentinel=sentinel), 1).encode())
    rec = Recorder(tmp_path / "rec")
    rec.install("python3")
    env = rec.env()
    before = snapshot(tmp_path)
    bash = run_bash(
        repo / "test_tipc/test_train_inference_python.sh", ["hostile.txt", MODE], repo, env, timeout=bound(10)
    )
    refused(bash, "hostile.txt", says)
    calls = [
        ["plan", "hostile.txt", "--mode", MODE],
        ["plan", "hostile.txt", "--format", "json"],
        ["run", "hostile.txt", "--mode", MODE],
        ["run", "hostile.txt", "--mode", "whole_infer", "--dry-run"],
    ]
    for proc in tipcgen_all(calls, repo, env):
        refused(proc, "hostile.txt", says)
    assert rec.records() == [], "nothing ran"
    assert snapshot(tmp_path) == before, "nothing was written, not even test_tipc/output/"


def test_executor_opens_logs_like_the_bash_redirect(tmp_path):
    """No directory is made for a step's log (the bash makes only the log directory): a log that
    cannot be opened fails its step unrun, status 1, as `cmd >"$log"` does."""
    from tipcgen.plan.steps import Plan, Step
    from tipcgen.run.executor import FAILED, PASSED, run_plan

    steps = (
        Step(0, "eval", "true", ("true",), "./out/m/x/sub/e.log", None),
        Step(1, "eval", "true", ("true",), "./out/m/x/e.log", None),
    )
    plan = Plan("paddleocr", MODE, "m", "./out/m/x", "./out/m/x/results_python.log", steps)
    results = run_plan(plan, cwd=str(tmp_path), timeout=5)
    assert [(r.status, r.returncode) for r in results] == [(FAILED, 1), (PASSED, 0)]
    assert "No such file or directory" in results[0].reason
    assert not (tmp_path / "out/m/x/sub").exists()


def test_a_log_directory_that_cannot_be_made_is_exit_2_in_both(tmp_path, built):
    repo = _repo(tmp_path, built)
    (repo / "test_tipc/output").write_text("a file where the log directory goes")
    rec = Recorder(tmp_path / "rec")
    rec.install("python3")
    bash = run_bash(
        repo / "test_tipc/test_train_inference_python.sh", [CONFIG, MODE], repo, rec.env(), timeout=bound(10)
    )
    refused(bash, "test_tipc/output")
    refused(tipcgen("run", CONFIG, "--mode", MODE, cwd=repo, env=rec.env()), "test_tipc/output")
    assert rec.records() == []


def test_a_spec_the_runner_would_refuse_is_refused_at_validate_and_build(tmp_path):
    data = yaml.safe_load(SPEC.read_text())
    data["defaults"]["inference"]["threads"]["values"] = ["a/b"]
    spec = tmp_path / "s.yml"
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    for proc in tipcgen_all(
        [["validate", spec], ["build", spec, "--out", tmp_path / "o"], ["plan", spec, "--suite", "fleet"]], tmp_path
    ):
        refused(proc, str(spec), "[suite ", "inference.threads")
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------------------------
# 3. OS errors are one clean message naming the path


def test_os_errors_are_clean(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    adir = tmp_path / "adir"
    adir.mkdir()
    cfg = tmp_path / "c.txt"
    cfg.write_text(_config_text())
    corpus_like = tmp_path / "cfgs" / "m"
    corpus_like.mkdir(parents=True)
    (corpus_like / "train_infer_python.txt").write_text(_config_text())
    cases = [
        (["build", SPEC, "--out", afile], str(afile)),
        (["build", SPEC, "--out", "/proc/x"], "/proc/x"),
        (["build", SPEC, "--out", afile / "sub"], str(afile)),
        (["schema", "-o", adir], str(adir)),
        (["schema", "-o", afile / "s.json"], str(afile)),
        (["import", corpus_like, "--out", afile], str(afile)),
        (["run", cfg, "--mode", MODE, "--json", "/proc/x.json"], "/proc/x.json"),
        (["run", cfg, "--mode", MODE, "--junit", adir], str(adir)),
        (["run", cfg, "--mode", MODE, "--junit", afile / "r.xml"], str(afile)),
        (["validate", "/proc/self/mem"], "/proc/self/mem"),
        (["plan", "/proc/self/mem", "--layout", "paddleocr"], "/proc/self/mem"),
        (["plan", adir, "--layout", "paddleocr"], str(adir)),
    ]
    before = snapshot(tmp_path)
    for (_args, name), proc in zip(cases, tipcgen_all([args for args, _ in cases], tmp_path)):
        refused(proc, name)
    assert snapshot(tmp_path) == before, "a refused command leaves nothing behind (no temp file, no report)"


def test_symlink_loops_and_directories_named_like_files(tmp_path):
    (tmp_path / "loop").symlink_to("loop")
    d = tmp_path / "configs" / "m"
    d.mkdir(parents=True)
    (d / "train_infer_python.txt").write_text(_config_text())
    (d / "a.txt").symlink_to("b.txt")
    (d / "b.txt").symlink_to("a.txt")
    (tmp_path / "s.yml").mkdir()
    cases = [
        (["lint", "loop"], "loop"),
        (["import", "loop", "--out", "specs"], "loop"),
        (["validate", "loop"], "loop"),
        (["build", "loop", "--out", "o"], "loop"),
        (["lint", "configs"], "a.txt"),
        (["import", "configs", "--out", "specs"], "a.txt"),
        (["import", "configs", "--report"], "a.txt"),
        (["validate", "s.yml"], "s.yml"),
        (["build", "s.yml", "--out", "o"], "s.yml"),
        (["lint", "s.yml"], "s.yml"),
    ]
    for (_args, name), proc in zip(cases, tipcgen_all([args for args, _ in cases], tmp_path)):
        refused(proc, name)
    assert not (tmp_path / "specs").exists() and not (tmp_path / "o").exists()


def test_unreadable_files_are_clean_errors(tmp_path):
    prefix, base = [], tmp_path
    if os.geteuid() == 0:  # root reads whatever the mode: run the CLI as nobody
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: cannot make a file unreadable")
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        base = Path(tempfile.mkdtemp(prefix="tipcgen-unreadable-"))
        base.chmod(0o755)
    try:
        spec = base / "s.yml"
        spec.write_text(SPEC.read_text())
        d = base / "configs" / "m"
        d.mkdir(parents=True)
        cfg = d / "train_infer_python.txt"
        cfg.write_text(_config_text())
        spec.chmod(0)
        cfg.chmod(0)
        for args, name in [
            (["validate", spec], str(spec)),
            (["build", spec, "--out", base / "o"], str(spec)),
            (["lint", spec], str(spec)),
            (["lint", cfg], str(cfg)),
            (["import", d, "--out", base / "o"], str(cfg)),
            (["plan", cfg], str(cfg)),
        ]:
            proc = subprocess.run(
                [*prefix, sys.executable, "-m", "tipcgen.cli", *map(str, args)],
                cwd=base,
                capture_output=True,
                text=True,
                timeout=bound(10),
            )
            assert "ermission denied" in refused(proc, name)
        assert not (base / "o").exists()
    finally:
        if base != tmp_path:
            shutil.rmtree(base)


def test_import_never_writes_outside_out(tmp_path, sentinel):
    d = tmp_path / "cfgs" / "m"
    d.mkdir(parents=True)
    (d / "train_infer_python.txt").write_text(_config_text())
    before = snapshot(tmp_path)
    models = ("../escaped", "/abs", "a/b", "..")
    calls = [["import", d, "--out", tmp_path / "specs", "--model", model] for model in models]
    for model, proc in zip(models, tipcgen_all(calls, tmp_path)):
        refused(proc, model)
    assert snapshot(tmp_path) == before


# ---------------------------------------------------------------------------------------------
# 4. any config plans within 5 s: a matrix too large is refused, in the bash too


def test_huge_gpu_list_is_refused_fast(tmp_path, built):
    repo = _repo(tmp_path, built)
    huge = repo / "huge.txt"
    huge.write_text(_config_text().replace("gpu_list:-1", "gpu_list:" + "|".join(["0"] * 5000), 1))
    big = repo / "big.txt"  # as large as accepted: 2048 entries x 2 batch sizes
    big.write_text(_config_text().replace("gpu_list:-1", "gpu_list:" + "|".join(["-1"] * 2048), 1))
    for args in (["plan", "huge.txt"], ["run", "huge.txt", "--mode", MODE, "--dry-run"]):
        started = time.monotonic()
        refused(tipcgen(*args, cwd=repo, timeout=20), "huge.txt", "4096")
        assert time.monotonic() - started < 20  # a hang guard; benchmarks/hostile_inputs.py times it
    for args in (["plan", "big.txt", "--format", "json"], ["run", "big.txt", "--mode", MODE, "--dry-run"]):
        started = time.monotonic()
        proc = tipcgen(*args, cwd=repo, timeout=20)
        assert proc.returncode == 0, proc.stderr
        assert time.monotonic() - started < bound(20)
    refused(
        run_bash(
            repo / "test_tipc/test_train_inference_python.sh",
            ["huge.txt", MODE],
            repo,
            dict(os.environ),
            timeout=bound(10),
        ),
        "huge.txt",
        "4096",
    )
    assert not (repo / "test_tipc/output").exists()


# ---------------------------------------------------------------------------------------------
# 5. concurrent and killed builds


def test_a_second_build_waits_for_the_lock_then_gives_up_clearly(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with open(out / LOCK_NAME, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # another build holds the lock
        err = refused(tipcgen("build", SPEC, "--out", out, "--wait", "0.3", cwd=tmp_path), LOCK_NAME)
        assert "another tipcgen build" in err
        assert not (out / "tiny_rec").exists()
        waiting = subprocess.Popen(
            [sys.executable, "-m", "tipcgen.cli", "build", str(SPEC), "--out", str(out), "--wait", "60"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert select.select([waiting.stderr], [], [], bound(8))[0], "it says it waits"
        assert "waiting for another build" in waiting.stderr.readline()
        time.sleep(0.2)
        assert waiting.poll() is None, "it waits while the lock is held"
    stdout, stderr = waiting.communicate(timeout=bound(10))  # released: it goes on
    assert waiting.returncode == 0, stderr
    assert "files in" in stdout
    assert not (out / LOCK_NAME).exists()


def test_a_lock_file_left_by_a_killed_build_is_not_stale(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).write_text("")  # the kernel dropped the flock of the build that died
    assert tipcgen("build", SPEC, "--out", out, "--wait", "0", cwd=tmp_path).returncode == 0


def test_leftover_temp_files_do_not_trip_check_and_build_removes_them(tmp_path):
    out = tmp_path / "out"
    assert tipcgen("build", SPEC, "--out", out, cwd=tmp_path).returncode == 0
    temp = out / "tiny_rec/test_tipc/configs/tiny_rec/.tipcgen-k1ll3d"
    temp.write_text("half a config")
    check = tipcgen("check", SPEC, "--out", out, cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert str(temp) in check.stderr and "tipcgen build` removes it" in check.stderr
    build = tipcgen("build", SPEC, "--out", out, cwd=tmp_path)
    assert build.returncode == 0 and f"removed {temp}" in build.stderr
    assert not temp.exists()
    check = tipcgen("check", SPEC, "--out", out, cwd=tmp_path)
    assert check.returncode == 0 and ".tipcgen-" not in check.stdout + check.stderr


@pytest.mark.parametrize("delay", [0.15, 0.25, 0.35, 0.5])
def test_sigkill_at_any_moment_then_build_and_check_recover(tmp_path, sentinel, delay):
    out = tmp_path / "out"
    before = snapshot(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tipcgen.cli", "build", str(SPECS), "--out", str(out)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=bound(10))
    only_below(before, snapshot(tmp_path), out)
    build = tipcgen("build", SPECS, "--out", out, "--wait", "1", cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    check = tipcgen("check", SPECS, "--out", out, cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert not [p for p in snapshot(out) if ".tipcgen-" in p]


# ---------------------------------------------------------------------------------------------
# 6. options


@pytest.mark.parametrize(
    "args,says",
    [
        (["run", CONFIG, "--mode", MODE, "--step-timeout", "nan"], "--step-timeout"),
        (["run", CONFIG, "--mode", MODE, "--step-timeout", "inf"], "--step-timeout"),
        (["run", CONFIG, "--mode", MODE, "--step-timeout", "-1"], "--step-timeout"),
        (["run", CONFIG, "--mode", MODE, "--step-timeout", "0"], "--step-timeout"),
        (["run", CONFIG, "--mode", MODE, "--kill-grace", "nan"], "--kill-grace"),
        (["run", CONFIG, "--mode", MODE, "--kill-grace", "-inf"], "--kill-grace"),
        (["plan", CONFIG, "--format", "xml"], "--format"),
        (["lint", CONFIG, "--format", "xml"], "--format"),
        (["lint", CONFIG, "--layout", "nope"], "--layout"),
        (["import", "test_tipc/configs/tiny_rec", "--report", "--format", "xml"], "--format"),
        (["import", "test_tipc/configs/tiny_rec", "--format", "json"], "--report"),
        (["import", "test_tipc/configs/tiny_rec", "--layout", "nope", "--report"], "--layout"),
        (["build", SPEC, "--out", "o", "--wait", "nan"], "--wait"),
        (["build", SPEC, "--out", "", "--lang", "zh"], "--out"),
        (["build", SPEC, "--out", "o", "--lang", "fr"], "--lang"),
    ],
)
def test_bad_option_values_exit_2(tmp_path, built, args, says):
    repo = _repo(tmp_path, built)
    before = snapshot(tmp_path)
    refused(tipcgen(*args, cwd=repo), says)
    assert snapshot(tmp_path) == before


# ---------------------------------------------------------------------------------------------
# 8. prepare writes inside the model repo only


def _prepare_spec(tmp_path: Path, steps: list) -> Path:
    data = yaml.safe_load(SPEC.read_text())
    data["prepare"] = {MODE: steps}
    path = tmp_path / "p.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _archive(repo: Path) -> str:
    src = repo / "payload"
    src.mkdir()
    (src / "evil.txt").write_text("evil")
    with tarfile.open(repo / "a.tar", "w") as tf:
        tf.add(src / "evil.txt", arcname="evil.txt")
    shutil.rmtree(src)
    return "a.tar"


@pytest.mark.parametrize(
    "step",
    [
        {"extract": "a.tar", "to": "data"},
        {"extract": "a.tar", "to": "data/sub"},
        {"url": "file://{repo}/a.tar", "to": "data", "extract": True},
        {"link": "l", "target": "x", "dir": "data"},
        {"remove": ["data/keep.txt"]},
        {"run": "touch evil.txt", "dir": "data"},
    ],
)
def test_prepare_never_writes_through_a_link_leading_outside(tmp_path, sentinel, step):
    repo = tmp_path / "repo"
    repo.mkdir()
    archive = _archive(repo)
    assert archive == "a.tar"
    (repo / "data").symlink_to(sentinel)  # in the repo already, or made by an earlier link step
    step = {k: (v.format(repo=repo) if isinstance(v, str) else v) for k, v in step.items()}
    spec = _prepare_spec(tmp_path, [step])
    env = {**os.environ, "TIPC_CACHE": str(tmp_path / "cache"), "TIPC_ALLOW_FILE_URLS": str(repo)}
    before = snapshot(sentinel)
    err = refused(tipcgen("prepare", spec, "--mode", MODE, "--root", repo, cwd=tmp_path, env=env), "data", code=1)
    assert "refusing" in err and "outside the model repo" in err
    assert snapshot(sentinel) == before


def test_prepare_os_errors_are_clean(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _archive(repo)
    spec = _prepare_spec(tmp_path, [{"url": f"file://{repo}/a.tar", "to": "data", "extract": True}])
    cache = tmp_path / "cache"
    cache.write_text("a file where the cache directory should be")
    env = {**os.environ, "TIPC_CACHE": str(cache), "TIPC_ALLOW_FILE_URLS": str(repo)}
    refused(tipcgen("prepare", spec, "--mode", MODE, "--root", repo, cwd=tmp_path, env=env), str(cache), code=1)
    (repo / "data").write_text("a file where a directory should be")
    env["TIPC_CACHE"] = str(tmp_path / "cache2")
    refused(tipcgen("prepare", spec, "--mode", MODE, "--root", repo, cwd=tmp_path, env=env), "data", code=1)
    refused(tipcgen("prepare", spec, "--mode", MODE, "--root", repo / "nope", cwd=tmp_path, env=env), "nope")
    # and it works where nothing is in the way
    (repo / "data").unlink()
    proc = tipcgen("prepare", spec, "--mode", MODE, "--root", repo, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (repo / "data/evil.txt").read_text() == "evil"


@pytest.mark.parametrize("command", [("lint",), ("import", "--report"), ("plan",), ("validate",)])
def test_fifos_and_devices_are_refused_without_blocking(tmp_path, command):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/zero")):
        proc = tipcgen(*command, target, cwd=tmp_path, timeout=10)
        out = refused(proc, str(target))
        assert "regular file" in out and "Traceback" not in out
