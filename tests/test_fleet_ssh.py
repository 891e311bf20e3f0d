"""`tipcgen fleet` over real OpenSSH: sshd on 127.0.0.2 and 127.0.0.3, one working copy per node.

No mocks: Debian's /usr/sbin/sshd (one per address, throwaway host and user keys, started by the
module fixture), the system ssh, the generated bash runner on each node. The fast tests put
a small bash `python3` first on the nodes' PATH (via `--env PATH=...`): it prints what it was
given and can fail or hang on one node, which is all the fleet's own logic needs. The paddle
test kills one node mid-train (`--prepare` fetches the data from a loopback HTTP server); real
training across hosts with their own names, addresses and disks, over sshd in each, is in
tests/test_fleet_slurm.py.

Without sshd the tests skip saying why; with TIPC_REQUIRE_TOOLS=1 (CI) they fail instead.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers.http_server import PrepareServer
from helpers.machine import bound
from helpers.sshd import SshNodes, why_not
from helpers.tools import require
from test_run_e2e_paddle import (
    FLEET,
    INFER_LOGS,
    LOG_DIR,
    MODE,
    N_INFER,
    NODE_IPS,
    PY,
    SPEC,
    TIPCGEN,
    _copy_example,
    free_port,
    loopback_aliases_usable,
    processes_in,
)

REPO = Path(__file__).resolve().parents[1]
A, B = NODE_IPS
NODES_OUT = f"{LOG_DIR}/nodes"
PID_FILE = "test_tipc/output/.tipcgen-fleet.pid"
SKIPPED_B = "Run skipped (not trainer 0) with command - tiny_rec - "
TIMINGS: dict = {}

# The nodes' `python3` for the fast tests. FAKE_FAIL_ON=<ip>: the train on that node fails after
# a second; FAKE_HANG_ON=<ip>: it never ends (a peer that waits for a partner); FAKE_SLEEP_ON=<ip>:
# it passes after 3 s.
FAKE_PYTHON = r"""#!/usr/bin/env bash
# The fleet's preflight asks the interpreter about the node (`-c CODE`): the real one answers.
if [[ ${1-} == -c ]]; then exec __REAL_PYTHON__ "$@"; fi
echo "fake python3 node=${TIPC_NODE_IP:-unset} port=${FLAGS_START_PORT:-unset} step_timeout=${TIPC_STEP_TIMEOUT:-unset} argv: $*"
if [[ " $* " == *" -m paddle.distributed.launch "* ]]; then
    mkdir -p log && echo "worker log of ${TIPC_NODE_IP}" > log/workerlog.0
    if [[ -n ${FAKE_FAIL_ON:-} && " $* " == *" --host=${FAKE_FAIL_ON} "* ]]; then sleep 1; exit 3; fi
    if [[ -n ${FAKE_HANG_ON:-} && " $* " == *" --host=${FAKE_HANG_ON} "* ]]; then exec sleep 3600; fi
    if [[ -n ${FAKE_SLEEP_ON:-} && " $* " == *" --host=${FAKE_SLEEP_ON} "* ]]; then sleep 3; fi
fi
exit 0
"""


def fake_python() -> str:
    """FAKE_PYTHON whose `-c` (the fleet's preflight probe) runs this interpreter."""
    return FAKE_PYTHON.replace("__REAL_PYTHON__", shlex.quote(sys.executable))


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    require(why_not() or loopback_aliases_usable())
    nodes = SshNodes(tmp_path_factory.mktemp("sshd"), NODE_IPS, free_port(NODE_IPS, span=1)).start_all()
    try:
        yield nodes
    finally:
        nodes.stop_all()


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """The model repo: examples/tiny_rec plus the suite compiled from specs/tiny_rec.yml."""
    root = tmp_path_factory.mktemp("fleet_base")
    repo = root / "repo"
    _copy_example(repo)
    res = subprocess.run(
        TIPCGEN + ["build", str(SPEC), "--out", str(root / "gen")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    shutil.copytree(root / "gen" / "tiny_rec" / "test_tipc", repo / "test_tipc")
    return repo


class Copies:
    """This machine's copy (`local`, where tipcgen fleet runs) and one copy per node."""

    def __init__(self, root: Path, base: Path, sshd: SshNodes):
        self.root = root
        self.sshd = sshd
        self.local = root / "local"
        self.node = {A: root / "node_a", B: root / "node_b"}
        for path in (self.local, *self.node.values()):
            shutil.copytree(base, path, symlinks=True)
        self.bin = root / "bin"
        self.bin.mkdir()
        (self.bin / "python3").write_text(fake_python())
        (self.bin / "python3").chmod(0o755)

    def args(self, *extra, fake: bool = True) -> list:
        out = [FLEET, "--mode", MODE, *self.sshd.ssh_args(), "--connect-timeout", "5", "--kill-grace", "3"]
        for ip, path in self.node.items():
            out += ["--node-dir", f"{ip}={path}"]
        if fake:
            out += ["--env", f"PATH={self.bin}:/usr/bin:/bin"]
        return out + [str(e) for e in extra]

    def started_anything(self) -> list:
        """What a run would leave in a node's copy: the pid file, status log, worker logs."""
        found = []
        for path in self.node.values():
            for rel in (PID_FILE, f"{LOG_DIR}/results_python.log", "log/workerlog.0"):
                if (path / rel).exists():
                    found.append(str(path / rel))
        return found


@pytest.fixture
def copies(tmp_path, base, sshd) -> Copies:
    c = Copies(tmp_path, base, sshd)
    yield c
    left = {**processes_in(tmp_path)}
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    assert not left, f"processes left behind on the nodes (now killed): {left}"


def fleet(args, cwd: Path, timeout: float = 120, label: str = ""):
    """Run `tipcgen fleet ARGS` in `cwd` -> (exit code, stdout, stderr, seconds)."""
    t0 = time.monotonic()
    try:
        res = subprocess.run(
            TIPCGEN + ["fleet", *[str(a) for a in args]],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"tipcgen fleet outlived {timeout} s: {exc.stdout}\n{exc.stderr}")
    seconds = time.monotonic() - t0
    if label:
        timing(label, seconds)
    return res.returncode, res.stdout, res.stderr, seconds


def timing(label: str, seconds: float) -> None:
    """Recorded for the assertions and printed (pytest -s / -rP) for the closing note."""
    TIMINGS[label] = seconds
    print(f"fleet timing {label:<45} {seconds:7.1f} s")


def report(local: Path) -> dict:
    return json.loads((local / NODES_OUT / "fleet.json").read_text())


def flat(text: str) -> str:
    return " ".join(text.split())


# ----------------------------------------------------------------------------- fast tier


def test_fleet_runs_every_node_and_gathers_their_logs(copies):
    # an earlier run's inference log on node 2, which skips inference this run: never gathered
    stale = copies.node[B] / INFER_LOGS[0]
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text("an old, passing log\n")
    os.utime(stale, (1, 1))
    rc, out, err, _ = fleet(copies.args("--start-port", 7123, "--step-timeout", 900), copies.local)
    assert rc == 0, out + err
    # Each node got its own address, the same port, the step limit; the output is prefixed.
    assert f"[{A}] fake python3 node={A} port=7123 step_timeout=900 argv: -m paddle.distributed.launch" in out
    assert f"[{B}] fake python3 node={B} port=7123 step_timeout=900 argv: -m paddle.distributed.launch" in out
    assert f"--host={B} --start_port=7123" in out
    assert f"[{B}] tipc: 1 steps run, 1 passed, 0 failed, 4 skipped" in out

    for ip in (A, B):
        got = copies.local / NODES_OUT / ip
        assert (got / "results_python.log").read_bytes() == (
            copies.node[ip] / LOG_DIR / "results_python.log"
        ).read_bytes()
        assert (got / "log/workerlog.0").read_text() == f"worker log of {ip}\n"
        assert f"[{ip}]" not in (got / "fleet_run.out").read_text()  # the node's own output, unprefixed
    assert (copies.local / NODES_OUT / A / INFER_LOGS[0]).is_file()  # trainer 0's step logs came home
    assert not (copies.local / NODES_OUT / B / INFER_LOGS[0]).exists()  # node 2 skipped them

    data = report(copies.local)
    assert data["exit_code"] == 0 and data["first_failure"] is None and data["start_port"] == 7123
    states = {n["ip"]: [s["status"] for s in n["steps"]] for n in data["nodes"]}
    assert states == {A: ["passed"] * 5, B: ["passed"] + ["skipped"] * 4}
    assert {s["reason"] for s in data["nodes"][1]["steps"][1:]} == {"not trainer 0"}

    junit = ET.parse(copies.local / NODES_OUT / "fleet.junit.xml").getroot()
    suites = {s.get("name"): s for s in junit.iter("testsuite")}
    assert set(suites) == {A, B}
    assert [len(list(s.iter("testcase"))) for s in suites.values()] == [5, 5]
    assert suites[B].get("skipped") == "4" and suites[A].get("failures") == "0"
    # The summary table: one column per node.
    assert A in out.split("tiny_rec lite_train_lite_infer on 2 nodes", 1)[1]


def test_dry_run_prints_the_ssh_commands_and_connects_nowhere(copies):
    copies.sshd.stop(B)
    try:
        rc, out, err, _ = fleet(copies.args("--dry-run", "--sync", "--prepare", "--ssh-port", 1), copies.local)
    finally:
        copies.sshd.start(B)
    assert rc == 0, err
    assert f"# node {A} (working copy {copies.node[A]})" in out and f"# node {B} (working copy {copies.node[B]})" in out
    ssh_lines = [ln for ln in out.splitlines() if ln.startswith("ssh ")]
    assert ssh_lines and all("-o BatchMode=yes" in ln and f"-F {copies.sshd.client_config}" in ln for ln in ssh_lines)
    assert "# sync (when a file differs; a tar stream of" in out and "exec tar -xf -" in out  # --sync: ssh + tar
    assert f"TIPC_NODE_IP={B} FLAGS_START_PORT=6070" in out
    assert "bash test_tipc/test_train_inference_python.sh" in out and "bash test_tipc/prepare.sh" in out
    assert not copies.started_anything() and not (copies.local / NODES_OUT).exists()


def test_a_failed_node_stops_the_other(copies):
    """Node 1's train fails after a second, node 2's never ends: node 2 is stopped at once."""
    rc, out, err, seconds = fleet(
        copies.args("--env", f"FAKE_FAIL_ON={A}", "--env", f"FAKE_HANG_ON={B}", "--summary", "out/summary.md"),
        copies.local,
        label="fake: node fails",
    )
    assert rc == 1, out + err
    assert seconds < bound(30), seconds
    assert f"stopped every node: node {A} failed (exit 1)" in out
    assert f"node {A}: failed at step 1 train" in flat(out)  # numbered from 1, as the progress lines
    assert f"node {B}: stopped at step 1 train" in flat(out)
    data = report(copies.local)
    assert data["first_failure"]["node"] == A and data["first_failure"]["step"]["kind"] == "train"
    by_ip = {n["ip"]: n for n in data["nodes"]}
    assert [s["status"] for s in by_ip[B]["steps"]] == ["stopped"] + ["not run"] * 4
    assert [s["status"] for s in by_ip[A]["steps"]] == ["failed"] + ["skipped"] * 4
    assert not processes_in(copies.node[B]), "node 2's hanging train was not stopped"
    assert data["record"]["kind"] == "fleet" and data["layout"] == "paddleocr"  # versioned, with its chain
    # the markdown summary: a row per node, each failed or stopped step with why
    summary = (copies.local / "out/summary.md").read_text()
    assert summary.startswith(f"### ❌ FAILED: tiny_rec · {MODE} · paddleocr · 2 nodes\n")
    assert f"| {A} | failed | 0 | 1 | 4 | 0 | 0 | 0 |" in summary
    assert f"| {B} | stopped | 0 | 0 | 0 | 0 | 0 | 4 |" in summary
    assert f"#### node {A}: step 1 `train`" in summary and f"#### node {B}: step 1 `train`" in summary
    assert "python3 -m paddle.distributed.launch" in summary  # node A's command, from its status line
    run_out = f"test_tipc/output/tiny_rec/{MODE}/nodes/{A}/fleet_run.out"
    last = (copies.local / run_out).read_text().strip().splitlines()[-1]
    assert f"last 15 lines of [./{run_out}](<../{run_out}>):" in summary and last in summary  # its console


def test_a_step_the_bash_timed_out_is_reported_as_timed_out(copies):
    """--step-timeout reaches the nodes' bash as TIPC_STEP_TIMEOUT; node 2's hanging train is
    stopped there, and the report says "timed out" for that node and step."""
    rc, out, err, seconds = fleet(
        copies.args("--env", f"FAKE_HANG_ON={B}", "--step-timeout", 2, "--run-timeout", 30),
        copies.local,
        label="fake: bash step limit 2 s",
    )
    assert rc == 1, out + err
    assert "stopped every node: timed out after 30 s" not in out, "the nodes' bash did not apply TIPC_STEP_TIMEOUT"
    assert seconds < bound(2 + 25), seconds
    by_ip = {n["ip"]: n for n in report(copies.local)["nodes"]}
    assert [s["status"] for s in by_ip[A]["steps"]] == ["passed"] * 5
    assert by_ip[B]["steps"][0]["status"] == "timed out", by_ip[B]["steps"][0]
    assert by_ip[B]["steps"][0]["reason"].startswith("timed out after 2 s"), by_ip[B]["steps"][0]
    assert not processes_in(copies.node[B])


def test_status_lines_and_the_bash_step_limit_message_become_step_outcomes():
    """The report's reading of a node's run: this run's status lines (after the log's old size),
    the bash's "timed out" message for a failed step, the step a stopped node was in."""
    from tipcgen.check.source import plan_source
    from tipcgen.fleet.nodes import Node
    from tipcgen.fleet.report import status_lines, step_outcomes

    config = str(REPO / "generated" / "tiny_rec" / FLEET)
    plan = plan_source(config, MODE, node_ip=B, start_port="7000")
    node = Node(B, "/x", plan)
    old = plan.status_line(plan.steps[0], True) + "\n"
    new = f"\x1b[33m {plan.status_line(plan.steps[0], False)}\x1b[0m\n"
    lines = status_lines((old + new).encode(), len(old.encode()))
    assert len(lines) == 1 and lines[0].startswith("Run failed with command - tiny_rec - python3 -m paddle")
    said = ["tipc: step 1 (train) timed out after 2 s (limit from TIPC_STEP_TIMEOUT); its processes were stopped"]
    got = step_outcomes(node, lines, "stopped", said)
    assert [(o.status, o.reason) for o in got[:2]] == [("timed out", "timed out after 2 s"), ("stopped", None)]
    assert [o.status for o in got[2:]] == ["not run"] * 3
    assert step_outcomes(node, lines, "stopped", [])[0].status == "failed"


@pytest.mark.slow
def test_the_run_bound_stops_every_node(copies):
    rc, out, err, seconds = fleet(
        copies.args("--env", f"FAKE_HANG_ON={A}", "--run-timeout", 3),
        copies.local,
        label="fake: run bound 3 s",
    )
    assert rc == 1, out + err
    assert seconds < bound(3 + 25), seconds
    assert "stopped every node: timed out after 3 s" in out
    data = report(copies.local)
    assert data["nodes"][0]["steps"][0]["status"] == "timed out"
    assert not processes_in(copies.node[A])


def test_an_unreachable_node_starts_nothing_anywhere(copies):
    copies.sshd.stop(B)
    try:
        rc, out, err, seconds = fleet(copies.args(), copies.local, label="unreachable node (sshd stopped)")
    finally:
        copies.sshd.start(B)
    assert rc == 1, out + err
    assert (
        f"tipc fleet: node {B}: ssh failed: ssh: connect to host {B} port {copies.sshd.port}: Connection refused" in err
    )
    assert "refused to start; nothing was started on any node" in err
    assert f"node {A}:" not in err  # only the unreachable node is named
    assert seconds < bound(5 + 15), seconds
    assert not copies.started_anything()


def test_a_node_without_paddle_is_refused_before_anything_starts(copies):
    """Node B's run would see an interpreter with no paddle: named with the fix, nothing started."""
    no_paddle = copies.root / "no_paddle"
    no_paddle.mkdir()
    (no_paddle / "python3").symlink_to("/usr/bin/python3")
    args = copies.args(fake=False) + ["--env", f"PATH={no_paddle}:/usr/bin:/bin"]
    rc, out, err, _ = fleet(args, copies.local, label="no paddle on the nodes")
    assert rc == 1, out + err
    for ip in (A, B):
        assert f"tipc fleet: node {ip}: python3 (Python 3." in err and "finds no `paddle` module" in err, err
    assert "refused to start; nothing was started on any node" in err
    assert not copies.started_anything()


def test_a_missing_interpreter_is_refused(copies):
    args = copies.args(fake=False) + ["--env", f"PATH={copies.root / 'nothing'}"]
    rc, out, err, _ = fleet(args, copies.local, label="no interpreter on the nodes")
    assert rc == 1, out + err
    assert f"node {A}: the config's interpreter 'python3' is not on the run's PATH there" in err, err
    assert not copies.started_anything()


def test_a_busy_start_port_on_one_node_is_named_before_anything_starts(copies):
    """Today's symptom was a SIGABRT on the other node mid-run; now the preflight names the port."""
    port = free_port((B,), span=1)
    with socket.socket() as held:
        held.bind((B, port))
        held.listen(1)
        rc, out, err, _ = fleet(copies.args("--start-port", port), copies.local, label="busy start port")
    assert rc == 1, out + err
    assert f"tipc fleet: node {B}: port {port} on {B} is in use here" in err, err
    assert "or pick another --start-port" in err
    assert f"node {A}: port" not in err
    assert not copies.started_anything()


@pytest.mark.slow
def test_a_silent_node_is_given_up_within_the_connect_bound(copies):
    """A node whose port accepts but never speaks SSH: ssh's ConnectTimeout ends the wait."""
    with socket.socket() as silent:
        silent.bind((B, 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        with socket.socket() as a_listen:  # node 1 on the same port, answering nothing either
            a_listen.bind((A, port))
            a_listen.listen(8)
            rc, out, err, seconds = fleet(
                copies.args("--ssh-port", port, "--connect-timeout", 3), copies.local, label="silent node, bound 3 s"
            )
    assert rc == 1, out + err
    assert f"node {B}:" in err and "refused to start" in err
    assert seconds < bound(3 + 20), seconds
    assert not copies.started_anything()


def differing_config(copies) -> Path:
    cfg = copies.node[B] / FLEET
    cfg.write_text(cfg.read_text().replace("epoch_num:lite_train_lite_infer=3", "epoch_num:lite_train_lite_infer=4"))
    return cfg


def test_a_config_that_differs_is_refused(copies):
    cfg = differing_config(copies)
    rc, out, err, seconds = fleet(copies.args(), copies.local, label="differing config refused")
    assert rc == 1, out + err
    assert f"tipc fleet: node {B}: {cfg} differs from this machine's config {FLEET}" in flat(err)
    assert "run with --sync" in err and f"node {A}:" not in err
    assert not copies.started_anything()


@pytest.mark.slow
def test_sync_copies_this_machines_files_then_runs(copies):
    cfg = differing_config(copies)
    (copies.node[A] / "test_tipc/common_func.sh").unlink()  # a missing file is copied too
    rc, out, err, _ = fleet(copies.args("--sync"), copies.local, label="--sync, then the run")
    assert rc == 0, out + err
    assert cfg.read_bytes() == (copies.local / FLEET).read_bytes()
    common = copies.node[A] / "test_tipc/common_func.sh"
    assert common.read_bytes() == (copies.local / "test_tipc/common_func.sh").read_bytes()
    assert f"[{B}] tipc: 1 steps run, 1 passed" in out
    # each node is told what --sync wrote there, and only what differed is copied
    assert f"[{A}] --sync created test_tipc/common_func.sh in {copies.node[A]}" in out
    assert f"[{B}] --sync replaced {FLEET} in {copies.node[B]}" in out
    assert f"[{A}] --sync replaced" not in out and f"[{B}] --sync created" not in out


def test_bad_input_exits_2(copies):
    rc, _, err, _ = fleet(copies.args("--node-dir", "127.0.0.9=/x"), copies.local)
    assert rc == 2 and "127.0.0.9: not a node of this suite" in err
    normal = "test_tipc/configs/tiny_rec/train_infer_python.txt"
    rc, _, err, _ = fleet([normal, "--mode", MODE], copies.local)
    assert rc == 2 and "no multi-node topology" in err
    rc, _, err, _ = fleet(copies.args("--env", "TIPC_NODE_IP=1.2.3.4"), copies.local)
    assert rc == 2 and "sets TIPC_NODE_IP itself" in err


# ----------------------------------------------------------------------------- real paddle


@pytest.fixture(scope="module")
def paddle_data(tmp_path_factory, base):
    """The tiny_rec data tarballs served on 127.0.0.1; skips when paddle cannot be imported."""
    res = subprocess.run([PY, "-c", "import paddle"], capture_output=True, text=True, timeout=180)
    if res.returncode != 0:
        pytest.skip(f"`import paddle` fails with {PY}: {(res.stderr.strip().splitlines() or ['?'])[-1]}")
    root = tmp_path_factory.mktemp("fleet_data")
    (root / "bin").mkdir()
    (root / "bin" / "python3").write_text(f'#!/usr/bin/env bash\nexec "{PY}" "$@"\n')
    (root / "bin" / "python3").chmod(0o755)
    res = subprocess.run(
        [PY, "tools/make_data.py", "--out", str(root / "data"), "--infer", str(N_INFER), "--tar", str(root / "serve")],
        cwd=base,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert res.returncode == 0, res.stderr
    server = PrepareServer().start()
    for name in ("tiny_rec_data.tar", "rec_inference.tar"):
        server.add(f"/tiny_rec/{name}", (root / "serve" / name).read_bytes())
    try:
        yield root, server
    finally:
        server.stop()


def paddle_env(root: Path, server) -> list:
    """--env for the nodes: `python3` is this interpreter, the data comes from the loopback server."""
    env = {
        "PATH": f"{root / 'bin'}:/usr/bin:/bin",
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "TIPC_MIRROR": server.url("/tiny_rec"),
        # Relative: each node's own cache in its copy (two prepare.sh runs sharing one cache race).
        "TIPC_CACHE": ".tipc_cache",
        "TIPC_TIMEOUT": "10",
    }
    return [a for k, v in env.items() for a in ("--env", f"{k}={v}")]


@pytest.mark.paddle
@pytest.mark.slow
def test_a_node_killed_mid_train_stops_the_other(copies, paddle_data):
    root, server = paddle_data
    mode = "whole_train_whole_infer"  # 25 epochs: long enough to be killed in the middle
    args = [a if a != MODE else mode for a in copies.args("--prepare", "--start-port", free_port(NODE_IPS), fake=False)]
    args += [*paddle_env(root, server), "--kill-grace", "5"]
    proc = subprocess.Popen(
        TIPCGEN + ["fleet", *map(str, args)],
        cwd=copies.local,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    chunks: list = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        worker_log = copies.node[A] / "log/workerlog.0"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if worker_log.exists() and "epoch: 1/25" in worker_log.read_text(errors="replace"):
                break
            time.sleep(0.2)
        else:
            pytest.fail("node 1 never reached epoch 1:\n" + "".join(chunks)[-5000:])
        # Node 1 dies: its run's process group and every process working in its copy.
        pgid = int((copies.node[A] / PID_FILE).read_text())
        os.killpg(pgid, signal.SIGKILL)
        for pid in processes_in(copies.node[A]):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        killed = time.monotonic()
        rc = proc.wait(timeout=120)
        timing("paddle: kill node 1 -> fleet exits", time.monotonic() - killed)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(10)
    out = "".join(chunks)
    assert rc == 1, out[-6000:]
    assert TIMINGS["paddle: kill node 1 -> fleet exits"] < 5 + 30, out[-3000:]
    assert f"stopped every node: node {A} failed" in out
    data = json.loads((copies.local / f"test_tipc/output/tiny_rec/{mode}/nodes/fleet.json").read_text())
    assert data["first_failure"]["node"] == A and data["first_failure"]["step"]["kind"] == "train"
    by_ip = {n["ip"]: n for n in data["nodes"]}
    assert by_ip[A]["state"] == "failed" and by_ip[A]["steps"][0]["status"] == "failed", by_ip[A]
    # Node 2 was stopped while it ran; its train, having lost its peer, may have failed just before.
    assert by_ip[B]["state"] == "stopped", by_ip[B]
    assert by_ip[B]["steps"][0]["status"] in ("stopped", "failed"), by_ip[B]
    # a train stopped mid-run leaves the rest not run; one that failed first had its eval,
    # export and inference skipped (train failed) in the moment before the stop arrived
    later = {s["status"] for s in by_ip[B]["steps"][2:]}
    allowed = {"not run"} if by_ip[B]["steps"][0]["status"] == "stopped" else {"not run", "skipped"}
    assert later <= allowed, by_ip[B]
    assert not processes_in(copies.node[B]), "node 2 still runs"


@pytest.mark.slow
@pytest.mark.parametrize(
    "sig, said", [(signal.SIGTERM, "terminated (SIGTERM)"), (signal.SIGINT, "interrupted")], ids=["TERM", "INT"]
)
def test_a_signal_to_fleet_stops_every_node(copies, sig, said):
    """SIGTERM or SIGINT (Ctrl-C) to `tipcgen fleet` while both nodes run (node 2's launcher waits on a trainer in a
    session of its own): the stop over ssh leaves no process of the run on either node."""
    proc = subprocess.Popen(
        TIPCGEN + ["fleet", *map(str, copies.args("--env", f"FAKE_HANG_ON={B}"))],
        cwd=copies.local, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        # as from a terminal: a test run in the background has SIGINT ignored, which exec keeps
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if (copies.node[B] / "log/workerlog.0").exists() and processes_in(copies.node[B]):
                break
            time.sleep(0.1)
        assert proc.poll() is None and processes_in(copies.node[B]), "node 2 never started"
        proc.send_signal(sig)
        t0 = time.monotonic()
        out, _ = proc.communicate(timeout=bound(60))
        back = time.monotonic() - t0
        while processes_in(copies.node[B]) and time.monotonic() - t0 < 30:
            time.sleep(0.1)
        timing(f"ssh: {sig.name} -> every process gone", time.monotonic() - t0)
        timing(f"ssh: {sig.name} -> fleet back", back)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 1, out[-4000:]
    assert f"stopped every node: {said}" in flat(out), out[-4000:]
    assert not processes_in(copies.node[B]) and not processes_in(copies.node[A])
    assert back < 3 + 15, out[-3000:]
    assert {n["ip"]: n["state"] for n in report(copies.local)["nodes"]}[B] == "stopped"


@pytest.mark.slow
def test_a_node_whose_sshd_goes_away_is_lost(copies):
    """Node 2's sshd stops while its run goes on (the session it forked lives on, the run ends
    well there): its logs cannot be gathered, so it is `lost`, with why and its last words;
    JSON, JUnit (an error, not a skip) and summary agree."""
    proc = subprocess.Popen(
        TIPCGEN + ["fleet", *map(str, copies.args("--env", f"FAKE_SLEEP_ON={B}", "--summary", "summary.md"))],
        cwd=copies.local, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if (copies.node[B] / "log/workerlog.0").exists():
                break
            time.sleep(0.05)
        copies.sshd.stop(B)
        out, _ = proc.communicate(timeout=bound(60))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        copies.sshd.start(B)
    assert proc.returncode == 1, out[-4000:]
    data = report(copies.local)
    by_ip = {n["ip"]: n for n in data["nodes"]}
    assert by_ip[A]["state"] == "passed"
    lost = by_ip[B]
    assert lost["state"] == "lost" and lost["reason"].startswith(f"lost: node {B}: ssh failed: "), lost
    assert "its last word: tipc: 1 steps run, 1 passed, 0 failed, 4 skipped" in lost["reason"], lost["reason"]
    assert [s["status"] for s in lost["steps"]] == ["passed"] + ["skipped"] * 4
    junit = ET.parse(copies.local / NODES_OUT / "fleet.junit.xml").getroot()
    suite = next(s for s in junit.iter("testsuite") if s.get("name") == B)
    assert suite.get("errors") == "1" and suite.find("testcase/error") is not None
    summary = (copies.local / "summary.md").read_text()
    assert f"| {B} | lost |" in summary and f"Node {B}: lost: node {B}: ssh failed" in summary, summary
    assert f"node {B}: lost" in flat(out)
