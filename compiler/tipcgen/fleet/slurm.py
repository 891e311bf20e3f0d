"""Slurm as a fleet engine (`tipcgen fleet --via slurm`): the allocation gives the nodes, each
node says its own address, and every node-side script of the fleet (check, copy, run, stop,
gather) runs as a job step on that node: `srun --jobid=J --nodes=1 --ntasks=1 --nodelist=NODE
--overlap`. One step per node, so each node's output, exit code and stop are its own, exactly
as over ssh; the steps start at once.

The allocation is the one tipcgen runs inside (`SLURM_JOB_ID`, in `salloc` or `sbatch`) or one
it asks for (`salloc --no-shell --nodes=N --ntasks-per-node=1 --exclusive --immediate=S`, then
released with `scancel` whatever happens). Slurm's own clients do all the work; every call is
bounded in time.

A node's address is Slurm's `NodeAddr` for it when that is one of the node's own addresses
(`hostname -I` there), else the node's only non-loopback address; the run copy of the config
names them in its gpu_list (plan/runcopy.py).
"""

from __future__ import annotations

import ipaddress
import re
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Optional

from tipcgen.errors import TipcError
from tipcgen.fleet.bounded import SLACK, run_bounded
from tipcgen.fleet.ssh import MARK


class SlurmRefused(TipcError):
    """Slurm could not give the fleet its nodes (partition, size, a job that never starts, no
    srun): nothing was started. Exit 1, like a preflight refusal."""

    exit_code = 1


@dataclass(frozen=True)
class SlurmOptions:
    nodes: Optional[int] = None  # ask for an allocation of this many nodes (None: the suite's count)
    partition: Optional[str] = None
    time_limit: Optional[str] = None  # salloc --time
    alloc_timeout: float = 300.0  # seconds the allocation may take to start
    connect_timeout: float = 10.0  # seconds a step may take to start on a node
    job: Optional[str] = None  # run inside this allocation (default: $SLURM_JOB_ID when set)


# A run step's first process keeps every process of the run inside the step. Slurm tracks a
# step's processes by lineage where it has no cgroups (proctrack/linuxproc): paddle's launcher
# starts each trainer in a session of its own and, stopped, exits before it, and a trainer
# re-parented to init is no longer the step's, so `scancel --signal=KILL` misses it. This keeper
# is a child subreaper (prctl PR_SET_CHILD_SUBREAPER): orphans of the run come to it, still in the
# step. Signalled (a stop), it stays until every one of them is gone (Slurm's KILL ends them and
# it together). Slurm signals a step's processes one at a time, so the run may die of the stop
# before the keeper hears of it: with orphans left, the keeper waits LATE s for that signal. None
# came: the run ended on its own, and the keeper ends what it left (SIGKILL, as Slurm ends what
# is left of a finished step where it tracks by cgroup), then exits with the run's exit code.
KEEPER_LATE = 3.0
KEEPER_PY = """import ctypes, os, signal, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
stopping = []
signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
for s in signals:
    signal.signal(s, lambda n, f: stopping.append(n))
run = os.fork()
if run == 0:
    for s in signals:
        signal.signal(s, signal.SIG_DFL)
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)


def children():
    me, found = str(os.getpid()), []
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/" + p + "/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[1] == me:
                    found.append(int(p))
        except (OSError, IndexError):
            pass
    return found


code, ended = 1, None
while True:
    try:
        pid, status = os.waitpid(-1, os.WNOHANG if ended is not None and not stopping else 0)
    except ChildProcessError:
        break
    if pid == run:
        code, ended = os.waitstatus_to_exitcode(status), time.monotonic()
    elif pid == 0:
        if time.monotonic() - ended > LATE:
            for child in children():
                try:
                    os.kill(child, signal.SIGKILL)
                except OSError:
                    pass
        time.sleep(0.1)
sys.exit(code if code >= 0 else 128 - code)
""".replace("LATE", repr(KEEPER_LATE))
# The keeper needs a Python on the node (the suite's own needs one); without one the run starts
# as it is.
KEEPER = 'for py in python3 python; do command -v "$py" >/dev/null 2>&1 && exec "$py" "$@"; done; shift 2; exec "$@"'


@dataclass(frozen=True)
class SlurmTransport:
    """Carries a script to a node as a job step of the allocation."""

    job: str
    names: tuple  # (ip, node name) per node
    connect_timeout: float = 10.0
    name = "slurm"

    def node_name(self, host: str) -> str:
        return dict(self.names).get(host, host)

    def argv(self, host: str, script: str, stdin: bool = False, run: Optional[str] = None) -> list[str]:
        return [
            "srun",
            f"--jobid={self.job}",
            *([f"--job-name={run}"] if run else []),  # the step's name: how `stop` finds it
            "--nodes=1",
            "--ntasks=1",
            f"--nodelist={self.node_name(host)}",
            "--overlap",  # beside the run's own step (the stop, the gather)
            "--quiet",
            f"--input={'all' if stdin else 'none'}",
            *(["sh", "-c", KEEPER, "sh", "-c", KEEPER_PY] if run else []),  # a run: kept in its step
            "sh",
            "-c",
            script,
        ]

    def failure(self, host: str, code: Optional[int], err: str, bound: float) -> str:
        node = f"node {host} ({self.node_name(host)})"
        if code is None:
            return (
                f"{node}: no answer within {bound:g} s from a job step there (job {self.job}); check "
                "`sinfo -N` and `squeue -s -j JOB`, or raise --connect-timeout"
            )
        lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
        last = next((ln for ln in reversed(lines) if not ln.startswith("srun: error: ") or "task" not in ln), None)
        return f"{node}: srun failed: {last or f'exited {code}'}"

    def steps(self, run: str, bound: float) -> Optional[list[str]]:
        """The job steps (`JOB.STEP`) named `run` that Slurm still knows; None: squeue failed."""
        code, out, _err = run_bounded(["squeue", "-h", "-s", "-j", self.job, "-o", "%i %j"], bound)
        if code != 0:
            return None
        return [w[0] for w in (ln.split(None, 1) for ln in out.splitlines()) if len(w) == 2 and w[1].strip() == run]

    def stop(self, host: str, directory: str, run: str, grace: float) -> Optional[str]:
        """Through Slurm only: `scancel --signal=TERM` to the run's own step (slurmstepd signals
        every process it tracks there, the launcher's workers in their sessions too), then after
        `grace` s `scancel --signal=KILL` and `scancel` of the step; done when squeue no longer
        lists it. Never the job: an allocation the user holds stays theirs."""
        bound = self.connect_timeout + SLACK
        steps = self.steps(run, bound)
        if steps is None:
            return f"node {host} ({self.node_name(host)}): squeue failed: cannot find the run's job step to stop it"
        if not steps:
            return None
        signalled = time.monotonic()
        for sig in ("TERM", "KILL"):
            code, _out, err = run_bounded(["scancel", "--quiet", f"--signal={sig}", *steps], bound)
            deadline = (signalled + grace) if sig == "TERM" else time.monotonic() + bound
            while steps and time.monotonic() < deadline:
                time.sleep(0.2)
                steps = self.steps(run, bound) or []
            if not steps:
                return None
            if sig == "KILL":  # the step's processes are gone or unkillable: end the step itself
                run_bounded(["scancel", "--quiet", *steps], bound)
                deadline = time.monotonic() + bound
                while steps and time.monotonic() < deadline:
                    time.sleep(0.2)
                    steps = self.steps(run, bound) or []
        if steps:
            return (
                f"node {host} ({self.node_name(host)}): job step {', '.join(steps)} still runs {bound:g} s after "
                f"`scancel --signal=KILL` and `scancel` ({_last(err) or f'scancel exited {code}'}); "
                f"see `squeue -s -j {self.job}`"
            )
        return None


@dataclass
class Allocation:
    job: str
    nodes: list  # node names, in Slurm's order
    owned: bool  # tipcgen asked for it: released at the end
    said: list = field(default_factory=list)  # what salloc said (for messages)


def check_clients() -> None:
    from shutil import which

    for tool in ("srun", "salloc", "scontrol", "scancel"):
        if which(tool) is None:
            raise SlurmRefused(
                f"tipc fleet --via slurm: `{tool}` is not on PATH; run on a Slurm login node (the "
                "slurm-client package), or use the ssh engine (the default)"
            )


def hostnames(nodelist: str, timeout: float) -> list[str]:
    """Slurm's node list expression (`node[1-3]`) as names, by `scontrol show hostnames`."""
    code, out, err = run_bounded(["scontrol", "show", "hostnames", nodelist], timeout)
    names = out.split()
    if code != 0 or not names:
        raise SlurmRefused(f"tipc fleet: slurm: cannot list the nodes of {nodelist!r}: {_last(err) or code}")
    return names


def _last(err: str) -> str:
    lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return (errors or lines or [""])[-1]


def current(environ: Mapping[str, str], timeout: float, job: Optional[str] = None) -> Optional[Allocation]:
    """The allocation tipcgen runs inside (`job`, else $SLURM_JOB_ID), or None."""
    job = job or environ.get("SLURM_JOB_ID") or None
    if not job:
        return None
    if not job.isdigit():
        raise SlurmRefused(f"tipc fleet: slurm: job id {job!r} is not a number")
    nodelist = environ.get("SLURM_JOB_NODELIST") if environ.get("SLURM_JOB_ID") == job else None
    if not nodelist:
        code, out, err = run_bounded(["squeue", "-h", "-j", job, "-o", "%N"], timeout)
        nodelist = out.strip()
        if code != 0 or not nodelist:
            raise SlurmRefused(f"tipc fleet: slurm: job {job} has no nodes (not running?): {_last(err)}")
    return Allocation(job, hostnames(nodelist, timeout), owned=False)


def salloc_argv(opts: SlurmOptions, count: int, name: str = "tipcgen-fleet") -> list[str]:
    argv = ["salloc", "--no-shell", f"--nodes={count}", "--ntasks-per-node=1", "--exclusive"]
    argv += [f"--job-name={name}", f"--immediate={max(1, round(opts.alloc_timeout))}"]
    if opts.partition:
        argv.append(f"--partition={opts.partition}")
    if opts.time_limit:
        argv.append(f"--time={opts.time_limit}")
    return argv


_GRANTED = re.compile(r"Granted job allocation (\d+)")
_PENDING = re.compile(r"Pending job allocation (\d+)")


def allocate(opts: SlurmOptions, count: int) -> Allocation:
    """Ask for `count` whole nodes; SlurmRefused (naming Slurm's reason) when they do not come
    within `alloc_timeout` seconds. A job left pending by a killed salloc is cancelled."""
    bound = opts.alloc_timeout + SLACK
    name = f"tipcgen-fleet-{secrets.token_hex(4)}"  # finds a job salloc left queued, whatever happened
    try:
        code, out, err = run_bounded(salloc_argv(opts, count, name), bound)
    except BaseException:  # Ctrl-C while waiting: salloc runs on in its own session, its job queued
        run_bounded(["scancel", f"--name={name}"], 30.0)
        raise
    granted = _GRANTED.search(err) or _GRANTED.search(out)
    if code == 0 and granted:
        job = granted.group(1)
        try:
            alloc = current({}, opts.connect_timeout + SLACK, job)
        except SlurmRefused:
            release(Allocation(job, [], owned=True))
            raise
        assert alloc is not None
        return Allocation(job, alloc.nodes, owned=True, said=err.splitlines())
    pending = _PENDING.search(err)
    if pending or code is None:  # salloc gave up or was killed while its job waited: never leave it queued
        run_bounded(["scancel", f"--name={name}"], 30.0)
    reason = _last(err) or (f"salloc exited {code}" if code is not None else "")
    where = f" in partition {opts.partition}" if opts.partition else ""
    if code is None or "timed out" in reason.lower() or ("waiting for resources" in err and code != 0):
        raise SlurmRefused(
            f"tipc fleet: slurm: no allocation of {count} node(s){where} started within {opts.alloc_timeout:g} s "
            f"(Slurm: {reason or 'no answer'}); the nodes are busy or fewer than asked: see `sinfo`, raise "
            "--alloc-timeout, or run inside an allocation you hold"
        )
    raise SlurmRefused(f"tipc fleet: slurm: salloc refused {count} node(s){where}: {reason}")


def release(alloc: Allocation, timeout: float = 30.0) -> Optional[str]:
    """scancel an allocation tipcgen asked for (every step in it ends); a problem or None."""
    if not alloc.owned:
        return None
    code, _out, err = run_bounded(["scancel", alloc.job], timeout)
    return None if code == 0 else f"scancel {alloc.job}: {_last(err) or code}"


# -- each node's address, as seen on that node ------------------------------------------------


def address_script() -> str:
    """Prints `MARK addr <slurm node name> <host name> <its IPv4 addresses...>`."""
    return (
        "a=$(hostname -I 2>/dev/null) || "
        "a=$(ip -o -4 addr show 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | tr '\\n' ' '); "
        f'echo "{MARK} addr ${{SLURMD_NODENAME:-?}} $(hostname) $a"'
    )


def _node_addrs(names: Sequence[str], timeout: float) -> dict:
    """name -> Slurm's NodeAddr (`scontrol show node -o`)."""
    _code, out, _err = run_bounded(["scontrol", "show", "node", "-o", ",".join(names)], timeout)
    found = {}
    for line in out.splitlines():
        fields = dict(w.split("=", 1) for w in line.split() if "=" in w)
        if "NodeName" in fields:
            found[fields["NodeName"]] = fields.get("NodeAddr", "")
    return found


def _ipv4s(words: Sequence[str]) -> list[str]:
    out = []
    for w in words:
        try:
            if ipaddress.ip_address(w).version == 4:
                out.append(w)
        except ValueError:
            continue
    return out


def node_addresses(alloc: Allocation, names: Sequence[str], timeout: float) -> list[str]:
    """The address of each of `names` (in order), asked of the nodes themselves in one job step."""
    argv = [
        "srun", f"--jobid={alloc.job}", f"--nodes={len(names)}", "--ntasks-per-node=1",
        f"--nodelist={','.join(names)}", "--overlap", "--quiet", "--input=none", "sh", "-c", address_script(),
    ]  # fmt: skip
    bound = timeout + SLACK
    started = time.monotonic()
    code, out, err = run_bounded(argv, bound)
    took = time.monotonic() - started
    seen: dict = {}
    for line in out.splitlines():
        words = line.split()
        if line.startswith(MARK) and words[1:2] == ["addr"] and len(words) >= 4:
            seen[words[2]] = (words[3], _ipv4s(words[4:]))
    slurm_addr = _node_addrs(names, bound)
    ips = []
    for name in names:
        if name not in seen:
            why = _last(err) or ("no answer" if code is None else f"srun exited {code}")
            # the bound only when it was reached: an srun that failed early says when and how
            when = f"within {bound:g} s" if code is None else f"(srun ended after {took:.1f} s, exit {code})"
            raise SlurmRefused(f"tipc fleet: slurm: node {name} did not say its address {when} ({why})")
        _host, mine = seen[name]
        addr = slurm_addr.get(name, "")
        outside = [a for a in mine if not ipaddress.ip_address(a).is_loopback]
        if addr in mine:
            ips.append(addr)
        elif len(outside) == 1:
            ips.append(outside[0])
        else:
            raise SlurmRefused(
                f"tipc fleet: slurm: node {name}: Slurm's NodeAddr {addr or '?'} is none of its addresses "
                f"({', '.join(mine) or 'none found'}), and it has {len(outside)} others to choose from; set NodeAddr "
                "to the address the nodes reach each other on"
            )
    return ips


def describe(alloc: Allocation, names: Sequence[str], ips: Sequence[str]) -> str:
    pairs = ", ".join(f"{n} {ip}" for n, ip in zip(names, ips))
    how = "asked for by tipcgen" if alloc.owned else "the one tipcgen runs in"
    return f"slurm job {alloc.job} ({how}): {pairs}"
