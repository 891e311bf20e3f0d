"""The whole-tree oracle: every entry point of a repo's old test_tipc/, run on the old tree and on
the switched one under the recorder, compared command by command.

    rows = compare_entries(root, files, covered)   # files: the switched tree's new/replaced files

An entry point is a script of test_tipc/ (not one only sourced by others), with each config it
reads and each mode it takes:

- modes: the ones the script's code (not its comments) tests `MODE` for, the ones the repo's docs run it with
  (`bash test_tipc/X.sh CONFIG MODE` in test_tipc/ and docs/ markdown), the ones of a script it
  passes its mode to, and the four train modes for the train runner; a script that never reads
  its second argument runs without one.
- configs: decided by what the script does with them, not by their names or first sections: each
  script runs on one config of every shape (the sequence of keys the scripts read by position) in
  its first mode; the shapes on which it ran a command are the ones it reads, and every config of
  those shapes is an entry point of it, in every mode.

Each run is the repo's script in a fresh scratch copy (the tree's scripts and helpers, the one
config at its own path, the directories a checkout has), in the sandbox, with recorders for the
interpreters and tools and recording wrappers (`timeout`, `nohup`, `setsid`, `env`, `sleep` with
its argument): nothing is downloaded, trained or installed, and a wrapper is part of the command.

Verdicts (entries.ENTRY_VERDICTS): identical (same commands, same exit status); faithful (the
differences are the named deviations of a generated script, as the runner/chain oracle found them
for that config and mode; the two this oracle names itself, FOREIGN and UNTESTED; or, for a kept
script that runs a generated one, exactly that script's);
CHANGED (every differing command listed); "not run before" (the old script ran nothing on it).
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from tipcgen.dialects import config_readers, section_owners
from tipcgen.dialects.steps import MODE_REFUSED
from tipcgen.errors import TipcError
from tipcgen.fsio import write_new
from tipcgen.inputs import MAX_FILE_BYTES, dirs_below, read_bytes
from tipcgen.migrate import runcache
from tipcgen.migrate.entries import EntryPoint, EntryRow
from tipcgen.migrate.oracle import (
    BUILD_TOOLS,
    PYTHONS,
    SLEEP_AFTER_BACKGROUND,
    TOOLS,
    Command,
    kl_quant_dir,
    records,
    step_dirs,
)
from tipcgen.migrate.shims import shim
from tipcgen.plan.runner import EVAL_CUT
from tipcgen.sandbox import DEFAULT_TIMEOUT, SYSTEM_PATH, sandboxed_run
from tipcgen.script.code import code_only
from tipcgen.script.lines import config_python, first_header
from tipcgen.spec.modes import serves

TRAIN_RUNNER = "test_train_inference_python.sh"
TRAIN_MODES = ("lite_train_lite_infer", "lite_train_whole_infer", "whole_train_whole_infer", "whole_infer")
# Parts of test_tipc/ that are not the scripts' own (a run gets its one config; outputs are made).
_NOT_STAGED = ("configs", "docs", "output", "specs", "__pycache__")
_SUFFIXES = (".sh", ".py", ".yml", ".yaml", ".txt", ".json", ".cfg", ".conf", ".cc", ".h", "")

# The recorder and the wrappers (timeout, nohup, setsid, env) share its record function: a
# wrapper is the recorder with its last lines (the call) replaced by the wrapper's body.
_RECORDER = shim("entry_recorder.sh")
_CALL = 'tipc_record "${0##*/}" "$@"\nexit 0\n'
if not _RECORDER.endswith(_CALL):
    raise RuntimeError("templates/shims/entry_recorder.sh must end with the record call a wrapper replaces")
_WRAPPER = _RECORDER[: -len(_CALL)] + shim("wrapper_body.sh")
# `sleep N`: recorded once the script's other children (a server started in the background) have
# ended (at most 5 s), so their commands come in the same order each run: the oracle's own shim.
_SLEEP = SLEEP_AFTER_BACKGROUND
WRAPPERS = ("timeout", "nohup", "setsid", "env")
# Programs recorded and answered with success: network and package tools (nothing fetched), the
# device query, builds, archives of what would have been fetched.
RECORDED = (
    "wget", "curl", "pip", "pip3", "git", "nvidia-smi", "tar", "unzip", "cmake", "make",
    "adb", "apt-get", "apt", "conda", "hadoop", "paddle2onnx",
)  # fmt: skip


@dataclass(frozen=True)
class ScriptInfo:
    script: str  # repo-relative
    takes_config: bool
    takes_mode: bool
    modes: tuple


@dataclass
class Run:
    commands: list
    returncode: Optional[int]
    logs: list = field(default_factory=list)


# ---- finding the entry points


_FUNC_HEAD = re.compile(r"^\s*(?:function\s+[A-Za-z_][\w-]*\s*(?:\(\s*\))?|[A-Za-z_][\w-]*\s*\(\s*\))\s*(?:\{|$)")
_MODE_TEST = re.compile(r"\$\{?MODE\}?\"?\s*(?:==?|!=)\s*[\"']([A-Za-z_][A-Za-z0-9_]*)[\"']")
_SOURCED = re.compile(r"(?:^|[;&|]\s*|\s)(?:source|\.)\s+[\"']?(?:\$\{?\w+\}?/)?([\w./-]+\.sh)")
_DOC_RUN = re.compile(r"bash\s+(?:\./)?test_tipc/([\w./-]+\.sh)((?:[ \t]+[^\s`|)<>;&]+)*)")
_MODE_WORD = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_MODE_MATCH = re.compile(r"\$\{?MODE\}?\"?\s*=~\s*[\"']?([A-Za-z_][A-Za-z0-9_]*)")
_NESTED = re.compile(r"bash\s+(?:\./)?test_tipc/([\w./-]+\.sh)\b[^\n]*\$\{?2\}?")


def _top_level(text: str) -> str:
    """The script's lines outside function bodies (where `$1`/`$2` are the script's arguments)."""
    out, depth = [], 0
    for line in text.split("\n"):
        if depth == 0 and _FUNC_HEAD.match(line):
            # the body's braces counted from its header (a one-line function closes on it)
            depth = line.count("{") - line.count("}") or (0 if "}" in line else 1)
            continue
        if depth:
            depth += line.count("{") - line.count("}")
            if line.strip() == "}":
                depth = min(depth, 0)
            depth = max(depth, 0)
            continue
        out.append(line)
    return "\n".join(out)


def _reads_arg(text: str, n: int) -> bool:
    top = _top_level(text)
    return bool(re.search(rf"\$\{{?{n}(?![0-9])", top)) or (n == 1 and bool(re.search(r"\$@|\$\*", top)))


def _docs_runs(root: Path) -> dict:
    """script -> the modes the repo's docs run it with (third word of `bash test_tipc/X.sh CONFIG MODE`)."""
    found: dict = {}
    for base in (root / "test_tipc", root / "docs"):
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.md")):
            if path.is_symlink() or not path.is_file():
                continue
            try:
                text = read_bytes(str(path), MAX_FILE_BYTES, tree=str(root), what="a doc").decode("utf-8", "replace")
            except TipcError:  # a doc that cannot be read (a FIFO, too big) names no mode
                continue
            text = _HTML_COMMENT.sub("", text)  # a commented-out block runs nothing
            for m in _DOC_RUN.finditer(text):
                words = m.group(2).split()
                found.setdefault(m.group(1), set())
                if len(words) >= 2:
                    mode = words[1].strip("'\"")
                    if _MODE_WORD.match(mode) and mode not in ("mode", "your_mode"):
                        found[m.group(1)].add(mode)
    return found


def scripts_of(root: Path, tree: dict) -> list[ScriptInfo]:
    """The entry scripts of the old tree `tree` (repo-relative path -> bytes): each .sh of
    test_tipc/ that no other script sources, with the arguments it reads and its modes."""
    # Modes, arguments and callees come from code only (`fi  # end if [ ${MODE} = "infer" ]` names none).
    texts = {rel: code_only(data.decode("utf-8", "replace")) for rel, data in tree.items() if rel.endswith(".sh")}
    sourced = {os.path.basename(name) for text in texts.values() for name in _SOURCED.findall(text)}
    docs = _docs_runs(root)
    tests = {rel: set(_MODE_TEST.findall(text)) for rel, text in texts.items()}
    nested = {rel: {f"test_tipc/{n}" for n in _NESTED.findall(text)} for rel, text in texts.items()}
    out = []
    for rel in sorted(texts):
        name = rel[len("test_tipc/") :]
        if os.path.basename(rel) in sourced and not _reads_arg(texts[rel], 1):
            continue  # a library (PaddleClas's jeston script sources the runner itself: still an entry)
        modes = set(tests[rel]) | docs.get(name, set())
        for callee in nested[rel]:  # a wrapper passes its mode on: the callee's modes are its own
            modes |= tests.get(callee, set()) | docs.get(callee[len("test_tipc/") :], set())
            if callee.endswith("/" + TRAIN_RUNNER):
                modes |= set(TRAIN_MODES)
        if name == TRAIN_RUNNER:
            modes |= set(TRAIN_MODES)
        takes_mode = _reads_arg(texts[rel], 2)
        ordered = tuple(m for m in TRAIN_MODES if m in modes) + tuple(sorted(modes - set(TRAIN_MODES)))
        out.append(ScriptInfo(rel, _reads_arg(texts[rel], 1), takes_mode, ordered if takes_mode else ()))
    return out


def config_shape(data: bytes) -> tuple:
    """What a positional reader sees of a config besides its values: the keys of its lines, in order."""
    lines = [line for line in data.decode("utf-8", "replace").replace("\r\n", "\n").split("\n") if line.strip()]
    return tuple(line.split(":", 1)[0].strip() for line in lines)


# ---- running one entry point


class Stager:
    """Fresh scratch copies of one side's tree (old or switched), one per run."""

    def __init__(
        self, tree: dict, configs: dict, pythons: Iterable[str], base: Path, environ: Optional[Mapping] = None
    ):
        self.tree = tree  # repo-relative -> bytes: the scripts and helpers of test_tipc/
        self.configs = configs  # repo-relative -> bytes
        self.base = base
        self.pythons = sorted(set(PYTHONS) | set(TOOLS) | {p for p in pythons if p and "/" not in p})
        # config -> the directories its own chain's steps run in (a checkout has them: a serving
        # config's deploy/paddleserving), made for both trees alike (config_dirs)
        self.dirs: dict = {}
        # One run per entry point and bound: the probes that find which configs a script reads
        # are entry points the comparison runs again (a run of one tree is deterministic: the
        # comparison rests on that); a second asker waits for the first one's run.
        self._runs: dict = {}
        self._lock = threading.Lock()
        self.environ = environ  # whose run cache (runcache.py) to use; None: none
        self._side: Optional[str] = None
        # bin/ of every run: the recorders, the wrappers and `sleep` (one body per name)
        recorded = {*self.pythons, *RECORDED, *(t for tools in BUILD_TOOLS.values() for t in tools)}
        self._bin = {name: _RECORDER.encode() for name in sorted(recorded)}
        self._bin.update({name: _WRAPPER.encode() for name in WRAPPERS})
        self._bin["sleep"] = _SLEEP.encode()

    def stage(self, scratch: Path, config: Optional[str]) -> Path:
        bin_dir = scratch / "bin"
        bin_dir.mkdir()
        for name, body in self._bin.items():
            write_new(str(bin_dir / name), body, 0o755)
        root = scratch / "repo"
        made = set()
        for rel, data in self.tree.items():
            path = root / rel
            if path.parent not in made:
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            write_new(str(path), data, 0o755 if rel.endswith(".sh") else 0o644)
        if config is not None:
            path = root / config
            path.parent.mkdir(parents=True, exist_ok=True)
            write_new(str(path), self.configs[config])
        for d in ("deploy", "ppdet/modeling/transformers/ext_op", "test_tipc/output"):
            (root / d).mkdir(parents=True, exist_ok=True)
        for d in self.dirs.get(config, ()) if config is not None else ():
            _make_inside(root, d)
        # the files above carry their modes (write_new); the directories get their owner's bits
        # whatever the umask took, as a checkout has them (the scripts write their outputs there)
        for where, _dirs, _files in dirs_below(str(root)):
            mode = os.stat(where).st_mode
            if mode & 0o700 != 0o700:
                os.chmod(where, mode | 0o700)
        return root

    def run(self, entry: EntryPoint, timeout: float) -> Run:
        with self._lock:
            future = self._runs.get((entry, timeout))
            first = future is None
            if future is None:
                future = self._runs[(entry, timeout)] = Future()
        if not first:
            return future.result()
        try:
            ran = self._cached_run(entry, timeout)
        except BaseException as exc:
            future.set_exception(exc)
            raise
        future.set_result(ran)
        return ran

    def _cached_run(self, entry: EntryPoint, timeout: float) -> Run:
        """A run recorded before for the same staged inputs (runcache.py), else run and recorded."""
        if not runcache.enabled(self.environ):
            return self._run(entry, timeout)
        if self._side is None:
            self._side = runcache.tree_digest(self.tree, self.pythons)
        config = self.configs[entry.config] if entry.config else None
        dirs = self.dirs.get(entry.config, ()) if entry.config else ()
        k = runcache.key(self._side, entry.argv, config, tuple(dirs), timeout)
        hit = runcache.load(self.environ, k)
        if hit is not None:
            commands, code, logs = hit
            return Run([Command(*c) for c in commands], code, logs)
        ran = self._run(entry, timeout)
        if ran.returncode is not None:  # a run cut at its bound is not kept
            recorded = [[list(c.argv), c.cuda_visible_devices, c.cwd] for c in ran.commands]
            runcache.store(self.environ, k, recorded, ran.returncode, ran.logs)
        return ran

    def _run(self, entry: EntryPoint, timeout: float) -> Run:
        scratch = Path(tempfile.mkdtemp(prefix="tipcgen-entry-", dir=self.base))
        try:
            root = self.stage(scratch, entry.config)
            made = kl_quant_dir(self.configs[entry.config].decode("utf-8", "replace")) if entry.config else None
            if made is not None and entry.mode == "whole_infer":  # as the oracle's runs find it (oracle._stage)
                _make_inside(root, made)
            record = scratch / "record.bin"
            env = {"PATH": f"{scratch / 'bin'}{os.pathsep}{SYSTEM_PATH}", "TIPC_RECORD": str(record)}
            ran = sandboxed_run(list(entry.argv), scratch=scratch, cwd=root, env=env, timeout=timeout)
            commands = [_normal(c, (str(root), str(scratch), str(self.base))) for c in records(record, root)]
            logs = sorted(
                p.relative_to(root).as_posix() for p in (root / "test_tipc" / "output").rglob("*") if p.is_file()
            )
            return Run(commands, ran.returncode, logs)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def _make_inside(root: Path, rel: str) -> None:
    """The directory `rel` (a config's value) made under `root`, never outside it."""
    where = (root / rel).resolve()
    if where.is_relative_to(root.resolve()):
        where.mkdir(parents=True, exist_ok=True)


# The names mktemp gives the generated scripts' own directories (prepare.sh's <to>/.tipcgen/tmp.*
# and old.*, benchmark_train.sh's tipc-benchmark.*) differ run by run: one name, so that the same
# tree gives the same report each time.
_MKTEMP = re.compile(r"(/\.tipcgen/(?:tmp|old)|/tipc-benchmark)\.[A-Za-z0-9]{6}(?![A-Za-z0-9])")


def _normal(c: Command, places: tuple) -> Command:
    """A command with the run's own directories (the scratch repo, its scratch, the base of all
    runs) as the same relative names on both sides, and mktemp's names as one."""

    def rel(text: str) -> str:
        for place, name in zip(places, (".", "..", "../..")):
            text = text.replace(place, name)
        return _MKTEMP.sub(r"\1.XXXXXX", text)

    return Command(tuple(rel(a) for a in c.argv), c.cuda_visible_devices, rel(c.cwd))


def _line(c: Command) -> str:
    env = "" if c.cuda_visible_devices is None else f"CUDA_VISIBLE_DEVICES={c.cuda_visible_devices} "
    cwd = "" if c.cwd in (".", "") else f"(in {c.cwd}/) "
    return f"{cwd}{env}{' '.join(c.argv)}"


def command_differences(before: list, after: list) -> list:
    """Every differing command, aligned (an inserted or dropped command does not make every later
    one differ): lines `- before: ...` / `+ after:  ...`."""
    a, b = [_line(c) for c in before], [_line(c) for c in after]
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        pairs = max(i2 - i1, j2 - j1)
        for k in range(pairs):
            if i1 + k < i2:
                out.append(f"- before: {a[i1 + k]}")
            if j1 + k < j2:
                out.append(f"+ after:  {b[j1 + k]}")
    return out


def edits(differences: list) -> Counter:
    """The edits a list of differences makes, as argument shapes only one side has (numbers and the
    log directory's run names folded), so two runs' differences can be held to each other."""
    out: Counter = Counter()
    texts = [(line[0], line.split(": ", 1)[1].strip() if ": " in line else line) for line in differences]
    # the k-th new line against the k-th old one, whichever the diff listed first (a line between
    # them, taken out as a named deviation's, may have put a new line before its old one)
    pending = [text for side, text in texts if side == "-"]
    for side, text in texts:
        if side == "-":
            continue
        old = pending.pop(0) if pending else ""
        x, y = Counter(_fold(old).split()), Counter(_fold(text).split())
        out.update(f"-{t}" for t in (x - y).elements())
        out.update(f"+{t}" for t in (y - x).elements())
    for old in pending:
        out.update(f"-{t}" for t in _fold(old).split())
    return out


def _fold(text: str) -> str:
    text = re.sub(r"\d+", "N", text)
    return re.sub(r"\b(?:npu|xpu|gpu)\b", "DEV", text)


# ---- the whole tree


# The one deviation the whole-tree oracle names itself: a generated script given a config the switch
# typed for another script (or another mode) refuses it or does nothing, where the old script ran
# the config's values as whatever its positions meant to it.
FOREIGN = (
    "refuses-foreign-config",
    "a generated script given a config typed for another script or mode refuses it or runs nothing",
    "the old script read any file by line position and ran its values as its own keys; no suite calls "
    "it so, and a refusal names the config's own script",
)


# The other: a generated script refuses a mode the old script named only in a test that cannot be
# true where it stands (PaddleSeg's `klquant_infer`, tested inside the whole_infer branch), so the
# old script ran another mode's steps under that name. Named only when nothing of the repo runs
# in that mode (untested_modes): otherwise the refusal is a change.
UNTESTED = (
    "refuses-untested-mode",
    "a generated script refuses (exit 2, naming the modes it takes) a mode its old script ran "
    "another mode's steps under",
    "the repo's prepare.sh prepares nothing for that mode and no doc of the repo runs a script in it",
)


def untested_modes(root: Path, tree: dict) -> dict:
    """script -> the modes its code tests for only where they cannot be true (dead_modes), that
    the old tree's prepare.sh (there must be one) tests for neither by equality nor by a `=~`
    substring, and that no doc of the repo runs a script with."""
    if "test_tipc/prepare.sh" not in tree:
        return {}  # nothing says what the repo prepares
    prepare = code_only(tree["test_tipc/prepare.sh"].decode("utf-8", "replace"))
    equal = set(_MODE_TEST.findall(prepare))
    parts = set(_MODE_MATCH.findall(prepare))
    documented = {m for found in _docs_runs(root).values() for m in found}
    out = {}
    for rel, data in tree.items():
        if rel.endswith(".sh") and rel != "test_tipc/prepare.sh":
            dead = dead_modes(code_only(data.decode("utf-8", "replace")))
            out[rel] = frozenset(m for m in dead - equal - documented if not any(p in m for p in parts))
    return out


_MODE_COND = re.compile(r"\[\[?\s*\"?\$\{?MODE\}?\"?\s*(==?|!=|=~)\s*[\"']?([A-Za-z_]\w*)[\"']?\s*\]\]?")
_ONLY_JOINS = re.compile(r"^(?:if|elif)\s*(?:(?:\|\||&&)?\s*@\s*)+;?\s*(?:then)?$")


def dead_modes(code: str) -> set:
    """The modes `code` (comments removed) tests MODE for only inside the then-branch of an `if`
    whose condition is nothing but MODE equal to other modes (read by indentation; anything else,
    an `else` on the way, a condition of other tests: not dead)."""
    lines = code.split("\n")
    dead: dict = {}
    for n, line in enumerate(lines):
        for mode in _MODE_TEST.findall(line):
            dead[mode] = dead.get(mode, True) and _under_other_modes(lines, n, mode)
    return {m for m, d in dead.items() if d}


def _under_other_modes(lines: list, n: int, mode: str) -> bool:
    indent = len(lines[n]) - len(lines[n].lstrip())
    for text in reversed(lines[:n]):
        stripped = text.strip()
        depth = len(text) - len(text.lstrip())
        if not stripped or depth >= indent:
            continue
        indent = depth
        if stripped.startswith(("else", "elif")) or _FUNC_HEAD.match(text):
            return False
        if stripped.startswith("if ") or stripped.startswith("if["):
            tests = _MODE_COND.findall(stripped)
            only_modes = bool(_ONLY_JOINS.match(_MODE_COND.sub("@", stripped)))
            if tests and only_modes and all(op in ("=", "==") and m != mode for op, m in tests):
                return True
    return False


def _kind(mode: Optional[str]) -> str:
    """A mode's kind: each chain's own (cpp_infer, serving_infer...: a chain's config is foreign to
    another chain's mode) or a train runner's (the rest)."""
    from tipcgen.spec.modes import CHAIN_MODES

    chain = mode in CHAIN_MODES or (mode or "").startswith(("serving_infer", "lite_infer"))
    return str(mode) if chain else "train"


@dataclass
class Covered:
    """What the runner and chain oracle found for a generated script on a config and mode:
    (script basename, repo-relative config, mode) -> (verdict, detail)."""

    verdicts: dict = field(default_factory=dict)
    # generated script basename -> the Deviation records of its Plan (plan/runner.py), the names
    # that may explain an entry point's differing lines (explained_by)
    deviations: dict = field(default_factory=dict)
    texts: dict = field(default_factory=dict)  # generated script basename -> its text (what it runs)
    # kept script -> (names, Deviation records) of the generated scripts it runs (`bash test_tipc/X.sh`)
    runs: dict = field(default_factory=dict)
    sections: dict = field(default_factory=dict)  # config -> its first section's name (or None)
    readers: dict = field(default_factory=dict)  # config -> the scripts that run such configs
    _by_config: dict = field(default_factory=dict, repr=False)  # config -> its keys (an index)

    def keep(self, config: str, why: str) -> None:
        """`config` is kept verbatim for the repo's own script: no generated script's."""
        self.verdicts[("<kept>", config, None)] = ("kept", why)

    def get(self, script: str, config: Optional[str], mode: Optional[str]) -> Optional[tuple]:
        """The verdict for the script on the config in the mode; for a script run without a MODE
        (a chain script takes its config alone: dy2static, Paddle-Lite, serving C++), the one
        verdict its config was compared with, in whichever mode the chain's row named."""
        name = os.path.basename(script)
        found = self.verdicts.get((name, config, mode))
        if found is not None or mode is not None:
            return found
        others = {v for k, v in self.verdicts.items() if k[0] == name and k[1] == config}
        return others.pop() if len(others) == 1 else None

    def foreign(self, script: str, config: Optional[str], mode: Optional[str]) -> bool:
        """The config was compared as another script's, never as this one's; or, for a script of
        several chains (prepare.sh), only in modes of another kind (a chain's config in a train
        mode, a train config in a chain's mode)."""
        name = os.path.basename(script)
        readers = self.readers.get(config) if config is not None else None
        if name == "prepare.sh" and readers:
            # by the tables the generated prepare.sh refuses by: a config prepared in a mode of
            # its own script (a C++ config in cpp_infer) is never foreign, kept verbatim or not
            return not serves(mode or "", readers)
        if self._by_config.get(None, [None])[0] != len(self.verdicts):  # (re)index after a change
            self._by_config = {None: [len(self.verdicts)]}
            for key in self.verdicts:
                self._by_config.setdefault(key[1], []).append(key)
        keys = self._by_config.get(config, []) if config is not None else []
        if not keys:
            return False
        mine = [k for k in keys if k[0] == name]
        if not mine:
            return True
        return all(_kind(k[2]) != _kind(mode) for k in mine)


def old_tree(root: Path) -> tuple[dict, dict]:
    """(scripts and helpers of test_tipc/, configs of test_tipc/) of the repo, read through the gate."""
    tipc = root / "test_tipc"
    tree: dict = {}
    configs: dict = {}
    for path in sorted(tipc.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        parts = path.relative_to(tipc).parts
        if parts[0] in ("output", "specs", "__pycache__", ".tipcgen-cache"):
            continue
        data = read_bytes(str(path), MAX_FILE_BYTES, tree=str(root), what="a test_tipc file")
        if parts[0] == "configs":
            if path.suffix == ".txt":
                configs[rel] = data
            continue
        if parts[0] == "docs":
            continue
        tree[rel] = data
    return tree, configs


def compare_entries(
    root: str,
    files: dict,
    covered: Covered,
    jobs: int = 0,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Optional[Callable[[int, int], None]] = None,
    left_out: frozenset = frozenset(),
    environ: Optional[Mapping] = None,
) -> list[EntryRow]:
    """Every entry point of the repo's old test_tipc/, run on the old tree and on the tree with
    `files` (the switch's new and replaced files) in place. `left_out`: runner modes `--mode`
    left out; no entry point runs in them (the report says so), as no row does. `environ`: the
    environment whose run cache (runcache.py) holds runs of the same inputs; None: every run runs."""
    base = Path(root)
    tree, configs = old_tree(base)
    new_tree = dict(tree)
    new_configs = dict(configs)
    for rel, data in files.items():
        if not rel.startswith("test_tipc/"):
            continue
        parts = rel.split("/")
        if parts[1] in ("docs", "specs") or rel.endswith(".manifest"):
            continue
        if parts[1] == "configs":
            if rel.endswith(".txt"):
                new_configs[rel] = data
            continue
        new_tree[rel] = data
    pythons = {config_python(data.decode("utf-8", "replace")) or "" for data in configs.values()}
    pythons |= device_pythons()  # the device wrappers rewrite the config's interpreter (python3.9)
    covered.sections = {rel: first_header(data.decode("utf-8", "replace")) for rel, data in configs.items()}
    covered.readers = {rel: config_readers(data.decode("utf-8", "replace")) for rel, data in configs.items()}
    generated = {
        rel
        for rel, data in files.items()
        if rel.startswith("test_tipc/")
        and tree.get(rel) != data
        and not rel.startswith(("test_tipc/configs/", "test_tipc/docs/", "test_tipc/specs/"))
    }
    with tempfile.TemporaryDirectory(prefix="tipcgen-entries-") as tmp:
        before = Stager(tree, configs, pythons, Path(tmp), environ)
        after = Stager(new_tree, new_configs, pythons, Path(tmp), environ)
        before.dirs = after.dirs = config_dirs(base, configs)
        scripts = [i for i in (_without(i, left_out) for i in scripts_of(base, tree)) if i is not None]
        workers = jobs or min(4, os.cpu_count() or 1)
        with ThreadPoolExecutor(workers) as pool:
            # a kept script that uses no changed file behaves as before by construction: not run
            untouched = {
                i.script for i in scripts if i.script not in generated and not uses(new_tree, i.script, generated)
            }
            entries = _entries(
                [i for i in scripts if i.script not in untouched], configs, generated, before, pool, timeout
            )
            kept = [
                EntryPoint(i.script, None, m) for i in scripts if i.script in untouched for m in (i.modes or (None,))
            ]
            done = [0]

            def both(entry: EntryPoint) -> tuple:
                result = (before.run(entry, timeout), after.run(entry, timeout))
                done[0] += 1
                if progress:
                    progress(done[0], len(entries))
                return result

            runs = list(pool.map(both, entries))
    runcache.prune(environ)
    covered.texts = {
        os.path.basename(rel): new_tree[rel].decode("utf-8", "replace") for rel in generated if rel in new_tree
    }
    untested = untested_modes(base, tree)
    covered.runs = _kept_callers(tree, covered, generated)
    rows = [_verdict(e, b, a, generated, covered, untested) for e, (b, a) in zip(entries, runs)]
    rows += [EntryRow(e, "identical", "uses no file the switch changes: not run") for e in kept]
    # which script runs which: a generated script's own text (a generated device wrapper runs the runner)
    texts = {**tree, **{rel: new_tree[rel] for rel in generated if rel in new_tree}}
    _wrappers_faithful(rows, texts, covered, generated)
    _foreign_through(rows, tree, covered, generated)
    return rows


def device_pythons() -> set:
    """The interpreters a device wrapper's rewrites put in a config (dialects/devices.py), recorded
    as the config's own are: otherwise neither tree's device runs would show a command."""
    from tipcgen.dialects.devices import LOOKUP

    return {row.new for d in LOOKUP.values() for row in d.rewrites if row.old.startswith("python") and not row.line}


def _without(info: ScriptInfo, left_out: frozenset) -> Optional[ScriptInfo]:
    """`info` without the modes left out; None when it took modes and none is left."""
    modes = tuple(m for m in info.modes if m not in left_out)
    if info.modes and not modes:
        return None
    return ScriptInfo(info.script, info.takes_config, info.takes_mode, modes)


def config_dirs(base: Path, configs: dict) -> dict:
    """Each config -> the directories its steps run in, planned as its own scripts run it (in the
    modes that serve them; oracle.step_dirs, as the runner and chain oracle stages them)."""
    from tipcgen.spec.modes import PREPARE_MODES

    out: dict = {}
    for rel, data in configs.items():
        readers = config_readers(data.decode("utf-8", "replace"))
        modes = [m for m in PREPARE_MODES if readers and serves(m, readers)][:2] or ["lite_train_lite_infer"]
        out[rel] = tuple(sorted({d for m in modes for d in step_dirs(base / rel, m, None)}))
    return out


def uses(tree: dict, script: str, changed: set) -> bool:
    """Whether `script` (or a script of the tree it names, transitively) names a file the switch
    changes (by its name: `source test_tipc/common_func.sh`, `bash test_tipc/X.sh`, a helper's .py)."""
    names = {os.path.basename(rel): rel for rel in tree}
    seen, todo = set(), [script]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        if rel in changed and rel != script:
            return True
        text = tree.get(rel, b"").decode("utf-8", "replace")
        for name, other in names.items():
            if other != rel and name in text:
                todo.append(other)
        if rel == script and rel in changed:
            return True
    return False


def _entries(scripts: list, configs: dict, generated: set, before: Stager, pool, timeout: float) -> list:
    """Each script x the configs it reads (probed per shape in its first mode) x its modes: a
    generated script on every config of the shapes it reads; a kept one (its differences can only
    come from the files it uses) on one config of each."""
    shapes: dict = {}
    for rel in sorted(configs):
        shapes.setdefault(config_shape(configs[rel]), []).append(rel)
    probes = []
    for info in scripts:
        if not info.takes_config:
            continue
        first = info.modes[0] if info.modes else None
        for shape, rels in shapes.items():
            # in its first mode, and in the modes that serve the config's own scripts (prepare.sh
            # stops early on a C++ config in a train mode, and prepares it in cpp_infer)
            readers = config_readers(configs[rels[0]].decode("utf-8", "replace"))
            own = [m for m in info.modes[1:] if readers and serves(m, readers)]
            probes += [(info, shape, EntryPoint(info.script, rels[0], m)) for m in (first, *own)]
    results = list(pool.map(lambda p: before.run(p[2], timeout), probes))
    # A script reads a config when it ran commands on it (a positional reader runs something on
    # nearly any config: those of another script are told apart by Covered.foreign, not here).
    reads = {(i.script, shape) for (i, shape, _e), run in zip(probes, results) if run.commands}
    out: list = []
    for info in scripts:
        modes = info.modes or (None,)
        if not info.takes_config:
            out += [EntryPoint(info.script, None, mode) for mode in modes]
            continue
        found = [(shape, rels) for shape, rels in shapes.items() if (info.script, shape) in reads]
        for _shape, rels in found:
            chosen = rels if info.script in generated else rels[:1]
            out += [EntryPoint(info.script, rel, mode) for rel in chosen for mode in modes]
        if not found and shapes:  # it ran nothing on any config: still in the report, as "not run before"
            first = next(iter(shapes.values()))[0]
            out += [EntryPoint(info.script, first, mode) for mode in modes]
    return out


def _verdict(
    entry: EntryPoint, before: Run, after: Run, generated: set, covered: Covered, untested: Optional[dict] = None
) -> EntryRow:
    diffs = command_differences(before.commands, after.commands)
    # Exit statuses are compared for the scripts the switch writes (a failed step fails them now: a
    # named fix) and wherever the commands differ; a kept script running the same commands exits as
    # its own code decides (the serving scripts' `ps | xargs kill` status differs run to run).
    if before.returncode != after.returncode and (entry.script in generated or diffs):
        diffs.append(f"exit status: before {before.returncode}, after {after.returncode}")
    row = EntryRow(entry, "identical", "", diffs, len(before.commands), len(after.commands),
                   before.returncode, after.returncode)  # fmt: skip
    if not before.commands and not after.commands:
        row.verdict = "not run before"
        row.detail = "neither tree runs anything here" + (
            f" (exit {before.returncode} before, {after.returncode} after)" if diffs else ""
        )
        return row
    if not before.commands:
        row.verdict, row.detail = "CHANGED", "the old script ran nothing; the new one does"
        return row
    if not diffs:
        return row
    found = covered.get(entry.script, entry.config, entry.mode) if entry.script in generated else None
    if found and found[0] == "faithful":
        row.verdict, row.detail = "faithful", found[1]
        return row
    names = explained_by(diffs, _deviations_of(entry.script, covered, generated)) if entry.script in generated else None
    if names:
        row.verdict, row.detail = "faithful", ", ".join(names)
        return row
    dropped = _dropped_verdict(entry.script, before, after, generated, covered)
    if dropped:
        row.verdict, row.detail = "faithful", dropped
        return row
    nothing = not after.commands
    if entry.script in generated and nothing and covered.foreign(entry.script, entry.config, entry.mode):
        row.verdict, row.detail = "faithful", FOREIGN[0]
        return row
    refusal = nothing and after.returncode == 2
    if entry.script in generated and refusal and entry.mode in (untested or {}).get(entry.script, ()):
        row.verdict, row.detail = "faithful", UNTESTED[0]
        return row
    own = covered.deviations.get(os.path.basename(entry.script), ())
    named = _named(refused(entry.mode), own) if refusal else None
    if entry.script in generated and named:
        row.verdict, row.detail = "faithful", named
        return row
    row.verdict = "CHANGED"
    row.detail = f"{sum(1 for d in diffs if d[0] in '-+')} differing command line(s)"
    if not after.commands:
        row.detail = "the new tree runs nothing here"
    return row


# Differing lines a deliberate difference of the generated scripts makes, and the oracle's category
# for each (part 1's: oracle._sleeps, the benchmark deviations): a Deviation of the script names it
# in its `categories`, or by its name. A line may start with the directory and CUDA_VISIBLE_DEVICES
# it ran with (`_line`).
_AT = r"(?:\(in .*?/\) )?(?:\w+=\S* )*"
_CATEGORIES = (
    (re.compile(rf"^- before: {_AT}sleep (\S+)$"), "sleep: upstream sleeps {0}"),
    (re.compile(rf"^- before: {_AT}python\S* /scripts/analysis\.py "), "analysis-needs-benchmark-root"),
    # the wrapper alone (its command is recorded on its own): a server started in a process group
    # of the script's own instead
    (re.compile(rf"^- before: {_AT}nohup$"), "nohup: upstream starts it under nohup"),
    # a C++ op built (and the packages listed) in its source folder before a training
    (re.compile(rf"^- before: {_AT}python\S* (setup_\w+\.py) install$"), "op build: upstream runs {0} install"),
    (re.compile(r"^- before: \(in \S*/ext_op/\) (?:\w+=\S* )*pip list$"), "op build: upstream runs pip list"),
    # a file fetched at run time (PaddleDetection's NPU wrapper: its 8-image annotations), by its address
    (re.compile(rf"^- before: {_AT}(?:wget|curl) (?:.* )?(\S+)$"), "download: upstream downloads {0}"),
)
_BEFORE, _AFTER = "- before: ", "+ after:  "
# A command both trees run, at another place in the order: upstream started it in the background
# and never waited, so where the recorder saw it is a race (PaddleDetection's pipeline chain).
MOVED = "order: upstream runs it in the background, unwaited"


def refused(mode: Optional[str]) -> str:
    """The category of a generated script refusing `mode` (exit 2 before anything runs), where the
    old script ran its steps: a Deviation of the script that checks its MODE names it."""
    return MODE_REFUSED.format(mode=mode)


def _eval_cut(after: str) -> Optional[str]:
    """The old script's line for a new one whose argument holds a `;`: upstream's `eval` ran it up
    to there (what followed ran as shell statements: a program it ran is a line of its own, which
    stays unexplained)."""
    return after.split(";", 1)[0].rstrip() if ";" in after else None


def _pairs(lines: list, before_of: Callable[[str], Optional[str]], taken: frozenset = frozenset()) -> set:
    """The indexes (not in `taken`) of the pairs of a new script's line and the old script's line
    `before_of` gives for it (None: none)."""
    befores: dict = {}
    for i, line in enumerate(lines):
        if i not in taken and line.startswith(_BEFORE):
            befores.setdefault(line[len(_BEFORE) :], []).append(i)
    out: set = set()
    for j, line in enumerate(lines):
        head = before_of(line[len(_AFTER) :]) if j not in taken and line.startswith(_AFTER) else None
        if head is not None and befores.get(head):
            out |= {befores[head].pop(0), j}
    return out


def _category(line: str) -> Optional[str]:
    """The category of a differing line (`- before: sleep 5s` -> `sleep: ...`), None when it has none."""
    return next((c.format(*m.groups()) for rx, c in _CATEGORIES if (m := rx.match(line))), None)


def _named(category: str, deviations: tuple) -> Optional[str]:
    return next(
        (d.name for d in deviations if d.name == category or any(re.search(p, category) for p in d.categories)),
        None,
    )


def explained_by(diffs: list, deviations: tuple) -> list:
    """The names of the deviations that explain every differing command line of an entry point (a
    dropped fixed `sleep`, the benchmark analysis step needing BENCHMARK_ROOT, a command upstream's
    eval cut at a `;`, one it ran in the background), or [] when a line is left that none explains
    (or the exit statuses differ)."""
    names: list = []
    lines = [d for d in diffs if d[:1] in "-+" or d.startswith("exit status")]
    cuts = _pairs(lines, _eval_cut)
    moved = _pairs(lines, lambda after: after, frozenset(cuts))
    for n, line in enumerate(lines):
        category = EVAL_CUT if n in cuts else MOVED if n in moved else None
        category = category or _category(line)
        found = category and _named(category, deviations)
        if not found:
            return []
        names.append(found)
    return list(dict.fromkeys(names))


def _dropped_verdict(script: str, before: Run, after: Run, generated: set, covered: Covered) -> Optional[str]:
    """A generated script's run that is the old one without commands its deviations drop; or a kept
    script's, without commands the deviations of the generated scripts it runs drop (the detail)."""
    if script in generated:
        return _dropped_only(before, after, _deviations_of(script, covered, generated))
    if script not in covered.runs:
        return None
    callees, deviations = covered.runs[script]
    found = _dropped_only(before, after, deviations)
    return f"the differences of {', '.join(callees)} it runs ({found})" if found else None


def _dropped_only(before: Run, after: Run, deviations: tuple) -> Optional[str]:
    """The names of `deviations` whose dropped commands (a `- before:` category: a fixed sleep, ...)
    are all the old run had more: the new run is the old one without them, in the same order, with
    the same exit status (where the diff's alignment showed a kept command as moved). None when
    something else differs or nothing is dropped."""
    if not deviations or before.returncode != after.returncode:
        return None
    kept, names = [], []
    for command in before.commands:
        line = _line(command)
        category = _category(_BEFORE + line)
        name = category and _named(category, deviations)
        if name:
            names.append(name)
        else:
            kept.append(line)
    if not names or kept != [_line(c) for c in after.commands]:
        return None
    return ", ".join(dict.fromkeys(names))


def _kept_callers(tree: dict, covered: Covered, generated: set) -> dict:
    """Each kept script that runs generated ones (`bash test_tipc/X.sh`, PaddleClas's dy2static
    script running the train runner where no dy2static config typed its own) -> (their names, their
    Deviation records)."""
    out: dict = {}
    for rel, data in tree.items():
        if rel in generated or not rel.endswith(".sh"):
            continue
        callees = _bash_runs(code_only(data.decode("utf-8", "replace")), generated)
        deviations = tuple(d for g in callees for d in covered.deviations.get(os.path.basename(g), ()))
        if deviations:
            out[rel] = ([os.path.basename(g) for g in callees], deviations)
    return out


def _bash_runs(text: str, scripts) -> list:
    """Those of `scripts` (paths under the repo root, test_tipc/X.sh) that `text` runs with `bash`."""
    return sorted(g for g in scripts if re.search(rf"\bbash\s+(?:\./)?{re.escape(g)}\b", text))


def _deviations_of(script: str, covered: Covered, generated: set) -> tuple:
    """A generated script's deviations, and those of the generated scripts it runs (benchmark_train.sh
    and the dy2static script run the train runner)."""
    name = os.path.basename(script)
    found = list(covered.deviations.get(name, ()))
    for other, more in covered.deviations.items():
        if other != name and f"test_tipc/{other}" in generated and other in covered.texts.get(name, ""):
            found += more
    return tuple(found)


def _wrappers_faithful(rows: list, tree: dict, covered: Covered, generated: set) -> None:
    """A script that runs a generated one (`bash test_tipc/X.sh ...`, the device wrappers, kept or
    generated; `tree`: each script's text): faithful when its differences are exactly the edits
    the generated script's own (faithful) differences make on the same config and mode, besides
    lines a generated wrapper's own deviations name (PaddleDetection's NPU download); or when that
    script refuses the mode as UNTESTED and the wrapper, passing the mode on, now runs nothing and
    exits as it does (what the wrapper ran before was the callee's steps under its own edits of
    the config)."""
    by_key = {(r.entry.script, r.entry.config, r.entry.mode): r for r in rows}
    for row in rows:
        if row.verdict != "CHANGED":
            continue
        text = code_only(tree.get(row.entry.script, b"").decode("utf-8", "replace"))
        own = _deviations_of(row.entry.script, covered, generated) if row.entry.script in generated else ()
        lines = [d for d in row.differences if d[0] in "-+"]
        named = [d for d in lines if own and explained_by([d], own)]
        for callee in sorted({f"test_tipc/{n}" for n in _NESTED.findall(text)}):
            inner = by_key.get((callee, row.entry.config, row.entry.mode))
            if inner is None or inner.verdict != "faithful":
                continue
            mine = edits([d for d in lines if d not in named])
            theirs = edits([d for d in inner.differences if d[0] in "-+"])
            passed_on = inner.detail == UNTESTED[0] and row.after_commands == 0 and row.after_exit == inner.after_exit
            if (mine and not (mine - theirs)) or passed_on:
                row.verdict = "faithful"
                row.detail = f"the differences of {os.path.basename(callee)} it runs ({inner.detail})"
                if named:
                    row.detail += "; " + ", ".join(explained_by(named, own))
                break


def _foreign_through(rows: list, tree: dict, covered: Covered, generated: set) -> None:
    """A kept script given a config of another script's (by its first section, the table the
    generated scripts refuse by) that only passes it on to a generated script which refuses it
    (PaddleSeg's dy2static script on a serving config, running the train runner on its blocks):
    the commands it no longer runs are the callee's refusal, FOREIGN. Only dropped commands, and
    only when neither the kept script nor that callee runs such configs."""
    owners = section_owners()
    for row in rows:
        if row.verdict != "CHANGED" or row.entry.script in generated or row.entry.config is None:
            continue
        section = covered.sections.get(row.entry.config)
        if not section or section not in owners or os.path.basename(row.entry.script) in owners[section]:
            continue
        if not row.differences or any(not d.startswith("- before: ") for d in row.differences):
            continue
        text = code_only(tree.get(row.entry.script, b"").decode("utf-8", "replace"))
        callees = [g for g in _bash_runs(text, generated) if os.path.basename(g) not in owners[section]]
        if callees:
            row.verdict = "faithful"
            row.detail = f"{FOREIGN[0]} (by {os.path.basename(callees[0])}, which it hands the config to)"
