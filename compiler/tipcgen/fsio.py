"""The only module that writes files: atomically, after everything was rendered in memory."""

from __future__ import annotations

import difflib
import os
import tempfile

EXECUTABLE_SUFFIXES = (".sh",)


def write_atomic(path: str, data: bytes) -> bool:
    """Write `data` to `path` via a temp file + rename; return True when the file changed."""
    try:
        with open(path, "rb") as fh:
            if fh.read() == data:
                return False
    except OSError:
        pass
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tipcgen-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o755 if path.endswith(EXECUTABLE_SUFFIXES) else 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return True


def diff_tree(root: str, files: dict[str, bytes]) -> list[str]:
    """Unified diffs for every file under `root` that is missing or differs from `files`."""
    out = []
    for rel, want in files.items():
        path = os.path.join(root, rel)
        try:
            with open(path, "rb") as fh:
                have = fh.read()
        except OSError:
            out.append(f"missing: {path}\n")
            continue
        if have != want:
            a = have.decode("utf-8", "replace").splitlines(keepends=True)
            b = want.decode("utf-8", "replace").splitlines(keepends=True)
            out.append("".join(difflib.unified_diff(a, b, f"{path} (on disk)", f"{path} (from spec)")))
    return out


def stale_files(root: str, files: dict[str, bytes], top: str = "test_tipc") -> list[str]:
    """Files under root/top that the spec no longer generates."""
    base = os.path.join(root, top)
    found = []
    for dirpath, _dirs, names in os.walk(base):
        for name in names:
            rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            if rel not in files:
                found.append(os.path.join(root, rel))
    return sorted(found)
