"""`tipcgen fleet --via slurm` on a real Slurm cluster whose nodes are hosts of their own.

No mocks: Debian's slurmctld and one slurmd per node (tests/helpers/slurm.py), each node a
network + UTS + mount namespace with its own name, address (198.18.0.0/24, reachable only
between the namespaces) and /etc/hosts (tests/helpers/nethosts.py). Each node also has its own
"disk": its copy of the model repo is bind-mounted at the repo's path on that host only, so the
files a run needs reach a node only by `--sync` (or the batch script's sbcast), as on a cluster
without a shared file system. tipcgen runs on the login host `ctl`, beside slurmctld.

The paddle tests train the bundled example for real across 2 and 3 nodes (tipcgen fleet and
the --emit-sbatch script) and kill a node's training mid-run; the others end in the preflight
or in Slurm before anything trains. Every test checks that no job and no process it started is
left. Without the packages or namespaces the tests skip saying why; with TIPC_REQUIRE_TOOLS=1
(CI) they fail instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers.http_server import PrepareServer
from helpers.machine import bound
from helpers.slurm import Cluster
from helpers.slurm import why_not as slurm_why_not
from helpers.tools import require
from test_run_e2e_paddle import FLEET, INFER_LOGS, LOG_DIR, MODE, N_INFER, PY, SPEC, TIPCGEN, _copy_example, checksums

# Every test here needs the cluster (namespaces, daemons): the whole module is in the second tier.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
NODES_OUT = f"{LOG_DIR}/nodes"
SKIPPED = "Run skipped (not trainer 0) with command - tiny_rec - "
TIMINGS: dict = {}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    require(slurm_why_not())
    c = Cluster(tmp_path_factory.mktemp("slurm"), 3)
    t0 = time.monotonic()
    c.start()
    TIMINGS["cluster up (s)"] = round(time.monotonic() - t0, 2)
    try:
        yield c
    finally:
        c.stop()
        print("slurm fleet numbers:", json.dumps(TIMINGS, sort_keys=True))  # for the closing note (pytest -s)
        assert not c.hosts.namespaces(), "namespaces left behind"


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, cluster) -> Path:
    """The model repo with its suite and data (prepare.sh run here against a loopback server)."""
    root = tmp_path_factory.mktemp("slurm_repo")
    repo = root / "repo"
    _copy_example(repo)
    gen = root / "gen"
    subprocess.run(TIPCGEN + ["build", str(SPEC), "--out", str(gen)], cwd=REPO, check=True, timeout=120)
    shutil.copytree(gen / "tiny_rec" / "test_tipc", repo / "test_tipc")
    serve = root / "serve"
    res = subprocess.run(
        [PY, "tools/make_data.py", "--out", str(root / "data"), "--infer", str(N_INFER), "--tar", str(serve)],
        cwd=repo, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    server = PrepareServer().start()
    try:
        for name in ("tiny_rec_data.tar", "rec_inference.tar"):
            server.add(f"/tiny_rec/{name}", (serve / name).read_bytes())
        env = dict(os.environ, TIPC_MIRROR=server.url("/tiny_rec"), TIPC_CACHE=str(root / "cache"))
        res = subprocess.run(
            ["bash", "test_tipc/prepare.sh", FLEET, MODE], cwd=repo, env=env, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert res.returncode == 0, res.stdout + res.stderr
    finally:
        server.stop()
    return repo


class Site:
    """The repo as the login host sees it, and each node's own disk mounted at the same path."""

    def __init__(self, cluster: Cluster, prepared: Path, root: Path):
        self.cluster = cluster
        self.repo = root / "repo"
        shutil.copytree(prepared, self.repo, symlinks=True)
        self.disk = {}
        for name in cluster.names:
            disk = root / f"disk_{name}"
            shutil.copytree(prepared, disk, symlinks=True)
            cluster.hosts.bind(name, disk, self.repo)
            self.disk[name] = disk
        self.fleet_config = self.repo / FLEET
        self.config_digest = hashlib.sha256(self.fleet_config.read_bytes()).hexdigest()

    def fleet(self, *args, timeout: float = 300, label: str = "") -> tuple[int, str, str, float]:
        t0 = time.monotonic()
        try:
            res = self.cluster.client(
                TIPCGEN + ["fleet", *[str(a) for a in args]], cwd=self.repo, timeout=timeout,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"tipcgen fleet outlived {timeout} s: {exc.stdout}\n{exc.stderr}")
        seconds = time.monotonic() - t0
        if label:
            TIMINGS[label] = round(seconds, 1)
        return res.returncode, res.stdout, res.stderr, seconds

    def node_out(self, ip: str) -> Path:
        return self.repo / NODES_OUT / ip

    def left_running(self) -> dict:
        """Processes in the nodes' namespaces other than the holders and the Slurm daemons."""
        keep = self.cluster.baseline
        left = {}
        for ns, pids in self.cluster.hosts.pids().items():
            for pid in pids:
                if pid in keep:
                    continue
                try:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                left.setdefault(ns, []).append(f"{pid}: {cmd[:200]}")
        return left

    def settle(self, bound: float = 20.0) -> tuple[list, dict]:
        """(jobs still known, processes still running) once they are gone or `bound` s passed."""
        deadline = time.monotonic() + bound
        while True:
            jobs, left = self.cluster.jobs(), self.left_running()
            if (not jobs and not left) or time.monotonic() > deadline:
                return jobs, left
            time.sleep(0.2)

    def check_clean(self) -> None:
        jobs, left = self.settle()
        assert not jobs, f"jobs left in Slurm: {jobs}"
        assert not left, f"processes left on the nodes: {left}"
        assert hashlib.sha256(self.fleet_config.read_bytes()).hexdigest() == self.config_digest, "config changed"


@pytest.fixture
def site(tmp_path, cluster, prepared) -> Site:
    s = Site(cluster, prepared, tmp_path)
    yield s
    s.check_clean()


def _report(site: Site, mode: str = MODE) -> dict:
    return json.loads((site.repo / f"test_tipc/output/tiny_rec/{mode}/nodes/fleet.json").read_text())


def _status(path: Path) -> list[str]:
    return [ln for ln in path.read_text(errors="replace").splitlines() if "Run " in ln]


def _trained_together(site: Site, ips: list[str]) -> dict:
    """rank i on node i, the same world size and weights everywhere; rank 0 exported and
    inferred, the others recorded not-trainer-0 skips."""
    sums = {}
    for rank, ip in enumerate(ips):
        got = checksums((site.node_out(ip) / "log" / "workerlog.0").read_text(errors="replace"))
        assert set(got) == {rank}, (ip, got)
        sums[rank] = got[rank]
    assert {w for w, _ in sums.values()} == {len(ips)}, sums
    assert len({v for _, v in sums.values()}) == 1, sums
    for name in INFER_LOGS:
        assert (site.node_out(ips[0]) / name).is_file()
    for ip in ips[1:]:
        lines = _status(site.node_out(ip) / "results_python.log")[-5:]  # this run's (the log accumulates)
        assert "Run successfully" in lines[0] and all(SKIPPED in ln for ln in lines[1:]), lines
    return sums


# -- real training ---------------------------------------------------------------------------


@pytest.mark.paddle
@pytest.mark.slow
def test_spec_suite_trains_on_2_then_3_slurm_nodes(site):
    """Acceptance 1: `fleet SPEC --suite fleet --via slurm --nodes 2` (and 3)."""
    base = [SPEC, "--suite", "fleet", "--mode", MODE, "--via", "slurm", "--sync", "--step-timeout", 240]
    rc, out, err, seconds = site.fleet(*base, "--nodes", 2, "--start-port", 17000, label="slurm: 2 nodes")
    assert rc == 0, out[-6000:] + err
    assert "tipc fleet: slurm job " in out and "(asked for by tipcgen): node1 198.18.0.11, node2 198.18.0.12" in out
    assert "--sync created test_tipc/output/tiny_rec/lite_train_lite_infer/nodes/run_copy." in out
    ips2 = ["198.18.0.11", "198.18.0.12"]
    _trained_together(site, ips2)
    data = _report(site)
    assert [n["ip"] for n in data["nodes"]] == ips2 and [n["state"] for n in data["nodes"]] == ["passed", "passed"]
    assert data["engine"]["name"] == "slurm" and data["engine"]["nodes"] == {ips2[0]: "node1", ips2[1]: "node2"}
    site.check_clean()

    rc, out, err, seconds = site.fleet(*base, "--nodes", 3, "--start-port", 17100, label="slurm: 3 nodes")
    print(out[-3000:])  # the closing note quotes it (pytest -s)
    assert rc == 0, out[-6000:] + err
    ips3 = ["198.18.0.11", "198.18.0.12", "198.18.0.13"]
    sums = _trained_together(site, ips3)
    copy = site.repo / NODES_OUT / "run_copy.train_linux_cpu_fleet_infer_python.txt"
    assert "gpu_list:198.18.0.11,198.18.0.12,198.18.0.13;cpux1\n" in copy.read_text()
    # The port chosen is the port the job used: rank 1 reached rank 0's store there.
    worker = (site.node_out(ips3[1]) / "log" / "workerlog.0").read_text(errors="replace")
    assert "Successfully connected to 198.18.0.11:17100" in worker, worker[-3000:]
    assert [n["state"] for n in _report(site)["nodes"]] == ["passed"] * 3
    TIMINGS["3-node checksum"] = sums[0][1]


@pytest.mark.paddle
@pytest.mark.slow
def test_emitted_sbatch_script_gives_the_same_run(site):
    """Acceptance 2: the --emit-sbatch script, submitted with sbatch, trains the same way."""
    script = site.repo.parent / "tiny_rec.sbatch"
    rc, out, err, _ = site.fleet(
        FLEET, "--mode", MODE, "--via", "slurm", "--nodes", 3, "--start-port", 17200, "--emit-sbatch", script
    )
    assert rc == 0, out + err
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash\n#SBATCH --job-name=tipcgen-tiny_rec\n#SBATCH --nodes=3\n")
    assert shutil.which("shellcheck") is None or subprocess.run(["shellcheck", str(script)]).returncode == 0
    t0 = time.monotonic()
    sub = site.cluster.client(["sbatch", "--parsable", str(script)], cwd=site.repo)
    assert sub.returncode == 0, sub.stderr
    job = sub.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 240
    while site.cluster.jobs() and time.monotonic() < deadline:  # `sbatch --wait` polls every 32 s
        time.sleep(0.5)
    TIMINGS["slurm: sbatch script, 3 nodes"] = round(time.monotonic() - t0, 1)
    out_file = site.disk["node1"] / f"tipcgen-tiny_rec-{job}.out"
    output = out_file.read_text(errors="replace")
    assert "node1=198.18.0.11 node2=198.18.0.12 node3=198.18.0.13" in output, output[-3000:]
    ips = ["198.18.0.11", "198.18.0.12", "198.18.0.13"]
    for rank, name in enumerate(site.cluster.names):
        disk = site.disk[name]
        log = disk / LOG_DIR / "results_python.log"
        lines = _status(log)
        assert len(lines) == 5 and lines[0].count("Run successfully") == 1, lines
        assert f"--ips={','.join(ips)}" in lines[0] and f"--host={ips[rank]}" in lines[0]
        if rank:
            assert all(SKIPPED in ln for ln in lines[1:]), lines
        got = checksums((disk / "log" / "workerlog.0").read_text(errors="replace"))
        assert set(got) == {rank} and got[rank][0] == 3
    # The batch script's run copy is byte for byte the one `fleet --via slurm` writes.
    copy = f"{NODES_OUT}/run_copy.train_linux_cpu_fleet_infer_python.txt"
    from tipcgen.plan.runcopy import with_ips

    expected = with_ips(site.fleet_config.read_text(), ips, "test")
    assert all((site.disk[n] / copy).read_text() == expected for n in site.cluster.names)


@pytest.mark.paddle
@pytest.mark.slow
def test_a_node_whose_training_is_killed_stops_the_others(site):
    """Node 2's training processes die mid-run (as under the OOM killer): node 1 is stopped, the
    report names node 2, the allocation is released, nothing is left running."""
    mode = "whole_train_whole_infer"  # long enough to be killed in the middle
    args = [FLEET, "--mode", mode, "--via", "slurm", "--sync", "--start-port", 17300, "--kill-grace", 5]
    proc = subprocess.Popen(
        [*site.cluster.hosts["ctl"].enter(site.repo), *TIPCGEN, "fleet", *[str(a) for a in args]],
        env=site.cluster.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    t0 = time.monotonic()
    victim = site.cluster.hosts["node2"].netns
    worker_log = site.disk["node2"] / "log" / "workerlog.0"
    while time.monotonic() - t0 < 120 and proc.poll() is None:
        if worker_log.exists() and "epoch: 1/" in worker_log.read_text(errors="replace"):
            break
        time.sleep(0.2)
    else:
        pytest.fail("node 2 never reached epoch 1:\n" + (proc.stdout.read() if proc.poll() is not None else ""))
    # Every process of the job working in node 2's copy dies (Slurm's own slurmstepd lives on).
    killed = []
    for pid in site.cluster.hosts.pids()[victim]:
        try:
            if os.readlink(f"/proc/{pid}/cwd").startswith(str(site.repo)):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        except (FileNotFoundError, ProcessLookupError):
            pass
    assert killed, "nothing of the job ran in node 2's copy"
    kill_at = time.monotonic()
    out, _ = proc.communicate(timeout=bound(120))
    stopped_after = time.monotonic() - kill_at
    TIMINGS["slurm: node 2 killed, all stopped after (s)"] = round(stopped_after, 1)
    assert proc.returncode == 1, out[-5000:]
    flat = " ".join(out.split())
    assert "tipc fleet: stopped every node: node 198.18.0.12 failed" in flat, out[-5000:]
    data = _report(site, mode)
    states = {n["ip"]: n["state"] for n in data["nodes"]}
    assert states == {"198.18.0.11": "stopped", "198.18.0.12": "failed"}, states
    assert stopped_after < 60


@pytest.mark.paddle
@pytest.mark.slow
def test_ctrl_c_stops_every_node_and_releases_the_allocation(site):
    mode = "whole_train_whole_infer"
    args = [FLEET, "--mode", mode, "--via", "slurm", "--sync", "--start-port", 17350, "--kill-grace", 2]
    proc = subprocess.Popen(
        [*site.cluster.hosts["ctl"].enter(site.repo), *TIPCGEN, "fleet", *[str(a) for a in args]],
        env=site.cluster.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        # as from a terminal: a test run started in the background has SIGINT ignored, and an
        # ignored signal stays ignored across exec (Python then never raises KeyboardInterrupt)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    worker_log = site.disk["node1"] / "log" / "workerlog.0"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if worker_log.exists() and "epoch: 1/" in worker_log.read_text(errors="replace"):
            break
        time.sleep(0.2)
    assert proc.poll() is None, proc.stdout.read()
    assert site.cluster.jobs(), "no allocation while training"
    proc.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    out, _ = proc.communicate(timeout=bound(120))
    TIMINGS["slurm: Ctrl-C, all stopped after (s)"] = round(time.monotonic() - t0, 1)
    # the grace, Slurm's step teardown (KillWait 1 s here), gathering the logs, scancel
    assert TIMINGS["slurm: Ctrl-C, all stopped after (s)"] < 40, out[-4000:]
    assert proc.returncode == 1, out[-5000:]
    flat = " ".join(out.split())
    assert "tipc fleet: stopped every node: interrupted" in flat, out[-5000:]
    assert "stopped: stopped:" not in flat
    assert {n["state"] for n in _report(site, mode)["nodes"]} == {"stopped"}
    # check_clean (the fixture): no job, no process on any node


# -- ended before anything trains ------------------------------------------------------------


GPU_FLEET = "test_tipc/configs/tiny_rec/gpu_fleet.txt"


def _gpu_config(site: Site) -> None:
    """A GPU two-node config (`ips;0`): the launcher gets no --host, so it finds its own rank
    from its host name, as upstream's suites do."""
    text = site.fleet_config.read_text().replace(
        "gpu_list:127.0.0.2,127.0.0.3;cpux1", "gpu_list:xx.xx.xx.xx,yy.yy.yy.yy;0"
    )
    (site.repo / GPU_FLEET).write_text(text)


def test_a_node_whose_name_resolves_elsewhere_is_caught_before_training(site):
    """Acceptance 4: node 2's own name resolves to 127.0.1.1 (Debian's installer does this), so
    paddle's launcher there would take rank 0 and both nodes would wait until a timeout."""
    _gpu_config(site)
    site.cluster.hosts.remap("node2", "127.0.1.1")
    try:
        rc, out, err, seconds = site.fleet(
            GPU_FLEET, "--mode", MODE, "--via", "slurm", "--sync", label="slurm: rank-0 pitfall"
        )
    finally:
        site.cluster.hosts.restore("node2")
    assert rc == 1, out + err
    assert (
        "tipc fleet: node 198.18.0.12: paddle's launcher there resolves its host name 'node2' to 127.0.1.1, not "
        "to 198.18.0.12" in err
    ), err
    assert "map node2 to 198.18.0.12 in that node's /etc/hosts" in err
    assert "node 198.18.0.11: paddle's launcher" not in err
    assert "refused to start; nothing was started on any node" in err
    assert not (site.disk["node1"] / LOG_DIR / "results_python.log").exists()
    assert seconds < bound(30), seconds


def test_a_busy_start_port_on_one_node_is_caught_before_training(site):
    holder = site.cluster.hosts.popen(
        "node2", [PY, "-c", "import socket,sys,time; s=socket.socket(); s.bind(('198.18.0.12', 17400)); s.listen(1); "
                  "print('up', flush=True); time.sleep(300)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "up"
        rc, out, err, seconds = site.fleet(FLEET, "--mode", MODE, "--via", "slurm", "--sync", "--start-port", 17400)
    finally:
        holder.kill()
        holder.wait()
    assert rc == 1, out + err
    assert "tipc fleet: node 198.18.0.12: port 17400 on 198.18.0.12 is in use" in err, err
    assert "or pick another --start-port" in err and "node 198.18.0.11: port" not in err
    assert not (site.disk["node1"] / LOG_DIR / "results_python.log").exists()


def test_an_allocation_that_never_starts_is_given_up_within_its_bound(site):
    hold = site.cluster.client(["salloc", "--no-shell", "--nodes=3", "--exclusive", "--job-name=holder"])
    assert hold.returncode == 0, hold.stderr
    try:
        rc, out, err, seconds = site.fleet(
            FLEET, "--mode", MODE, "--via", "slurm", "--alloc-timeout", 3, label="slurm: allocation never starts"
        )
        assert rc == 1, out + err
        assert "tipc fleet: slurm: no allocation of 2 node(s) started within 3 s" in err, err
        assert seconds < bound(3 + 15), seconds
        assert [j for j in site.cluster.jobs() if "tipcgen" in j] == []
        names = site.cluster.client(["squeue", "-h", "-o", "%j"]).stdout.split()
        assert names == ["holder"], names  # ours was cancelled, not left queued
        record = _report(site)  # a refusal by Slurm leaves its record too
        assert {n["state"] for n in record["nodes"]} == {"refused"}, record["nodes"]
        assert "no allocation of 2 node(s) started within 3 s" in record["nodes"][0]["reason"], record["nodes"][0]
    finally:
        site.cluster.client(["scancel", "--name=holder"])


def test_slurm_refusals_are_clear(site):
    rc, out, err, _ = site.fleet(FLEET, "--mode", MODE, "--via", "slurm", "--partition", "nope", "--alloc-timeout", 5)
    assert rc == 1 and "tipc fleet: slurm: salloc refused 2 node(s) in partition nope: " in err, out + err
    assert "invalid partition" in err.lower()

    # An allocation smaller than the run: named, and not ours to cancel.
    one = site.cluster.client(["salloc", "--no-shell", "--nodes=1", "--job-name=small"])
    assert one.returncode == 0, one.stderr
    job = one.stderr.split("Granted job allocation")[1].split()[0]
    try:
        rc, out, err, _ = site.fleet(FLEET, "--mode", MODE, "--via", "slurm", "--job", job)
        assert rc == 1 and f"tipc fleet: slurm: job {job} has 1 node(s) (node1); the run needs 2" in err, out + err
        assert [ln.split()[0] for ln in site.cluster.jobs()] == [job]  # the user's allocation stays
    finally:
        site.cluster.client(["scancel", job])

    # No srun on PATH: nothing can be reached.
    env = dict(site.cluster.env, PATH=str(Path(PY).parent) + ":/nonexistent")
    res = site.cluster.client(TIPCGEN + ["fleet", FLEET, "--mode", MODE, "--via", "slurm"], cwd=site.repo, env=env)
    assert res.returncode == 1 and "`srun` is not on PATH" in res.stderr, res.stdout + res.stderr

    # A job id that is not one: bad input, before Slurm is asked.
    rc, out, err, _ = site.fleet(FLEET, "--mode", MODE, "--via", "slurm", "--job", "abc")
    assert rc == 2 and "--job 'abc': give the allocation's job id" in err, out + err

    # Options of the other engine are refused, not ignored.
    rc, out, err, _ = site.fleet(FLEET, "--mode", MODE, "--via", "slurm", "--node-dir", "1.2.3.4=/x")
    assert rc == 2 and "--node-dir is an option of the ssh engine" in err


# -- the ssh engine on the same hosts ------------------------------------------------------------

HOSTS_FLEET = "test_tipc/configs/tiny_rec/hosts_fleet.txt"


@pytest.fixture(scope="module")
def sshd_on_nodes(tmp_path_factory, cluster):
    """A real sshd on node1 and node2 (port 22 of their own addresses), reached from `ctl`."""
    from helpers.sshd import SshNodes
    from helpers.sshd import why_not as sshd_why_not

    require(sshd_why_not())
    nodes = SshNodes(tmp_path_factory.mktemp("sshd_hosts"), ["198.18.0.11", "198.18.0.12"], 22, hosts=cluster.hosts)
    nodes.start_all()
    cluster.baseline |= {p.pid for p in nodes.procs.values()}  # part of the site, not left by a test
    try:
        yield nodes
    finally:
        nodes.stop_all()


def _hosts_config(site: Site, devices: str) -> None:
    text = site.fleet_config.read_text().replace(
        "gpu_list:127.0.0.2,127.0.0.3;cpux1", f"gpu_list:198.18.0.11,198.18.0.12;{devices}"
    )
    (site.repo / HOSTS_FLEET).write_text(text)


@pytest.fixture
def http_on_ctl(site, prepared):
    """The example's data tarballs from a real HTTP server on the login host (198.18.0.10)."""
    www = site.repo.parent / "www"
    (www / "tiny_rec").mkdir(parents=True)
    for tar in (prepared.parent / "serve").glob("*.tar"):
        shutil.copy(tar, www / "tiny_rec" / tar.name)
    server = site.cluster.hosts.popen(
        "ctl", [PY, "-u", "-m", "http.server", "18080", "--bind", "198.18.0.10", "--directory", str(www)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert "Serving HTTP on 198.18.0.10 port 18080" in server.stdout.readline()
        yield "http://198.18.0.10:18080/tiny_rec"
    finally:
        server.kill()
        server.wait()


@pytest.mark.paddle
@pytest.mark.slow
def test_ssh_engine_trains_across_hosts_of_their_own(site, sshd_on_nodes, http_on_ctl):
    """The ssh engine between hosts with their own names, addresses and disks (not two loopback
    aliases of one host): a config that differs on a node is refused before anything starts;
    then --sync copies it, --prepare fetches the data on each node, and they train together."""
    _hosts_config(site, "cpux1")
    for disk in site.disk.values():  # the data comes with --prepare
        shutil.rmtree(disk / "train_data")
        shutil.rmtree(disk / "inference")
    (site.disk["node2"] / HOSTS_FLEET).write_text((site.repo / HOSTS_FLEET).read_text() + "\n")
    env = {
        "PATH": f"{Path(PY).parent}:/usr/bin:/bin",
        "PYTHONUNBUFFERED": "1",
        "TIPC_MIRROR": http_on_ctl,
        "TIPC_CACHE": ".tipc_cache",
        "TIPC_TIMEOUT": "10",
    }
    args = [HOSTS_FLEET, "--mode", MODE, *sshd_on_nodes.ssh_args(), "--prepare", "--start-port", 17500]
    args += ["--step-timeout", 240, *[a for k, v in env.items() for a in ("--env", f"{k}={v}")]]
    rc, out, err, _ = site.fleet(*args)
    assert rc == 1, out + err
    assert f"node 198.18.0.12: {site.repo}/{HOSTS_FLEET} differs from this machine's config" in err, err
    assert f"node 198.18.0.11: {site.repo}/{HOSTS_FLEET} is missing" in err, err
    assert not (site.disk["node1"] / LOG_DIR).exists()

    rc, out, err, _ = site.fleet(*args, "--sync", label="ssh: 2 hosts of their own, --sync --prepare")
    assert rc == 0, out[-6000:] + err
    assert f"[198.18.0.12] --sync replaced {HOSTS_FLEET}" in out
    _trained_together(site, ["198.18.0.11", "198.18.0.12"])
    assert [n["state"] for n in _report(site)["nodes"]] == ["passed", "passed"]
    for ip in ("198.18.0.11", "198.18.0.12"):
        prepared_out = (site.node_out(ip) / "fleet_prepare.out").read_text()
        assert "prepare: done (tiny_rec, lite_train_lite_infer)" in prepared_out, prepared_out[-2000:]


def test_ssh_engine_catches_the_rank0_pitfall_too(site, sshd_on_nodes):
    _hosts_config(site, "0")  # a GPU entry: the launcher gets no --host
    site.cluster.hosts.remap("node2", "127.0.1.1")
    try:
        rc, out, err, _ = site.fleet(
            HOSTS_FLEET, "--mode", MODE, *sshd_on_nodes.ssh_args(), "--sync", "--env", f"PATH={Path(PY).parent}:/bin"
        )
    finally:
        site.cluster.hosts.restore("node2")
    assert rc == 1, out + err
    assert "node 198.18.0.12: paddle's launcher there resolves its host name 'node2' to 127.0.1.1" in err, err
    assert "--sync copies test_tipc/configs/tiny_rec/hosts_fleet.txt once the problems above are fixed" in err
    assert "refused to start; nothing was started on any node" in err


# -- stop means stopped (issue 32): a stand-in trainer, the real Slurm ---------------------------

# The nodes' `python3`: the preflight's probe (`-c`) runs the real one; the launcher starts its
# trainer in a session of its own (as paddle.distributed.launch does) and waits for it. FAKE_HANG:
# the trainer never ends; FAKE_SLEEP=N: it ends well after N s.
FAKE_TRAINER = r"""#!/usr/bin/env bash
if [[ ${1-} == -c ]]; then exec __PY__ "$@"; fi
echo "fake python3 node=${TIPC_NODE_IP:-unset} argv: $*"
if [[ " $* " == *" -m paddle.distributed.launch "* ]]; then
    mkdir -p log && echo "epoch: 1/ on ${TIPC_NODE_IP}" > log/workerlog.0
    if [[ -n ${FAKE_HANG:-} ]]; then setsid sleep 3600 & wait "$!" || exit; fi
    if [[ -n ${FAKE_SLEEP:-} ]]; then setsid sleep "$FAKE_SLEEP" & wait "$!" || exit; fi
    if [[ -n ${FAKE_STUBBORN:-} ]]; then (trap '' INT TERM HUP; exec setsid sleep 3600) & wait "$!" || exit; fi
fi
exit 0
"""


def _fake_args(site: Site, *extra) -> list:
    bindir = site.repo.parent / "bin"
    if not bindir.exists():
        bindir.mkdir()
        (bindir / "python3").write_text(FAKE_TRAINER.replace("__PY__", PY))
        (bindir / "python3").chmod(0o755)
    return [FLEET, "--mode", MODE, "--via", "slurm", "--sync", "--kill-grace", 2, "--env",
            f"PATH={bindir}:/usr/bin:/bin", *extra]  # fmt: skip


def _user_allocation(site: Site) -> str:
    res = site.cluster.client(["salloc", "--no-shell", "--nodes=2", "--exclusive", "--job-name=users"])
    assert res.returncode == 0, res.stderr
    return res.stderr.split("Granted job allocation")[1].split()[0]


def _steps(site: Site, job: str) -> list:
    res = site.cluster.client(["squeue", "-h", "-s", "-j", job, "-o", "%i %j"], timeout=15)
    return [ln.strip() for ln in res.stdout.splitlines() if ln.strip()]


def _start_fleet(site: Site, args: list) -> subprocess.Popen:
    return subprocess.Popen(
        [*site.cluster.hosts["ctl"].enter(site.repo), *TIPCGEN, "fleet", *[str(a) for a in args]],
        env=site.cluster.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as from a terminal
    )  # fmt: skip


def _wait_training(site: Site, proc: subprocess.Popen, names=("node1", "node2")) -> None:
    deadline = time.monotonic() + 60
    logs = [site.disk[n] / "log" / "workerlog.0" for n in names]
    while time.monotonic() < deadline and proc.poll() is None:
        if all(log.exists() for log in logs):
            return
        time.sleep(0.1)
    pytest.fail("the nodes never started training:\n" + (proc.stdout.read() if proc.poll() is not None else ""))


def _gone_after(site: Site, job: str, t0: float, bound: float = 30) -> float:
    """Seconds from `t0` until no process of the run is left on any node and squeue -s lists no
    step of `job`; fails past `bound`."""
    while time.monotonic() - t0 < bound:
        if not site.left_running() and not _steps(site, job):
            return time.monotonic() - t0
        time.sleep(0.1)
    pytest.fail(f"after {bound} s: processes {site.left_running()}, steps {_steps(site, job)}")


def _records_agree(site: Site, state: str) -> tuple[dict, ET.Element, str]:
    data = _report(site)
    junit = ET.parse(site.repo / NODES_OUT / "fleet.junit.xml").getroot()
    summary = (site.repo / "summary.md").read_text()
    for n in data["nodes"]:
        if n["state"] == state:
            assert f"| {n['ip']} | {state} |" in summary, summary
    return data, junit, summary


def test_ctrl_c_in_the_users_allocation_stops_every_step(site):
    """SIGINT while both nodes train, inside an allocation the user holds (`--job`): the run's
    job steps are cancelled through Slurm, the allocation stays the user's, nothing is left."""
    job = _user_allocation(site)
    try:
        proc = _start_fleet(site, _fake_args(site, "--job", job, "--env", "FAKE_HANG=1", "--summary", "summary.md"))
        _wait_training(site, proc)
        assert len(_steps(site, job)) == 2, _steps(site, job)
        proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        out, _ = proc.communicate(timeout=bound(60))
        back = time.monotonic() - t0
        gone = _gone_after(site, job, t0)
        TIMINGS["slurm --job: SIGINT -> fleet back (s)"] = round(back, 1)
        TIMINGS["slurm --job: SIGINT -> every process and step gone (s)"] = round(gone, 1)
        assert proc.returncode == 1, out[-4000:]
        assert "tipc fleet: stopped every node: interrupted" in " ".join(out.split()), out[-4000:]
        assert "could not stop" not in out, out[-4000:]
        assert back < 2 + 10, out[-4000:]  # the grace, then gathering
        data, junit, summary = _records_agree(site, "stopped")
        assert {n["state"] for n in data["nodes"]} == {"stopped"}
        for n in data["nodes"]:  # a runner that caught the signal first writes its step's "Run failed"
            assert n["steps"][0]["status"] in ("stopped", "failed") and "interrupted" in n["steps"][0]["reason"]
        failing = [s for n in data["nodes"] for s in n["steps"] if s["status"] in ("failed", "stopped", "timed out")]
        assert junit.get("failures") == str(len(failing)) and "Stopped every node: interrupted" in summary
        assert [ln.split()[0] for ln in site.cluster.jobs()] == [job]  # the user's allocation stays
    finally:
        site.cluster.client(["scancel", job])


def test_a_trainer_that_outlives_its_launcher_is_stopped_too(site):
    """SIGINT in fleet's own allocation while each node's trainer ignores SIGTERM in a session of
    its own and its launcher exits on it (paddle's launcher, a slow trainer): the orphaned trainer
    stays in its job step (re-parented to the step's keeper, not to init, so Slurm's tracking by
    lineage still sees it) and Slurm's KILL ends it; nothing is left on any node."""
    proc = _start_fleet(site, _fake_args(site, "--env", "FAKE_STUBBORN=1"))
    _wait_training(site, proc)
    trainers = {n: _trainers(site, n) for n in ("node1", "node2")}
    assert all(trainers.values()), trainers
    proc.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    out, _ = proc.communicate(timeout=bound(60))
    jobs, left = site.settle(bound=30)
    TIMINGS["slurm: SIGINT, trainer outliving its launcher -> every process gone (s)"] = round(time.monotonic() - t0, 1)
    assert not left and not jobs, f"left: {left}; jobs: {jobs}\n{out[-3000:]}"
    assert proc.returncode == 1 and "tipc fleet: stopped every node: interrupted" in " ".join(out.split()), out


def _trainers(site: Site, name: str) -> list:
    """The stand-in trainers (`sleep 3600`) running in node `name`'s namespace."""
    pids = site.cluster.hosts.pids().get(site.cluster.hosts[name].netns, [])
    found = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", b"3600"]:
                found.append(pid)
        except OSError:
            continue
    return found


def test_run_timeout_in_the_users_allocation_stops_every_step(site):
    job = _user_allocation(site)
    try:
        t0 = time.monotonic()
        rc, out, err, seconds = site.fleet(
            *_fake_args(site, "--job", job, "--env", "FAKE_HANG=1", "--run-timeout", 4, "--summary", "summary.md")
        )
        gone = _gone_after(site, job, t0)
        TIMINGS["slurm --job: --run-timeout 4 -> fleet back (s)"] = round(seconds, 1)
        TIMINGS["slurm --job: --run-timeout 4 -> every process and step gone (s)"] = round(gone, 1)
        assert rc == 1, out[-4000:] + err
        assert "tipc fleet: stopped every node: timed out after 4 s" in " ".join(out.split()), out[-4000:]
        assert "could not stop" not in err
        # preflight and --sync take a few seconds; then the limit, the grace, gathering
        assert seconds < bound(4 + 2 + 20), seconds
        data, _junit, _summary = _records_agree(site, "stopped")
        assert {n["state"] for n in data["nodes"]} == {"stopped"}
        for n in data["nodes"]:  # a runner that caught the SIGTERM first writes its step's "Run failed"
            step = n["steps"][0]
            assert step["status"] in ("timed out", "failed") and "timed out after 4 s" in step["reason"], step
        assert [ln.split()[0] for ln in site.cluster.jobs()] == [job]
    finally:
        site.cluster.client(["scancel", job])


def test_a_refused_run_leaves_its_record_and_replaces_the_last(site):
    """A refused run writes its JSON, JUnit and summary (`refused`, with why), replacing a
    passing record from before, and empties the node folders (no old logs shown as this run's)."""
    nodes_out = site.repo / NODES_OUT
    (nodes_out / "198.18.0.11").mkdir(parents=True)
    (nodes_out / "198.18.0.11" / "results_python.log").write_text("old, passing\n")
    (nodes_out / "fleet.json").write_text(json.dumps({"exit_code": 0, "nodes": [{"state": "passed"}]}))
    # no --sync: the run copy of the config is on neither node
    rc, out, err, seconds = site.fleet(FLEET, "--mode", MODE, "--via", "slurm", "--summary", "summary.md")
    assert rc == 1, out + err
    assert "refused to start; nothing was started on any node" in err
    data, junit, summary = _records_agree(site, "refused")
    assert data["exit_code"] == 1 and data["refused"] and {n["state"] for n in data["nodes"]} == {"refused"}
    assert all("is missing" in p and "run with --sync" in p for p in data["refused"]), data["refused"]
    for n in data["nodes"]:
        assert n["reason"].startswith(f"refused: node {n['ip']}: ") and "is missing" in n["reason"], n
    assert junit.get("errors") == "10" and junit.get("skipped") == "0", ET.tostring(junit)[:2000]
    assert "Refused to start; nothing was started on any node:" in summary and "is missing" in summary
    assert not (nodes_out / "198.18.0.11" / "results_python.log").exists()
    assert not (site.disk["node1"] / LOG_DIR / "results_python.log").exists()


def test_a_node_whose_slurmd_dies_is_lost(site):
    """slurmd on node 2 is killed while its run goes on (the run itself ends well there): node 2
    is `lost`, with why and what it last said; JSON, JUnit (errors) and summary agree."""
    proc = _start_fleet(site, _fake_args(site, "--env", "FAKE_SLEEP=4", "--summary", "summary.md"))
    try:
        _wait_training(site, proc)
        slurmd = site.cluster.procs["node2"]
        slurmd.kill()
        slurmd.wait(timeout=10)
        out, _ = proc.communicate(timeout=bound(120))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        # node 2 back for the tests after this one; its new slurmd is part of the cluster
        site.cluster._daemon("node2", ["/usr/sbin/slurmd", "-D", "-N", "node2", "-f", str(site.cluster.conf)])
        site.cluster.baseline.add(site.cluster.procs["node2"].pid)
    assert proc.returncode == 1, out[-4000:]
    data, junit, summary = _records_agree(site, "lost")
    by_ip = {n["ip"]: n for n in data["nodes"]}
    assert by_ip["198.18.0.11"]["state"] == "passed", by_ip["198.18.0.11"]
    lost = by_ip["198.18.0.12"]
    assert lost["state"] == "lost" and lost["reason"].startswith("lost: node 198.18.0.12 (node2): "), lost
    assert "its last word: tipc: 1 steps run, 1 passed, 0 failed, 4 skipped" in lost["reason"], lost["reason"]
    # what it said before it was lost: its train passed, the rest skipped (not trainer 0)
    assert [s["status"] for s in lost["steps"]] == ["passed"] + ["skipped"] * 4, lost["steps"]
    assert data["first_failure"]["node"] == "198.18.0.12" and data["first_failure"]["reason"] == lost["reason"]
    suites = {s.get("name"): s for s in junit.iter("testsuite")}
    assert suites["198.18.0.12"].find("properties/property[@name='state']").get("value") == "lost"
    assert f"Node 198.18.0.12: {lost['reason'][:40]}" in summary, summary
    assert "node 198.18.0.12: lost" in " ".join(out.split())
    site.cluster._wait_for(site.cluster._all_idle, 60, "node2 did not come back idle", "slurmctld.log")


def _sbatch(site: Site, script: Path, bound: float = 60) -> tuple[str, float]:
    t0 = time.monotonic()
    sub = site.cluster.client(["sbatch", "--parsable", str(script)], cwd=site.repo)
    assert sub.returncode == 0, sub.stderr
    job = sub.stdout.strip().split(";")[0]
    while site.cluster.jobs() and time.monotonic() - t0 < bound:
        time.sleep(0.2)
    assert not site.cluster.jobs(), f"job {job} still there after {bound} s"
    return job, time.monotonic() - t0


def test_emitted_sbatch_script_runs_each_node_in_its_own_directory_and_honours_the_run_bound(site):
    """--remote-dir with {node}: each node runs in its own directory (its own status log and
    worker log, no interleaving); --run-timeout stops every node's run in the batch job too."""
    pattern = str(site.repo.parent / "disk_{node}")
    script = site.repo.parent / "per_node.sbatch"
    args = _fake_args(site, "--remote-dir", pattern, "--emit-sbatch", script, "--nodes", 2)
    args = [a for a in args if a != "--sync"]
    rc, out, err, _ = site.fleet(*args)
    assert rc == 0, out + err
    assert shutil.which("shellcheck") is None or subprocess.run(["shellcheck", str(script)]).returncode == 0
    job, seconds = _sbatch(site, script)
    TIMINGS["slurm: sbatch, {node} dirs (s)"] = round(seconds, 1)
    output = (site.disk["node1"] / f"tipcgen-tiny_rec-{job}.out").read_text(errors="replace")
    for rank, name in enumerate(("node1", "node2")):
        lines = _status(site.disk[name] / LOG_DIR / "results_python.log")
        assert len(lines) == 5 and "Run successfully" in lines[0], (name, lines, output[-3000:])
        assert f"--host=198.18.0.1{rank + 1}" in lines[0]
        assert (site.disk[name] / "log" / "workerlog.0").read_text() == f"epoch: 1/ on 198.18.0.1{rank + 1}\n"

    rc, out, err, _ = site.fleet(*args, "--run-timeout", 3, "--env", "FAKE_HANG=1")
    assert rc == 0, out + err
    job, seconds = _sbatch(site, script)
    TIMINGS["slurm: sbatch, --run-timeout 3 -> job gone (s)"] = round(seconds, 1)
    output = (site.disk["node1"] / f"tipcgen-tiny_rec-{job}.out").read_text(errors="replace")
    assert "tipc: the run outlived --run-timeout 3 s on every node; it was stopped" in output, output[-3000:]
    assert seconds < bound(3 + 2 + 15), seconds
    site.check_clean()
