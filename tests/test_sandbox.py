"""The sandbox the repo's own scripts run in (tipcgen.sandbox): `tipcgen migrate` and
`tipcgen import --prepare` on a repo whose scripts try every way out (tests/helpers/hostile_repo.py)
change nothing outside their scratch copy and end at `--timeout` with every process gone; where the
sandbox cannot be made they refuse, naming why and --no-sandbox, which runs the scripts for real.
Then sandboxed_run itself, case by case, and the guarantee that no module of the package starts a
process any other way (besides the executors that run the user's own commands on purpose)."""

from __future__ import annotations

import ast
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.cli import run_cli
from helpers.hostile_repo import SECRET, HostileRepo
from helpers.machine import bound
from tipcgen import sandbox
from tipcgen.importer.prepare_trace import trace_prepare
from tipcgen.migrate.oracle import run_upstream
from tipcgen.sandbox import OUT_LIMIT, SandboxUnavailable, sandboxed_run

PKG = Path(__file__).resolve().parents[1] / "compiler" / "tipcgen"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
T = 2.0  # the --timeout of the hostile runs
# What a CLI run costs besides its timeouts (start-up, import, the runs that end at once), with room
# for a machine shared with other jobs.
MARGIN = 8.0

pytestmark = pytest.mark.sandbox  # runs the repo's scripts in the sandbox


def tipcgen(*args: str, cwd: Path, env: dict) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    proc = run_cli(*args, cwd=cwd, env=env, timeout=120)
    return proc, time.monotonic() - start


@pytest.fixture
def hostile(tmp_path):
    h = HostileRepo.make(tmp_path)
    yield h
    for line in h.survivors():  # a failed test leaves nothing running
        os.kill(int(line.split(":")[0]), signal.SIGKILL)
    h.close()


def _failing_bwrap(tmp_path: Path, env: dict) -> dict:
    """`env` with a PATH whose first bwrap is a real program that fails as bwrap does in a
    container without user namespaces."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    return {**env, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}


# ---- the CLI on a hostile repo


def test_migrate_on_a_hostile_repo_changes_nothing_outside_and_ends_at_its_timeouts(hostile):
    proc, took = tipcgen(
        "migrate", "--mode", "lite_train_lite_infer", "--timeout", str(T), cwd=hostile.root, env=hostile.env()
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "Traceback" not in out, out
    assert f"upstream timed out after {T:g} s" in out  # the runner hung: killed at --timeout
    assert hostile.changed() == []
    assert hostile.survivors() == []
    # two runs hang one after the other (prepare.sh's traces, all modes at once; then the runner)
    assert took <= 2 * T + bound(MARGIN), took


def test_import_prepare_on_a_hostile_repo_changes_nothing_outside_and_ends_at_its_timeout(hostile, tmp_path):
    out_dir = tmp_path / "specs"
    proc, took = tipcgen(
        "import", "test_tipc/configs", "--out", str(out_dir), "--timeout", str(T), cwd=hostile.root, env=hostile.env()
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Traceback" not in out, out
    assert f"lite_train_lite_infer: {hostile.root}/test_tipc/prepare.sh did not finish in {T:g} s" in out
    assert (out_dir / "toy.yml").is_file()  # the modes that ended are imported
    assert hostile.changed() == []
    assert hostile.survivors() == []
    assert took <= T + bound(MARGIN), took


@pytest.mark.slow
def test_a_flood_of_output_is_streamed_to_a_bounded_file_not_held(tmp_path):
    h = HostileRepo.make(tmp_path, flood_bytes=200 << 20)
    try:
        code = (
            "import resource, subprocess, sys\n"
            "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
            "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        )
        args = ["import", "test_tipc/configs", "--out", str(tmp_path / "specs"), "--timeout", str(T)]
        proc = subprocess.run(
            [sys.executable, "-c", code, sys.executable, "-m", "tipcgen.cli", *args],
            cwd=h.root, env=h.env(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        returncode, peak_kb = map(int, proc.stdout.split())
        assert returncode == 0, proc.stderr
        # 4 traces of 200 MB each, where the whole output was held: >= 800 MB
        assert peak_kb < 250 << 10, f"peak RSS {peak_kb >> 10} MB"
        assert h.changed() == [] and h.survivors() == []
    finally:
        h.close()


def test_where_the_sandbox_cannot_be_made_migrate_and_import_refuse_naming_why_and_no_sandbox(hostile, tmp_path):
    env = _failing_bwrap(tmp_path, hostile.env())
    out_dir = tmp_path / "specs"
    for args in (["migrate"], ["import", "test_tipc/configs", "--out", str(out_dir)]):
        proc, _took = tipcgen(*args, cwd=hostile.root, env=env)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 2 and "Traceback" not in out, out
        assert "cannot make the sandbox that the repo's scripts run in" in out
        assert "bwrap: setting up uid map: Permission denied" in out and "--no-sandbox" in out
        assert len(proc.stderr.strip().splitlines()) == 1  # one paragraph
    assert not out_dir.exists()
    assert hostile.changed() == [] and hostile.survivors() == []
    # nothing of the repo runs without a prepare.sh: no sandbox needed, none asked for
    proc, _took = tipcgen(
        "import", "test_tipc/configs", "--out", str(out_dir), "--prepare", "none", cwd=hostile.root, env=env
    )
    assert proc.returncode == 0, proc.stderr


def test_without_bwrap_the_refusal_says_it_is_not_installed(hostile, tmp_path):
    bin_dir = tmp_path / "nobwrap"
    bin_dir.mkdir()
    proc, _took = tipcgen("migrate", cwd=hostile.root, env={**hostile.env(), "PATH": str(bin_dir)})
    assert proc.returncode == 2, proc.stderr
    assert "bwrap (Debian package bubblewrap) is not installed" in proc.stderr and "--no-sandbox" in proc.stderr


def test_no_sandbox_runs_the_scripts_for_real(hostile, tmp_path):
    """What --no-sandbox means, where the sandbox cannot be made: the hostile prepare.sh deletes,
    writes, connects and kills for real (and so these tests' detector is shown to see it)."""
    env = _failing_bwrap(tmp_path, hostile.env())
    proc, _took = tipcgen(
        "import", "test_tipc/configs", "--out", str(tmp_path / "specs"), "--timeout", str(T), "--no-sandbox",
        cwd=hostile.root, env=env,
    )  # fmt: skip
    assert "warning: --no-sandbox: the repo's scripts run for real" in proc.stderr
    changed = hostile.changed()
    for what in ("rm_abs: changed", "sed_me: changed", "awk_system: created", "sort_me: changed", "uniq_out: created"):
        assert any(line.endswith(what) for line in changed), (what, changed)
    assert "the listener on 127.0.0.1 got a connection" in changed
    assert "the process outside was killed" in changed
    assert any("-setsid" in line for line in hostile.survivors())  # an orphan that left the group


def test_import_checks_its_timeout(tmp_path):
    proc, _took = tipcgen("import", str(FIXTURES / "paddleclas"), "--timeout", "0", cwd=tmp_path, env=dict(os.environ))
    assert proc.returncode == 2 and "--timeout must be a positive number of seconds" in proc.stderr


# ---- sandboxed_run, case by case


def _run(tmp_path: Path, script: str, timeout: float = 10, env: dict | None = None):
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    return sandboxed_run(["bash", "-c", script], scratch=scratch, cwd=scratch, env=env or {}, timeout=timeout)


def _alive(mark: str) -> list:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in argv and state != b"Z":
            found.append(int(pid))
    return found


def test_the_callers_environment_does_not_reach_the_script(tmp_path, monkeypatch):
    monkeypatch.setenv("TIPC_SECRET", SECRET)
    for off in (False, True):  # --no-sandbox clears it too: the same run either way
        with sandbox.unsandboxed() if off else _nothing():
            ran = _run(tmp_path, "env", env={"MINE": "1"})
        seen = dict(line.split("=", 1) for line in ran.stdout.decode().splitlines() if "=" in line)
        assert "TIPC_SECRET" not in seen and seen["MINE"] == "1"
        assert seen["HOME"] == os.path.realpath(tmp_path / "scratch" / "home")
        assert seen["PATH"] == sandbox.SYSTEM_PATH and ran.sandboxed is not off


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def test_the_callers_home_is_hidden(tmp_path, monkeypatch):
    home = tmp_path / "home_of_caller"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    ran = _run(tmp_path, f"cat {home}/.ssh/id_rsa; ls -A {home}")
    assert SECRET not in ran.stdout.decode() and ran.stdout.strip() == b""


def test_writes_outside_the_scratch_fail_and_tmp_is_private(tmp_path):
    var = Path(os.path.realpath("/var/tmp"))
    probe = var / f"tipc-sandbox-{os.getpid()}"
    outside = tmp_path / "outside"
    outside.mkdir()
    script = (
        f"touch {probe}; echo x > {outside}/w; echo x > /etc/tipc-sandbox-probe; "
        f"mount -o remount,rw / ; unshare -r true && echo NESTED; "
        f"echo ok > ./mine; echo t > /tmp/t && cat /tmp/t; ls {tmp_path}"
    )
    ran = _run(tmp_path, script)
    assert not probe.exists() and list(outside.iterdir()) == []
    assert not Path("/etc/tipc-sandbox-probe").exists()
    assert b"NESTED" not in ran.stdout  # no user namespace of its own to gain capabilities in
    assert (tmp_path / "scratch" / "mine").read_text() == "ok\n"
    # its /tmp is its own: written and read there; of the real one only the way to its scratch
    assert ran.stdout.decode().split() == ["t", "scratch"]


def test_no_network(tmp_path):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        ran = _run(tmp_path, f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED")
        assert b"CONNECTED" not in ran.stdout and ran.returncode != 0
        with pytest.raises(BlockingIOError):
            listener.accept()


def test_a_process_outside_cannot_be_seen_or_killed(tmp_path):
    victim = subprocess.Popen(["sleep", "60"])
    try:
        ran = _run(tmp_path, f"kill -9 {victim.pid}; ls /proc | grep -c '^[0-9]'")
        assert victim.poll() is None
        assert int(ran.stdout.split()[-1]) <= 4  # its own: bwrap's init, bash, ls, grep
    finally:
        victim.kill()
        victim.wait()


def test_orphans_do_not_hold_the_run_and_die_with_it(tmp_path):
    mark = f"tipc-orphan-{os.getpid()}"
    script = (
        f"setsid bash -c 'exec -a {mark}-setsid sleep 1000' </dev/null >/dev/null 2>&1 &"
        f"( bash -c 'exec -a {mark}-double sleep 1000' & ) &"
        f"bash -c 'exec -a {mark}-holder sleep 1000' & echo started"
    )
    ran = _run(tmp_path, script, timeout=30)
    assert ran.returncode == 0 and ran.stdout == b"started\n"
    assert ran.elapsed < bound(5), ran.elapsed  # not waiting for the orphan that holds its stdout
    assert _alive(mark) == []


def test_at_the_timeout_the_whole_tree_dies(tmp_path):
    mark = f"tipc-timeout-{os.getpid()}"
    script = (
        f"setsid bash -c 'exec -a {mark}-setsid sleep 1000' </dev/null >/dev/null 2>&1 &"
        f"( ( bash -c 'exec -a {mark}-double sleep 1000' & ) & ); exec -a {mark}-main sleep 1000"
    )
    ran = _run(tmp_path, script, timeout=T)
    assert ran.timed_out and T <= ran.elapsed < T + bound(3), ran.elapsed
    assert _alive(mark) == []


def test_unsandboxed_the_timeout_still_ends_the_run(tmp_path):
    """--no-sandbox: the command's group is killed at the timeout; an orphan that left it and
    holds the output pipe is not waited for (it is the one thing that survives)."""
    mark = f"tipc-nosb-{os.getpid()}"
    with sandbox.unsandboxed():
        ran = _run(tmp_path, f"setsid bash -c 'exec -a {mark}-escaped sleep 1000' & exec -a {mark}-main sleep 1000", T)
    try:
        assert ran.timed_out and not ran.sandboxed
        assert ran.elapsed < T + sandbox.DRAIN_GRACE + bound(2), ran.elapsed
        assert [
            pid for pid in _alive(mark) if f"{mark}-main".encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
        ] == []
    finally:
        for pid in _alive(mark):
            os.kill(pid, signal.SIGKILL)


def test_output_is_bounded_and_its_end_kept(tmp_path):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ran = _run(tmp_path, "head -c 20000000 /dev/zero; echo; echo THE-END; echo oops >&2")
    assert len(ran.stdout) == OUT_LIMIT and ran.dropped == {"stdout": 20_000_009 - OUT_LIMIT}
    tail = ran.tail("stdout")
    assert tail.startswith(f"[stdout: {20_000_009 - OUT_LIMIT} bytes past the first {OUT_LIMIT} not kept]")
    assert tail.endswith("THE-END\n") and ran.tail("stderr") == "oops\n"
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 20_000  # KB: never held whole
    kept = list((tmp_path / "scratch").glob(".tipcgen-stdout-*"))
    assert len(kept) == 1 and kept[0].stat().st_size == OUT_LIMIT  # streamed to a file in the scratch


def test_a_trace_record_replaced_by_a_link_or_a_fifo_is_not_followed(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}\x1f{SECRET}\x1f{SECRET}\x1e")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    config = (FIXTURES / "paddleclas/toy_cls_a_train_infer_python.txt").read_text()
    for attack in (f'/bin/ln -sf {secret} "$TIPC_TRACE"', '/bin/rm "$TIPC_TRACE"; /usr/bin/mkfifo "$TIPC_TRACE"'):
        (scripts / "prepare.sh").write_text(f"#!/bin/bash\nwget https://example.invalid/x.tar\n{attack}\n")
        trace = trace_prepare(scripts, config, "test_tipc/configs/toy/a.txt", "whole_infer", timeout=10)
        assert not trace.timed_out and SECRET not in repr(trace.ops), trace.ops


def test_a_status_log_linked_to_a_file_outside_is_not_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    repo = tmp_path / "upstream"
    repo.mkdir()
    (repo / "test_train_inference_python.sh").write_text(
        f"#!/bin/bash\nmkdir -p test_tipc/output\nln -s {secret} test_tipc/output/results_python.log\n"
    )
    run = run_upstream(repo, FIXTURES / "paddleclas/toy_cls_a_train_infer_python.txt", "whole_infer", timeout=10)
    assert run.status_logs == ["./test_tipc/output/results_python.log"] and run.status_lines == []


def test_the_refusal_is_a_usage_error_naming_no_sandbox(tmp_path, monkeypatch):
    env = _failing_bwrap(tmp_path, dict(os.environ))
    monkeypatch.setenv("PATH", env["PATH"])
    with pytest.raises(SandboxUnavailable, match="--no-sandbox") as caught:
        _run(tmp_path, "true")
    assert caught.value.exit_code == 2
    with sandbox.unsandboxed():
        assert _run(tmp_path, "echo ran").stdout == b"ran\n"


# ---- one way to start a process


# Modules that run the user's own commands on purpose (a spec's steps, a pip install the user asked
# for, the nodes of a fleet, benchmark runs, a paddle/git probe): not a repo's scripts under review.
EXECUTORS = {
    "tipcgen.sandbox",
    "tipcgen.run.executor",
    "tipcgen.run.doctor",
    "tipcgen.run.provenance",
    "tipcgen.run.prepare.install",
    "tipcgen.bench.execute",
    "tipcgen.emit.render",  # forks workers of this package's own rendering, nothing else
}
EXECUTOR_PACKAGES = ("tipcgen.fleet",)
_STARTERS = {
    "os": {"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp"}
    | {"execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl"}
    | {"spawnle", "spawnlp", "spawnlpe"},
    "pty": {"spawn", "fork"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "concurrent": {"ProcessPoolExecutor"},
}


def process_starts(source: str) -> list[str]:
    """Each place `source` can start a process: an import of subprocess or multiprocessing, a call
    of os.system/popen/fork/exec*/spawn*/posix_spawn*, pty.spawn/fork, asyncio's subprocesses."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if _starts(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            if _starts(node.module):
                found.append(f"{node.lineno}: from {node.module} import")
            found += [
                f"{node.lineno}: from {node.module} import {a.name}"
                for a in node.names
                if a.name in _STARTERS.get(top, ())
            ]
        elif isinstance(node, ast.Attribute):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and node.attr in _STARTERS.get(root.id, ()):
                found.append(f"{node.lineno}: {root.id}...{node.attr}")
    return found


_MODULES = ("subprocess", "multiprocessing", "concurrent.futures.process")


def _starts(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in _MODULES)


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def test_no_module_starts_a_process_but_the_sandbox_and_the_executors():
    bad = []
    for module, path in _modules().items():
        if module in EXECUTORS or module.startswith(EXECUTOR_PACKAGES):
            continue
        bad += [f"{path.relative_to(PKG.parent)}:{where}" for where in process_starts(path.read_text())]
    assert not bad, "processes started other than through tipcgen.sandbox.sandboxed_run:\n" + "\n".join(bad)


def test_the_scan_finds_every_way_to_start_a_process():
    for source in (
        "import subprocess\n",
        "from subprocess import run\n",
        "import os\nos.system('x')\n",
        "import os\nos.execvp('x', [])\n",
        "import os\nos.posix_spawn('x', [], {})\n",
        "from os import fork\n",
        "import pty\npty.spawn('x')\n",
        "import asyncio\nasyncio.create_subprocess_exec('x')\n",
        "import multiprocessing\n",
        "from concurrent.futures.process import ProcessPoolExecutor\n",
        "from concurrent.futures import ProcessPoolExecutor\n",
        "import concurrent.futures\nconcurrent.futures.ProcessPoolExecutor()\n",
    ):
        assert process_starts(source), source
    assert process_starts("import os\nos.path.join('a')\nfrom os import environ\n") == []


def test_the_modules_that_run_a_repos_scripts_run_them_in_the_sandbox():
    for module in ("migrate/oracle.py", "importer/prepare_trace.py", "migrate/prepare_diff.py"):
        tree = ast.parse((PKG / module).read_text())
        calls = [
            n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "sandboxed_run"
        ]
        assert calls, f"{module} no longer runs its scripts through sandboxed_run"
