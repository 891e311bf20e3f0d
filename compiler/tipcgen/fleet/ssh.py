"""argv for the system ssh, and the POSIX shell snippets `tipcgen fleet` runs on a node.

Every remote command is one `sh`-compatible string (ssh hands it to the node's login shell);
every value in it is `shlex.quote`d. The run is started under `setsid -w` so that the whole run
is one process group, and every process of it carries `TIPC_FLEET_RUN=<token>` in its
environment: the stop snippet finds them by that token in /proc (paddle.distributed.launch puts
its workers in sessions of their own, so the group alone would miss them), falling back to the
group recorded in the pid file on systems without /proc.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

# Lines the snippets print for us start with this marker (the run's own output never does).
MARK = "tipcgen-fleet:"
RUNNER = "test_tipc/test_train_inference_python.sh"
PREPARE = "test_tipc/prepare.sh"
# The run's pid (= its process group) on the node, relative to the node's working directory.
PID_FILE = "test_tipc/output/.tipcgen-fleet.pid"
TOKEN_VAR = "TIPC_FLEET_RUN"


@dataclass(frozen=True)
class SshOptions:
    """What the user told us about reaching the nodes; the rest comes from their ssh config."""

    config: Optional[str] = None  # -F FILE
    identity: Optional[str] = None  # -i FILE
    user: Optional[str] = None  # -o User=U
    port: Optional[int] = None  # -o Port=P
    options: tuple = ()  # ("Key=Value", ...), passed as -o
    connect_timeout: float = 10.0
    # Dead connections are noticed after ServerAliveInterval x ServerAliveCountMax seconds.
    alive_interval: int = 5

    def common(self) -> list[str]:
        """ssh's options for every command. ssh keeps the first value it gets for an option, so
        BatchMode comes first (never a password prompt) and the user's -o before our defaults."""
        args = ["-o", "BatchMode=yes"]
        if self.config:
            args += ["-F", self.config]
        if self.identity:
            args += ["-i", self.identity]
        if self.user:
            args += ["-o", f"User={self.user}"]
        if self.port:
            args += ["-o", f"Port={self.port}"]
        for opt in self.options:
            args += ["-o", opt]
        args += [
            "-o",
            f"ConnectTimeout={max(1, round(self.connect_timeout))}",
            "-o",
            f"ServerAliveInterval={self.alive_interval}",
            "-o",
            "ServerAliveCountMax=3",
        ]
        return args

    name = "ssh"

    def argv(self, host: str, script: str, stdin: bool = False, run: Optional[str] = None) -> list[str]:
        return ssh_argv(self, host, script, stdin)

    def stop(self, host: str, directory: str, run: str, grace: float) -> Optional[str]:
        """A second ssh running `stop_script` under /bin/sh, named explicitly: the user's login
        shell only execs it, so the script meets one known POSIX shell (dash on Debian)."""
        from tipcgen.fleet.bounded import SLACK, run_bounded

        bound = self.connect_timeout + grace + SLACK
        script = f"exec /bin/sh -c {shlex.quote(stop_script(directory, run, grace))}"
        code, out, err = run_bounded(self.argv(host, script), bound)
        return stop_answer(host, out) if f"{MARK} stopped" in out else self.failure(host, code, err, bound)

    def failure(self, host: str, code: Optional[int], err: str, bound: float) -> str:
        if code is None:
            return (
                f"node {host}: no answer within {bound:g} s; check that it is up and its sshd reachable "
                "from here, or raise --connect-timeout"
            )
        last = next((ln.strip() for ln in reversed(err.splitlines()) if ln.strip()), f"ssh exited {code}")
        return f"node {host}: ssh failed: {last}"


def ssh_argv(opts: SshOptions, host: str, script: str, stdin: bool = False) -> list[str]:
    """ssh running `script` on `host`: no tty, no stdin (-n) unless `stdin`, `--` before the host."""
    return ["ssh", *opts.common(), "-T", *([] if stdin else ["-n"]), "--", host, script]


def _dir(directory: str) -> str:
    """`directory` as one shell word `cd` cannot take for an option (`-x`) or for OLDPWD (`-`)."""
    return shlex.quote(directory if directory.startswith("/") else f"./{directory}")


def _cd(directory: str) -> str:
    return f"cd {_dir(directory)} 2>/dev/null || {{ echo {shlex.quote(MARK + ' nodir')}; exit 96; }}"


def preflight_script(directory: str, files: Sequence[str], status_log: str, extra: str = "") -> str:
    """Prints `MARK file I DIGEST|-` per file (by index: names never need parsing back), the
    status log's size (so the report reads only this run's lines) and whether setsid and tar exist."""
    lines = [_cd(directory)]
    for tool in ("setsid", "tar"):
        lines.append(f"command -v {tool} >/dev/null 2>&1 || echo {shlex.quote(f'{MARK} missing {tool}')}")
    lines.append(f"env --ignore-signal=TERM true >/dev/null 2>&1 || echo {shlex.quote(f'{MARK} missing env-signals')}")
    for i, path in enumerate(files):
        q = shlex.quote(path)
        lines.append(
            f'if [ -f {q} ]; then d=$(sha256sum < {q}) && echo "{MARK} file {i} ${{d%% *}}"; '
            f"else echo '{MARK} file {i} -'; fi"
        )
    q = shlex.quote(status_log)
    lines.append(f'if [ -f {q} ]; then s=$(wc -c < {q}); else s=0; fi; echo "{MARK} statuslog $s"')
    if extra:  # the node's doctor checks (fleet/node_doctor.py)
        lines.append(extra)
    lines.append(f"echo '{MARK} ok'")
    return "\n".join(lines)


def unpack_script(directory: str) -> str:
    """Unpack the tar stream on stdin in `directory` (`--sync`). Through the shell and tar rather
    than scp: scp's SFTP mode (OpenSSH 9) takes a quoted path literally, the old mode needs it
    quoted, and which one runs depends on the client."""
    return f"{_cd(directory)}\nexec tar -xf -"


def env_words(env: Sequence[tuple]) -> str:
    return " ".join(shlex.quote(f"{k}={v}") for k, v in env)


def run_script(directory: str, command: Sequence[str], env: Sequence[tuple], token: str) -> str:
    """Start `command` in `directory` as a session of its own (`setsid -w`: we still wait for it
    and get its exit code), its pid in PID_FILE, TOKEN_VAR=token and `env` in its environment."""
    start = 'echo "$$" > "$1"; shift; exec "$@"'
    words = [shlex.quote(w) for w in command]
    environment = env_words([(TOKEN_VAR, token), *env])
    # setsid -w forks when it leads its process group (a Slurm task does): the parent that waits
    # ignores INT, TERM and HUP, so when a stop signals every process of the run at once it stays
    # until the run is gone and the run's processes stay below it (Slurm's process tracking by
    # lineage keeps seeing them); the run itself gets the default handlers back.
    signals = "INT,TERM,HUP"
    return (
        f"{_cd(directory)}\nmkdir -p {shlex.quote(PID_FILE.rsplit('/', 1)[0])}\n"
        f"exec env --ignore-signal={signals} setsid -w env --default-signal={signals} "
        f"sh -c {shlex.quote(start)} sh {shlex.quote(PID_FILE)} env {environment} {' '.join(words)}"
    )


def stop_script(directory: str, token: str, grace: float) -> str:
    """SIGTERM every process of the run (found by its token in /proc/*/environ, else by the
    pid file's group: the run is a session of its own), SIGKILL what is left after `grace`
    seconds; prints `MARK stopped N` (N found), then `MARK left M` when M outlived the SIGKILL.

    POSIX sh (dash runs it): `kill -s SIG -- ...`, as dash rejects `kill -SIG -- ...`."""
    tok = shlex.quote(f"{TOKEN_VAR}={token}")
    ticks = max(1, round(grace * 5))
    return "\n".join(
        [
            f"cd {_dir(directory)} 2>/dev/null || true",
            f"tok={tok}",
            f"pg=$(cat {shlex.quote(PID_FILE)} 2>/dev/null) || pg=",
            # One grep for every process: -z lines end at NUL (environ), -x whole line, -l names.
            "procs() { if [ -r /proc/self/environ ]; then "
            "grep -lsxzF -- \"$tok\" /proc/[0-9]*/environ 2>/dev/null | sed 's,^/proc/,,;s,/environ$,,' | "
            'grep -vx -- "$$"; '
            'elif [ -n "$pg" ] && kill -s 0 -- "-$pg" 2>/dev/null; then echo "-$pg"; fi; }',
            "p=$(procs); n=$(echo $p | wc -w)",
            'if [ -n "$p" ]; then kill -s TERM -- $p 2>/dev/null; fi',
            f'i=0; while [ -n "$p" ] && [ $i -lt {ticks} ]; do sleep 0.2; i=$((i+1)); p=$(procs); done',
            'if [ -n "$p" ]; then kill -s KILL -- $p 2>/dev/null; fi',
            'i=0; while [ -n "$p" ] && [ $i -lt 10 ]; do sleep 0.2; i=$((i+1)); p=$(procs); done',
            f'echo "{MARK} stopped $n"',
            f'if [ -n "$p" ]; then echo "{MARK} left $(echo $p | wc -w) $p"; fi',
        ]
    )


def stop_answer(host: str, out: str) -> Optional[str]:
    """None when the stop script found nothing left; else the sentence for what outlived it."""
    for line in out.splitlines():
        words = line[len(MARK) :].split() if line.startswith(MARK) else []
        if words[:1] == ["left"]:
            pids = " ".join(words[2:12])
            return (
                f"node {host}: {words[1] if len(words) > 1 else '?'} process(es) of the run outlived SIGKILL ({pids})"
            )
    return None


def gather_script(directory: str, files: Sequence[str], globs: Sequence[str], always: Sequence[str] = ()) -> str:
    """A tar stream (on stdout) of `always` and of those of `files` and `globs` written since
    this run started (newer than its PID_FILE: a log an earlier run left is never taken for
    this run's), relative to `directory`."""
    words = " ".join([shlex.quote(f) for f in files] + list(globs))
    kept = " ".join(shlex.quote(f) for f in always)
    return "\n".join(
        [
            _cd(directory),
            "set --",
            f'for f in {kept}; do [ -f "$f" ] && set -- "$@" "$f"; done' if kept else ":",
            f"since={shlex.quote(PID_FILE)}",
            f'if [ -f "$since" ]; then for f in {words}; do',
            '    [ -f "$f" ] && [ "$f" -nt "$since" ] && set -- "$@" "$f"',
            "done; fi",
            '[ "$#" -gt 0 ] || exit 0',
            'exec tar -cf - -- "$@"',
        ]
    )
