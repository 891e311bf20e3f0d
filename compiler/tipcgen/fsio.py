"""The one gate for writing files: atomically, after everything was rendered in memory, never
through a link, into a FIFO or a device (write_atomic, write_text, append_text, open_output;
write_new for a run's own scratch; tests/test_gates.py fails on a raw write anywhere else in the
package).

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
from collections.abc import Iterable, Iterator, Mapping
from typing import BinaryIO, Optional

from tipcgen.errors import SpecError, TipcError, UsageError, printable
from tipcgen.escape import for_terminal
from tipcgen.inputs import MAX_FILE_BYTES, is_inside, kind_of, read_bytes, read_owned

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


def refuse_special(path: str) -> None:
    """A PathError when `path` exists and is anything but a regular file: tipcgen never writes
    through a link (it would land wherever the link points), into a FIFO (it would block) or a
    device."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise path_error(exc, "write") from None
    if not stat.S_ISREG(st.st_mode):
        raise PathError(
            f"{printable(path)}: error: cannot write: it is {kind_of(st.st_mode)}; "
            "tipcgen writes only regular files (remove it, or name another path)"
        )


def _same_bytes(path: str, data: bytes) -> bool:
    """Whether the regular file at `path` already holds `data` (read without following a link
    or blocking, never more than len(data) + 1 bytes)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        have, want = b"", len(data) + 1
        while len(have) < want:
            chunk = os.read(fd, want - len(have))
            if not chunk:
                break
            have += chunk
        return have == data
    except OSError:
        return False
    finally:
        os.close(fd)


def write_atomic(path: str, data: bytes, mode: Optional[int] = None) -> bool:
    """Write `data` to `path` via a temp file + rename; return True when the file changed.

    The one gate for writing: a link, FIFO, device or directory at `path` is refused (PathError
    naming it), the bytes land in a temp file beside it first, so a reader never sees half a
    file and a killed writer leaves the old one."""
    refuse_special(path)
    if _same_bytes(path, data):
        return False
    directory = os.path.dirname(path) or "."
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=directory)
    except OSError as exc:
        raise path_error(exc, f"write {path}" if exc.filename != path else "write") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if mode is None:
            mode = 0o755 if path.endswith(EXECUTABLE_SUFFIXES) else 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise path_error(exc, "write") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return True


def copy_file(src: str, dest: str, tree: Optional[str] = None, mode: Optional[int] = None) -> None:
    """Copy `src` (read through the read gate: a regular file inside `tree`, at most 1 MiB: a
    script or config) to `dest` (through write_atomic)."""
    data = read_bytes(src, MAX_FILE_BYTES, tree=tree, what="a file to copy")
    if len(data) > MAX_FILE_BYTES:
        raise PathError(f"{printable(src)}: error: more than {MAX_FILE_BYTES} bytes; not a script or config")
    write_atomic(dest, data, mode)


def write_new(path: str, data: bytes, mode: int = 0o644) -> None:
    """Create `path` holding `data`, for a file of a scratch directory tipcgen made for one run
    (the oracles stage a repo's scripts and recorders per run): created exclusively, never through
    a link or over a file (O_EXCL | O_NOFOLLOW: anything at `path` is refused), with `mode` from
    the start. No temp file and rename: nothing reads the directory before the run, and the fewer
    system calls are most of a staging's cost."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        raise path_error(exc, "write") from None
    try:
        os.fchmod(fd, mode)  # whatever the umask took (an executable recorder needs its x bits)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise path_error(exc, "write") from None


def write_text(path: str, text: str, mode: Optional[int] = None) -> bool:
    """write_atomic of UTF-8 text."""
    return write_atomic(path, text.encode("utf-8"), mode)


def _open_regular(path: str, flags: int, mode: int = 0o644) -> int:
    """An fd of the regular file at `path` opened for writing with `flags`: never through a
    link (O_NOFOLLOW), never blocking on a FIFO (O_NONBLOCK, then fstat), never a device."""
    refuse_special(path)
    try:
        fd = os.open(path, flags | os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, mode)
    except OSError as exc:
        raise path_error(exc, "write") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):  # swapped in after the check
        os.close(fd)
        raise PathError(f"{printable(path)}: error: cannot write: it is {kind_of(st.st_mode)}")
    os.set_blocking(fd, True)
    return fd


def append_text(path: str, text: str) -> None:
    """Append `text` to the regular file at `path` (created when missing), e.g. a summary file a CI
    runner names: refused when it is a link, FIFO or device; a PathError naming it on failure."""
    fd = _open_regular(path, os.O_APPEND | os.O_CREAT)
    try:
        data = text.encode("utf-8")
        while data:
            data = data[os.write(fd, data) :]
    except OSError as exc:
        exc.filename = path
        raise path_error(exc, "write") from None
    finally:
        os.close(fd)


def open_output(path: str, append: bool = False, mode: int = 0o644) -> BinaryIO:
    """A new (or truncated, or appended-to) regular file at `path` for output written as it comes
    (a step's log, a gathered file, a download): the same refusals as write_atomic; `mode` for a
    file it creates."""
    flags = os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    return os.fdopen(_open_regular(path, flags, mode), "ab" if append else "wb")


def open_temp(directory: str, prefix: str = TEMP_PREFIX) -> BinaryIO:
    """A new private file (0600, O_EXCL: never an existing path, link or FIFO) in `directory`,
    open for writing and reading back (w+b): output captured as it comes."""
    try:
        fd, _path = tempfile.mkstemp(prefix=prefix, dir=directory)
    except OSError as exc:
        raise path_error(exc, "create a file") from None
    return os.fdopen(fd, "w+b")


@contextlib.contextmanager
def flock_dir(path: str, wait: bool = True) -> Iterator[bool]:
    """An exclusive flock on the directory `path` while the block runs (yields whether it was
    had: some NFS mounts refuse locks, and the caller goes on unlocked)."""
    import fcntl

    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = True
        except OSError:
            held = False
        yield held
    finally:
        os.close(fd)


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
            have = read_owned(path, root)
        except SpecError as exc:  # a link, FIFO or device where tipcgen wrote a file: never read
            out.append(f"{exc}\n")
            continue
        if have is None:
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
    """Refuse relative paths below `out` that are absolute, have `..`, empty or `.` parts, pass
    a directory that is a symbolic link leading outside `out`, or name a link, FIFO or device."""
    rels = list(rels)
    dirs: set[str] = set()
    for rel in rels:
        parts = rel.split("/")
        if rel.startswith("/") or "\x00" in rel or any(p in ("", ".", "..") for p in parts):
            raise UsageError(f"{label or out}: generated path {rel!r} would leave {out}/; refusing to write it")
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
    for rel in rels:  # every file to be written: refused now, before the first write, not half-way
        refuse_special(os.path.join(out, *rel.split("/")))
    real_out = os.path.realpath(out)
    for d in sorted(dirs):
        path = os.path.join(out, *d.split("/"))
        real = os.path.realpath(path)
        if not is_inside(real, real_out):
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


def private_dir(path: str | os.PathLike) -> None:
    """Create PATH (a directory of the cache), and its missing parents, for its owner only
    (as prepare.sh's `mkdir -p` under umask 077)."""
    # Each missing directory made 0700 itself: changing the umask instead would change it for
    # every thread of the process (a bash prepare started meanwhile would write private files).
    missing = []
    here = os.path.abspath(path)
    while not os.path.isdir(here):
        missing.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    for p in reversed(missing):
        try:
            os.mkdir(p, 0o700)
        except FileExistsError:
            if not os.path.isdir(p):
                raise


def is_private_dir(path: str) -> bool:
    """PATH is a directory (not a link to one) of this user's that no one else may write into:
    what tipcgen keeps there for itself (compiled templates) may be trusted."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


CACHE_ENV = "TIPC_CACHE"
DEFAULT_CACHE = "~/.cache/tipcgen"


def cache_dir(env: Mapping[str, str]) -> str:
    """$TIPC_CACHE, else ~/.cache/tipcgen (with the HOME of ENV when it has one)."""
    home = env.get("HOME")
    default = os.path.join(home, ".cache", "tipcgen") if home else os.path.expanduser(DEFAULT_CACHE)
    return env.get(CACHE_ENV) or default
