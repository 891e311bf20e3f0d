"""Run a repo's own `prepare.sh` for one config and mode with recording shims: what it downloads,
extracts, links, removes, installs and runs, without doing any of it.

How a run is staged (nothing of the real repo is touched or needed):

- `<scratch>/repo/test_tipc/` holds copies of the repo's test_tipc/*.sh and the config at the path
  it is given as; the script runs from `<scratch>/repo` as `bash test_tipc/prepare.sh CONFIG MODE`.
- PATH is one directory: recording shims for every command that changes the world (wget, curl,
  tar, unzip, rm, ln, mv, cp, pip, python*, git, make, cmake, apt-get, sudo, ...), each
  appending its working directory and argv to a record and exiting 0; links to harmless tools
  the scripts use to read their config (sed, awk, grep, cut, cat, ...); and bash. A command
  found nowhere is recorded too (`command_not_found_handle`), so no binary of the machine runs.
- `cd`/`pushd` (builtins) create a missing directory inside the scratch repo first, so that a
  script that extracts an archive and enters it keeps the right working directory; `mkdir`
  creates what it is asked to inside the scratch repo. Nothing else is created.
- The run is in the sandbox (tipcgen.sandbox): the shims only record; the sandbox is what keeps
  a script's absolute paths (/bin/rm), its read-only tools used to write (sed w, awk system(),
  sort -o) and its redirections inside the scratch directory, off the network, and bounded in
  time with every process it starts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tipcgen import sandbox
from tipcgen.errors import UsageError
from tipcgen.fsio import copy_file, write_atomic, write_text
from tipcgen.sandbox import SYSTEM_PATH, read_left, sandboxed_run

# Commands recorded and not run (exit 0). python names: the config's is added per run.
RECORDED = [
    *("wget", "curl", "tar", "unzip", "zip", "gzip", "gunzip", "bunzip2", "7z", "rm", "ln", "mv", "cp"),
    *("rsync", "chmod", "chown", "install", "pip", "pip3", "python", "python2", "python3"),
    *(f"python3.{minor}" for minor in range(6, 13)),
    *("git", "make", "cmake", "apt", "apt-get", "yum", "dnf", "conda", "sudo", "nvidia-smi", "docker"),
    *("hadoop", "hdfs", "ssh", "scp"),
]
# Tools that only read (the scripts parse their config with them): the machine's, linked in.
HARMLESS = [
    *("sed", "awk", "gawk", "mawk", "grep", "egrep", "cat", "head", "tail", "tr", "cut", "basename"),
    *("dirname", "expr", "ls", "printf", "echo", "test", "true", "false", "seq", "sort", "uniq", "wc"),
    *("md5sum", "sha256sum", "date", "env", "readlink", "realpath", "pwd", "uname", "whoami", "id"),
]
SEP, END = "\x1f", "\x1e"
DEFAULT_TIMEOUT = sandbox.DEFAULT_TIMEOUT


@dataclass(frozen=True)
class Op:
    """One recorded command: its working directory relative to the repo root ("." the root;
    None: outside the repo) and its argv (argv[0] as the script called it)."""

    cwd: str | None
    argv: tuple[str, ...]
    pipe_in: bool = False  # its stdin / stdout was a pipe (`a | b`, or a `$(...)` capture)
    pipe_out: bool = False


@dataclass
class Trace:
    ops: list[Op]
    returncode: int
    timed_out: bool
    stderr: str = ""
    notes: list[str] = field(default_factory=list)


_SHIM = """#!{bash}
p=""
[[ -p /dev/stdin ]] && p+=i
[[ -p /dev/stdout ]] && p+=o
# one write per record: the two sides of a pipe run at once
r=$(printf '%s\\x1f' "$p$PWD" "${{0##*/}}" "$@"; printf '\\x1e')
printf '%s' "$r" >>"$TIPC_TRACE"
{extra}exit 0
"""

_MKDIR_EXTRA = """for a in "$@"; do
    case $a in
    -*) ;;
    /* | *..*) ;;
    *) {mkdir} -p -- "$a" 2>/dev/null ;;
    esac
done
"""

_TIMEOUT = """#!{bash}
# timeout DURATION CMD...: run CMD (recorded by its own shim)
while [[ $# -gt 0 && $1 == -* ]]; do shift; done
shift
exec "$@"
"""

_BASH_ENV = """tipc_trace_mk() {{
    case ${{1:-}} in
    "" | -* | /* | *..*) return 0 ;;
    esac
    [[ -d $1 ]] || {mkdir} -p -- "$1" 2>/dev/null
    return 0
}}
cd() {{
    local a
    for a in "$@"; do [[ $a == -* ]] || tipc_trace_mk "$a"; done
    builtin cd "$@"
}}
pushd() {{
    local a
    for a in "$@"; do [[ $a == -* ]] || tipc_trace_mk "$a"; done
    builtin pushd "$@" >/dev/null
}}
popd() {{
    builtin popd "$@" >/dev/null
}}
command_not_found_handle() {{
    local p=""
    [[ -p /dev/stdin ]] && p+=i
    [[ -p /dev/stdout ]] && p+=o
    local r
    printf -v r '%s\\x1f' "$p$PWD" "$@"  # (no subshell: a fork more per traced command)
    printf '%s\\x1e' "$r" >>"$TIPC_TRACE"
    return 0
}}
sleep() {{ :; }}
"""


def _exe(path: Path, text: str) -> None:
    write_text(str(path), text, mode=0o755)


def _stage(scratch: Path, script_dir: Path, config_text: str, config_rel: str, python: str, script: str = "") -> Path:
    repo = scratch / "repo"
    tipc = repo / "test_tipc"
    tipc.mkdir(parents=True)
    for src in sorted(script_dir.glob("*.sh")):
        if src.is_file() and not src.is_symlink():
            copy_file(str(src), str(tipc / src.name), tree=str(script_dir))
    if script and not (tipc / script).exists():  # the script itself, whatever its name
        copy_file(str(script_dir / script), str(tipc / script), tree=str(script_dir))
    parts = config_rel.split("/")
    if config_rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise UsageError(f"{config_rel!r}: a config path relative to the repo root, without `..`")
    dest = repo.joinpath(*parts)
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_text(str(dest), config_text)
    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    # the system's programs, not the caller's PATH's (the sandbox hides the caller's HOME)
    bash = shutil.which("bash", path=SYSTEM_PATH) or "/bin/bash"
    mkdir = shutil.which("mkdir", path=SYSTEM_PATH) or "/bin/mkdir"
    names = list(RECORDED)
    if python and "/" not in python and python not in names:
        names.append(python)
    for name in names:
        extra = _MKDIR_EXTRA.format(mkdir=mkdir) if name == "mkdir" else ""
        _exe(bin_dir / name, _SHIM.format(bash=bash, extra=extra))
    _exe(bin_dir / "mkdir", _SHIM.format(bash=bash, extra=_MKDIR_EXTRA.format(mkdir=mkdir)))
    _exe(bin_dir / "timeout", _TIMEOUT.format(bash=bash))
    for name in HARMLESS:
        real = shutil.which(name, path=SYSTEM_PATH)
        if real and not (bin_dir / name).exists():
            (bin_dir / name).symlink_to(real)
    for name in ("bash", "sh"):
        (bin_dir / name).symlink_to(bash)
    write_text(str(scratch / "bash_env"), _BASH_ENV.format(mkdir=mkdir))
    (scratch / "home").mkdir()
    return repo


# What the scratch paths in a recorded argument stand for: a command of the generated prepare.sh
# runs with TIPC_REPO_ROOT set to the repo root (`$(pwd)/...` in a script) and the user's HOME.
ROOT_VAR, HOME_VAR = "${TIPC_REPO_ROOT}", "${HOME}"


def _parse(data: str, repo: Path) -> list[Op]:
    ops = []
    real = os.path.realpath(repo)
    home = os.path.realpath(repo.parent / "home")
    places = sorted(
        {str(repo): ROOT_VAR, real: ROOT_VAR, str(repo.parent / "home"): HOME_VAR, home: HOME_VAR}.items(),
        key=lambda kv: -len(kv[0]),
    )
    for record in data.split(END):
        fields = record.split(SEP)
        if len(fields) < 3:
            continue
        pwd, argv = fields[0], tuple(_unscratch(a, places) for a in fields[1:-1])
        flags = pwd[: len(pwd) - len(pwd.lstrip("io"))]
        pwd = pwd[len(flags) :]
        here = os.path.realpath(pwd)
        if here == real:
            cwd: str | None = "."
        elif here.startswith(real + os.sep):
            cwd = os.path.relpath(here, real).replace(os.sep, "/")
        else:
            cwd = None
        ops.append(Op(cwd, argv, "i" in flags, "o" in flags))
    return pipelines(ops)


def _unscratch(arg: str, places: list[tuple[str, str]]) -> str:
    for path, var in places:
        if path in arg:
            arg = arg.replace(path, var)
    return arg


def pipelines(ops: list[Op]) -> list[Op]:
    """`a | b` is recorded as two commands started at once (in either order): one op whose argv
    is a's, "|", b's. A command whose output was captured (`$(...)`) stays alone."""
    out: list[Op] = []
    i = 0
    while i < len(ops):
        a = ops[i]
        b = ops[i + 1] if i + 1 < len(ops) else None
        if b is not None and a.cwd == b.cwd and ((a.pipe_out and b.pipe_in) or (b.pipe_out and a.pipe_in)):
            first, second = (a, b) if a.pipe_out and b.pipe_in else (b, a)
            out.append(Op(a.cwd, (*first.argv, "|", *second.argv), first.pipe_in, second.pipe_out))
            i += 2
            continue
        out.append(a)
        i += 1
    return out


_MEMO: dict[tuple, Trace] = {}
_MEMO_MAX = 8192


def trace_prepare(
    script_dir: Path,
    config_text: str,
    config_rel: str,
    mode: str,
    python: str = "",
    timeout: float = DEFAULT_TIMEOUT,
    script: str = "prepare.sh",
) -> Trace:
    """Run `script_dir/<script>` for a config and mode with the recording shims; its ops in order.
    A run is a function of the scripts and the config: the same run again (import, then migrate's
    comparison) is answered from memory."""
    if not (script_dir / script).is_file():
        raise UsageError(f"{script_dir / script}: no such script")
    scripts = tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in script_dir.glob("*.sh")))
    sandboxed = sandbox.enabled()
    key = (str(script_dir.resolve()), script, scripts, config_text, config_rel, mode, python, timeout, sandboxed)
    if key in _MEMO:
        return _MEMO[key]
    trace = _trace(script_dir, config_text, config_rel, mode, python, timeout, script)
    # a run that timed out too: the same run again would only wait as long again
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.pop(next(iter(_MEMO)))
    _MEMO[key] = trace
    return trace


def _trace(
    script_dir: Path, config_text: str, config_rel: str, mode: str, python: str, timeout: float, script: str
) -> Trace:
    with tempfile.TemporaryDirectory(prefix="tipcgen-trace-") as tmp:
        scratch = Path(tmp)
        repo = _stage(scratch, script_dir, config_text, config_rel, python, script)
        record = scratch / "trace"
        write_atomic(str(record), b"")
        env = {
            "PATH": str(scratch / "bin"),
            "HOME": str(scratch / "home"),
            "BASH_ENV": str(scratch / "bash_env"),
            "TIPC_TRACE": str(record),
            "LC_ALL": "C.UTF-8",
        }
        bash = shutil.which("bash", path=SYSTEM_PATH) or "/bin/bash"
        argv = [bash, f"test_tipc/{script}", config_rel, mode]
        ran = sandboxed_run(argv, scratch=scratch, cwd=repo, env=env, timeout=timeout)
        data = read_left(record).decode("utf-8", "replace")
        return Trace(
            ops=_parse(data, repo),
            returncode=-9 if ran.returncode is None else ran.returncode,  # -9: killed at the timeout
            timed_out=ran.timed_out,
            stderr=ran.tail("stderr"),
        )
