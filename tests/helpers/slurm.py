"""A real Slurm cluster on hosts of their own (tests/helpers/nethosts.py): slurmctld on host
`ctl` (also the login host the tests run tipcgen on), one slurmd per node host `node1..nodeN`,
and one private munged whose socket (a file, under the test's directory) serves every namespace.

Debian 12's slurmctld/slurmd 22.05 and munge 0.5.15; everything lives under the test's
directory (config, keys, spool, logs); the daemons run in the foreground, one process each,
and die with their namespace. What a netns demands: no cgroup plugin (a fresh /sys there),
so process tracking by /proc lineage and no task plugin.

`why_not()` says why the cluster cannot run here.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Optional

from helpers.nethosts import Hosts
from helpers.nethosts import why_not as netns_why_not

DAEMONS = ("/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged")
CLIENTS = ("srun", "salloc", "sbatch", "squeue", "scancel", "scontrol", "sinfo")


def why_not() -> str:
    for path in DAEMONS:
        if not os.path.exists(path):
            return (
                f"{path} is not installed (Debian: apt-get install -y --no-install-recommends "
                "slurmctld slurmd slurm-client munge)"
            )
    for tool in CLIENTS:
        if shutil.which(tool) is None:
            return f"`{tool}` is not on PATH (Debian: apt-get install -y slurm-client)"
    return netns_why_not()


SLURM_CONF = """\
ClusterName=tipc
SlurmctldHost=ctl({ctl_ip})
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={munge_socket}
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool/%n
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.%n.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
SlurmdTimeout=30
MessageTimeout=10
KillWait=1
InactiveLimit=0
MinJobAge=5
{nodes}
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""

CGROUP_CONF = "CgroupPlugin=cgroup/v1\n"


class Cluster:
    """slurmctld on `ctl` and slurmd on node1..nodeN; `env` is what a Slurm client needs."""

    def __init__(self, root: Path, nodes: int, cpus: int = 2):
        self.root = root
        self.names = [f"node{i}" for i in range(1, nodes + 1)]
        self.hosts = Hosts(root / "hosts", ["ctl", *self.names], first=10)
        self.cpus = cpus
        self.munged: Optional[subprocess.Popen] = None
        self.conf = root / "slurm.conf"
        self.procs: dict = {}
        self.baseline: set = set()

    @property
    def env(self) -> dict:
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf)
        for key in [k for k in env if k.startswith(("SLURM_", "SALLOC_", "SBATCH_", "SRUN_")) and k != "SLURM_CONF"]:
            del env[key]
        return env

    def start(self, timeout: float = 30.0) -> Cluster:
        try:
            self._start(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, timeout: float) -> None:
        for sub in ("state", "spool", "munge"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        munge = self.root / "munge"
        munge.chmod(0o755)
        key = munge / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        socket_path = munge / "munge.socket"
        self.munged = subprocess.Popen(
            ["/usr/sbin/munged", "--foreground", "--force", f"--key-file={key}", f"--socket={socket_path}",
             f"--pid-file={munge / 'munged.pid'}", f"--log-file={munge / 'munged.log'}",
             f"--seed-file={munge / 'munged.seed'}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        self._wait_for(lambda: socket_path.exists(), timeout, "munged did not create its socket", "munge/munged.log")
        self.hosts.start()
        ctl = self.hosts["ctl"]
        nodes = "\n".join(
            f"NodeName={n} NodeAddr={self.hosts[n].ip} NodeHostname={n} CPUs={self.cpus} State=UNKNOWN"
            for n in self.names
        )
        self.conf.write_text(
            SLURM_CONF.format(
                ctl_ip=ctl.ip, ctld_port=6817, slurmd_port=6818, munge_socket=socket_path, root=self.root, nodes=nodes
            )
        )
        (self.root / "cgroup.conf").write_text(CGROUP_CONF)
        for n in self.names:
            (self.root / "spool" / n).mkdir(parents=True, exist_ok=True)
        self._daemon("ctl", ["/usr/sbin/slurmctld", "-D", "-i", "-f", str(self.conf)])
        for n in self.names:
            self._daemon(n, ["/usr/sbin/slurmd", "-D", "-N", n, "-f", str(self.conf)])
        self._wait_for(self._all_idle, timeout, "the nodes did not come up idle", "slurmctld.log")
        # What runs now is the cluster itself (holders, daemons, slurmctld's slurmscriptd): any
        # other process in a node's namespace later was started by a job.
        self.baseline = {pid for pids in self.hosts.pids().values() for pid in pids}

    def _daemon(self, host: str, argv: list) -> None:
        log = open(self.root / f"{Path(argv[0]).name}.{host}.out", "ab")
        self.procs[host] = self.hosts.popen(
            host, argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=self.env,
            start_new_session=True,
        )  # fmt: skip
        log.close()

    def _all_idle(self) -> bool:
        res = self.client(["sinfo", "-h", "-N", "-o", "%N %t"], timeout=15)
        states = dict(line.split() for line in res.stdout.splitlines() if len(line.split()) == 2)
        return all(states.get(n) == "idle" for n in self.names)

    def _wait_for(self, ready, timeout: float, what: str, log: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(subprocess.TimeoutExpired):
                if ready():
                    return
            for host, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"a Slurm daemon on {host} exited {proc.returncode}: {self.log_tail(host)}")
            time.sleep(0.1)
        path = self.root / log
        tail = path.read_text(errors="replace")[-3000:] if path.exists() else ""
        raise RuntimeError(f"{what} within {timeout} s:\n{tail}")

    def log_tail(self, host: str) -> str:
        texts = []
        for path in sorted(self.root.glob(f"*{host}*")):
            if path.is_file() and path.suffix in (".out", ".log"):
                texts.append(f"--- {path.name}\n" + path.read_text(errors="replace")[-2000:])
        return "\n".join(texts)

    def client(self, argv, host: str = "ctl", **kw) -> subprocess.CompletedProcess:
        """A Slurm client command on `host` (the login host by default)."""
        kw.setdefault("timeout", 60)
        kw.setdefault("env", self.env)
        return self.hosts.run(host, argv, **kw)

    def jobs(self) -> list[str]:
        """Jobs the controller still knows as pending or running ("<id> <state>")."""
        res = self.client(["squeue", "-h", "-o", "%i %T"], timeout=15)
        return [ln.strip() for ln in res.stdout.splitlines() if ln.strip()]

    def stop(self) -> None:
        self.hosts.stop()  # every daemon and job dies with its namespace
        for proc in self.procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
        if self.munged is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.munged.pid, signal.SIGKILL)
            self.munged.wait(timeout=10)
