"""Hostile input to `tipcgen fleet`, `tipcgen doctor` and every numeric option: each is one clear
message and exit 2 (or a refusal, exit 1, with nothing started), never a traceback, a hang or a
file written outside the run's `nodes/` directory.

A hostile *node* is simulated by an `ssh` first on PATH that runs the remote script here with
the real `sh` (a node whose "remote" is this machine): its login script can print forged marker
lines, its `tar c` can be a crafted archive. The real OpenSSH tests (`slow`, like
tests/test_fleet_ssh.py) copy into working copies whose paths have spaces and quotes.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import stat
import tarfile
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.machine import bound
from tipcgen.cli import app
from tipcgen.cli.common import MAX_LIMIT, MAX_WAIT
from tipcgen.fleet import gather
from tipcgen.fleet.nodes import name_problem
from tipcgen.spec.ir import MAX_SECONDS

REPO = Path(__file__).resolve().parents[1]
MODE = "lite_train_lite_infer"
FLEET = "test_tipc/configs/tiny_rec/train_linux_cpu_fleet_infer_python.txt"
LOG_DIR = f"test_tipc/output/tiny_rec/{MODE}"
A, B = "127.0.0.2", "127.0.0.3"
runner = CliRunner()

# The nodes' transport: the last two arguments are the host and the remote script, run here by
# `sh` in the node's copy (the script cds there itself). FAKE_LOGIN_LINE: a line a login script
# prints first (on FAKE_LOGIN_HOST only, when set); FAKE_TAR: the node's answer to the gather (a file, then FAKE_TAR_TAIL bytes of
# garbage when set: an archive that never ends); FAKE_SYNC_NOOP: the copy "succeeds" and writes
# nothing; FAKE_DENY: ssh fails saying that. The run itself just succeeds: the controller's handling of the node is under test.
FAKE_SSH = r"""#!/usr/bin/env bash
host=${@: -2:1}
script=${@: -1}
printf '%s\n' "$host" >> "$FAKE_SSH_LOG"
if [[ -n ${FAKE_DENY:-} ]]; then printf '%s\n' "$FAKE_DENY" >&2; exit 255; fi
case $script in
*"exec tar -cf -"*)
    if [[ -n ${FAKE_TAR:-} ]]; then
        cat "$FAKE_TAR"
        [[ -n ${FAKE_TAR_TAIL:-} ]] && head -c "$FAKE_TAR_TAIL" /dev/zero
        exit 0
    fi ;;
*" setsid -w "*) echo "fake run on $host"; exit 0 ;;
*"exec tar -xf -"*) [[ -n ${FAKE_SYNC_NOOP:-} ]] && { cat >/dev/null; exit 0; } ;;
esac
[[ -n ${FAKE_LOGIN_LINE:-} && $host == "${FAKE_LOGIN_HOST:-$host}" ]] && printf '%s\n' "$FAKE_LOGIN_LINE"
# FAKE_LOGIN_DIRS: each host's login directory is $FAKE_LOGIN_DIRS/<host> (else: here)
if [[ -n ${FAKE_LOGIN_DIRS:-} ]]; then cd "$FAKE_LOGIN_DIRS/$host" || exit 255; fi
exec sh -c "$script"
"""


def no_traceback(text: str) -> None:
    assert "Traceback" not in text and "Error:" not in text.replace("error:", ""), text


def invoke(args: list, env: dict | None = None):
    result = runner.invoke(app, [str(a) for a in args], env=env)
    no_traceback(result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """A model repo holding the tiny_rec suite (its two-node fleet config); the current directory."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "generated" / "tiny_rec" / "test_tipc", root / "test_tipc")
    monkeypatch.chdir(root)
    return root


class Nodes:
    """Two node copies of `repo` and the fake ssh in front of them."""

    def __init__(self, tmp: Path, repo: Path):
        self.tmp = tmp
        self.dir = {A: tmp / "node_a", B: tmp / "node_b"}
        for path in self.dir.values():
            shutil.copytree(repo / "test_tipc", path / "test_tipc")
        self.bin = tmp / "bin"
        self.bin.mkdir()
        (self.bin / "ssh").write_text(FAKE_SSH)
        (self.bin / "ssh").chmod(0o755)
        self.log = tmp / "ssh.log"
        self.log.touch()

    def env(self, **extra) -> dict:
        return {"PATH": f"{self.bin}:{os.environ['PATH']}", "FAKE_SSH_LOG": str(self.log), **extra}

    def args(self, *extra) -> list:
        out = [FLEET, "--mode", MODE, "--connect-timeout", 5]
        for ip, path in self.dir.items():
            out += ["--node-dir", f"{ip}={path}"]
        return out + list(extra)

    def calls(self) -> list:
        return self.log.read_text().split()


@pytest.fixture
def nodes(tmp_path, repo) -> Nodes:
    return Nodes(tmp_path, repo)


def fleet_args(*extra) -> list:
    return ["fleet", FLEET, "--mode", MODE, *extra]


# ------------------------------------------------------------------ numeric options, every command

SPEC = str(REPO / "specs" / "tiny_rec.yml")
BOUNDED = [
    # (argv, the option and the range the message must name)
    (["build", SPEC, "--out", "OUT", "--wait", "1e308"], "--wait", f"at most {MAX_WAIT}"),
    (["build", SPEC, "--out", "OUT", "--wait", "nan"], "--wait", f"at most {MAX_WAIT}"),
    (["run", FLEET, "-m", MODE, "--step-timeout", "1e308"], "--step-timeout", f"at most {MAX_LIMIT}"),
    (["run", FLEET, "-m", MODE, "--stall-timeout", "inf"], "--stall-timeout", f"at most {MAX_LIMIT}"),
    (["run", FLEET, "-m", MODE, "--kill-grace", "1e308"], "--kill-grace", f"at most {MAX_WAIT}"),
    (["bench", SPEC, "--out", "OUT", "--timeout", "1e308"], "--timeout", f"at most {MAX_LIMIT}"),
    (["doctor", FLEET, "--connect-timeout", "1e308"], "--connect-timeout", f"at most {MAX_WAIT}"),
    (["doctor", FLEET, "--import-timeout", "1e308"], "--import-timeout", f"at most {MAX_WAIT}"),
    (["doctor", FLEET, "--connect-timeout", "-1"], "--connect-timeout", "positive"),
    (fleet_args("--dry-run", "--kill-grace", "1e308"), "--kill-grace", f"at most {MAX_WAIT}"),
    (fleet_args("--dry-run", "--kill-grace", "-0.5"), "--kill-grace", "non-negative"),
    (fleet_args("--dry-run", "--connect-timeout", "nan"), "--connect-timeout", f"at most {MAX_WAIT}"),
    (fleet_args("--dry-run", "--connect-timeout", "inf"), "--connect-timeout", f"at most {MAX_WAIT}"),
    (fleet_args("--dry-run", "--connect-timeout", "-1"), "--connect-timeout", "positive"),
    (fleet_args("--dry-run", "--connect-timeout", "3601"), "--connect-timeout", f"at most {MAX_WAIT}"),
    (fleet_args("--dry-run", "--run-timeout", "1e308"), "--run-timeout", f"at most {MAX_LIMIT}"),
    (fleet_args("--dry-run", "--run-timeout", str(MAX_LIMIT + 1)), "--run-timeout", f"not {MAX_LIMIT + 1}"),
    (fleet_args("--dry-run", "--step-timeout", "1e308"), "--step-timeout", f"at most {MAX_LIMIT}"),
    (fleet_args("--dry-run", "--step-timeout", "2.5"), "--step-timeout", "whole seconds"),
    (fleet_args("--dry-run", "--step-timeout", "0"), "--step-timeout", "positive"),
    (fleet_args("--dry-run", "--start-port", "0"), "--start-port", "1-65535"),
    (fleet_args("--dry-run", "--start-port", "70000"), "--start-port", "1-65535"),
    (fleet_args("--dry-run", "--ssh-port", "-1"), "--ssh-port", "1-65535"),
    (fleet_args("--dry-run", "--ssh-port", "65536"), "--ssh-port", "1-65535"),
]


@pytest.mark.parametrize("argv,option,bound", BOUNDED, ids=[" ".join(a[0:1] + a[-2:]) for a, _, _ in BOUNDED])
def test_every_numeric_option_is_bounded(repo, argv, option, bound):
    result = invoke(argv)
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert message.startswith(option) and bound in message and len(message.splitlines()) == 1, message
    assert not (repo / "OUT").exists() and not (repo / "test_tipc" / "output").exists()


def test_the_bounds_are_the_specs_and_the_edges_are_accepted(repo):
    assert MAX_LIMIT == MAX_SECONDS  # a run-time limit as long as a spec may write
    result = invoke(
        fleet_args("--dry-run", "--step-timeout", MAX_LIMIT, "--run-timeout", MAX_LIMIT, "--kill-grace", MAX_WAIT)
    )
    assert result.exit_code == 0, result.output
    result = invoke(fleet_args("--dry-run", "--start-port", 65535, "--ssh-port", 1, "--connect-timeout", MAX_WAIT))
    assert result.exit_code == 0, result.output


def test_the_step_limit_reaches_the_nodes_as_digits(repo):
    """1000000 was sent as 1e+06, which every node's bash refuses (it takes ^[0-9]+$)."""
    result = invoke(fleet_args("--dry-run", "--step-timeout", "1000000"))
    assert result.exit_code == 0, result.output
    sent = set(re.findall(r"TIPC_STEP_TIMEOUT=(\S+?)'?\s", result.output))
    assert sent == {"1000000"}, sent
    assert "1e+06" not in result.output
    runner_lib = (repo / "test_tipc" / "test_train_inference_python.sh").read_text()
    assert "=~ ^[0-9]+$" in runner_lib  # what the nodes accept


@pytest.mark.parametrize("value", ["²", "100000", "0", "x"])
def test_tipc_jobs_is_bounded(tmp_path, value):
    result = invoke(["build", SPEC, "--out", tmp_path / "out"], env={"TIPC_JOBS": value})
    assert result.exit_code == 2 and "TIPC_JOBS=" in result.output and "from 1 to 64" in result.output
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ node names from the config


def config_with_hosts(repo: Path, hosts: str) -> str:
    path = repo / "test_tipc" / "configs" / "tiny_rec" / "hostile.txt"
    text = (repo / FLEET).read_text()
    path.write_text(re.sub(r"(?m)^gpu_list:.*$", lambda _: f"gpu_list:{hosts};cpux1", text))
    return str(path.relative_to(repo))


@pytest.mark.parametrize(
    "host",
    ["..", "-oProxyCommand=evil", "root@127.0.0.2", "127.0.0.2:22", "a_b", "1.2.3.999", "fe80::1%eth0", "[::1]"],
)
def test_a_node_name_that_is_no_address_is_refused(repo, host):
    config = config_with_hosts(repo, f"{host},{B}")
    line = next(i for i, ln in enumerate((repo / config).read_text().splitlines(), 1) if ln.startswith("gpu_list"))
    for argv in (["fleet", config, "-m", MODE, "--dry-run"], ["doctor", config, "--connect-timeout", "1"]):
        result = invoke(argv)
        assert result.exit_code == 2, result.output
        assert result.output.startswith(f"{config}:{line}:10: error: gpu_list names node {host!r}:"), result.output
    assert not (repo / "test_tipc" / "output").exists()


@pytest.mark.parametrize("host", ["::1", "node-a.example", "10.0.0.1"])
def test_ipv6_addresses_and_host_names_are_nodes(repo, host):
    assert name_problem(host) is None
    config = config_with_hosts(repo, f"{host},{B}")
    result = invoke(["fleet", config, "-m", MODE, "--dry-run"])
    assert result.exit_code == 0, result.output
    assert f"# node {host} (working copy {repo})" in result.output
    assert f"nodes/{host}/)" in result.output


def test_the_node_directories_never_follow_a_link(repo, nodes, tmp_path):
    """`nodes/` a link: refused before anything is started; `nodes/<ip>` a link: replaced by a
    directory, the link's target untouched (the fleet empties and refills that directory)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    base = repo / LOG_DIR
    base.mkdir(parents=True)
    (base / "nodes").symlink_to(outside)
    result = invoke(["fleet", *nodes.args()], env=nodes.env())
    assert result.exit_code == 2 and "nodes: error: a symbolic link" in result.output, result.output
    assert nodes.calls() == []  # no node was contacted
    (base / "nodes").unlink()
    (base / "nodes").mkdir()
    (base / "nodes" / A).symlink_to(outside)
    result = invoke(["fleet", *nodes.args()], env=nodes.env())
    assert result.exit_code in (0, 1), result.output
    assert (outside / "keep.txt").read_text() == "mine" and sorted(os.listdir(outside)) == ["keep.txt"]
    assert not (base / "nodes" / A).is_symlink() and (base / "nodes" / A / "fleet_run.out").is_file()


# ------------------------------------------------------------------ directories on the nodes


@pytest.mark.parametrize(
    "args,shown",
    [
        (["--remote-dir", ""], "--remote-dir: give a directory on the nodes"),
        (["--remote-dir", "a\nb"], "--remote-dir: give a directory on the nodes"),
        (["--node-dir", f"{A}="], f"--node-dir {A}=DIR: give a directory on the nodes"),
        (["--node-dir", "..=/x"], "--node-dir ..: not a node of this suite"),
        (["--node-dir", "=/x"], "--node-dir '=/x': give IP=DIR"),
        (["--env", "1A=b"], "'1A' is not an environment variable name"),
        (["--env", "A B=c"], "'A B' is not an environment variable name"),
        (["--env", "TIPC_STEP_TIMEOUT=5"], "sets TIPC_STEP_TIMEOUT itself"),
        (["--ssh-config", "missing"], "--ssh-config missing: error: no such file"),
        (["--identity", "test_tipc"], "--identity test_tipc: error: no such file"),
    ],
)
def test_bad_directories_and_env_names_exit_2(repo, args, shown):
    result = invoke(fleet_args("--dry-run", *args))
    assert result.exit_code == 2 and shown in result.output, result.output


def test_odd_directories_and_values_are_quoted_not_refused(repo):
    """Spaces, quotes, `$` in a directory; `-x` (never a cd option); any --env value; --ssh-option
    is the user's own ssh configuration (ProxyCommand included), passed as one -o word."""
    odd = "remote copy's $HOME"
    result = invoke(
        fleet_args(
            "--dry-run", "--sync", "--node-dir", f"{A}={odd}", "--node-dir", f"{B}=-x",
            "--env", "NCCL_DEBUG=a b;$(c)", "--ssh-option", "ProxyCommand=nc %h %p",
        )
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.output
    assert "cd './remote copy'\"'\"'s $HOME'" in out.replace("'\"'\"'", "'")  # one quoted word, relative
    assert "cd ./-x" in out.replace("'\"'\"'", "'")
    assert "'NCCL_DEBUG=a b;$(c)'" in out.replace("'\"'\"'", "'")
    assert "-o 'ProxyCommand=nc %h %p'" in out
    assert not any(line.startswith("scp ") for line in out.splitlines())  # --sync: a tar stream over ssh


# ------------------------------------------------------------------ what a node answers


@pytest.mark.parametrize(
    "line",
    [
        "tipcgen-fleet: file abc def",  # the issue's ValueError
        "tipcgen-fleet: file 0 " + "0" * 64,  # a second, forged digest of file 0
        "tipcgen-fleet: file 99 -",  # no such file
        "tipcgen-fleet: statuslog 99999999999999999999999",
        "tipcgen-fleet: file ² -",
        "tipcgen-fleet: \x1b]0;title\x07",
    ],
)
def test_a_forged_marker_line_refuses_the_run(nodes, repo, line):
    result = invoke(["fleet", *nodes.args()], env=nodes.env(FAKE_LOGIN_LINE=line, FAKE_LOGIN_HOST=A))
    assert result.exit_code == 1, result.output
    said = f"tipc fleet: node {A}: its answer to the check has a line tipcgen did not write: "
    assert said in result.output and f"node {B}:" not in result.output, result.output
    if "file 0 " not in line:  # a second digest of file 0: the conflicting line may be either
        assert f"{said}{line!r}" in result.output
    assert "nothing was started on any node" in result.output
    assert "\x1b" not in result.output
    # here, only the refused run's record (issue 32: every run leaves one, a refused one too)
    written = [p for p in (repo / "test_tipc").rglob("*") if p.is_file() and "output" in p.parts]
    assert sorted(p.name for p in written) == ["fleet.json", "fleet.junit.xml"], written
    record = json.loads(next(p for p in written if p.name == "fleet.json").read_text())
    assert {n["state"] for n in record["nodes"]} == {"refused"} and record["refused"]
    for path in nodes.dir.values():
        assert not (path / "test_tipc" / "output").exists()  # nothing started there


def test_what_a_node_says_cannot_drive_the_terminal(nodes):
    result = invoke(["fleet", *nodes.args()], env=nodes.env(FAKE_DENY="denied \x1b]0;pwned\x07\x1b[2J"))
    assert result.exit_code == 1, result.output
    assert f"tipc fleet: node {A}: ssh failed: denied \\x1b]0;pwned\\x07\\x1b[2J" in result.output
    assert "\x1b" not in result.output and "\x07" not in result.output


def test_a_harmless_extra_ok_line_is_accepted(nodes):
    result = invoke(["fleet", *nodes.args()], env=nodes.env(FAKE_LOGIN_LINE="tipcgen-fleet: ok"))
    assert "its answer to the check" not in result.output
    assert result.exit_code in (0, 1), result.output  # the fake run wrote no status lines


def test_sync_copies_into_directories_with_spaces_and_quotes(nodes, repo, tmp_path):
    for ip, path in list(nodes.dir.items()):
        odd = tmp_path / f"remote copy's $HOME {ip}"
        path.rename(odd)
        nodes.dir[ip] = odd
        (odd / FLEET).write_text("different\n")
    result = invoke(["fleet", *nodes.args("--sync")], env=nodes.env())
    assert "differs" not in result.output and "missing" not in result.output, result.output
    for path in nodes.dir.values():
        assert (path / FLEET).read_bytes() == (repo / FLEET).read_bytes()
        assert os.access(path / "test_tipc" / "test_train_inference_python.sh", os.X_OK)
        assert not list(path.parent.glob("'*"))  # no directory named with the quotes


def test_the_issues_remote_dir_with_a_space(nodes, repo, tmp_path):
    """`--sync --remote-dir "remote copy"` (relative: below each node's login directory; one per
    node, as on two machines: two nodes unpacking into one directory at once would race)."""
    logins = tmp_path / "logins"
    for ip in (A, B):
        (logins / ip / "remote copy").mkdir(parents=True)
    args = [FLEET, "--mode", MODE, "--sync", "--remote-dir", "remote copy"]
    result = invoke(["fleet", *args], env=nodes.env(FAKE_LOGIN_DIRS=str(logins)))
    assert "missing" not in result.output and "copying the files" not in result.output, result.output
    for ip in (A, B):
        assert (logins / ip / "remote copy" / FLEET).read_bytes() == (repo / FLEET).read_bytes()
    assert f"[{A}] fake run on {A}" in result.output and f"[{B}] fake run on {B}" in result.output


def test_a_failed_copy_does_not_advise_sync_again(nodes):
    """Copying fails (the node's test_tipc/configs is a file): its reason, not "run with --sync"."""
    target = nodes.dir[B] / "test_tipc" / "configs"
    shutil.rmtree(target)
    target.write_text("a file")
    result = invoke(["fleet", *nodes.args("--sync")], env=nodes.env())
    assert result.exit_code == 1, result.output
    assert f"tipc fleet: node {B}: copying the files (--sync) failed:" in result.output
    assert "run with --sync" not in result.output and "refused to start" in result.output


def test_a_copy_that_did_not_take_is_named_as_such(nodes):
    (nodes.dir[A] / FLEET).write_text("different\n")
    result = invoke(["fleet", *nodes.args("--sync")], env=nodes.env(FAKE_SYNC_NOOP="1"))
    assert result.exit_code == 1, result.output
    assert f"node {A}: {nodes.dir[A]}/{FLEET} differs" in " ".join(result.output.split())
    assert "--sync copied this machine's file there, yet the node still shows another" in result.output
    assert "run with --sync" not in result.output


# ------------------------------------------------------------------ the logs a node sends back


def _member(tar: tarfile.TarFile, name: str, data: bytes = b"", **kind) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data) if not kind else 0
    for key, value in kind.items():
        setattr(info, key, value)
    tar.addfile(info, io.BytesIO(data) if not kind else None)


def hostile_tar(path: Path, outside: Path) -> Path:
    status = f"Run successfully with command - tiny_rec - python3 x > {LOG_DIR}/x.log 2>&1 !  \n".encode()
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        _member(tar, f"{LOG_DIR}/results_python.log", status)
        _member(tar, "log/workerlog.2", b"worker 2\n")
        _member(tar, "../../escape.txt", b"x")
        _member(tar, "log/../../../../escape2.txt", b"x")
        _member(tar, str(outside / "absolute.txt"), b"x")
        _member(tar, "log/workerlog.0", type=tarfile.SYMTYPE, linkname=str(outside / "linked.txt"))
        _member(tar, "log/workerlog.1", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
        _member(tar, "log/workerlog.3", type=tarfile.LNKTYPE, linkname=f"{LOG_DIR}/results_python.log")
        _member(tar, "fleet_run.out", b"forged")  # not asked for: would replace our capture
        _member(tar, "log/sub/workerlog.9", b"x")
    return path


def test_a_hostile_log_archive_lands_only_where_asked(nodes, repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    archive = hostile_tar(tmp_path / "hostile.tar", outside)
    result = invoke(["fleet", *nodes.args()], env=nodes.env(FAKE_TAR=str(archive)))
    assert result.exit_code in (0, 1), result.output
    got = repo / LOG_DIR / "nodes" / A
    files = sorted(str(p.relative_to(got)) for p in got.rglob("*") if not p.is_dir())
    assert files == ["fleet_run.out", "log/workerlog.2", "results_python.log"], files
    assert (got / "fleet_run.out").read_text() == f"fake run on {A}\n"
    assert not list(tmp_path.rglob("escape*")) and os.listdir(outside) == []
    assert not any(p.is_symlink() for p in got.rglob("*"))
    report = json.loads((repo / LOG_DIR / "nodes" / "fleet.json").read_text())
    problem = report["nodes"][0]["gather_problem"]
    assert problem.startswith(f"node {A}: left out 8 member(s) of its log archive: '../../escape.txt'"), problem
    assert "(a link)" in problem and f"node {A}: left out 8 member(s)" in result.output
    assert report["nodes"][0]["steps"][0]["status"] == "passed"


def test_an_archive_that_never_ends_is_cut_off(nodes, repo, tmp_path):
    archive = hostile_tar(tmp_path / "hostile.tar", tmp_path)
    t0 = time.monotonic()
    result = invoke(["fleet", *nodes.args()], env=nodes.env(FAKE_TAR=str(archive), FAKE_TAR_TAIL="50000000"))
    assert time.monotonic() - t0 < bound(15)
    assert "after the end of its log archive; the rest was not gathered" in result.output, result.output


def test_unpack_bounds_bytes_and_members(tmp_path):
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        _member(tar, "log/workerlog.0", b"a" * 600)
        _member(tar, "log/workerlog.1", b"b" * 600)
    dest = tmp_path / "dest"
    got: list = []
    with pytest.raises(gather.TooMuch, match="more than 1000 bytes of logs"):
        gather.unpack(io.BytesIO(data.getvalue()), str(dest), LOG_DIR, got, set(), limit=1000)
    assert got == ["log/workerlog.0"] and sorted(os.listdir(dest / "log")) == ["workerlog.0"]  # no partial file
    got = []
    with pytest.raises(gather.TooMuch, match="more than 1 files"):
        gather.unpack(io.BytesIO(data.getvalue()), str(tmp_path / "d2"), LOG_DIR, got, set(), members=1)
    assert got == ["log/workerlog.0"]


# ------------------------------------------------------------------ doctor's inputs


def test_doctor_refuses_a_fifo_and_a_link_leading_out(repo, tmp_path):
    fifo = repo / "test_tipc" / "configs" / "tiny_rec" / "fifo.txt"
    os.mkfifo(fifo)
    link = repo / "test_tipc" / "configs" / "tiny_rec" / "out.txt"
    secret = tmp_path / "secret.txt"
    secret.write_text("gpu_list:1.2.3.4,1.2.3.5;0\n")
    link.symlink_to(secret)
    t0 = time.monotonic()
    for path in (fifo, link):
        result = invoke(["doctor", str(path.relative_to(repo))])
        assert result.exit_code == 2 and result.output.startswith(f"{path.relative_to(repo)}: error:"), result.output
    assert time.monotonic() - t0 < bound(10)


def test_doctor_survives_hostile_environment_and_interpreter(repo, tmp_path):
    """TIPC_NODE_IP `..` and FLAGS_START_PORT `²` were a UnicodeError traceback and a ValueError;
    an interpreter answering the probe with broken JSON was a JSONDecodeError."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    fake.write_text('#!/bin/sh\necho "TIPCGEN_DOCTOR {\\"version\\": 1, \\"devices\\": 1e400, "\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {"TIPC_NODE_IP": "..", "FLAGS_START_PORT": "²", "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    result = invoke(["doctor", FLEET, "--connect-timeout", "1", "--import-timeout", "10"], env=env)
    assert result.exit_code == 1, result.output
    lines = {
        line.split()[1]: line for line in result.output.splitlines() if line[:4] in ("ok  ", "warn", "fail", "skip")
    }
    assert lines["ports"].startswith("fail") and "'²'" in lines["ports"]
    assert lines["peers"].startswith("skip")
    assert lines["python"].startswith("fail") and "not what `import paddle` prints" in lines["python"]
    env["FLAGS_START_PORT"] = "99999"
    result = invoke(["doctor", FLEET, "--connect-timeout", "1", "--skip", "python"], env=env)
    assert result.exit_code == 1 and "'99999'" in result.output, result.output


# ------------------------------------------------------------------ over real OpenSSH (slow)


@pytest.mark.slow
def test_sync_over_real_ssh_into_directories_with_spaces(tmp_path, monkeypatch):
    """The issue's case: `--sync --remote-dir "remote copy"` failed (scp's SFTP mode took the
    quoted path literally) and then advised --sync. Now the copy lands, and the run starts."""
    from helpers.sshd import SshNodes, why_not
    from helpers.tools import require
    from test_fleet_ssh import fake_python
    from test_run_e2e_paddle import NODE_IPS, free_port, loopback_aliases_usable

    require(why_not() or loopback_aliases_usable())
    sshd = SshNodes(tmp_path / "sshd", NODE_IPS, free_port(NODE_IPS, span=1)).start_all()
    try:
        local = tmp_path / "local"
        shutil.copytree(REPO / "generated" / "tiny_rec" / "test_tipc", local / "test_tipc")
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "python3").write_text(fake_python())
        (bin_dir / "python3").chmod(0o755)
        copies = {ip: tmp_path / f"remote copy's {ip}" for ip in NODE_IPS}
        args = [FLEET, "--mode", MODE, *sshd.ssh_args(), "--sync", "--connect-timeout", 5, "--kill-grace", 3]
        for ip, path in copies.items():
            path.mkdir()  # an empty working copy: every file is missing there
            args += ["--node-dir", f"{ip}={path}"]
        args += ["--env", f"PATH={bin_dir}:/usr/bin:/bin"]
        monkeypatch.chdir(local)
        result = invoke(["fleet", *args])
        assert "missing" not in result.output and "failed:" not in result.output.split("tiny_rec lite")[0], (
            result.output
        )
        for ip, path in copies.items():
            assert (path / FLEET).read_bytes() == (local / FLEET).read_bytes()
            assert f"[{ip}] fake python3 node={ip}" in result.output  # the run started on the node
        assert sorted(p.name for p in tmp_path.iterdir() if "'" in p.name) == sorted(p.name for p in copies.values())
    finally:
        sshd.stop_all()


def test_doctor_holds_only_the_head_of_an_endless_interpreter(repo, tmp_path):
    """The config's `python` may print forever: it was all kept (5 GB in 3 s); now 1 MiB."""
    import resource
    import subprocess
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text("#!/bin/sh\nexec yes TIPCGEN_DOCTOR\n")
    (bin_dir / "python3").chmod(0o755)

    def two_gib() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    t0 = time.monotonic()
    res = subprocess.run(
        [sys.executable, "-m", "tipcgen.cli", "doctor", FLEET, "--import-timeout", "3", "--skip", "peers"],
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=two_gib,
    )
    assert time.monotonic() - t0 < bound(15)
    no_traceback(res.stderr)
    assert res.returncode == 1 and "`import paddle` did not finish within 3 s" in res.stdout, res.stdout + res.stderr
