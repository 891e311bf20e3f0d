"""The repo's .gitignore against the new tree: a generated file git would not commit (PaddleSeg's
`*.manifest` hides test_tipc/.tipcgen.manifest, PaddleDetection's `*.json` the spec schema) is a
tree `check` cannot find again in a fresh clone.

git's own rules decide, by git itself: the repo's .gitignore files (the root's and those under
test_tipc/) are copied into a scratch git repository next to an empty copy of the new tree, and
`git check-ignore` names what they hide. A scratch copy, whether the repo is a git checkout or not,
so that a contributor's own excludes (core.excludesFile, .git/info/exclude) never change the
answer. The fix is a list of `!/path` lines for test_tipc/.gitignore, which git reads after the
root's (a deeper file wins), verified the same way before it is proposed.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tipcgen.errors import UsageError
from tipcgen.fsio import write_atomic
from tipcgen.inputs import read_bytes

TIPC_GITIGNORE = "test_tipc/.gitignore"
_IGNORE_BYTES = 1 << 20  # a .gitignore is a few KiB
_SPECIAL = set("*?[]\\")


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
    for rel in [".gitignore"] + [
        os.path.relpath(os.path.join(d, ".gitignore"), root).replace(os.sep, "/")
        for d, _dirs, names in os.walk(root / "test_tipc")
        if ".gitignore" in names
    ]:
        path = root / rel
        if path.is_file():
            found[rel] = read_bytes(str(path), _IGNORE_BYTES, tree=str(root), what="a .gitignore")
    return found


def _check_ignore(scratch: str, paths: list[str]) -> set[str]:
    """The `paths` git ignores in `scratch` (its own rules only)."""
    if not paths:
        return set()
    try:
        done = subprocess.run(
            ["git", "-c", "core.excludesFile=", "check-ignore", "--no-index", "--stdin", "-z"],
            cwd=scratch,
            input="\0".join(paths).encode("utf-8") + b"\0",
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"git check-ignore could not run ({exc}); migrate reads .gitignore with git") from None
    if done.returncode not in (0, 1):
        raise UsageError(f"git check-ignore failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    return {p for p in done.stdout.decode("utf-8", "replace").split("\0") if p}


def _git_init(scratch: str) -> None:
    try:
        subprocess.run(["git", "init", "-q", scratch], capture_output=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"git init of a scratch repository failed ({exc}); migrate needs git") from None


def ignored_files(root: str, files: list[str]) -> Ignored:
    """Which of `files` (repo-relative, under test_tipc/) the repo's .gitignore files hide, and the
    lines for test_tipc/.gitignore that show them again."""
    ignores = _ignore_files(Path(root))
    out = Ignored()
    if not ignores:
        return out
    with tempfile.TemporaryDirectory(prefix="tipcgen-gitignore-") as scratch:
        _git_init(scratch)
        for rel, data in ignores.items():
            write_atomic(os.path.join(scratch, *rel.split("/")), data)
        for rel in files:
            path = os.path.join(scratch, *rel.split("/"))
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
        own = os.path.join(scratch, *TIPC_GITIGNORE.split("/"))
        write_atomic(own, with_lines(ignores.get(TIPC_GITIGNORE, b""), out.lines))
        out.stuck = sorted(_check_ignore(scratch, files))
    return out


def with_lines(old: bytes, lines: list[str]) -> bytes:
    """test_tipc/.gitignore's bytes with `lines` appended (after a newline, with a comment)."""
    head = old if not old or old.endswith(b"\n") else old + b"\n"
    added = "# tipcgen: the generated tree, shown again to git (the repo's patterns hide these files)\n"
    return head + (added + "".join(f"{line}\n" for line in lines)).encode("utf-8")
