"""Putting things into the model repo: artifacts installed into place with stamps
(`<to>/.tipcgen/<file>.stamp`, which make a second run extract nothing), the link, remove, pip
and run steps, and the containment check that keeps every write inside the repo."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

from tipcgen.emit.prepare import STATE_DIR
from tipcgen.errors import TipcError
from tipcgen.fsio import write_atomic
from tipcgen.inputs import read_owned
from tipcgen.run.prepare.archive import check_archive, unpack
from tipcgen.run.prepare.http import sha256_file
from tipcgen.run.prepare.options import FetchError, Options

STAMP_BYTES = 1 << 20  # a stamp lists an archive's top-level entries


class UnsafeDestination(FetchError):
    pass


def inside_root(root: Path, rel: str, doing: str) -> Path:
    """ROOT/REL, after refusing it when it resolves outside ROOT: the spec's paths are relative
    without `..`, but a symbolic link on the way (made by an earlier step, or already in the
    repo) could still lead out. Nothing is created here."""
    path = root / rel
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise UnsafeDestination(
            f"prepare: error: refusing to {doing}: {rel} leads to {real}, outside the "
            f"model repo {real_root} (a symbolic link on the way)"
        )
    return path


# -- artifacts, with stamps ----------------------------------------------------------------------


def stamp_ok(to: Path, file: str, source: str, sha: str) -> bool:
    """TO/.tipcgen/FILE.stamp records SOURCE (and SHA, when given) and its entries all exist."""
    stamp = to / STATE_DIR / f"{file}.stamp"
    try:  # a stamp is tipcgen's own file: never a link, a FIFO, or large
        text = read_owned(str(stamp), str(to), STAMP_BYTES)
    except TipcError:
        return False
    if text is None or len(text) > STAMP_BYTES:
        return False
    ok_source = ok_sha = False
    for line in text.decode("utf-8", "surrogateescape").split("\n"):
        key, _, value = line.partition(" ")
        if key == "source":
            ok_source = ok_source or value == source
        elif key == "sha256":
            ok_sha = ok_sha or not sha or value == sha
        elif key == "entry":
            entry = to / value
            if not (entry.exists() or entry.is_symlink()):
                return False
    return ok_source and ok_sha


def _is_real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _replace(new: Path, dest: Path, state: Path) -> None:
    """Move NEW to DEST in one rename; a directory in the way is moved aside first, then deleted."""
    if (dest.exists() or dest.is_symlink()) and (_is_real_dir(dest) or _is_real_dir(new)):
        trash = Path(tempfile.mkdtemp(prefix="old.", dir=state))
        os.rename(dest, trash / "old")
        os.rename(new, dest)
        shutil.rmtree(trash)
        return
    os.replace(new, dest)


def _rename_entries(tmp: Path, rename: list, source: str) -> None:
    """Rename the top-level entries OLD to NEW of what was extracted into TMP."""
    for old, new in rename:
        if not (os.path.lexists(tmp / old)):
            raise FetchError(f"prepare: error: cannot rename {old} to {new}: {source} has no top-level entry {old}")
        if os.path.lexists(tmp / new):
            raise FetchError(f"prepare: error: cannot rename {old} to {new}: {source} has an entry {new} too")
        os.rename(tmp / old, tmp / new)


def _move_into_place(tmp: Path, dest_dir: Path, state: Path, to: str) -> list[str]:
    """Move every top-level entry of TMP into DEST_DIR, one at a time; the entries, sorted."""
    entries = sorted(os.listdir(tmp))
    for entry in entries:
        try:
            _replace(tmp / entry, dest_dir / entry, state)
        except OSError as exc:
            raise FetchError(f"prepare: error: cannot move {to}/{entry} into place: {exc}") from exc
    return entries


def _write_stamp(state: Path, file: str, source: str, sha: str, entries: list[str]) -> None:
    text = f"source {source}\nsha256 {sha}\n" + "".join(f"entry {e}\n" for e in entries)
    stamp = state / f"{file}.stamp"
    write_atomic(str(stamp), text.encode("utf-8", "surrogateescape"))


def _missing(path: Path) -> list[Path]:
    """PATH and those of its parents that do not exist yet, outermost first."""
    out = []
    while not os.path.lexists(path) and path != path.parent:
        out.append(path)
        path = path.parent
    return out[::-1]


def install(
    src: Path, source: str, sha: str, root: Path, to: str, file: str, fmt: str, rename: list, opts: Options
) -> None:
    """Copy SRC to TO/FILE or extract it into TO (renaming top-level entries); write the stamp."""
    dest_dir = inside_root(root, to, f"write into {to}")
    state = inside_root(root, os.path.join(to, STATE_DIR), f"write prepare's state into {to}")
    sha = sha or sha256_file(src)
    check_archive(src, fmt, source, opts)
    made = _missing(state)
    state.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="tmp.", dir=state))
    try:
        unpack(src, tmp, file, fmt, source)
        _rename_entries(tmp, rename, source)
        entries = _move_into_place(tmp, dest_dir, state, to)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        for path in reversed(made):  # what this install created, when still empty
            with contextlib.suppress(OSError):
                path.rmdir()
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _write_stamp(state, file, source, sha, entries)
    if fmt == "file":
        opts.echo(f"prepare: wrote {to}/{file}")
    else:
        opts.echo(f"prepare: extracted {file} into {to}: {' '.join(entries)}")


# -- the other steps -----------------------------------------------------------------------------


def link_step(s: dict, root: Path, opts: Options) -> None:
    """Make the link PATH -> TARGET (replacing a file or link, never a directory)."""
    inside_root(root, os.path.dirname(s["path"]) or ".", f"link {s['path']}")
    path = root / s["path"]
    if path.is_symlink():
        if os.readlink(path) == s["target"]:
            opts.echo(f"prepare: up to date: {s['path']} -> {s['target']}")
            return
    elif path.is_dir():
        raise FetchError(f"prepare: error: cannot link {s['path']} -> {s['target']}: a directory is in the way")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tipcgen-link")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(s["target"], tmp)
    os.replace(tmp, path)
    opts.echo(f"prepare: linked {s['path']} -> {s['target']}")


def remove_step(s: dict, root: Path, opts: Options) -> None:
    """Delete PATHS (files, links or whole directories); a missing path is fine."""
    for p in s["paths"]:
        inside_root(root, os.path.dirname(p) or ".", f"remove {p}")
        path = root / p
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
    opts.echo(f"prepare: removed {' '.join(s['paths'])}")


def pip_step(s: dict, root: Path, opts: Options) -> None:
    """`python -m pip install PACKAGES` (with --no-index when offline), run in ROOT."""
    argv = [opts.python, "-m", "pip", "install", *(["--no-index"] if opts.offline else []), *s["packages"]]
    opts.echo(f"prepare: {opts.python} -m pip install {' '.join(s['packages'])}")
    if _call(argv, root) != 0:
        raise FetchError(f"prepare: error: pip install failed: {' '.join(s['packages'])}")


def command_step(s: dict, root: Path, opts: Options) -> None:
    """`bash -c COMMAND` in ROOT/DIR."""
    inside_root(root, s["dir"], f"run a command in {s['dir']}")
    opts.echo(f"prepare: running in {s['dir']}: {s['command']}")
    # TIPC_REPO_ROOT: the repo root, as the generated prepare.sh's tipc_run sets it
    if _call(["bash", "-c", s["command"]], root / s["dir"], {"TIPC_REPO_ROOT": str(root.resolve())}) != 0:
        raise FetchError(f"prepare: error: command failed: {s['command']}")


def _call(argv: list, cwd: Path, env: Optional[dict] = None) -> int:
    """Exit code of ARGV run in CWD (127 when it cannot be started, as the shell says)."""
    sys.stdout.flush()
    try:
        return subprocess.run(argv, cwd=cwd, env={**os.environ, **env} if env else None).returncode
    except OSError as exc:
        print(f"prepare: cannot run {argv[0]} in {cwd}: {exc}", file=sys.stderr)
        return 127
