"""The repo's .gitignore against the new tree: a generated file git would not commit (PaddleSeg's
`*.manifest` hides test_tipc/.tipcgen.manifest, PaddleDetection's `*.json` the spec schema) is a
tree `check` cannot find again in a fresh clone.

git's own rules decide, by git itself: the repo's .gitignore files (the root's and those under
test_tipc/) are copied into a scratch git repository next to an empty copy of the new tree, and
`git check-ignore` (run in the sandbox, like every program migrate starts) names what they hide.
A scratch copy, whether the repo is a git checkout or not, so that a contributor's own excludes
(core.excludesFile, .git/info/exclude, ~/.gitconfig) never change the answer. The fix is a list
of `!/path` lines for test_tipc/.gitignore, which git reads after the root's (a deeper file
wins), verified the same way before it is proposed.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tipcgen.errors import UsageError
from tipcgen.fsio import write_atomic
from tipcgen.inputs import read_bytes, walk

TIPC_GITIGNORE = "test_tipc/.gitignore"
_IGNORE_BYTES = 1 << 20  # a .gitignore is a few KiB
_SPECIAL = set("*?[]\\")
_OUT_BYTES = 4 << 20  # check-ignore names at most every file of the new tree


@dataclass
class Ignored:
    files: list[str] = field(default_factory=list)  # files of the new tree the repo's .gitignore hides
    lines: list[str] = field(default_factory=list)  # to append to test_tipc/.gitignore: they show them all
    stuck: list[str] = field(default_factory=list)  # still hidden with the lines (should stay empty)


def ignore_line(rel: str, directory: bool = False) -> str:
    """The test_tipc/.gitignore line re-including `rel` (relative to test_tipc/), every character
    gitignore reads as a pattern escaped: the path, never a pattern."""
    out = "".join("\\" + c if c in _SPECIAL else c for c in rel)
    if out.startswith(("#", "!")):
        out = "\\" + out
    if out.endswith(" "):
        out = out[:-1] + "\\ "
    return "!/" + out + ("/" if directory else "")


def _ignore_files(root: Path) -> dict[str, bytes]:
    """The repo's .gitignore files git reads for test_tipc/: the root's and those inside test_tipc/."""
    found = {}
    inside = [
        os.path.relpath(p, root).replace(os.sep, "/")
        for p in walk(str(root / "test_tipc"), (".gitignore",))
        if os.path.basename(p) == ".gitignore"
    ]
    for rel in [".gitignore", *inside]:
        path = root / rel
        if os.path.lexists(path):
            found[rel] = read_bytes(str(path), _IGNORE_BYTES, tree=str(root), what="a .gitignore")
    return found


# git check-ignore reads the paths NUL-separated from a file (its argument, never part of the
# program text): no name is quoted or split, whatever it holds.
_CHECK_IGNORE = 'exec git -c core.excludesFile= check-ignore --no-index --stdin -z < "$1"'


def _git(scratch: str, *argv: str) -> bytes:
    """`argv` (git, or sh running git) in the scratch repository, in the sandbox: git reads only
    the scratch (HOME is there, GIT_CONFIG_NOSYSTEM keeps /etc/gitconfig out). Its stdout."""
    from tipcgen.sandbox import sandboxed_run

    ran = sandboxed_run(
        list(argv),
        scratch=Path(scratch),
        cwd=Path(scratch, "repo"),
        env={"GIT_CONFIG_NOSYSTEM": "1"},
        timeout=60,
        out_limit=_OUT_BYTES,
    )
    if ran.returncode not in (0, 1) or ran.dropped:
        why = "timed out" if ran.timed_out else ran.tail("stderr", 400).strip() or f"exit {ran.returncode}"
        raise UsageError(f"git (reading the repo's .gitignore in a scratch copy) failed: {why}")
    return ran.stdout


def _check_ignore(scratch: str, paths: list[str]) -> set[str]:
    """The `paths` git ignores in the scratch repository (its .gitignore files only)."""
    if not paths:
        return set()
    listing = os.path.join(scratch, "paths")
    write_atomic(listing, "\0".join(paths).encode("utf-8") + b"\0")
    out = _git(scratch, "sh", "-c", _CHECK_IGNORE, "sh", listing)
    return {p for p in out.decode("utf-8", "replace").split("\0") if p}


def ignored_files(root: str, files: list[str]) -> Ignored:
    """Which of `files` (repo-relative, under test_tipc/) the repo's .gitignore files hide, and the
    lines for test_tipc/.gitignore that show them again."""
    ignores = _ignore_files(Path(root))
    out = Ignored()
    if not ignores:
        return out
    with tempfile.TemporaryDirectory(prefix="tipcgen-gitignore-") as scratch:
        repo = os.path.join(scratch, "repo")
        for rel, data in ignores.items():
            write_atomic(os.path.join(repo, *rel.split("/")), data)
        _git(scratch, "git", "init", "-q", ".")
        for rel in files:
            path = os.path.join(repo, *rel.split("/"))
            if not os.path.exists(path):
                write_atomic(path, b"")
        out.files = sorted(_check_ignore(scratch, files))
        if not out.files:
            return out
        # a file inside an ignored folder cannot be re-included alone: the folder is, first
        dirs = sorted({"/".join(f.split("/")[:i]) + "/" for f in out.files for i in range(2, f.count("/") + 1)})
        hidden_dirs = _check_ignore(scratch, dirs)
        out.lines = [ignore_line(d[len("test_tipc/") : -1], directory=True) for d in dirs if d in hidden_dirs]
        out.lines += [ignore_line(f[len("test_tipc/") :]) for f in out.files]
        own = os.path.join(repo, *TIPC_GITIGNORE.split("/"))
        write_atomic(own, with_lines(ignores.get(TIPC_GITIGNORE, b""), out.lines))
        out.stuck = sorted(_check_ignore(scratch, files))
    return out


def with_lines(old: bytes, lines: list[str]) -> bytes:
    """test_tipc/.gitignore's bytes with `lines` appended (after a newline, with a comment)."""
    head = old if not old or old.endswith(b"\n") else old + b"\n"
    added = "# tipcgen: the generated tree, shown again to git (the repo's patterns hide these files)\n"
    return head + (added + "".join(f"{line}\n" for line in lines)).encode("utf-8")
