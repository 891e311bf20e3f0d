"""`tipcgen prepare` in Python: what the generated prepare.sh does, step for step.

Both run the flat operations of `emit.prepare.mode_steps` and agree on everything a user can see
on disk: the cache layout (see emit/prepare.py), the files and links put into each destination,
and the stamps (`<to>/.tipcgen/<file>.stamp`) that make a second run fetch and extract nothing.

One module per job:

- options.py: `Options` from the TIPC_* environment, and `FetchError`;
- http.py: downloads (httpx, imported only when one runs) with retry, back-off and resume, and
  the cache fill checked against the spec's size and sha256;
- archive.py: archive safety checks before extracting, extraction, the link check after it;
- install.py: artifacts moved into place with stamps, the link/remove/pip/run steps, and the
  containment check that keeps every write inside the model repo;
- here: the orchestration (`run_prepare`, `run_step`) and `tipcgen hash` (`hash_target`).

Offline (TIPC_OFFLINE=1) only the cache is used; every missing artifact is listed before failing.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Callable

from tipcgen.emit.prepare import mode_steps
from tipcgen.errors import UsageError
from tipcgen.run.prepare.archive import UnsafeArchive, check_tar, check_zip, link_inside
from tipcgen.run.prepare.http import (
    cache_fill,
    download,
    file_root,
    mirror_missed,
    private_dir,
    sha256_file,
    source_url,
)
from tipcgen.run.prepare.install import (
    UnsafeDestination,
    command_step,
    inside_root,
    install,
    link_step,
    pip_step,
    remove_step,
    stamp_ok,
)
from tipcgen.run.prepare.options import FetchError, Options
from tipcgen.spec.modes import prepare_modes
from tipcgen.spec.prepare import url_basename

__all__ = [
    "FetchError",
    "Options",
    "UnsafeArchive",
    "UnsafeDestination",
    "cache_fill",
    "check_tar",
    "check_zip",
    "download",
    "hash_target",
    "inside_root",
    "install",
    "link_inside",
    "missing_artifacts",
    "run_prepare",
    "run_step",
    "sha256_file",
    "source_url",
    "stamp_ok",
]


def missing_artifacts(steps: list[dict], root: Path, opts: Options) -> list[str]:
    """URLs of the mode's artifacts that are neither in place (stamp) nor in the cache."""
    missing: list[str] = []
    for s in steps:
        if s["kind"] != "download":
            continue
        if stamp_ok(root / s["to"], s["file"], s["url"], s["sha256"]):
            continue
        if not (opts.cache / s["cache"]).is_file() and s["url"] not in missing:
            missing.append(s["url"])
    return missing


def download_step(s: dict, root: Path, opts: Options) -> None:
    """Fetch the artifact into the cache and install it into TO, unless its stamp says it is there."""
    if stamp_ok(root / s["to"], s["file"], s["url"], s["sha256"]):
        opts.echo(f"prepare: up to date: {s['url']} in {s['to']}")
        return
    cfile = opts.cache / s["cache"]
    cache_fill(s["url"], s["base"], s["sha256"], s["size"], cfile, opts)
    install(cfile, s["url"], s["sha256"], root, s["to"], s["file"], s["format"], s["rename"], opts)


def extract_step(s: dict, root: Path, opts: Options) -> None:
    """Extract an archive of the model repo into TO, unless its stamp says it is there."""
    archive = root / s["archive"]
    if not archive.is_file():
        raise FetchError(f"prepare: error: archive not found: {s['archive']}")
    sha = sha256_file(archive)
    if stamp_ok(root / s["to"], s["file"], s["archive"], sha):
        opts.echo(f"prepare: up to date: {s['archive']} in {s['to']}")
        return
    install(archive, s["archive"], sha, root, s["to"], s["file"], s["format"], [], opts)


STEPS: dict[str, Callable[[dict, Path, Options], None]] = {
    "download": download_step,
    "extract": extract_step,
    "link": link_step,
    "remove": remove_step,
    "pip": pip_step,
    "run": command_step,
}


def run_step(s: dict, root: Path, opts: Options) -> None:
    """Run one flat operation of `mode_steps` (an unknown kind does nothing)."""
    step = STEPS.get(s["kind"])
    if step is not None:
        step(s, root, opts)


def run_prepare(prepare: dict, mode: str, opts: Options, root: Path = Path("."), label: str = "") -> None:
    """Run a spec's prepare steps for MODE from the model repo ROOT (raises FetchError)."""
    modes = prepare_modes(set(prepare))  # as the generated prepare.sh: the train modes and those prepared for
    if mode not in modes:
        raise UsageError(f"prepare: unknown MODE {mode!r}; modes are {', '.join(modes)}")
    steps = mode_steps(prepare.get(mode, []))
    if opts.offline:
        missing = missing_artifacts(steps, root, opts)
        if missing:
            raise FetchError(
                f"prepare: error: offline (TIPC_OFFLINE=1) and {len(missing)} artifact(s) are not "
                f"in the cache {opts.cache}:\n" + "\n".join(f"prepare:   missing {u}" for u in missing)
            )
    if not steps:
        opts.echo(f"prepare: nothing to fetch for {mode}")
    for s in steps:
        try:
            run_step(s, root, opts)
        except OSError as exc:  # a file system error the steps did not expect: say which, exit 1
            raise FetchError(f"prepare: error: {exc}") from exc
    opts.echo(f"prepare: done ({label}, {mode})" if label else f"prepare: done ({mode})")


# -- tipcgen hash ----------------------------------------------------------------------------------


def _hash_file(target: str) -> tuple[str, int]:
    """(sha256, size) of the local file TARGET: a regular file (stat, not open: a FIFO would block)."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        raise UsageError(f"{target}: error: no such file (give a file or an http(s) URL)") from None
    except OSError as exc:
        raise UsageError(f"{target}: error: cannot read it: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO, device or socket"
        raise UsageError(f"{target}: error: not a regular file ({what}); give a file or an http(s) URL")
    return sha256_file(Path(target)), st.st_size


def hash_target(target: str, opts: Options) -> tuple[str, int]:
    """(sha256, size) of a file or URL; a downloaded URL is kept in the cache under its sha256."""
    if "://" not in target:
        return _hash_file(target)
    if not target.startswith(("http://", "https://", "file:///")):
        raise UsageError(f"{target}: error: only http(s) and file:/// URLs can be hashed")
    if opts.offline:
        raise FetchError(f"prepare: error: offline (TIPC_OFFLINE=1): cannot download {target}")
    tmpdir = opts.cache / "tmp"
    private_dir(opts.cache)
    private_dir(tmpdir)
    fd, name = tempfile.mkstemp(prefix="hash.", suffix=".part", dir=tmpdir)
    os.close(fd)
    part = Path(name)
    part.unlink()
    src = source_url(target, "", opts.mirror, opts.mirror_layout)
    mirror_missed(target, src, opts)
    # The file:// URL you type is yours to read; a mirrored one stays inside TIPC_MIRROR.
    root = file_root(target, src, opts) if src != target else "/"
    try:
        download(src, part, opts, "", root)
        sha, size = sha256_file(part), part.stat().st_size
        final = opts.cache / "sha256" / sha / url_basename(target)
        private_dir(final.parent)
        os.replace(part, final)
    finally:
        part.unlink(missing_ok=True)
    return sha, size
