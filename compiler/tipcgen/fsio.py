"""The only module that writes files: atomically, after everything was rendered in memory.

`build` writes only below `--out/<model>/`: every relative path is checked, and a directory on
the way that is a symbolic link leading outside `--out` is refused (check_destinations). One
build at a time writes into an `--out` (BuildLock). A build killed mid-way leaves at worst a
`.tipcgen-*` temp file next to the file it was writing: the next build removes it, `check`
does not count it as drift. `cache_dir` is where tipcgen keeps what it may reuse (downloads,
`check`'s results).
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import stat
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from typing import Optional

from tipcgen.errors import TipcError, UsageError
from tipcgen.escape import for_terminal

EXECUTABLE_SUFFIXES = (".sh",)
TEMP_PREFIX = ".tipcgen-"
LOCK_NAME = ".tipcgen.lock"


class PathError(TipcError):
    """A file system error on a path the user gave or tipcgen writes: one line naming the path."""


_HINTS = {
    errno.ENOTDIR: "a part of the path is a file, not a directory",
    errno.EISDIR: "it is a directory",
    errno.ELOOP: "a symbolic link loop",
    errno.EEXIST: "a file is in the way",
}


def path_error(exc: OSError, verb: Optional[str] = None) -> PathError:
    """A clean error for an OSError that names a path (the rename target when there is one)."""
    path = exc.filename2 if exc.filename2 is not None else exc.filename
    reason = exc.strerror or str(exc)
    hint = _HINTS.get(exc.errno or 0)
    name = os.fsdecode(path) if isinstance(path, (str, bytes)) else str(path)
    text = f"{name}: error: {'cannot ' + verb + ': ' if verb else ''}{reason}"
    return PathError(text + (f" ({hint})" if hint and hint.lower() != reason.lower() else ""))


def is_temp(name: str) -> bool:
    return os.path.basename(name).startswith(TEMP_PREFIX)


def write_atomic(path: str, data: bytes) -> bool:
    """Write `data` to `path` via a temp file + rename; return True when the file changed."""
    try:
        with open(path, "rb") as fh:
            if fh.read() == data:
                return False
    except OSError:
        pass
    if os.path.isdir(path):
        raise PathError(f"{path}: error: cannot write: it is a directory")
    directory = os.path.dirname(path) or "."
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=directory)
    except OSError as exc:
        raise path_error(exc, f"write {path}" if exc.filename != path else "write") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o755 if path.endswith(EXECUTABLE_SUFFIXES) else 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return True


def _diff_lines(data: bytes) -> list[str]:
    """A file's lines for a diff, split at newlines only (a CR or form feed is a character in the
    line, shown escaped, not a line break); the last line without its newline says so, as git's
    diff does, so no diff line runs into the next."""
    lines = [line + "\n" for line in data.decode("utf-8", "replace").split("\n")]
    if lines[-1] == "\n":
        return lines[:-1]
    return [*lines[:-1], lines[-1][:-1] + "\n\\ No newline at end of file\n"]


def diff_tree(root: str, files: dict[str, bytes]) -> list[str]:
    """Unified diffs for every file under `root` that is missing or differs from `files`, escaped
    for the terminal: a committed file's ESC or CR cannot clear a line or forge "up to date"."""
    out = []
    for rel, want in files.items():
        path = os.path.join(root, rel)
        try:
            with open(path, "rb") as fh:
                have = fh.read()
        except OSError:
            out.append(for_terminal(f"missing: {path}") + "\n")
            continue
        if have != want:
            diff = difflib.unified_diff(
                _diff_lines(have), _diff_lines(want), f"{path} (on disk)", f"{path} (from spec)"
            )
            out.append(for_terminal("".join(diff), lines=True))
    return out


def stale_files(root: str, files: dict[str, bytes], top: str = "test_tipc") -> list[str]:
    """Files under root/top that the spec no longer generates (temp files of an interrupted
    build are not: see leftover_temps)."""
    base = os.path.join(root, top)
    found = []
    for dirpath, _dirs, names in os.walk(base):
        for name in names:
            rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            if rel not in files and not is_temp(name):
                found.append(os.path.join(root, rel))
    return sorted(found)


def leftover_temps(root: str) -> list[str]:
    """`.tipcgen-*` temp files below root: what a build killed while writing leaves behind."""
    found = []
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            if is_temp(name) and stat.S_ISREG(os.lstat(path).st_mode):
                found.append(path)
    return sorted(found)


def remove_leftover_temps(root: str) -> list[str]:
    """Remove leftover temp files below root (call it holding the BuildLock); return them."""
    removed = []
    for path in leftover_temps(root):
        try:
            os.unlink(path)
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def check_destinations(out: str, model: str, rels: Iterable[str]) -> str:
    """root = out/model, after refusing anything that would write outside it: a model that is
    not one plain name, a relative path that is absolute or has `..`, empty or `.` parts, and a
    directory on the way that is a symbolic link leading outside `out`."""
    if not model or "/" in model or model in (".", "..") or "\x00" in model:
        raise UsageError(f"model {model!r} is not one plain directory name; refusing to write outside {out}/")
    root = os.path.join(out, model)
    check_tree(out, [f"{model}/{rel}" for rel in rels], label=model)
    return root


def check_tree(out: str, rels: Iterable[str], label: str = "") -> None:
    """Refuse relative paths below `out` that are absolute, have `..`, empty or `.` parts, or
    pass a directory that is a symbolic link leading outside `out`."""
    dirs: set[str] = set()
    for rel in rels:
        parts = rel.split("/")
        if rel.startswith("/") or "\x00" in rel or any(p in ("", ".", "..") for p in parts):
            raise UsageError(f"{label or out}: generated path {rel!r} would leave {out}/; refusing to write it")
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
    real_out = os.path.realpath(out)
    for d in sorted(dirs):
        path = os.path.join(out, *d.split("/"))
        real = os.path.realpath(path)
        if not _inside(real, real_out):
            raise UsageError(
                f"{path}: error: leads to {real}, outside {out}/ (a symbolic link on the way); "
                "refusing to write through it"
            )


class BuildLock:
    """An exclusive flock on OUT/.tipcgen.lock while a build writes into OUT.

    A second build waits up to `wait` seconds, then fails naming the lock. The kernel drops a
    flock when its holder dies (even by SIGKILL), so a lock can never be stale: a lock file
    left behind by a killed build is just taken by the next one. The holder deletes the file
    when done; a waiter that then holds a deleted file's lock notices (the inode changed) and
    tries again.
    """

    def __init__(self, out: str, wait: float):
        self.out, self.wait = out, wait
        self.path = os.path.join(out, LOCK_NAME)
        self.fd: Optional[int] = None

    def __enter__(self) -> BuildLock:
        import fcntl

        try:
            os.makedirs(self.out, exist_ok=True)
        except OSError as exc:
            raise path_error(exc, "create the output directory") from None
        deadline = time.monotonic() + self.wait
        told = False
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            try:
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() >= deadline:
                            raise UsageError(
                                f"{self.path}: error: another tipcgen build is writing into "
                                f"{self.out}/ and holds this lock (a live process: the kernel "
                                f"releases the lock of one that died); waited {self.wait:g} s, "
                                "run again when it has finished or pass a longer --wait"
                            ) from None
                        if not told:
                            print(
                                f"tipcgen: waiting for another build writing into {self.out}/ ...",
                                file=sys.stderr,
                                flush=True,
                            )
                            told = True
                        time.sleep(0.05)
                held = os.fstat(fd)
                try:
                    now = os.stat(self.path, follow_symlinks=False)
                except FileNotFoundError:
                    now = None
            except BaseException:
                os.close(fd)
                raise
            if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                self.fd = fd
                return self
            os.close(fd)  # the holder deleted the file we locked: lock the new one

    def __exit__(self, *exc) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        finally:
            if self.fd is not None:
                os.close(self.fd)
                self.fd = None


CACHE_ENV = "TIPC_CACHE"
DEFAULT_CACHE = "~/.cache/tipcgen"


def cache_dir(env: Mapping[str, str]) -> str:
    """$TIPC_CACHE, else ~/.cache/tipcgen (with the HOME of ENV when it has one)."""
    home = env.get("HOME")
    default = os.path.join(home, ".cache", "tipcgen") if home else os.path.expanduser(DEFAULT_CACHE)
    return env.get(CACHE_ENV) or default
