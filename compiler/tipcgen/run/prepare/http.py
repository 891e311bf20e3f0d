"""Downloads into the cache: httpx (imported only when a download runs), retried with back-off on
connection errors, cut transfers, 408, 429 and 5xx; resumed with a Range request from the `.part`
file in the cache; other 4xx fail at once. The size and sha256 the spec gives are checked before
the file takes its place in the cache; a mismatch deletes the download.

Bounds (options.py): each file has a deadline (every try and back-off included), its declared
size (else TIPC_MAX_SIZE) is enforced while it arrives, and at most MAX_REDIRECTS redirects are
followed, to http(s) only. A download that fails for good leaves no `.part` behind. The cache is
private: the directories prepare creates there are 0700, its files 0600."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

from tipcgen.errors import SpecError, UsageError
from tipcgen.fsio import flock_dir, open_output, private_dir
from tipcgen.inputs import open_read
from tipcgen.run.prepare.options import MAX_REDIRECTS, FetchError, Options
from tipcgen.spec.prepare import url_basename


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open_read(str(path), what="a download") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class _Transient(Exception):
    pass


class _Permanent(Exception):
    pass


class _TooBig(Exception):
    pass


class _Deadline(BaseException):
    """The file's deadline passed (raised by SIGALRM, maybe inside httpx: not an Exception, so
    that no library code catching those can swallow it)."""


def _open_private(path: Path, mode: str) -> Any:
    """PATH opened for writing ("wb" or "ab"), created 0600."""
    return open_output(str(path), append=mode == "ab", mode=0o600)


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """Raise _Deadline after SECONDS, wherever the download waits (httpx bounds each read, not
    a server sending its headers one byte at a time). Only the main thread gets signals: in
    another, the deadline is checked between chunks only."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def ring(signum: int, frame: Any) -> None:
        raise _Deadline

    # The alarm can land while httpcore closes a stream from a finalizer: Python then prints the
    # _Deadline as "Exception ignored ... Traceback" and goes on (the deadline check between
    # chunks, or the next ring, still ends the download). No error of the user's: keep it off stderr.
    hook = sys.unraisablehook

    def quiet(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, _Deadline):
            hook(unraisable)

    old = signal.signal(signal.SIGALRM, ring)
    sys.unraisablehook = quiet
    # Repeating: should one ring be swallowed (above), the next ends a wait that no chunk ends.
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001), 0.5)
    try:
        yield
    finally:
        while True:  # a ring landing here must not skip the restoring below
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
                break
            except _Deadline:
                continue
        signal.signal(signal.SIGALRM, old)
        sys.unraisablehook = hook


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


def _save(r: Any, url: str, part: Path, mode: str, have: int, limit: int, end: float, opts: Options) -> None:
    """Write the body of R to PART as it arrives (a cut keeps every byte that came), never past
    LIMIT bytes in all, nor past the deadline END."""
    length = r.headers.get("Content-Length")
    total = have + int(length) if length and length.isascii() and length.isdigit() else None
    if total is not None and total > limit:
        raise _TooBig(f"it announces {total} bytes")
    bar = _progress(opts, url_basename(url), total, have)
    try:
        if bar:
            bar[0].start()
        with _open_private(part, mode) as f:
            for chunk in r.iter_raw():  # as received: a cut keeps every byte that came
                if have + len(chunk) > limit:
                    raise _TooBig(f"more than {limit} bytes came")
                f.write(chunk)
                have += len(chunk)
                if bar:
                    bar[0].advance(bar[1], len(chunk))
                if time.monotonic() > end:
                    raise _Deadline
    finally:
        if bar:
            bar[0].stop()


def _get_once(client: Any, url: str, part: Path, limit: int, end: float, opts: Options) -> None:
    import httpx

    have = part.stat().st_size if part.exists() else 0
    if have > limit:  # a stale part (of another server's answer): start again
        part.unlink()
        have = 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    wait = max(0.001, min(opts.timeout, end - time.monotonic()))
    with client.stream("GET", url, headers=headers, timeout=httpx.Timeout(wait)) as r:
        code = r.status_code
        if code == 416 and have:
            return  # the part was complete already; the size and sha256 checks tell
        if code in (408, 429) or code >= 500:
            raise _Transient(f"HTTP {code}")
        if code >= 400:
            raise _Permanent(f"HTTP {code}")
        mode, have = _write_mode(r, url, part, have, opts)
        _save(r, url, part, mode, have, limit, end, opts)


def _copy_file(url: str, part: Path, limit: int, root: str) -> None:
    """Copy the file:// URL (`file:///<absolute path>`) to PART: only a regular file that, with
    every link on its path resolved, lies inside the directory ROOT ("": none may be read)."""
    if not root:
        raise FetchError(
            f"prepare: error: refusing {url}: a file:// URL is read only below the directory "
            "TIPC_ALLOW_FILE_URLS names (a local mirror); set it, or use TIPC_MIRROR=file:///DIR"
        )
    real_root = os.path.realpath(root)
    real = os.path.realpath(url[len("file://") :])
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise FetchError(f"prepare: error: refusing {url}: it leads to {real}, outside {real_root}")
    try:
        src = open_read(real, real_root, what="a file:// download")  # a FIFO must not block
    except SpecError:
        raise FetchError(f"prepare: error: refusing {url}: not a regular file") from None
    try:
        with src:
            data_left = limit + 1
            with _open_private(part, "wb") as out:
                while data_left > 0 and (block := src.read(min(1 << 20, data_left))):
                    out.write(block)
                    data_left -= len(block)
    except OSError as exc:
        raise FetchError(f"prepare: error: cannot copy {url}: {exc.strerror or exc}") from exc
    if data_left <= 0:
        raise _TooBig(f"more than {limit} bytes")


def file_root(url: str, src: str, opts: Options) -> str:
    """The directory a file:// SRC may be read from: TIPC_MIRROR's, when SRC is URL's mirror;
    else the one TIPC_ALLOW_FILE_URLS names ("" when unset: no file:// URL of a spec is read)."""
    if src != url and opts.mirror.startswith("file://"):
        return opts.mirror[len("file://") :]
    return opts.file_root


def _fetch_http(url: str, part: Path, limit: int, end: float, opts: Options) -> None:
    """Download URL into PART (resuming it), retrying transient failures with back-off."""
    try:
        import httpx
    except ImportError:  # pragma: no cover - httpx ships with the package's environment
        raise UsageError("tipcgen prepare needs httpx: python3 -m pip install httpx") from None
    from tipcgen import __version__

    delay = opts.backoff
    headers = {"Accept-Encoding": "identity", "User-Agent": f"tipcgen/{__version__}"}
    with httpx.Client(follow_redirects=True, max_redirects=MAX_REDIRECTS, headers=headers) as client:
        for attempt in range(1, opts.retries + 1):
            try:
                _get_once(client, url, part, limit, end, opts)
                return
            except _Permanent as exc:
                raise FetchError(f"prepare: error: download failed ({exc}): {url}") from exc
            except httpx.TooManyRedirects as exc:
                why = f"more than {MAX_REDIRECTS} redirects"
                raise FetchError(f"prepare: error: download failed ({why}): {url}") from exc
            except httpx.UnsupportedProtocol as exc:
                raise FetchError(
                    f"prepare: error: download failed (redirected to a URL that is not http(s)): {url}"
                ) from exc
            except (_Transient, httpx.TransportError, httpx.StreamError) as exc:
                why = str(exc) or type(exc).__name__
                if attempt >= opts.retries:
                    raise FetchError(f"prepare: error: download failed after {attempt} tries ({why}): {url}") from exc
                opts.echo(f"prepare: try {attempt} of {opts.retries} failed ({why}); retrying {url} in {delay:g}s")
                time.sleep(max(0.0, min(delay, end - time.monotonic())))
                delay *= 2


def download(url: str, part: Path, opts: Options, size: str = "", root: str = "") -> None:
    """Download URL into PART (a file:// URL: copy it from below ROOT), within the deadline and
    the size bound of a step declaring SIZE ("": none); a failure leaves no PART behind."""
    limit = opts.size_limit(size)
    seconds = opts.deadline_for(size)
    end = time.monotonic() + seconds
    try:
        with _alarm(seconds):
            if url.startswith("file://"):
                _copy_file(url, part, limit, root)
            else:
                _fetch_http(url, part, limit, end, opts)
    except _Deadline:
        part.unlink(missing_ok=True)
        raise FetchError(
            f"prepare: error: download took longer than {seconds:g} s, its deadline (TIPC_DEADLINE; by default "
            f"600 s + 1 s per 256 KiB of the declared size, 3600 s without one): {url}"
        ) from None
    except _TooBig as exc:
        part.unlink(missing_ok=True)
        bound = f"its declared size, {size} bytes" if size else f"TIPC_MAX_SIZE, {limit} bytes (no size declared)"
        raise FetchError(f"prepare: error: refusing {url}: larger than {bound}: {exc}") from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise


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
    private_dir(opts.cache)
    with flock_dir(str(opts.cache)):  # not held where refused: goes on unlocked
        _cache_fill_locked(url, base, sha, size, cfile, opts)


def _cache_fill_locked(url: str, base: str, sha: str, size: str, cfile: Path, opts: Options) -> None:
    if _cached(url, sha, cfile, opts):
        return
    if opts.offline:
        raise FetchError(f"prepare: error: offline (TIPC_OFFLINE=1) and not in the cache {opts.cache}: {url}")
    private_dir(cfile.parent)
    part = cfile.with_name(cfile.name + ".part")
    src = source_url(url, base, opts.mirror, opts.mirror_layout)
    mirror_missed(url, src, opts)
    opts.echo(f"prepare: downloading {url}" if src == url else f"prepare: downloading {src} (mirror of {url})")

    def reject(message: str) -> None:
        part.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            cfile.parent.rmdir()
        raise FetchError(message)

    try:
        download(src, part, opts, size, file_root(url, src, opts))
    except FetchError:
        with contextlib.suppress(OSError):
            cfile.parent.rmdir()
        raise

    have = part.stat().st_size
    if size and have != int(size):
        reject(f"prepare: error: size mismatch for {src}: expected {size} bytes, got {have}")
    actual = sha256_file(part)
    if sha and actual != sha:
        reject(f"prepare: error: sha256 mismatch for {src}: expected {sha}, actual {actual}")
    if not sha:
        opts.echo(f"prepare: {url} is unverified (no sha256 in the spec); it has sha256 {actual}")
    os.replace(part, cfile)
