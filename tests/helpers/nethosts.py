"""Hosts of their own on one machine, for the multi-node tests: each "host" is a network
namespace (its own address on a private bridge, no route out) plus a UTS and mount namespace
(its own host name, its own /etc/hosts), kept alive by a holder process; daemons and commands
enter all three with nsenter.

Layout: a bridge in a namespace of its own (no address, no uplink), one veth per host whose
peer is created straight into the host's namespace, addresses 198.18.0.0/24 (RFC 2544
benchmarking space) that exist only inside these namespaces: nothing appears in the machine's
own namespace and no packet can leave. Names carry a per-instance token, so two test workers
never share a namespace.

`why_not()` says why namespaces cannot be made here. Teardown (always, also after a failed
start) kills every process in each namespace, then the holders, then deletes the namespaces.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

SUBNET = "198.18.0"
NSENTER = shutil.which("nsenter") or "/usr/bin/nsenter"  # absolute: a test may run a command with no PATH


def why_not() -> str:
    """'' when network namespaces can be made here, else why not."""
    for tool in ("ip", "nsenter", "unshare", "hostname"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not on PATH (Debian: apt-get install -y iproute2 util-linux hostname)"
    if os.geteuid() != 0:
        return "network namespaces need root"
    name = f"tipc-probe-{secrets.token_hex(3)}"
    res = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True, timeout=30)
    if res.returncode != 0:
        return f"`ip netns add` failed here: {res.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)
    return ""


def _ip(*args: str, ns: Optional[str] = None) -> None:
    argv = ["ip", *(["-n", ns] if ns else []), *args]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {res.stderr.strip()}")


@dataclass
class Host:
    name: str
    ip: str
    netns: str
    holder: subprocess.Popen
    hosts_file: Path

    def enter(self, cwd=None) -> list[str]:
        """argv prefix running a command on this host (its network, name and /etc/hosts), in `cwd`
        (entering a mount namespace starts in its root directory otherwise). The directory is
        entered inside the namespace: nsenter's --wd opens it outside, and a rename from there to
        a path resolved inside fails with EXDEV (two mounts of one file system)."""
        wd = ["/bin/sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", str(cwd)] if cwd is not None else []
        return [NSENTER, f"--target={self.holder.pid}", "--net", "--uts", "--mount", "--", *wd]


class Hosts:
    """`names` as hosts on one private bridge, addresses SUBNET.11, .12, ... in order."""

    def __init__(self, root: Path, names, first: int = 11):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.token = secrets.token_hex(3)
        self.bridge_ns = f"tipc-{self.token}-br"
        self.hosts: dict[str, Host] = {}
        self._wanted = [(name, f"{SUBNET}.{first + i}") for i, name in enumerate(names)]

    # -- bring up / tear down ----------------------------------------------------------------

    def start(self) -> Hosts:
        try:
            _ip("netns", "add", self.bridge_ns)
            _ip("link", "add", "br0", "type", "bridge", ns=self.bridge_ns)
            _ip("link", "set", "br0", "up", ns=self.bridge_ns)
            for i, (name, ip) in enumerate(self._wanted):
                self._add(i, name, ip)
        except BaseException:
            self.stop()
            raise
        return self

    def etc_hosts(self, own: Optional[tuple[str, str]] = None) -> str:
        """/etc/hosts naming every host; `own` = (name, address) maps that host's own name elsewhere
        (as Debian's installer does with 127.0.1.1), the rank-0 pitfall of paddle's launcher."""
        lines = ["127.0.0.1 localhost"]
        for name, ip in self._wanted:
            if own and own[0] == name:
                lines.append(f"{own[1]} {name}")
            else:
                lines.append(f"{ip} {name}")
        return "\n".join(lines) + "\n"

    def _add(self, i: int, name: str, ip: str) -> None:
        ns = f"tipc-{self.token}-{i}"
        _ip("netns", "add", ns)
        _ip("link", "add", f"v{i}", "type", "veth", "peer", "name", "eth0", "netns", ns, ns=self.bridge_ns)
        _ip("link", "set", f"v{i}", "master", "br0", "up", ns=self.bridge_ns)
        _ip("addr", "add", f"{ip}/24", "dev", "eth0", ns=ns)
        _ip("link", "set", "eth0", "up", ns=ns)
        _ip("link", "set", "lo", "up", ns=ns)
        hosts_file = self.root / f"hosts.{name}"
        hosts_file.write_text(self.etc_hosts())
        # The holder: the host's own name and /etc/hosts, in namespaces that live as long as it does.
        script = 'hostname "$1" && mount --bind "$2" /etc/hosts && echo up && exec sleep infinity'
        holder = subprocess.Popen(
            ["ip", "netns", "exec", ns, "unshare", "--uts", "--mount", "--propagation", "private", "--",
             "sh", "-c", script, "sh", name, str(hosts_file)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        host = Host(name, ip, ns, holder, hosts_file)
        self.hosts[name] = host
        assert holder.stdout is not None
        line = holder.stdout.readline()  # bounded: the holder either prints or exits
        if line.strip() != b"up":
            err = holder.stderr.read().decode(errors="replace") if holder.stderr else ""
            raise RuntimeError(f"host {name}: the holder did not start: {err.strip()}")

    def stop(self) -> None:
        for host in self.hosts.values():
            self._kill_namespace(host.netns)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(host.holder.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                host.holder.wait(timeout=10)
        for host in self.hosts.values():
            subprocess.run(["ip", "netns", "del", host.netns], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "del", self.bridge_ns], capture_output=True, timeout=30)
        self.hosts.clear()

    @staticmethod
    def _kill_namespace(ns: str) -> None:
        """SIGKILL every process in network namespace `ns` (daemons, jobs, anything they left)."""
        for _ in range(5):
            res = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=30)
            pids = [int(p) for p in res.stdout.split() if p.isdigit()]
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)

    # -- using them -------------------------------------------------------------------------

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

    def pids(self) -> dict:
        """namespace -> pids of processes in it (what is left running)."""
        out = {}
        for host in self.hosts.values():
            res = subprocess.run(["ip", "netns", "pids", host.netns], capture_output=True, text=True, timeout=30)
            out[host.netns] = [int(p) for p in res.stdout.split() if p.isdigit()]
        return out

    def namespaces(self) -> list[str]:
        """This instance's namespaces that exist now (none after stop())."""
        res = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30)
        return [w.split()[0] for w in res.stdout.splitlines() if w.startswith(f"tipc-{self.token}-")]

    def remap(self, name: str, address: str) -> None:
        """From now on `name` resolves to `address` on host `name` itself (its /etc/hosts)."""
        self.hosts[name].hosts_file.write_text(self.etc_hosts(own=(name, address)))

    def restore(self, name: str) -> None:
        self.hosts[name].hosts_file.write_text(self.etc_hosts())

    def run(self, name: str, argv, **kw) -> subprocess.CompletedProcess:
        kw.setdefault("timeout", 60)
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        return subprocess.run([*self.hosts[name].enter(kw.pop("cwd", None)), *argv], **kw)

    def popen(self, name: str, argv, **kw) -> subprocess.Popen:
        return subprocess.Popen([*self.hosts[name].enter(kw.pop("cwd", None)), *argv], **kw)

    def bind(self, name: str, source: Path, target: Path) -> None:
        """On host `name` only, `target` shows `source` (the host's own disk at a shared path)."""
        res = subprocess.run(
            ["nsenter", f"--target={self.hosts[name].holder.pid}", "--mount", "--", "mount", "--bind",
             str(source), str(target)],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        if res.returncode != 0:
            raise RuntimeError(f"host {name}: mount --bind {source} {target}: {res.stderr.strip()}")
