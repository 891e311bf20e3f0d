"""A traced prepare.sh run (prepare_trace.Op) as a spec's typed `prepare` steps, and both sides of
the prepare differential as comparable effects.

Typing (`steps_from_ops`):

- `wget`/`curl` of an http(s) URL into a directory -> a download (`url`, `to`, `name` when it is
  saved under another name); a later `tar x`/`unzip` of that file in place -> the same download
  with `extract` (and `to` the directory it is extracted into);
- `tar x`/`unzip` of any other archive -> `extract`;
- `ln -s TARGET LINK` -> `link` (in the directory it ran in); `rm` of plain relative paths ->
  `remove`; `pip install NAME...` (also `python -m pip install`) -> `pip`;
- `mkdir` of a directory a later step writes into -> nothing (downloads, links and extracts
  create their directory); any other command -> `run` (a plain shell command, named in the
  report: builds, `python setup.py install`, `mv`, `cp`, globs).

Effects (`upstream_effects`, `plan_effects`) are what the differential compares: one tuple per
operation, taken from the raw trace on upstream's side and from the generated prepare.sh's
TIPC_PREPARE_PLAN=1 output on ours, each side normalized on its own.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

from tipcgen.importer.prepare_trace import Op
from tipcgen.spec.prepare import archive_kind, url_basename

_URL = re.compile(r"^https?://[^\s'\"`$;&|<>\\]+$")
_PLAIN_PATH = re.compile(r"^[A-Za-z0-9_.+@%=,/-]+$")
_GLOB_WORD = re.compile(r"^[A-Za-z0-9_./*?+@%=,-]+$")
_PIP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-\[\],<>=!~]*$")
_PYTHON = re.compile(r"^python[0-9.]*$")

# Deliberate deviations of the generated prepare.sh from what a repo's own one does, by id.
DEVIATIONS = {
    "archive-in-cache": "a downloaded archive is kept in the download cache and extracted from there; it is not"
    " left next to what it extracted",
    "mkdir-implicit": "a `mkdir` of a directory a later step writes into is not a step: that step creates it",
    "outside-repo": "a command the script ran outside the repo root is not reproduced (named in the report)",
    "no-url-fetch": "a `wget`/`curl` given no URL (`null`, `:` or nothing: a config's unset URL field) fetches"
    " nothing: upstream's fails and its script goes on, the generated prepare.sh skips it",
}
# What a config's unset URL field reads as once a script has parsed it (`null`, or `:` from a
# `key:value` split of an empty line): a fetch of nothing.
NO_URL = ("null", ":", "")


def _norm(cwd: str, path: str) -> str:
    return posixpath.normpath(posixpath.join(cwd, path))


def _inside(path: str) -> bool:
    return not path.startswith("/") and path != ".." and not path.startswith("../")


_VAR_WORD = re.compile(r"^[A-Za-z0-9_./:=,@+%{}$-]+$")


def _word(a: str) -> str:
    if a == "|" or (("*" in a or "?" in a) and _GLOB_WORD.match(a)):
        return a
    if ("${TIPC_REPO_ROOT}" in a or "${HOME}" in a) and _VAR_WORD.match(a):
        return f'"{a}"'  # expanded when the command runs (prepare_trace.ROOT_VAR/HOME_VAR)
    return shlex.quote(a)


def shell_join(argv: tuple[str, ...]) -> str:
    """argv as a shell command; a word with an unmatched glob (`train/*`) stays unquoted so the
    command globs when it runs, as the script's did."""
    return " ".join(a if a == "|" or (("*" in a or "?" in a) and _GLOB_WORD.match(a)) else shlex.quote(a) for a in argv)


@dataclass
class Imported:
    steps: list[dict] = field(default_factory=list)
    untyped: list[str] = field(default_factory=list)  # commands kept as `run` steps
    deviations: list[str] = field(default_factory=list)  # DEVIATIONS ids that apply
    outside: list[str] = field(default_factory=list)  # commands run outside the repo: dropped


def _wget(argv: tuple[str, ...]) -> Optional[tuple[list[str], str, Optional[str]]]:
    """(urls, directory, output file) of a wget command, None when it cannot be typed."""
    urls: list[str] = []
    prefix, output = ".", None
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("-P", "--directory-prefix") and i + 1 < len(argv):
            prefix, i = argv[i + 1], i + 2
            continue
        if a in ("-O", "--output-document") and i + 1 < len(argv):
            output, i = argv[i + 1], i + 2
            continue
        if a.startswith("--directory-prefix="):
            prefix = a.split("=", 1)[1]
        elif a.startswith("--output-document="):
            output = a.split("=", 1)[1]
        elif a.startswith("-P") and len(a) > 2:
            prefix = a[2:]
        elif a in ("-t", "-T", "--tries", "--timeout", "-w", "--wait") and i + 1 < len(argv):
            i += 1
        elif a.startswith("-"):
            pass  # -nc, -q, -c, --no-check-certificate, ...: how, not what
        elif _URL.match(a):
            urls.append(a)
        else:
            return None
        i += 1
    if not urls or (output is not None and (len(urls) > 1 or output == "-")):
        return None
    return urls, prefix, output


# the options of wget/curl that take a value (the value is not a URL)
_FETCH_VALUE_OPTS = {
    "wget": ("-P", "--directory-prefix", "-O", "--output-document", "-t", "-T", "--tries", "--timeout", "-w", "--wait"),
    "curl": ("-o", "--output", "--retry", "-m", "--max-time", "--connect-timeout", "-C"),
}


def no_url_fetch(argv: tuple[str, ...]) -> bool:
    """A `wget`/`curl` whose every operand is an unset URL (NO_URL) or that has none: upstream's
    fails (`wget -nc null`) and a script without `set -e` goes on; it fetches nothing."""
    if not argv or argv[0] not in _FETCH_VALUE_OPTS:
        return False
    takes_value = _FETCH_VALUE_OPTS[argv[0]]
    operands, i = [], 1
    while i < len(argv):
        if argv[i] in takes_value:
            i += 2
            continue
        if not argv[i].startswith("-") or argv[i] == "-":
            operands.append(argv[i])
        i += 1
    return all(o in NO_URL for o in operands)


def _curl(argv: tuple[str, ...]) -> Optional[tuple[list[str], str, Optional[str]]]:
    urls: list[str] = []
    output, remote = None, False
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("-o", "--output") and i + 1 < len(argv):
            output, i = argv[i + 1], i + 2
            continue
        if a in ("-O", "--remote-name"):
            remote = True
        elif a in ("--retry", "-m", "--max-time", "--connect-timeout", "-C") and i + 1 < len(argv):
            i += 1
        elif a.startswith("-"):
            if "o" in a[1:] and not a.startswith("--"):
                return None  # -so FILE and such: not worth guessing
            remote = remote or ("O" in a[1:] and not a.startswith("--"))
        elif _URL.match(a):
            urls.append(a)
        else:
            return None
        i += 1
    if len(urls) != 1 or (output is None and not remote):
        return None
    return urls, ".", output


def _tar(argv: tuple[str, ...]) -> Optional[tuple[str, str]]:
    """(archive, directory) of a tar extraction, None otherwise."""
    args = list(argv[1:])
    archive, directory, extracting = None, ".", False
    i = 0
    first = True
    while i < len(args):
        a = args[i]
        if a in ("-C", "--directory") and i + 1 < len(args):
            directory, i = args[i + 1], i + 2
            first = False
            continue
        if a.startswith("--directory="):
            directory = a.split("=", 1)[1]
        elif a in ("--extract", "--get"):
            extracting = True
        elif a.startswith("--file="):
            archive = a.split("=", 1)[1]
        elif a.startswith("-") or first:
            letters = a.lstrip("-")
            if not re.fullmatch(r"[xzjJvfpo]+", letters):
                return None
            extracting = extracting or "x" in letters
            if "f" in letters:
                if i + 1 >= len(args):
                    return None
                archive, i = args[i + 1], i + 2
                first = False
                continue
        else:
            return None  # member names: only part of the archive
        first = False
        i += 1
    if not extracting or archive is None:
        return None
    return archive, directory


def unzip_archive(archive: str, made) -> str:
    """The file `unzip ARCHIVE` opens among the files the script `made` (downloaded): ARCHIVE,
    or ARCHIVE.zip when only that exists (unzip's own rule; PaddleSeg's cpp_infer branch relies on it)."""
    return archive + ".zip" if archive not in made and archive + ".zip" in made else archive


def _unzip(argv: tuple[str, ...]) -> Optional[tuple[str, str]]:
    args = list(argv[1:])
    archive, directory = None, "."
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-d" and i + 1 < len(args):
            directory, i = args[i + 1], i + 2
            continue
        if a.startswith("-"):
            if not re.fullmatch(r"-[qonu]+", a):
                return None
        elif archive is None:
            archive = a
        else:
            return None
        i += 1
    return (archive, directory) if archive else None


def _pip(argv: tuple[str, ...]) -> Optional[list[str]]:
    words = list(argv[1:])
    if _PYTHON.match(argv[0]):
        if words[:2] != ["-m", "pip"]:
            return None
        words = words[2:]
    if not words or words[0] != "install":
        return None
    names = words[1:]
    if names and all(_PIP_NAME.match(n) for n in names):
        return names
    return None


class _Typer:
    """steps_from_ops's state: the steps so far and the downloads a later extraction may join."""

    def __init__(self) -> None:
        self.out = Imported()
        self.pending: dict[str, int] = {}  # downloaded file path -> index of its download step

    def run_step(self, op: Op) -> None:
        command = shell_join(op.argv)
        step = {"run": command}
        if op.cwd not in (None, "."):
            step["dir"] = str(op.cwd)
        self.out.steps.append(step)
        self.out.untyped.append(command + (f"  (in {op.cwd})" if op.cwd not in (None, ".") else ""))

    def fetch(self, op: Op, cwd: str) -> bool:
        got = _wget(op.argv) if op.argv[0] == "wget" else _curl(op.argv)
        if got is None:
            return False
        urls, prefix, output = got
        steps = []
        for url in urls:
            file = posixpath.basename(output) if output else url_basename(url)
            folder = _norm(cwd, posixpath.dirname(output) if output else prefix)
            if not _inside(folder) or file in ("", ".", ".."):
                return False
            step = {"url": url, "to": folder, "_ops": [op]}
            if file != url_basename(url):
                step["name"] = file
            steps.append((_norm(folder, file), step))
        for path, step in steps:
            self.pending[path] = len(self.out.steps)
            self.out.steps.append(step)
        return True

    def extract(self, op: Op, cwd: str) -> bool:
        unzip = op.argv[0] == "unzip"
        got = _unzip(op.argv) if unzip else _tar(op.argv)
        if got is None:
            return False
        archive, directory = _norm(cwd, got[0]), _norm(cwd, got[1])
        if not _inside(archive) or not _inside(directory):
            return False
        fmt = "zip" if unzip else "tar"
        if unzip:
            archive = unzip_archive(archive, self.pending)
        index = self.pending.pop(archive, None)
        if index is None:
            own: dict = {"extract": archive, "to": directory, "_ops": [op]}
            if archive_kind(posixpath.basename(archive)) is None:
                own["format"] = fmt
            self.out.steps.append(own)
            return True
        step: dict = self.out.steps[index]
        step.pop("name", None)  # extracted from the cache: the name it was saved as does not matter
        step["extract"] = True if archive_kind(url_basename(step["url"])) == fmt else fmt
        step["to"] = directory
        step["_ops"].append(op)
        _note(self.out, "archive-in-cache")
        return True

    def link(self, op: Op, cwd: str) -> bool:
        flags = [a for a in op.argv[1:] if a.startswith("-")]
        words = [a for a in op.argv[1:] if not a.startswith("-")]
        if not any("s" in f.lstrip("-") for f in flags) or len(words) not in (1, 2):
            return False
        target = words[0]
        link = (words[1] if len(words) == 2 else posixpath.basename(target.rstrip("/"))).rstrip("/")
        path = _norm(cwd, link) if link else cwd
        if not link or not _inside(path) or path == cwd or ".." in link.split("/"):
            return False
        self.out.steps.append({"link": link, "target": target, "dir": cwd, "_ops": [op]})
        return True

    def remove(self, op: Op, cwd: str) -> bool:
        words = [a for a in op.argv[1:] if not a.startswith("-")]
        paths = [_norm(cwd, w) for w in words]
        plain = all(_PLAIN_PATH.match(w) and ".." not in w.split("/") and not w.startswith("/") for w in words)
        if not words or not plain or any(p == "." or not _inside(p) for p in paths):
            return False
        self.out.steps.append({"remove": paths, "_ops": [op]})
        for p in paths:
            self.pending.pop(p, None)
        return True

    def mkdir(self, op: Op, cwd: str) -> bool:
        words = [a for a in op.argv[1:] if not a.startswith("-")]
        if len(words) != 1 or not _PLAIN_PATH.match(words[0]) or not _inside(_norm(cwd, words[0])):
            return False
        self.out.steps.append({"mkdir": _norm(cwd, words[0]), "_op": op})
        return True

    def pip(self, op: Op, cwd: str) -> bool:
        names = _pip(op.argv)
        if names is None:
            return False
        self.out.steps.append({"pip": names, "_ops": [op]})
        return True

    def handler(self, name: str):
        if name in ("wget", "curl"):
            return self.fetch
        if name in ("tar", "unzip"):
            return self.extract
        if _PYTHON.match(name) or name in ("pip", "pip3"):
            return self.pip
        return {"ln": self.link, "rm": self.remove, "mkdir": self.mkdir}.get(name)

    def finish(self) -> Imported:
        """Drop implicit mkdirs (a later step writes into the directory); a step the spec would
        refuse (an absolute link target, ...) goes back to being the commands it came from."""
        steps, self.out.steps = self.out.steps, []
        for i, step in enumerate(steps):
            if "mkdir" in step:
                if any(_writes_into(s, step["mkdir"]) for s in steps[i + 1 :]):
                    _note(self.out, "mkdir-implicit")
                else:
                    self.run_step(step["_op"])
                continue
            ops = step.pop("_ops", None)
            if ops is None or _valid(step):
                self.out.steps.append(step)
            else:
                for op in ops:
                    self.run_step(op)
        return self.out


def steps_from_ops(ops: list[Op]) -> Imported:
    """The typed steps of one traced run (see the module docstring)."""
    typer_ = _Typer()
    for op in ops:
        if op.cwd is None:
            typer_.out.outside.append(shell_join(op.argv))
            _note(typer_.out, "outside-repo")
            continue
        if no_url_fetch(op.argv):  # nothing to fetch: skipped, named (DEVIATIONS)
            _note(typer_.out, "no-url-fetch")
            continue
        handle = typer_.handler(op.argv[0])
        if handle is None or not handle(op, op.cwd):
            typer_.run_step(op)
    return typer_.finish()


@lru_cache(maxsize=1)
def _step_adapter():
    from pydantic import TypeAdapter

    from tipcgen.spec.prepare import PrepareStep

    return TypeAdapter(PrepareStep)


def _valid(step: dict) -> bool:
    from pydantic import ValidationError

    try:
        _step_adapter().validate_python(step)
    except ValidationError:
        return False
    return True


def _writes_into(step: dict, folder: str) -> bool:
    where = step.get("to") or step.get("dir")
    if where is None:
        return False
    where = posixpath.normpath(where)
    return where == folder or where.startswith(folder + "/")


def _note(out: Imported, deviation: str) -> None:
    if deviation not in out.deviations:
        out.deviations.append(deviation)


# ------------------------------------------------------------------- the differential's effects


def upstream_effects(ops: list[Op]) -> list[tuple]:
    """The raw trace as effects: fetch (url, file path), extract (archive, dir), link (path,
    target), remove (path), pip (names), mkdir (dir), run (dir, argv)."""
    out: list[tuple] = []
    fetched: set = set()
    for op in ops:
        if op.cwd is None:
            out.append(("outside", op.argv))
            continue
        if no_url_fetch(op.argv):
            out.append(("no-url", op.cwd, tuple(op.argv)))
            continue
        found = _fetch_effects(op, op.cwd) if op.argv[0] in ("wget", "curl", "tar", "unzip") else None
        if found and op.argv[0] == "unzip":
            found = [(kind, unzip_archive(archive, fetched), to) for kind, archive, to in found]
        fetched |= {e[2] for e in found or () if e[0] == "fetch"}
        found = found if found is not None else _path_effects(op, op.cwd)
        out.extend(found if found is not None else [("run", op.cwd, tuple(op.argv))])
    return out


def _fetch_effects(op: Op, cwd: str) -> Optional[list[tuple]]:
    name = op.argv[0]
    if name in ("wget", "curl"):
        got = _wget(op.argv) if name == "wget" else _curl(op.argv)
        if got is None:
            return None
        urls, prefix, output = got
        folder = _norm(cwd, posixpath.dirname(output) if output else prefix)
        return [
            ("fetch", url, _norm(folder, posixpath.basename(output) if output else url_basename(url))) for url in urls
        ]
    got2 = _tar(op.argv) if name == "tar" else _unzip(op.argv)
    return None if got2 is None else [("extract", _norm(cwd, got2[0]), _norm(cwd, got2[1]))]


def _path_effects(op: Op, cwd: str) -> Optional[list[tuple]]:
    name, words = op.argv[0], [a for a in op.argv[1:] if not a.startswith("-")]
    if name == "ln":
        if len(words) in (1, 2) and any("s" in a.lstrip("-") for a in op.argv[1:] if a.startswith("-")):
            link = words[1] if len(words) == 2 else posixpath.basename(words[0].rstrip("/"))
            return [("link", _norm(cwd, link), words[0])]
    elif name == "rm":
        if words and all(_PLAIN_PATH.match(w) for w in words):
            return [("remove", _norm(cwd, w)) for w in words]
    elif name == "mkdir":
        if len(words) == 1 and _PLAIN_PATH.match(words[0]):
            return [("mkdir", _norm(cwd, words[0]))]
    elif name in ("pip", "pip3") or _PYTHON.match(name):
        names = _pip(op.argv)
        if names is not None:
            return [("pip", tuple(names))]
    return None


def plan_effects(lines: list[str]) -> list[tuple]:
    """The generated prepare.sh's TIPC_PREPARE_PLAN=1 output as effects (see upstream_effects)."""
    out: list[tuple] = []
    for line in lines:
        parts = line.split("\t")
        if not parts or parts[0] != "plan" or len(parts) < 2:
            continue
        kind, args = parts[1], parts[2:]
        if kind == "download" and len(args) >= 4:
            url, to, file, fmt = args[:4]
            if fmt == "file":
                out.append(("fetch", url, _norm(to, file)))
            else:  # an archive is fetched into the cache and extracted from there
                out.append(("fetch", url, f"$TIPC_CACHE/{file}"))
                out.append(("extract", f"$TIPC_CACHE/{file}", posixpath.normpath(to)))
        elif kind == "extract" and len(args) >= 2:
            out.append(("extract", posixpath.normpath(args[0]), posixpath.normpath(args[1])))
        elif kind == "link" and len(args) >= 2:
            out.append(("link", posixpath.normpath(args[0]), args[1]))
        elif kind == "remove":
            out.extend(("remove", posixpath.normpath(p)) for p in args)
        elif kind == "pip":
            out.append(("pip", tuple(args)))
        elif kind == "run" and len(args) >= 2:
            # a command is read as upstream's trace is (a `tar -xf` kept as a command is the same
            # extraction whichever side runs it)
            argv = tuple(shlex.split(args[1]))
            op = Op(posixpath.normpath(args[0]), argv)
            found = _fetch_effects(op, str(op.cwd)) if argv and argv[0] in ("wget", "curl", "tar", "unzip") else None
            found = found if found is not None or not argv else _path_effects(op, str(op.cwd))
            out.extend(found if found is not None else [("run", op.cwd, argv)])
    return out


@dataclass
class EffectDiff:
    verdict: str  # identical | faithful | CHANGED
    deviations: list[str]
    first: Optional[tuple] = None  # (upstream effect or None, ours or None) at the first difference


def compare_effects(up: list[tuple], ours: list[tuple]) -> EffectDiff:
    """identical; faithful (different only by DEVIATIONS: where a downloaded archive sits, an
    implicit mkdir, a command outside the repo, a fetch of no URL); or CHANGED with the first difference."""
    if up == ours:
        return EffectDiff("identical", [])
    used: list[str] = []
    a = [e for e in up if e[0] not in ("mkdir", "outside", "no-url")]
    b = [e for e in ours if e[0] != "mkdir"]
    if any(e[0] == "no-url" for e in up):
        used.append("no-url-fetch")
    if sum(e[0] == "mkdir" for e in up) != sum(e[0] == "mkdir" for e in ours):
        used.append("mkdir-implicit")
    if any(e[0] == "outside" for e in up):
        used.append("outside-repo")
    merged_a, merged_b = _archive_paths(a), _archive_paths(b)
    if merged_a != merged_b:
        n = max(len(merged_a), len(merged_b))
        pad_a, pad_b = merged_a + [None] * (n - len(merged_a)), merged_b + [None] * (n - len(merged_b))
        first = next((x, y) for x, y in zip(pad_a, pad_b) if x != y)
        return EffectDiff("CHANGED", used, first)
    if a != b:
        used.append("archive-in-cache")
    return EffectDiff("faithful", used)


def _archive_paths(effects: list) -> list:
    """fetch+extract pairs as one (url, extraction dir) effect; a lone mkdir-free list otherwise."""
    out: list = []
    fetched: dict[str, int] = {}
    for e in effects:
        if e[0] == "fetch":
            fetched[e[2]] = len(out)
            out.append(e)
        elif e[0] == "extract" and e[1] in fetched:
            i = fetched.pop(e[1])
            out[i] = ("fetch+extract", out[i][1], e[2])
        elif e[0] == "remove" and e[1] in fetched:
            fetched.pop(e[1])
            out.append(e)
        else:
            out.append(e)
    return out
