"""Reading untrusted inputs: every spec, config, record and local file a command reads.

The rule (README, "Untrusted specs"): a file is read only when it is a regular file whose real
path (every symbolic link resolved) lies inside the directory tree it was given in:

- for a directory argument, that directory (as typed: the path you type is trusted, links
  below it are not); a link inside it may lead anywhere inside it;
- for a file argument, the directory holding it (so `cfg.txt -> other.txt` beside it is fine,
  `cfg.txt -> /etc/shadow` or `-> ../../secret` is not).

A pull request can commit symbolic links; without the rule `import`, `lint` or `plan` in CI would
copy or print whatever file of the CI machine a link names. Devices, FIFOs and sockets are
refused without blocking; no reader takes more than its byte limit.
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterable
from typing import Optional

from tipcgen.errors import Problem, SpecError, UsageError, printable

# Files found by walking a directory argument, by absolute path: the tree they were given in
# (read_bytes' default for any other file is the directory holding it).
_TREES: dict[str, str] = {}
MAX_FILE_BYTES = 1 << 20  # a spec or legacy config file: 1 MiB (spec/yamlpos.py says why)
MAX_WALK_FILES = 100_000  # files one directory argument may yield (a repo has a few thousand)

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _problem(path: str, message: str, hint: Optional[str] = None) -> SpecError:
    return SpecError([Problem(printable(path), None, None, None, message, hint)])


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def tree_of(path: str) -> str:
    """The directory tree `path` was given in (see the module docstring)."""
    return _TREES.get(os.path.abspath(path)) or os.path.dirname(path) or "."


def resolve_inside(path: str, tree: Optional[str] = None) -> str:
    """The real path of `path`, or a SpecError when a symbolic link takes it out of its tree."""
    tree = tree or tree_of(path)
    real, real_tree = os.path.realpath(path), os.path.realpath(tree)
    if not _inside(real, real_tree):
        raise _problem(
            path,
            f"cannot read: a symbolic link leads to {printable(real)}, outside {printable(tree)}",
            "tipcgen reads an input only inside the directory tree it was given; "
            "replace the link with the file, or name the directory holding both",
        )
    return real


def _not_regular(path: str, mode: int, what: str) -> SpecError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return _problem(path, f"cannot read {kind}: {what} is a regular file")


def read_bytes(
    path: str, limit: int = MAX_FILE_BYTES, tree: Optional[str] = None, what: str = "a spec or config"
) -> bytes:
    """At most `limit` + 1 bytes of a regular file inside its tree, or a located SpecError.

    A FIFO would block and /dev/zero or a huge file would fill memory, so only regular files are
    read, their type checked before opening (opening a device can have effects) and again on the
    open file, opened by real path with O_NOFOLLOW (a link swapped in after the check is refused),
    and never more than `limit` + 1 bytes, whatever the file claims. The caller decides what more
    than `limit` means."""
    try:
        real = resolve_inside(path, tree)
        st = os.stat(real)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode, what)
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
        fd = os.open(real, flags)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _not_regular(path, st.st_mode, what)
            chunks, got = [], 0
            while got <= limit:
                chunk = os.read(fd, min(limit + 1 - got, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _problem(path, f"cannot read file: {exc.strerror or exc}") from None
    except ValueError as exc:  # e.g. a NUL byte in the path
        raise _problem(path, f"cannot read file: {exc}") from None
    return b"".join(chunks)


def walk(root: str, suffixes: Iterable[str] = ()) -> list[str]:
    """Files below the directory `root` (sorted, directory by directory) whose names end with one
    of `suffixes` (all when empty), each remembered as given in `root`'s tree.

    Links to directories are not descended (as before: a link cannot make a walk read outside or
    loop); a matching file whose link leads out of `root` is an error naming it, never silently
    skipped, so a reviewer sees it."""
    suffixes = tuple(suffixes)
    real_root = os.path.realpath(root)
    found: list[str] = []
    refused: list[Problem] = []
    for dirpath, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            if suffixes and not name.endswith(suffixes):
                continue
            path = os.path.join(dirpath, name)
            real = os.path.realpath(path)
            if not _inside(real, real_root):
                refused.append(
                    Problem(
                        printable(path),
                        None,
                        None,
                        None,
                        f"cannot read: a symbolic link leads to {printable(real)}, outside {printable(root)}",
                        "tipcgen reads an input only inside the directory tree it was given",
                    )
                )
                continue
            found.append(path)
            if len(found) > MAX_WALK_FILES:
                raise _problem(root, f"more than {MAX_WALK_FILES} input files below this directory")
    if refused:
        raise SpecError(refused)
    for path in found:
        _TREES[os.path.abspath(path)] = root
    return found


def remember(paths: Iterable[str], tree: str) -> None:
    """Files a command found in the directory argument `tree` (e.g. by a glob), checked and
    remembered like walk()'s."""
    problems = []
    for path in paths:
        try:
            resolve_inside(path, tree)
        except SpecError as exc:
            problems += exc.problems
            continue
        _TREES[os.path.abspath(path)] = tree
    if problems:
        raise SpecError(problems)


def _too_big(path: str, size: int) -> SpecError:
    return SpecError(
        [
            Problem(
                path,
                None,
                None,
                None,
                f"file is {size} bytes; the limit for a spec or config is {MAX_FILE_BYTES} bytes"
                f" ({MAX_FILE_BYTES >> 20} MiB)",
            )
        ]
    )


def read_text(path: str) -> str:
    """Read a UTF-8 spec or config of at most MAX_FILE_BYTES, or raise a located SpecError."""
    raw = read_bytes(path)
    if len(raw) > MAX_FILE_BYTES:
        try:
            size = max(len(raw), os.stat(path).st_size)  # say how big, without reading it all
        except OSError:
            size = len(raw)
        raise _too_big(path, size)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError([Problem(path, line, None, None, "file is not UTF-8 text")]) from None


def spec_paths(paths: list[str]) -> list[str]:
    """Spec paths; a directory means every *.yml / *.yaml in it (sorted)."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(glob.glob(os.path.join(p, "*.yml")) + glob.glob(os.path.join(p, "*.yaml")))
            if not found:
                raise UsageError(f"{p}: no *.yml specs in this directory")
            remember(found, p)  # a link among them leading out of p is refused here
            out.extend(found)
        else:
            out.append(p)
    return out
