"""The tests' warm CLI start (helpers/warm.py) against a real exec of the CLI: the same output,
errors and exit status for the same call; the call's own cwd, environment and standard input;
a hang ended at its bound; nothing of one call seen by the next."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest

from conftest import SPECS
from helpers.cli import exec_cli, run_cli
from helpers.warm import Warm
from test_load import VALID

CALLS = [
    ("--help",),
    ("version",),
    ("validate", "nope.yml"),
    ("validate", "specs/tiny_rec.yml"),
    ("build", "specs/tiny_rec.yml", "--out", "out"),
    ("plan", "no_such_config.txt", "--mode", "lite_train_lite_infer"),
    ("check", "specs/", "--out", "elsewhere"),
]


@pytest.mark.parametrize("args", CALLS, ids=[" ".join(c) for c in CALLS])
def test_a_warm_call_prints_and_exits_as_a_real_exec(tmp_path, args):
    results = []
    for how, call in (("exec", exec_cli), ("warm", run_cli)):
        work = tmp_path / how
        (work / "specs").mkdir(parents=True)
        shutil.copy(SPECS / "tiny_rec.yml", work / "specs")
        results.append(call(*args, cwd=work, timeout=60))
    real, warm = results
    # the paths the calls name are their own folders: the same text once those are set aside
    same = [(p.returncode, p.stdout.replace(str(tmp_path / h), "W"), p.stderr.replace(str(tmp_path / h), "W"))
            for p, h in ((real, "exec"), (warm, "warm"))]  # fmt: skip
    assert same[0] == same[1]
    assert "Traceback" not in real.stderr + warm.stderr


def test_a_warm_call_has_its_own_cwd_environment_and_input(tmp_path, monkeypatch):
    bad = tmp_path / "a" / "bad.yml"
    bad.parent.mkdir()
    bad.write_text(VALID.replace("layout: paddleocr", "layuot: paddleocr"))
    first = run_cli("validate", "bad.yml", cwd=bad.parent, env={**os.environ, "NO_COLOR": "1"})
    assert first.returncode == 2 and "bad.yml:" in first.stderr and "did you mean 'layout'" in first.stderr
    # the environment given is the whole environment: a variable the next call lacks is gone
    env = {k: v for k, v in os.environ.items() if k != "TIPC_ALLOW_FILE_URLS"}
    spec = tmp_path / "s.yml"
    spec.write_text(VALID + "prepare:\n  lite_train_lite_infer:\n    - url: file:///etc/hostname\n      to: ./x\n")
    refused = run_cli("validate", str(spec), cwd=tmp_path, env=env)
    allowed = run_cli("validate", str(spec), cwd=tmp_path, env={**env, "TIPC_ALLOW_FILE_URLS": "/etc"})
    assert refused.returncode == 2 and "TIPC_ALLOW_FILE_URLS" in refused.stderr, refused.stderr
    assert allowed.returncode == 0, allowed.stderr
    again = run_cli("validate", str(spec), cwd=tmp_path, env=env)
    assert (again.returncode, again.stderr) == (refused.returncode, refused.stderr)
    # nor does the warm process's own environment show through: one started with the variable set
    monkeypatch.setenv("TIPC_ALLOW_FILE_URLS", "/etc")
    warm = Warm()
    try:
        lacking = warm.run(["validate", str(spec)], cwd=tmp_path, env=env, timeout=60)
        assert lacking.returncode == 2 and "TIPC_ALLOW_FILE_URLS" in lacking.stderr, lacking.stderr
        # standard input given is the child's (a pipe: not a terminal, so `new` does not ask)
        piped = warm.run(["new"], cwd=tmp_path, env=env, timeout=60, input="resnet\n")
        real = exec_cli("new", cwd=tmp_path, env=env, input="resnet\n")
        assert piped.returncode == real.returncode == 2 and "stdin is not a terminal" in piped.stderr
        assert (piped.stdout, piped.stderr) == (real.stdout, real.stderr)
    finally:
        warm._stop()


def test_a_warm_call_that_hangs_is_killed_at_its_bound(tmp_path):
    from test_run import FAKE_PYTHON, _install, _tree

    spec = _tree(tmp_path / "repo", "ch_PP-OCRv3_rec.yml")
    _install(tmp_path / "bin", "python3.7", FAKE_PYTHON)
    pids = tmp_path / "pids"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "CUDA_VISIBLE_DEVICES"))}
    env.update(PATH=f"{tmp_path / 'bin'}{os.pathsep}{env['PATH']}", FAKE_HANG="1", FAKE_PIDS=str(pids))
    config = f"test_tipc/configs/{spec.model}/{spec.suites['normal'].file}"
    try:
        with pytest.raises(subprocess.TimeoutExpired):  # the training never ends; no step limit given
            run_cli("run", config, "--mode", "lite_train_lite_infer", cwd=tmp_path / "repo", env=env, timeout=3)
    finally:
        for line in pids.read_text().splitlines() if pids.exists() else []:
            for pid in map(int, line.split()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    assert pids.exists(), "the training step never started"
    # the next call is served (by a new warm process)
    assert run_cli("version", cwd=tmp_path).returncode == 0
