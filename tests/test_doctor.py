"""`tipcgen doctor`: each check's verdict and the exit code, on real sockets, real files and real paddle.

Network only on 127.0.0.0/8: a busy port is a listener the test opens, a silent peer a listener whose
accept queue is full (the kernel then drops new connections, as a firewall would), a peer that is
not yet listening a loopback port nobody holds. Runs without real paddle skip the python check
(`--skip python`); the ones importing paddle are marked `paddle`.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import socket
import stat
import sys
import tarfile
import time
from dataclasses import replace
from pathlib import Path

import pytest
from tests.conftest import GENERATED, SPECS
from tests.helpers.configs import variant
from tests.helpers.http_server import PrepareServer
from typer.testing import CliRunner

from helpers.machine import bound
from tipcgen.cli import app
from tipcgen.run.doctor import Launch, Paddle, check_launcher, check_topology

CONFIGS = GENERATED / "tiny_rec" / "test_tipc" / "configs" / "tiny_rec"
FLEET = CONFIGS / "train_linux_cpu_fleet_infer_python.txt"
NORMAL = CONFIGS / "train_infer_python.txt"
SPEC = SPECS / "tiny_rec.yml"
# The caller's variables doctor reads; each test sets the ones it means.
READS = ("TIPC_NODE_IP", "FLAGS_START_PORT", "PADDLE_START_PORT", "POD_IP", "CUDA_VISIBLE_DEVICES")
PROXIES = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
SLACK = 10.0  # start-up, spec loading and a busy 2-core machine, on top of a run's own bound


def doctor(*args: str, **env: str) -> tuple[int, dict, float]:
    """(exit code, the --json report's checks by name, seconds) of `tipcgen doctor ARGS --json`."""
    environ: dict = {k: None for k in READS}
    environ.update(env)
    start = time.monotonic()
    result = CliRunner().invoke(app, ["doctor", *args, "--json"], env=environ)
    elapsed = time.monotonic() - start
    if result.exit_code == 2:
        return 2, {"error": result.output}, elapsed
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    report = json.loads(result.stdout)
    assert report["exit_code"] == result.exit_code
    return result.exit_code, {c["name"]: c for c in report["checks"]}, elapsed


def free_port(ip: str = "127.0.0.2") -> int:
    with socket.socket() as s:
        s.bind((ip, 0))
        return s.getsockname()[1]


def verdicts(checks: dict) -> dict:
    return {name: c["verdict"] for name, c in checks.items()}


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """An empty model repo root to run doctor from."""
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


def test_own_ip_absent(repo, tmp_path):
    config = variant(tmp_path, FLEET, "far", gpu_list="10.255.255.1,10.255.255.2;cpux1")
    port = str(free_port("127.0.0.1"))
    code, checks, elapsed = doctor(str(config), "--skip", "python", "--connect-timeout", "2", FLAGS_START_PORT=port)
    assert code == 1
    assert checks["node"]["verdict"] == "fail"
    assert "none of the suite's IPs 10.255.255.1,10.255.255.2 is an address of this host" in checks["node"]["found"]
    assert "gpu_list" in checks["node"]["fix"]
    assert elapsed < bound(2 * 2 + SLACK)  # the host name lookup and the peers: each within the connect bound
    # Naming one of them does not make it local.
    code, checks, _ = doctor(str(config), "--skip", "python", "--skip", "peers", TIPC_NODE_IP="10.255.255.2")
    assert code == 1 and checks["node"]["verdict"] == "fail"
    assert "TIPC_NODE_IP=10.255.255.2 is not an address of this host" in checks["node"]["found"]
    # and its ports are not "in use": nothing can listen on an address this host does not have
    code, checks, _ = doctor(
        str(config), "--skip", "python", "--skip", "peers", TIPC_NODE_IP="10.255.255.2", FLAGS_START_PORT=port
    )
    assert checks["ports"]["verdict"] == "fail" and "in use" not in checks["ports"]["found"]
    assert "not an address of this host" in checks["ports"]["found"] and "TIPC_NODE_IP" in checks["ports"]["fix"]


def test_several_local_ips_name_the_variable_to_export(repo):
    code, checks, _ = doctor(str(FLEET), "--skip", "python", "--skip", "peers", FLAGS_START_PORT=str(free_port()))
    assert code == 0
    assert checks["node"]["verdict"] == "warn"
    assert "127.0.0.2, 127.0.0.3" in checks["node"]["found"]
    assert "export TIPC_NODE_IP=" in checks["node"]["fix"]
    code, checks, _ = doctor(str(FLEET), "--skip", "python", "--skip", "peers", TIPC_NODE_IP="127.0.0.9")
    assert code == 1 and "not one of the suite's IPs" in checks["node"]["found"]


def test_port_busy(repo):
    port = free_port()
    env = dict(TIPC_NODE_IP="127.0.0.2", FLAGS_START_PORT=str(port))
    with socket.socket() as listener:
        listener.bind(("127.0.0.2", port))
        listener.listen(1)
        code, checks, _ = doctor(str(FLEET), "--skip", "python", **env)
    assert code == 1
    assert checks["ports"]["verdict"] == "fail"
    assert f"port {port} on 127.0.0.2 is in use here" in checks["ports"]["found"]
    assert "FLAGS_START_PORT" in checks["ports"]["fix"]
    # The listener gone, the same node passes (the peer not listening yet is only a warning).
    code, checks, _ = doctor(str(FLEET), "--skip", "python", **env)
    assert code == 0, checks
    assert verdicts(checks) == dict(
        node="ok", launcher="ok", ports="ok", peers="warn", python="skip", topology="skip", prepare="skip", digest="ok"
    )
    assert "nothing listens on port" in checks["peers"]["found"] and "launcher started" in checks["peers"]["fix"]


def test_start_port_unset_is_a_warning_naming_the_hang(repo):
    code, checks, _ = doctor(str(FLEET), "--skip", "python", "--skip", "peers", TIPC_NODE_IP="127.0.0.2")
    assert code == 0
    assert checks["ports"]["verdict"] == "warn"
    assert (
        "FLAGS_START_PORT is not set" in checks["ports"]["found"] and "Using network Socket" in checks["ports"]["found"]
    )
    assert "export FLAGS_START_PORT=" in checks["ports"]["fix"]
    code, checks, _ = doctor(str(FLEET), "--skip", "python", TIPC_NODE_IP="127.0.0.2", FLAGS_START_PORT="seventeen")
    assert code == 1 and checks["ports"]["verdict"] == "fail" and "not a port number" in checks["ports"]["found"]


def test_peer_silent_is_a_failure_within_the_connect_bound(repo, tmp_path):
    """A peer whose accept queue is full drops the SYN like a firewall: connect() only times out."""
    config = variant(tmp_path, FLEET, "silent", gpu_list="127.0.0.2,127.0.0.4;cpux1")
    with socket.socket() as silent:
        silent.bind(("127.0.0.4", 0))
        silent.listen(0)
        port = silent.getsockname()[1]
        with socket.create_connection(("127.0.0.4", port), timeout=5):  # fills the queue; never accepted
            code, checks, elapsed = doctor(
                str(config), "--skip", "python", "--connect-timeout", "2",
                TIPC_NODE_IP="127.0.0.2", FLAGS_START_PORT=str(port),
            )  # fmt: skip
    assert code == 1
    assert checks["peers"]["verdict"] == "fail"
    assert f"no answer within 2 s from 127.0.0.4 (timeout) on port {port}" in checks["peers"]["found"]
    assert 1.5 < checks["peers"]["seconds"] < 2 + 1.5  # it waited, and no longer than its bound
    assert elapsed < 2 + bound(SLACK)


def test_single_node_suite_has_no_network_checks(repo):
    code, checks, _ = doctor(str(NORMAL), "--skip", "python")
    assert code == 0
    for name in ("node", "launcher", "ports", "peers"):
        assert checks[name]["verdict"] == "skip" and "no multi-node training" in checks[name]["found"]
    assert checks["prepare"]["verdict"] == "skip" and "give the spec" in checks["prepare"]["found"]
    assert checks["digest"]["data"]["config"] == hashlib.sha256(NORMAL.read_bytes()).hexdigest()


def _tar(name: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        data = b"tiny\n"
        info = tarfile.TarInfo(f"{name}/readme.txt")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def prepare_for_real(tmp_path: Path) -> None:
    """`tipcgen prepare` of the tiny_rec spec, its archives served on loopback (stamps written)."""
    server = PrepareServer().start()
    try:
        server.add("/m/tiny_rec_data.tar", _tar("train"))
        server.add("/m/rec_inference.tar", _tar("rec_inference"))
        env = {k: None for k in PROXIES}
        env.update(TIPC_MIRROR=server.url("/m"), TIPC_CACHE=str(tmp_path / "cache"), TIPC_TIMEOUT="5")
        result = CliRunner().invoke(app, ["prepare", str(SPEC), "--mode", "lite_train_lite_infer"], env=env)
        assert result.exit_code == 0, result.output
    finally:
        server.stop()


def test_prepare_not_run(repo, tmp_path):
    env = dict(TIPC_NODE_IP="127.0.0.2", FLAGS_START_PORT=str(free_port()))
    code, checks, _ = doctor(str(SPEC), "--suite", "fleet", "--skip", "python", **env)
    assert code == 1
    assert checks["prepare"]["verdict"] == "fail"
    assert "2 of 2 artefact(s) of lite_train_lite_infer not in place" in checks["prepare"]["found"]
    assert f"tipcgen prepare {SPEC} --mode lite_train_lite_infer --suite fleet" in checks["prepare"]["fix"]
    prepare_for_real(tmp_path)
    code, checks, _ = doctor(str(SPEC), "--suite", "fleet", "--skip", "python", **env)
    assert code == 0, checks
    assert checks["prepare"]["verdict"] == "ok"
    # whole_infer prepares nothing in this spec.
    code, checks, _ = doctor(str(SPEC), "--suite", "fleet", "--mode", "whole_infer", "--skip", "python", **env)
    assert checks["prepare"]["verdict"] == "ok" and "nothing to fetch" in checks["prepare"]["found"]


def test_digests_are_sha256sum_of_the_files(repo):
    code, checks, _ = doctor(str(SPEC), "--suite", "fleet", "--skip", "python", "--skip", "peers")
    data = checks["digest"]["data"]
    assert data["spec"] == hashlib.sha256(SPEC.read_bytes()).hexdigest()
    assert data["config"] == hashlib.sha256(FLEET.read_bytes()).hexdigest()  # as `tipcgen build` writes it
    assert data["config"][:12] in checks["digest"]["found"]


def test_python_not_found_or_without_paddle(repo, tmp_path):
    code, checks, _ = doctor(str(variant(tmp_path, NORMAL, "nopy", python="python3.999")))
    assert code == 1 and checks["python"]["verdict"] == "fail" and "not found" in checks["python"]["found"]
    assert checks["topology"]["verdict"] == "skip"
    base = getattr(sys, "_base_executable", "")
    probe = os.popen(f"{base} -c 'import paddle' 2>&1").read() if base else ""
    if not base or "No module named" not in probe:
        pytest.skip("no interpreter without paddle here (the base interpreter has paddle)")
    code, checks, _ = doctor(str(variant(tmp_path, NORMAL, "base", python=base)))
    assert code == 1 and "cannot import paddle: ModuleNotFoundError" in checks["python"]["found"]


def test_import_is_bounded(repo, tmp_path):
    """An interpreter that never finishes is stopped at --import-timeout (its process group killed)."""
    slow = tmp_path / "slowpython"
    pid_file = tmp_path / "pid"
    slow.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 60\n")
    slow.chmod(slow.stat().st_mode | stat.S_IXUSR)
    code, checks, elapsed = doctor(str(variant(tmp_path, NORMAL, "slow", python=str(slow))), "--import-timeout", "1")
    assert code == 1
    assert "did not finish within 1 s" in checks["python"]["found"]
    assert elapsed < 1 + bound(SLACK)
    assert not Path(f"/proc/{pid_file.read_text().strip()}").exists()  # killed and reaped, not left behind


def test_bad_input_exits_2(repo, tmp_path):
    code, out, _ = doctor(str(SPEC), "--suite", "nope")
    assert code == 2 and "no suite 'nope'" in out["error"]
    code, out, _ = doctor(str(SPEC), "--skip", "everything")
    assert code == 2 and "--skip everything: no such check" in out["error"]
    code, out, _ = doctor(str(FLEET), "--connect-timeout", "0")
    assert code == 2 and "--connect-timeout must be a positive number" in out["error"]
    code, out, _ = doctor(str(FLEET), "--suite", "fleet")
    assert code == 2 and "--suite chooses a suite of a spec" in out["error"]
    code, out, _ = doctor(str(tmp_path / "missing.txt"))
    assert code == 2 and "missing.txt" in out["error"]


# -- checks steered with the values they read ----------------------------------------------------------


def test_topology_against_build_devices_and_visible_gpus():
    cuda2 = Paddle("3.3.1", True, 2)
    assert check_topology("0,1", cuda2, {}).verdict == "ok"
    few = check_topology("-1|0|0,1,2", cuda2, {"CUDA_VISIBLE_DEVICES": "0,1"})
    assert few.verdict == "fail" and "needs GPU 2 but paddle sees 2 GPU(s) (CUDA_VISIBLE_DEVICES=0,1)" in few.found
    cpu_on_gpu = check_topology("cpux2", cuda2, {})
    assert cpu_on_gpu.verdict == "warn" and "2 GPU(s) are here" in cpu_on_gpu.found
    assert check_topology("cpux2", Paddle("3.3.1", False, 0), {}).verdict == "ok"
    gpu_on_cpu = check_topology("192.168.0.1,192.168.0.2;0,1", Paddle("3.3.1", False, 0), {})
    assert gpu_on_cpu.verdict == "fail" and "CPU build" in gpu_on_cpu.found and "paddlepaddle-gpu" in gpu_on_cpu.fix


def test_launcher_rank_from_host_name_pod_ip_or_host():
    launch = Launch(("10.0.0.1", "10.0.0.2"), None, None, 2)
    elsewhere = check_launcher(launch, {"TIPC_NODE_IP": "10.0.0.2"}, 2, guess=lambda: "127.0.1.1")
    assert elsewhere.verdict == "fail" and "takes rank 0 like the first node" in elsewhere.found
    assert "export POD_IP=10.0.0.2" in elsewhere.fix
    assert check_launcher(launch, {"TIPC_NODE_IP": "10.0.0.1"}, 2, guess=lambda: "127.0.1.1").verdict == "warn"
    pod = check_launcher(launch, {"TIPC_NODE_IP": "10.0.0.2", "POD_IP": "10.0.0.2"}, 2, guess=lambda: "x")
    assert pod.verdict == "ok" and "(POD_IP)" in pod.found
    hosted = check_launcher(replace(launch, host="10.0.0.2"), {}, 2, guess=lambda: "x")
    assert hosted.verdict == "ok" and "(--host)" in hosted.found

    def slow() -> str:
        time.sleep(5)
        return "10.0.0.2"

    start = time.monotonic()
    stuck = check_launcher(launch, {}, 0.5, guess=slow)
    assert stuck.verdict == "warn" and time.monotonic() - start < bound(2)


# -- with real paddle ---------------------------------------------------------------------------------


@pytest.mark.paddle
def test_gpu_topology_on_cpu_build(repo, tmp_path):
    config = variant(tmp_path, NORMAL, "gpus", gpu_list="0,1")
    code, checks, elapsed = doctor(str(config), "--import-timeout", "60")
    assert checks["python"]["verdict"] == "ok", checks["python"]
    if checks["python"]["data"]["cuda"]:
        pytest.skip("paddle here is a CUDA build")
    assert code == 1
    assert checks["topology"]["verdict"] == "fail"
    assert "'0,1' lists GPU ids but paddle" in checks["topology"]["found"]
    assert elapsed < 60 + bound(SLACK)


@pytest.mark.paddle
def test_happy_path_tiny_rec_fleet(repo, tmp_path):
    prepare_for_real(tmp_path)
    env = {k: None for k in READS}
    env.update(TIPC_NODE_IP="127.0.0.2", FLAGS_START_PORT=str(free_port()))
    start = time.monotonic()
    result = CliRunner().invoke(app, ["doctor", str(SPEC), "--suite", "fleet"], env=env)
    elapsed = time.monotonic() - start
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split()[:2] for line in lines[:-1]] == [
        ["ok", "node"], ["ok", "launcher"], ["ok", "ports"], ["warn", "peers"],
        ["ok", "python"], ["ok", "topology"], ["ok", "prepare"], ["ok", "digest"],
    ]  # fmt: skip
    assert re.search(r"paddle \d+\.\d+\S*, CPU build", lines[4]), lines[4]
    assert lines[-1].startswith("doctor: 7 ok, 1 warn, 0 fail, 0 skip")
    assert elapsed < 60 + 3 * 2 + bound(SLACK)


@pytest.mark.parametrize(
    "lang, words", [("zh", "先在每个节点上运行`tipcgen doctor`"), ("en", "first run `tipcgen doctor` on every node")]
)
def test_fleet_docs_say_to_run_doctor_first(lang, words):
    from tipcgen.check.spec import load_spec
    from tipcgen.emit.files import build_files

    files = build_files(load_spec(str(SPEC)), lang)
    fleet = files["test_tipc/docs/test_train_fleet_inference_python.md"].decode()
    command = f"tipcgen doctor test_tipc/configs/tiny_rec/{FLEET.name} --mode lite_train_lite_infer"
    assert words in fleet and command in fleet
    # After the exports it needs, before the test it guards.
    assert (
        fleet.index("export FLAGS_START_PORT")
        < fleet.index(command)
        < fleet.index("bash test_tipc/test_train_inference_python.sh")
    )
    basic = [
        text.decode() for path, text in files.items() if path.startswith("test_tipc/docs/") and "fleet" not in path
    ]
    assert basic and not any("tipcgen doctor" in text for text in basic)
