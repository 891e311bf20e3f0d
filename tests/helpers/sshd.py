"""Real OpenSSH servers for the fleet tests: one `/usr/sbin/sshd -D -e` per loopback address
(so one node can be stopped alone), throwaway host and user keys, and an ssh client config
with a Host entry per address.

Only 127.0.0.0/8; every wait is bounded. `why_not()` says why the servers cannot run here
(no sshd, no ssh client, no privilege-separation directory).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Optional

SSHD = "/usr/sbin/sshd"
SFTP_SERVER = "/usr/lib/openssh/sftp-server"


def why_not() -> str:
    """'' when real sshd servers can be started here, else why not."""
    for path in (SSHD, SFTP_SERVER):
        if not os.path.exists(path):
            return f"{path} is not installed (Debian: apt-get install -y openssh-server)"
    for tool in ("ssh", "scp", "ssh-keygen", "setsid", "sha256sum"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not on PATH (Debian: apt-get install -y openssh-client util-linux coreutils)"
    # sshd refuses to start without its privilege-separation directory (root may create it).
    if not os.path.isdir("/run/sshd"):
        try:
            os.makedirs("/run/sshd", mode=0o755)
        except OSError as exc:
            return f"sshd needs /run/sshd and it cannot be made here ({exc.strerror})"
    return ""


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "tipcgen-test", "-f", str(path)],
        check=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )


class SshNodes:
    """sshd on each of `ips` (same port), the client config and key to reach them."""

    def __init__(self, root: Path, ips, port: int, hosts=None):
        """`hosts`: a nethosts.Hosts holding each ip as a host of its own (its sshd runs there)."""
        self.root = root
        self.ips = tuple(ips)
        self.port = port
        self.hosts = hosts
        self.host_of = {h.ip: name for name, h in hosts.hosts.items()} if hosts is not None else {}
        self.procs: dict = {}
        root.mkdir(parents=True, exist_ok=True)
        self.host_key = root / "host_key"
        self.user_key = root / "user_key"
        _keygen(self.host_key)
        _keygen(self.user_key)
        shutil.copy(f"{self.user_key}.pub", root / "authorized_keys")
        self.client_config = root / "ssh_config"
        entries = []
        for ip in self.ips:
            entries.append(
                f"Host {ip}\n  Port {self.port}\n  IdentityFile {self.user_key}\n  IdentitiesOnly yes\n"
                "  UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n  LogLevel ERROR\n"
            )
        self.client_config.write_text("".join(entries))

    def _config(self, ip: str) -> Path:
        cfg = self.root / f"sshd_{ip}.conf"
        cfg.write_text(
            f"ListenAddress {ip}:{self.port}\n"
            f"HostKey {self.host_key}\n"
            f"AuthorizedKeysFile {self.root / 'authorized_keys'}\n"
            f"PidFile {self.root / f'sshd_{ip}.pid'}\n"
            "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            "PermitRootLogin prohibit-password\nPubkeyAuthentication yes\nMaxStartups 50\nMaxSessions 50\n"
            # scp speaks SFTP by default since OpenSSH 9.0 (Debian's own config has this line).
            f"Subsystem sftp {SFTP_SERVER}\n"
        )
        return cfg

    def start(self, ip: str, timeout: float = 15.0) -> None:
        log = open(self.root / f"sshd_{ip}.log", "ab")
        argv = [SSHD, "-D", "-e", "-f", str(self._config(ip))]
        kw = dict(stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if self.hosts is not None:
            self.procs[ip] = self.hosts.popen(self.host_of[ip], argv, **kw)
        else:
            self.procs[ip] = subprocess.Popen(argv, **kw)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.procs[ip].poll() is not None:
                raise RuntimeError(f"sshd on {ip} exited {self.procs[ip].returncode}: {self.log(ip)}")
            if self.hosts is not None:  # its address exists only in its namespace: its log says
                if f"Server listening on {ip} port {self.port}" in self.log(ip):
                    return
                time.sleep(0.05)
                continue
            try:
                with socket.create_connection((ip, self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"sshd on {ip}:{self.port} did not listen within {timeout} s: {self.log(ip)}")

    def start_all(self) -> SshNodes:
        for ip in self.ips:
            self.start(ip)
        return self

    def stop(self, ip: str) -> None:
        """Stop the listening sshd (sessions it already forked are not ours to end here)."""
        proc: Optional[subprocess.Popen] = self.procs.pop(ip, None)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)

    def stop_all(self) -> None:
        for ip in list(self.procs):
            self.stop(ip)

    def log(self, ip: str) -> str:
        path = self.root / f"sshd_{ip}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def ssh_args(self) -> list:
        return ["--ssh-config", str(self.client_config)]
