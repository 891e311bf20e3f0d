"""Reading untrusted inputs: every spec, config, record and local file a command reads.

The rule (docs/untrusted.md): a file is read only when it is a regular file whose real
path (every symbolic link resolved) lies inside the directory tree it was given in:

- for a directory argument, that directory (as typed: the path you type is trusted, links
  below it are not); a link inside it may lead anywhere inside it;
- for a file argument, the directory holding it (so `cfg.txt -> other.txt` beside it is fine,
  `cfg.txt -> /etc/shadow` or `-> ../../secret` is not).

A pull request can commit symbolic links; without the rule `import`, `lint` or `plan` in CI would
copy or print whatever file of the CI machine a link names. Devices, FIFOs and sockets are
refused without blocking; no reader takes more than its byte limit.

This module is the one gate for reading: every file tipcgen reads (specs, configs, scripts, logs,
records, the check cache, lint baselines, /proc) goes through `read_bytes`/`read_text`/
`read_json`/`read_owned`/`read_log`/`open_read`, every JSON text through `parse_json`, every
directory listing through `walk`/`dirs_below`. tests/test_gates.py fails on a raw `open`, `read_text`, `json.load`,
`os.walk`, ... anywhere else in the package.
"""

from __future__ import annotations

import contextlib
import glob
import json
import math
import os
import re
import stat
import threading
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO, Optional

from tipcgen.errors import Problem, SpecError, UsageError, printable

# Files found by walking a directory argument, by absolute path: the tree they were given in
# (read_bytes' default for any other file is the directory holding it).
_TREES: dict[str, str] = {}
MAX_FILE_BYTES = 1 << 20  # a spec or legacy config file: 1 MiB (spec/yamlpos.py says why)
MAX_WALK_FILES = 100_000  # files one directory argument may yield (a repo has a few thousand)

_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),  # (lstat's answer: the write gate asks about the path itself)
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _problem(path: str, message: str, hint: Optional[str] = None) -> SpecError:
    return SpecError([Problem(printable(path), None, None, None, message, hint)])


def is_inside(path: str, base: str) -> bool:
    """Whether the (real) path `path` is `base` or below it."""
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def read_head(pipe: Any, into: list, cap: int = 1 << 20) -> threading.Thread:
    """A started thread reading the pipe `pipe` to its end, keeping its first `cap` bytes in `into`:
    another program's output (a node's answer, the config's `python`, `yes` included) is never
    held whole."""

    def read() -> None:
        kept = 0
        with contextlib.suppress(OSError, ValueError):
            for chunk in iter(lambda: pipe.read1(1 << 16), b""):
                if kept < cap:
                    into.append(chunk[: cap - kept])
                    kept += len(into[-1])

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def tree_of(path: str) -> str:
    """The directory tree `path` was given in (see the module docstring)."""
    return _TREES.get(os.path.abspath(path)) or os.path.dirname(path) or "."


def resolve_inside(path: str, tree: Optional[str] = None) -> str:
    """The real path of `path`, or a SpecError when a symbolic link takes it out of its tree."""
    tree = tree or tree_of(path)
    real, real_tree = os.path.realpath(path), os.path.realpath(tree)
    if not is_inside(real, real_tree):
        raise _problem(
            path,
            f"cannot read: a symbolic link leads to {printable(real)}, outside {printable(tree)}",
            "tipcgen reads an input only inside the directory tree it was given; "
            "replace the link with the file, or name the directory holding both",
        )
    return real


def kind_of(mode: int) -> str:
    """What a file of this mode is, for a message: "a named pipe (FIFO)", "a character device"..."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _not_regular(path: str, mode: int, what: str) -> SpecError:
    kind = kind_of(mode)
    return _problem(path, f"cannot read {kind}: {what} is a regular file")


def read_bytes(
    path: str,
    limit: int = MAX_FILE_BYTES,
    tree: Optional[str] = None,
    what: str = "a spec or config",
    links: bool = True,
) -> bytes:
    """At most `limit` + 1 bytes of a regular file inside its tree, or a located SpecError.

    A FIFO would block and /dev/zero or a huge file would fill memory, so only regular files are
    read, their type checked before opening (opening a device can have effects) and again on the
    open file, opened by real path with O_NOFOLLOW (a link swapped in after the check is refused),
    and never more than `limit` + 1 bytes, whatever the file claims. The caller decides what more
    than `limit` means. `links=False` refuses a symbolic link anywhere below `tree` (files tipcgen
    wrote itself and compares are never links)."""
    chunks, got = [], 0
    with open_read(path, tree, what, links) as fh:
        try:
            while got <= limit:
                chunk = fh.read(min(limit + 1 - got, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        except OSError as exc:
            raise _problem(path, f"cannot read file: {exc.strerror or exc}") from None
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
            if not is_inside(real, real_root):
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


def open_read(path: str, tree: Optional[str] = None, what: str = "a file", links: bool = True) -> BinaryIO:
    """The regular file at `path` inside `tree`, opened for reading as a stream (a download, an
    archive, a log followed as it grows): its type checked before opening (opening a device can
    have effects) and again on the open file, opened by real path with O_NOFOLLOW (a link swapped
    in after the check is refused) and O_NONBLOCK (a FIFO cannot block); no byte limit: the caller
    bounds what it reads (read_bytes reads at most its limit + 1)."""
    try:
        if not links:
            _refuse_links_below(path, tree or tree_of(path))
        real = resolve_inside(path, tree)
        st = os.stat(real)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode, what)
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise _problem(path, f"cannot read file: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise _problem(path, f"cannot read file: {exc}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _not_regular(path, st.st_mode, what)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _refuse_links_below(path: str, tree: str) -> None:
    """A SpecError when `path` or a directory between `tree` and it is a symbolic link."""
    rel = os.path.relpath(path, tree)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        raise _problem(path, f"cannot read: not inside {printable(tree)}")
    parts = [] if rel == os.curdir else rel.split(os.sep)
    for i in range(1, len(parts) + 1):
        here = os.path.join(tree, *parts[:i])
        if os.path.islink(here):
            raise _problem(
                here,
                "cannot read: a symbolic link where tipcgen wrote a file",
                "files tipcgen generates are never links; replace the link with the generated file",
            )


def read_owned(path: str, tree: str, limit: int = MAX_FILE_BYTES) -> Optional[bytes]:
    """A file tipcgen generated below `tree` (to compare it with what it would write now): None when
    it does not exist, a SpecError when it or a directory on the way is a link, not a regular file,
    or larger than `limit` (what tipcgen writes is far smaller)."""
    if not os.path.lexists(path):
        return None
    data = read_bytes(path, limit, tree=tree, what="a generated file", links=False)
    if len(data) > limit:
        raise _problem(path, f"cannot read: more than {limit} bytes, larger than anything tipcgen writes")
    return data


def read_log(path: str, tree: str, limit: int = 1 << 20) -> Optional[bytes]:
    """The last at most `limit` bytes of a log below `tree` (a run's own folder), for a report's
    tail; None when it is missing, a link leading out of `tree` or not a regular file: a step that
    swaps its log for a link or a FIFO gets nothing of the target into a report."""
    try:
        with open_read(path, tree, what="a log") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - limit))
            return fh.read(limit)
    except (SpecError, OSError):
        return None


def dirs_below(root: str, topdown: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:
    """os.walk of `root` (links to directories not descended): the one listing of a tree outside
    this module; `dirs` may be pruned in place when `topdown`."""
    yield from os.walk(root, topdown=topdown)


# --- JSON: one bounded, typed reader -------------------------------------------------------------

MAX_JSON_BYTES = 4 << 20  # a record, the check cache, a baseline: KiBs to a few MiB
MAX_JSON_DEPTH = 32  # tipcgen's own JSON nests 5 deep at most
MAX_JSON_DIGITS = 19  # whole numbers: counts, sizes, times fit in 64 bits
MAX_JSON_VALUES = 200_000  # commas: a bench record's curves are the largest
MAX_JSON_OBJECTS = 50_000

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_PAIR = re.compile(r"\[\]|\{\}")


def _too_deep(brackets: str, depth: int) -> bool:
    """Whether JSON with these brackets (strings and all else removed) nests deeper than `depth`,
    in C-speed passes (no recursion): each pass drops the innermost bracket pairs. What is left
    afterwards is either a pair (deeper) or, for broken JSON, unmatched brackets, of which only
    the openers could nest."""
    for _ in range(depth):
        if not brackets:
            return False
        brackets = _PAIR.sub("", brackets)
    return bool(_PAIR.search(brackets)) or brackets.count("[") + brackets.count("{") > depth


def _shape_problem(text: str, depth: int, values: int, objects: int) -> Optional[str]:
    """What makes `text` too costly to parse, counted in C before Python's parser (which recurses
    per level and calls a hook per object and number) runs: nesting, values, objects."""
    bare = _STRING.sub('""', text)
    if _too_deep(_NOT_BRACKET.sub("", bare), depth):
        return f"nested more than {depth} deep"
    if bare.count(",") > values:
        return f"more than {values} values"
    if bare.count("{") > objects:
        return f"more than {objects} JSON objects"
    return None


class _Odd(str):
    """A JSON number no input may hold (NaN, Infinity, out of range, too many digits): the parser
    leaves this marker so that the error can name the field."""


class _Duplicate(Exception):
    pass


class _Hooks:
    """json's hooks: odd numbers become _Odd markers (counted), a repeated key raises."""

    def __init__(self, digits: int) -> None:
        self.odd, self.digits = 0, digits

    def _mark(self, s: str) -> _Odd:
        self.odd += 1
        return _Odd(s)

    def constant(self, name: str) -> _Odd:  # NaN, Infinity, -Infinity
        return self._mark(name)

    def number(self, s: str) -> Any:
        value = float(s)
        return value if math.isfinite(value) else self._mark(s)

    def integer(self, s: str) -> Any:
        return int(s) if len(s.lstrip("-")) <= self.digits else self._mark(s)

    @staticmethod
    def pairs(items: list) -> dict:
        obj: dict = {}
        for key, value in items:
            if key in obj:
                raise _Duplicate(key)
            obj[key] = value
        return obj


def dotted(loc: Iterable[Any]) -> str:
    """A field path as the errors name it: `entries[0].count`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _find_odd(data: Any) -> tuple[tuple, str]:
    """The path and text of the first _Odd marker in parsed JSON (iterative: no recursion)."""
    stack: list[tuple[tuple, Any]] = [((), data)]
    while stack:
        loc, value = stack.pop()
        if isinstance(value, _Odd):
            return loc, str(value)
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack.extend(reversed([((*loc, k), v) for k, v in items]))
    return (), ""


def _json_problem(
    source: str, message: str, field: Optional[str] = None, line: Optional[int] = None, col: Optional[int] = None
) -> SpecError:
    return SpecError([Problem(printable(source), line, col, field, message)])


def parse_json(
    text: str | bytes,
    source: str,
    schema: Any = None,
    *,
    what: str = "JSON",
    limit: int = MAX_JSON_BYTES,
    depth: int = MAX_JSON_DEPTH,
    values: int = MAX_JSON_VALUES,
    objects: int = MAX_JSON_OBJECTS,
    digits: int = MAX_JSON_DIGITS,
) -> Any:
    """JSON text from an untrusted source (a file read through this module, a line another process
    printed), bounded before it is parsed: at most `limit` bytes, UTF-8, nesting, values and
    objects counted first; then no repeated key, finite numbers, whole numbers of at most
    MAX_JSON_DIGITS digits. With `schema` (a type pydantic understands: a TypedDict, a model,
    `dict[str, int]`) the value is checked against it strictly. A SpecError naming `source` and
    the field otherwise, never a traceback. `what` names the kind in messages ("not {what}: ...")."""
    if len(text) > limit:
        raise _json_problem(source, f"not {what}: more than {limit} bytes")
    if isinstance(text, bytes):
        raw = text
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise _json_problem(source, f"not {what}: the file is not UTF-8 text", line=line) from None
    shape = _shape_problem(text, depth, values, objects)
    if shape:
        raise _json_problem(source, f"not {what}: {shape}")
    hooks = _Hooks(digits)
    try:
        data = json.loads(
            text,
            parse_constant=hooks.constant,
            parse_float=hooks.number,
            parse_int=hooks.integer,
            object_pairs_hook=hooks.pairs,
        )
    except json.JSONDecodeError as exc:
        raise _json_problem(source, f"not {what}: {exc.msg}", line=exc.lineno, col=exc.colno) from None
    except _Duplicate as exc:
        key = str(exc.args[0])
        raise _json_problem(source, "given twice (readers disagree on which one counts)", field=key[:80]) from None
    except RecursionError:  # _shape_problem should have said so
        raise _json_problem(source, f"not {what}: nested more than {depth} deep") from None
    if hooks.odd:
        loc, value = _find_odd(data)
        shown = value if len(value) <= 40 else f"{value[:20]}...({len(value)} characters)"
        raise _json_problem(
            source,
            f"{shown} does not fit: numbers are finite, whole numbers at most {digits} digits",
            field=dotted(loc) or None,
        )
    if schema is not None:
        data = check_shape(data, schema, source)
    return data


def check_shape(value: Any, schema: Any, source: str) -> Any:
    """`value` (parsed JSON) checked strictly against `schema`, or a SpecError naming `source` and
    the first bad field."""
    from pydantic import TypeAdapter, ValidationError

    try:
        return TypeAdapter(schema).validate_python(value, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise _json_problem(source, f"{first['msg']}{more}", field=dotted(first["loc"]) or None) from None


def read_json(
    path: str,
    tree: Optional[str] = None,
    schema: Any = None,
    *,
    what: str = "a JSON file",
    limit: int = MAX_JSON_BYTES,
    links: bool = True,
    **bounds: int,
) -> Any:
    """A JSON file read through the gate (regular file inside its tree, at most `limit` bytes;
    `links=False`: no link at all) and parsed by `parse_json`."""
    raw = read_bytes(path, limit, tree=tree, what=what, links=links)
    return parse_json(raw, path, schema, what=what, limit=limit, **bounds)
