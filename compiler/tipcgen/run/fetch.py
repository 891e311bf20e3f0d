"""`tipcgen prepare` in Python: what the generated prepare.sh does, step for step.

Both run the flat operations of `prepare.mode_steps` and agree on everything a user can see
on disk: the cache layout (see prepare.py), the files and links put into each destination, and
the stamps (`<to>/.tipcgen/<file>.stamp`) that make a second run fetch and extract nothing.

- downloads: httpx, retried with back-off on connection errors, cut transfers, 408, 429 and 5xx;
  resumed with a Range request from the `.part` file in the cache; other 4xx fail at once;
- verification: size and sha256 when the spec gives them; a mismatch deletes the download;
- archives (tar, tar.gz, tgz, zip) are checked before anything is written: no absolute or `..`
  names, no links leading out of the directory, no members inside links, no devices; then
  extracted into `<to>/.tipcgen/tmp.*` and moved into place one top-level entry at a time;
- offline (TIPC_OFFLINE=1): only the cache; every missing artifact is listed before failing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from tipcgen.emit.prepare import CACHE_ENV, DEFAULT_CACHE, STATE_DIR, mode_steps
from tipcgen.errors import TipcError, UsageError
from tipcgen.spec.modes import MODES
from tipcgen.spec.prepare import url_basename

CHUNK = 1 << 16


class FetchError(TipcError):
    """A download, check or extraction failed: the CLI prints the message and exits 1."""

    exit_code = 1


def _echo(line: str) -> None:
    print(line, flush=True)


def _warn(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _env_number(env: dict, name: str, default: str, cast, minimum, what: str):
    """A numeric setting from the environment, or a UsageError naming it."""
    try:
        value = cast(env.get(name, default))
        if value < minimum:
            raise ValueError
    except ValueError:
        raise UsageError(f"{name} must be {what}, not {env.get(name)!r}") from None
    return value


def _flag(name: str, value: str) -> bool:
    low = value.strip().lower()
    if low in ("1", "true", "yes"):
        return True
    if low in ("", "0", "false", "no"):
        return False
    raise UsageError(f"{name} must be 1 or 0, not {value!r}")


@dataclass
class Options:
    """How prepare fetches: from the TIPC_* environment variables, like prepare.sh."""

    cache: Path
    mirror: str = ""
    offline: bool = False
    retries: int = 3
    backoff: float = 1.0
    timeout: float = 30.0
    progress: bool = False
    python: str = field(default_factory=lambda: sys.executable)
    echo: Callable[[str], None] = _echo
    warn: Callable[[str], None] = _warn

    @classmethod
    def from_env(cls, env: Optional[dict] = None, **over) -> Options:
        env = os.environ if env is None else env
        offline = _flag("TIPC_OFFLINE", env.get("TIPC_OFFLINE", "0"))
        retries = _env_number(env, "TIPC_RETRIES", "3", int, 1, "a positive integer")
        backoff = _env_number(env, "TIPC_BACKOFF", "1", float, 0, "a number of seconds")
        timeout = _env_number(env, "TIPC_TIMEOUT", "30", int, 1, "a positive integer")
        mirror = env.get("TIPC_MIRROR", "").rstrip("/")
        if mirror and not mirror.startswith(("http://", "https://", "file://")):
            raise UsageError(f"TIPC_MIRROR must be an http(s) or file URL, not {mirror!r}")
        cache = env.get(CACHE_ENV) or (
            os.path.join(env["HOME"], ".cache", "tipcgen") if env.get("HOME") else os.path.expanduser(DEFAULT_CACHE)
        )
        opts = cls(
            cache=Path(cache),
            mirror=mirror,
            offline=offline,
            retries=retries,
            backoff=backoff,
            timeout=float(timeout),
            progress=sys.stderr.isatty(),
        )
        for key, value in over.items():
            if value is not None:
                setattr(opts, key, value)
        return opts


# -- hashing -------------------------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# -- downloading ---------------------------------------------------------------------------------


class _Transient(Exception):
    pass


class _Permanent(Exception):
    pass


def source_url(url: str, base: str, mirror: str) -> str:
    """URL, or its copy under the mirror when one is set and URL lies under the step's base."""
    if mirror and base and url.startswith(base + "/"):
        return mirror + url[len(base) :]
    return url


def _progress(opts: Options, label: str, total: Optional[int], done: int):
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


def _get_once(client, url: str, part: Path, opts: Options) -> None:
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
        mode = "wb"
        if have and code == 206:
            start = r.headers.get("Content-Range", "").partition(" ")[2].partition("-")[0]
            if start == str(have):
                mode = "ab"
            else:
                part.unlink()
                raise _Transient(f"the server answered the wrong range ({r.headers.get('Content-Range')})")
        elif have:
            opts.echo(f"prepare: the server cannot resume {url}; starting again")
            have = 0
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


def download(url: str, part: Path, opts: Options) -> None:
    """Download URL into PART (resuming it), retrying transient failures with back-off."""
    if url.startswith("file://"):
        try:
            shutil.copyfile(url[len("file://") :], part)
        except OSError as exc:
            raise FetchError(f"prepare: error: cannot copy {url}: {exc}")
        return
    try:
        import httpx
    except ImportError:  # pragma: no cover - httpx ships with the package's environment
        raise UsageError("tipcgen prepare needs httpx: python3 -m pip install httpx")
    from tipcgen import __version__

    delay = opts.backoff
    headers = {"Accept-Encoding": "identity", "User-Agent": f"tipcgen/{__version__}"}
    with httpx.Client(follow_redirects=True, timeout=httpx.Timeout(opts.timeout), headers=headers) as client:
        for attempt in range(1, opts.retries + 1):
            try:
                _get_once(client, url, part, opts)
                return
            except _Permanent as exc:
                raise FetchError(f"prepare: error: download failed ({exc}): {url}")
            except (_Transient, httpx.TransportError, httpx.StreamError) as exc:
                why = str(exc) or type(exc).__name__
                if attempt >= opts.retries:
                    raise FetchError(f"prepare: error: download failed after {attempt} tries ({why}): {url}")
                opts.echo(f"prepare: try {attempt} of {opts.retries} failed ({why}); retrying {url} in {delay:g}s")
                time.sleep(delay)
                delay *= 2


def cache_fill(url: str, base: str, sha: str, size: str, cfile: Path, opts: Options) -> None:
    """Make CFILE, URL's entry in the cache, hold its bytes, checked against SIZE and SHA."""
    if cfile.is_file():
        if not sha:
            opts.echo(f"prepare: cached {url}")
            return
        actual = sha256_file(cfile)
        if actual == sha:
            opts.echo(f"prepare: cached {url}")
            return
        opts.warn(f"prepare: the cached copy of {url} is corrupt (sha256 {actual}); fetching it again")
        cfile.unlink()
    if opts.offline:
        raise FetchError(f"prepare: error: offline (TIPC_OFFLINE=1) and not in the cache {opts.cache}: {url}")
    cfile.parent.mkdir(parents=True, exist_ok=True)
    part = cfile.with_name(cfile.name + ".part")
    src = source_url(url, base, opts.mirror)
    opts.echo(f"prepare: downloading {url}" if src == url else f"prepare: downloading {src} (mirror of {url})")
    download(src, part, opts)

    def reject(message: str) -> None:
        part.unlink(missing_ok=True)
        try:
            cfile.parent.rmdir()
        except OSError:
            pass
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


# -- archives ------------------------------------------------------------------------------------


class UnsafeArchive(FetchError):
    pass


def _clean(name: str) -> Optional[str]:
    """NAME without empty and `.` components; None when it is absolute or has a `..` component."""
    if name.startswith("/"):
        return None
    parts = []
    for part in name.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            return None
        parts.append(part)
    return "/".join(parts)


def _inside_link(clean: str, links: set) -> bool:
    parts = clean.split("/")[:-1]
    return any("/".join(parts[: i + 1]) in links for i in range(len(parts)))


def link_inside(member: str, target: str, links: set) -> bool:
    """The link MEMBER -> TARGET stays inside the extraction directory, with no `..` after a
    component that is itself a link of the archive."""
    if not target or target.startswith("/"):
        return False
    stack: list[str] = []
    for part in member.split("/")[:-1] + target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not stack:
                return False
            if any("/".join(stack[: i + 1]) in links for i in range(len(stack))):
                return False
            stack.pop()
        else:
            stack.append(part)
    return True


def _check_names(archive: str, names: list[str], links: set) -> None:
    seen: set = set()
    for name in names:
        clean = _clean(name)
        if clean is None:
            raise UnsafeArchive(f"prepare: error: refusing {archive}: member {name!r} is absolute or contains '..'")
        if not clean:
            continue
        if clean.split("/")[0] == STATE_DIR:
            raise UnsafeArchive(
                f"prepare: error: refusing {archive}: member {name!r} would overwrite prepare's .tipcgen state"
            )
        if _inside_link(clean, links):
            raise UnsafeArchive(
                f"prepare: error: refusing {archive}: member {name!r} lies inside a link of the archive"
            )
        if clean in seen and clean in links:
            raise UnsafeArchive(f"prepare: error: refusing {archive}: {name!r} appears twice and once as a link")
        seen.add(clean)


def _check_links(archive: str, links: dict) -> None:
    for clean, target in links.items():
        if not link_inside(clean, target, set(links)):
            raise UnsafeArchive(f"prepare: error: refusing {archive}: link {clean!r} -> {target!r} points outside")


def check_tar(path: Path, label: Optional[str] = None) -> list:
    """The members of a tarball, after refusing it when any would land outside its directory."""
    label = label or str(path)
    try:
        with tarfile.open(path, "r:*") as tf:
            members = tf.getmembers()
    except (tarfile.TarError, OSError) as exc:
        raise FetchError(f"prepare: error: cannot read {label} (not a tar archive?): {exc}")
    links: dict = {}
    for m in members:
        if "\n" in m.name:
            raise UnsafeArchive(f"prepare: error: refusing {label}: member {m.name!r} has a newline in its name")
        clean = _clean(m.name)
        if clean is None:
            raise UnsafeArchive(f"prepare: error: refusing {label}: member {m.name!r} is absolute or contains '..'")
        if m.issym():
            if not clean:
                raise UnsafeArchive(
                    f"prepare: error: refusing {label}: member {m.name!r} is a link to the extraction directory itself"
                )
            links[clean] = m.linkname
        elif m.islnk():
            if _clean(m.linkname) is None:
                raise UnsafeArchive(
                    f"prepare: error: refusing {label}: hard link {m.name!r} points outside ({m.linkname!r})"
                )
        elif not (m.isreg() or m.isdir()):
            raise UnsafeArchive(
                f"prepare: error: refusing {label}: member {m.name!r} is a device, fifo or other special file"
            )
    _check_names(label, [m.name for m in members], set(links))
    _check_links(label, links)
    return members


def _zip_is_link(info: zipfile.ZipInfo) -> bool:
    return info.create_system == 3 and stat.S_ISLNK(info.external_attr >> 16)


def check_zip(path: Path, label: Optional[str] = None) -> list:
    """The entries of a zip archive, after the same checks as check_tar."""
    label = label or str(path)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise FetchError(f"prepare: error: cannot read {label} (not a zip archive?): {exc}")
    with zf:
        infos = zf.infolist()
        links: dict = {}
        for info in infos:
            if "\\" in info.filename or "\n" in info.filename:
                raise UnsafeArchive(
                    f"prepare: error: refusing {label}: member {info.filename!r} has a backslash or newline in its name"
                )
            if _zip_is_link(info):
                clean = _clean(info.filename)
                if not clean:
                    raise UnsafeArchive(
                        f"prepare: error: refusing {label}: link {info.filename!r} is absolute or contains '..'"
                    )
                links[clean] = zf.read(info).decode("utf-8", "surrogateescape")
        _check_names(label, [i.filename for i in infos], set(links))
        _check_links(label, links)
    return infos


def _check_tree(root: Path, label: str) -> None:
    """After extraction, every link under ROOT still resolves inside ROOT."""
    real_root = os.path.realpath(root)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                real = os.path.realpath(path)
                if real != real_root and not real.startswith(real_root + os.sep):
                    raise UnsafeArchive(
                        f"prepare: error: refusing {label}: link {os.path.relpath(path, root)} "
                        f"points outside ({os.readlink(path)})"
                    )


def _extract_tar(path: Path, dest: Path) -> None:
    with tarfile.open(path, "r:*") as tf:
        if hasattr(tarfile, "fully_trusted_filter"):  # checked by check_tar; extract like GNU tar
            tf.extractall(dest, filter="fully_trusted")
        else:  # pragma: no cover - Python < 3.12 without the backported filters
            tf.extractall(dest)


def _extract_zip(path: Path, dest: Path) -> None:
    """Like `unzip -o`: links made on Unix become links, Unix permissions are kept."""
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            clean = _clean(info.filename)
            if not clean:
                continue
            target = dest / clean
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.is_file():
                target.unlink()
            if _zip_is_link(info):
                os.symlink(zf.read(info).decode("utf-8", "surrogateescape"), target)
                continue
            with zf.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out, CHUNK)
            mode = (info.external_attr >> 16) & 0o777
            if info.create_system == 3 and mode:
                os.chmod(target, mode)
            mtime = time.mktime((*info.date_time, 0, 0, -1))
            os.utime(target, (mtime, mtime))


# -- destinations --------------------------------------------------------------------------------


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


def stamp_ok(to: Path, file: str, source: str, sha: str) -> bool:
    """TO/.tipcgen/FILE.stamp records SOURCE (and SHA, when given) and its entries all exist."""
    stamp = to / STATE_DIR / f"{file}.stamp"
    if not stamp.is_file():
        return False
    ok_source = ok_sha = False
    for line in stamp.read_text("utf-8", "surrogateescape").split("\n"):
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


def install(
    src: Path, source: str, sha: str, root: Path, to: str, file: str, fmt: str, rename: list, opts: Options
) -> None:
    """Copy SRC to TO/FILE or extract it into TO (renaming top-level entries); write the stamp."""
    dest_dir = inside_root(root, to, f"write into {to}")
    state = inside_root(root, os.path.join(to, STATE_DIR), f"write prepare's state into {to}")
    sha = sha or sha256_file(src)
    if fmt == "tar":
        check_tar(src, source)
    elif fmt == "zip":
        check_zip(src, source)
    state.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="tmp.", dir=state))
    try:
        try:
            if fmt == "file":
                shutil.copyfile(src, tmp / file)
                shutil.copymode(src, tmp / file)
            elif fmt == "tar":
                _extract_tar(src, tmp)
            else:
                _extract_zip(src, tmp)
        except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
            raise FetchError(f"prepare: error: cannot extract {src}: {exc}")
        if fmt != "file":
            _check_tree(tmp, source)
        for old, new in rename:
            if not (os.path.lexists(tmp / old)):
                raise FetchError(f"prepare: error: cannot rename {old} to {new}: {source} has no top-level entry {old}")
            if os.path.lexists(tmp / new):
                raise FetchError(f"prepare: error: cannot rename {old} to {new}: {source} has an entry {new} too")
            os.rename(tmp / old, tmp / new)
        entries = sorted(os.listdir(tmp))
        for entry in entries:
            try:
                _replace(tmp / entry, dest_dir / entry, state)
            except OSError as exc:
                raise FetchError(f"prepare: error: cannot move {to}/{entry} into place: {exc}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = f"source {source}\nsha256 {sha}\n" + "".join(f"entry {e}\n" for e in entries)
    stamp = state / f"{file}.stamp"
    part = state / f"{file}.stamp.tmp"
    part.write_text(text, "utf-8", "surrogateescape")
    os.replace(part, stamp)
    if fmt == "file":
        opts.echo(f"prepare: wrote {to}/{file}")
    else:
        opts.echo(f"prepare: extracted {file} into {to}: {' '.join(entries)}")


# -- steps ---------------------------------------------------------------------------------------


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


def run_step(s: dict, root: Path, opts: Options) -> None:
    kind = s["kind"]
    if kind == "download":
        if stamp_ok(root / s["to"], s["file"], s["url"], s["sha256"]):
            opts.echo(f"prepare: up to date: {s['url']} in {s['to']}")
            return
        cfile = opts.cache / s["cache"]
        cache_fill(s["url"], s["base"], s["sha256"], s["size"], cfile, opts)
        install(cfile, s["url"], s["sha256"], root, s["to"], s["file"], s["format"], s["rename"], opts)
    elif kind == "extract":
        archive = root / s["archive"]
        if not archive.is_file():
            raise FetchError(f"prepare: error: archive not found: {s['archive']}")
        sha = sha256_file(archive)
        if stamp_ok(root / s["to"], s["file"], s["archive"], sha):
            opts.echo(f"prepare: up to date: {s['archive']} in {s['to']}")
            return
        install(archive, s["archive"], sha, root, s["to"], s["file"], s["format"], [], opts)
    elif kind == "link":
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
    elif kind == "remove":
        for p in s["paths"]:
            inside_root(root, os.path.dirname(p) or ".", f"remove {p}")
            path = root / p
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.is_dir():
                shutil.rmtree(path)
        opts.echo(f"prepare: removed {' '.join(s['paths'])}")
    elif kind == "pip":
        argv = [opts.python, "-m", "pip", "install", *(["--no-index"] if opts.offline else []), *s["packages"]]
        opts.echo(f"prepare: {opts.python} -m pip install {' '.join(s['packages'])}")
        if _call(argv, root) != 0:
            raise FetchError(f"prepare: error: pip install failed: {' '.join(s['packages'])}")
    elif kind == "run":
        inside_root(root, s["dir"], f"run a command in {s['dir']}")
        opts.echo(f"prepare: running in {s['dir']}: {s['command']}")
        if _call(["bash", "-c", s["command"]], root / s["dir"]) != 0:
            raise FetchError(f"prepare: error: command failed: {s['command']}")


def _call(argv: list, cwd: Path) -> int:
    """Exit code of ARGV run in CWD (127 when it cannot be started, as the shell says)."""
    sys.stdout.flush()
    try:
        return subprocess.run(argv, cwd=cwd).returncode
    except OSError as exc:
        print(f"prepare: cannot run {argv[0]} in {cwd}: {exc}", file=sys.stderr)
        return 127


def run_prepare(prepare: dict, mode: str, opts: Options, root: Path = Path("."), label: str = "") -> None:
    """Run a spec's prepare steps for MODE from the model repo ROOT (raises FetchError)."""
    if mode not in MODES:
        raise UsageError(f"prepare: unknown MODE {mode!r}; modes are {', '.join(MODES)}")
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
            raise FetchError(f"prepare: error: {exc}")
    opts.echo(f"prepare: done ({label}, {mode})" if label else f"prepare: done ({mode})")


# -- tipcgen hash ----------------------------------------------------------------------------------


def hash_target(target: str, opts: Options) -> tuple[str, int]:
    """(sha256, size) of a file or URL; a downloaded URL is kept in the cache under its sha256."""
    if "://" not in target:
        path = Path(target)
        if not path.is_file():
            raise UsageError(f"{target}: no such file (give a file or an http(s) URL)")
        return sha256_file(path), path.stat().st_size
    if not target.startswith(("http://", "https://", "file://")):
        raise UsageError(f"{target}: only http(s) and file URLs can be hashed")
    if opts.offline:
        raise FetchError(f"prepare: error: offline (TIPC_OFFLINE=1): cannot download {target}")
    tmpdir = opts.cache / "tmp"
    tmpdir.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="hash.", suffix=".part", dir=tmpdir)
    os.close(fd)
    part = Path(name)
    part.unlink()
    try:
        download(target, part, opts)
        sha, size = sha256_file(part), part.stat().st_size
        final = opts.cache / "sha256" / sha / url_basename(target)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(part, final)
    finally:
        part.unlink(missing_ok=True)
    return sha, size
