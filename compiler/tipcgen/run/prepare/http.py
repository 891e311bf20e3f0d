"""Downloads into the cache: httpx (imported only when a download runs), retried with back-off on
connection errors, cut transfers, 408, 429 and 5xx; resumed with a Range request from the `.part`
file in the cache; other 4xx fail at once. The size and sha256 the spec gives are checked before
the file takes its place in the cache; a mismatch deletes the download."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import time
from pathlib import Path
from typing import Any, Optional

from tipcgen.errors import UsageError
from tipcgen.run.prepare.options import FetchError, Options
from tipcgen.spec.prepare import url_basename


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class _Transient(Exception):
    pass


class _Permanent(Exception):
    pass


def source_url(url: str, base: str, mirror: str, layout: str = "base") -> str:
    """Where to fetch URL from. With TIPC_MIRROR set: layout "base" swaps the step's declared
    mirror base for it (URL unchanged when the step declares none, or URL is not under it);
    layout "host" mirrors every URL as MIRROR/<host>/<path> (a mirror holding a copy per host)."""
    if not mirror:
        return url
    if layout == "host":
        scheme_rest = url.split("://", 1)
        return f"{mirror}/{scheme_rest[1]}" if len(scheme_rest) == 2 else url
    if base and url.startswith(base + "/"):
        return mirror + url[len(base) :]
    return url


def mirror_missed(url: str, src: str, opts: Options) -> None:
    """Say so when TIPC_MIRROR is set but could not redirect URL (it is fetched from its origin)."""
    if opts.mirror and src == url:
        opts.warn(
            f"prepare: warning: TIPC_MIRROR is set but {url} declares no `mirror` base it lies under, "
            "so it is fetched from its origin; declare `mirror:` on the step, or set "
            "TIPC_MIRROR_LAYOUT=host to fetch every URL as $TIPC_MIRROR/<host>/<path>"
        )


def _progress(opts: Options, label: str, total: Optional[int], done: int) -> Optional[tuple[Any, Any]]:
    if not opts.progress:
        return None
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = progress.add_task(label, total=total, completed=done)
    return progress, task


def _write_mode(r: Any, url: str, part: Path, have: int, opts: Options) -> tuple[str, int]:
    """("ab", HAVE) when the answer continues PART where it ends, else ("wb", 0): a full answer
    to a Range request starts again; a range starting elsewhere deletes PART and retries."""
    if have and r.status_code == 206:
        start = r.headers.get("Content-Range", "").partition(" ")[2].partition("-")[0]
        if start == str(have):
            return "ab", have
        part.unlink()
        raise _Transient(f"the server answered the wrong range ({r.headers.get('Content-Range')})")
    if have:
        opts.echo(f"prepare: the server cannot resume {url}; starting again")
    return "wb", 0


def _save(r: Any, url: str, part: Path, mode: str, have: int, opts: Options) -> None:
    """Write the body of R to PART as it arrives (a cut keeps every byte that came)."""
    length = r.headers.get("Content-Length")
    total = have + int(length) if length and length.isdigit() else None
    bar = _progress(opts, url_basename(url), total, have)
    try:
        if bar:
            bar[0].start()
        with open(part, mode) as f:
            for chunk in r.iter_raw():  # as received: a cut keeps every byte that came
                f.write(chunk)
                if bar:
                    bar[0].advance(bar[1], len(chunk))
    finally:
        if bar:
            bar[0].stop()


def _get_once(client: Any, url: str, part: Path, opts: Options) -> None:
    have = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    with client.stream("GET", url, headers=headers) as r:
        code = r.status_code
        if code == 416 and have:
            return  # the part was complete already; the size and sha256 checks tell
        if code in (408, 429) or code >= 500:
            raise _Transient(f"HTTP {code}")
        if code >= 400:
            raise _Permanent(f"HTTP {code}")
        mode, have = _write_mode(r, url, part, have, opts)
        _save(r, url, part, mode, have, opts)


def download(url: str, part: Path, opts: Options) -> None:
    """Download URL into PART (resuming it), retrying transient failures with back-off."""
    if url.startswith("file://"):
        try:
            shutil.copyfile(url[len("file://") :], part)
        except OSError as exc:
            raise FetchError(f"prepare: error: cannot copy {url}: {exc}") from exc
        return
    try:
        import httpx
    except ImportError:  # pragma: no cover - httpx ships with the package's environment
        raise UsageError("tipcgen prepare needs httpx: python3 -m pip install httpx") from None
    from tipcgen import __version__

    delay = opts.backoff
    headers = {"Accept-Encoding": "identity", "User-Agent": f"tipcgen/{__version__}"}
    with httpx.Client(follow_redirects=True, timeout=httpx.Timeout(opts.timeout), headers=headers) as client:
        for attempt in range(1, opts.retries + 1):
            try:
                _get_once(client, url, part, opts)
                return
            except _Permanent as exc:
                raise FetchError(f"prepare: error: download failed ({exc}): {url}") from exc
            except (_Transient, httpx.TransportError, httpx.StreamError) as exc:
                why = str(exc) or type(exc).__name__
                if attempt >= opts.retries:
                    raise FetchError(f"prepare: error: download failed after {attempt} tries ({why}): {url}") from exc
                opts.echo(f"prepare: try {attempt} of {opts.retries} failed ({why}); retrying {url} in {delay:g}s")
                time.sleep(delay)
                delay *= 2


def _cached(url: str, sha: str, cfile: Path, opts: Options) -> bool:
    """CFILE holds URL already (and matches SHA when given); a corrupt copy is deleted."""
    if not cfile.is_file():
        return False
    if not sha:
        opts.echo(f"prepare: cached {url}")
        return True
    actual = sha256_file(cfile)
    if actual == sha:
        opts.echo(f"prepare: cached {url}")
        return True
    opts.warn(f"prepare: the cached copy of {url} is corrupt (sha256 {actual}); fetching it again")
    cfile.unlink()
    return False


def cache_fill(url: str, base: str, sha: str, size: str, cfile: Path, opts: Options) -> None:
    """Make CFILE, URL's entry in the cache, hold its bytes, checked against SIZE and SHA.
    Prepares sharing one cache (nodes whose home is on NFS) take turns on an entry (flock, as
    prepare.sh: on the cache directory), so the second finds the first's download instead of
    racing it on the .part; where the lock is refused (some NFS mounts), it goes on unlocked."""
    opts.cache.mkdir(parents=True, exist_ok=True)
    fd = os.open(opts.cache, os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        _cache_fill_locked(url, base, sha, size, cfile, opts)
    finally:
        os.close(fd)  # releases the lock


def _cache_fill_locked(url: str, base: str, sha: str, size: str, cfile: Path, opts: Options) -> None:
    if _cached(url, sha, cfile, opts):
        return
    if opts.offline:
        raise FetchError(f"prepare: error: offline (TIPC_OFFLINE=1) and not in the cache {opts.cache}: {url}")
    cfile.parent.mkdir(parents=True, exist_ok=True)
    part = cfile.with_name(cfile.name + ".part")
    src = source_url(url, base, opts.mirror, opts.mirror_layout)
    mirror_missed(url, src, opts)
    opts.echo(f"prepare: downloading {url}" if src == url else f"prepare: downloading {src} (mirror of {url})")
    download(src, part, opts)

    def reject(message: str) -> None:
        part.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            cfile.parent.rmdir()
        raise FetchError(message)

    have = part.stat().st_size
    if size and have != int(size):
        reject(f"prepare: error: size mismatch for {src}: expected {size} bytes, got {have}")
    actual = sha256_file(part)
    if sha and actual != sha:
        reject(f"prepare: error: sha256 mismatch for {src}: expected {sha}, actual {actual}")
    if not sha:
        opts.echo(f"prepare: {url} is unverified (no sha256 in the spec); it has sha256 {actual}")
    os.replace(part, cfile)
