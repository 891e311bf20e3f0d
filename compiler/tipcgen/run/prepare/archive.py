"""Archive safety and extraction. Archives (tar, tar.gz, tgz, zip) are checked before anything is
written: no absolute or `..` names, no links leading out of the directory, no members inside
links, no devices, no encrypted zip entries, nothing in prepare's `.tipcgen` state, and no more
bytes than the extraction bound (Options.extract_limit: a ratio to the archive's size, and a
ceiling; each member counts its size + 512 bytes, its header, so a million empty files count
too); after extraction every link must still resolve inside the directory. The sizes these
checks add up are what extraction writes: a tar member's data is its header's size, and
zipfile reads no more of an entry than its declared size. Extracted files get no set-id bits
and no owner from the archive."""

from __future__ import annotations

import lzma
import os
import stat
import tarfile
import time
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any, BinaryIO, Optional

from tipcgen.emit.prepare import STATE_DIR
from tipcgen.errors import SpecError, TipcError
from tipcgen.fsio import open_output
from tipcgen.inputs import dirs_below, open_read, read_bytes
from tipcgen.run.prepare.options import FetchError, Options

CHUNK = 1 << 16
MEMBER_COST = 512  # bytes each member counts, beyond its data
# What a damaged or hostile archive raises while it is read (a cut gzip stream: EOFError).
READ_ERRORS = (OSError, EOFError, tarfile.TarError, zipfile.BadZipFile, zlib.error, lzma.LZMAError, ValueError)
ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)


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


def too_big(label: str, limit: int, opts: Optional[Options]) -> UnsafeArchive:
    why = "TIPC_MAX_EXTRACT"
    if opts is not None and limit < opts.max_extract:
        why = f"TIPC_MAX_RATIO={opts.max_ratio} times the archive's size, counted as at least 1 MiB"
    return UnsafeArchive(
        f"prepare: error: refusing {label}: it would extract to more than {limit} bytes ({why}; "
        "each member counts its size + 512 bytes)"
    )


def _tar_members(path: Path, label: str, limit: Optional[int], opts: Optional[Options]) -> list:
    """The members of a tarball, read one at a time: past LIMIT bytes it is refused at once
    (before its data, maybe a gzip bomb, is decompressed to reach the next header)."""
    members = []
    total = 0
    try:
        with _opened(path) as fh, tarfile.open(fileobj=fh, mode="r:*") as tf:
            for m in tf:
                members.append(m)
                total += MEMBER_COST + (m.size if m.isreg() else 0)
                if limit is not None and total > limit:
                    raise too_big(label, limit, opts)
    except READ_ERRORS as exc:
        raise FetchError(f"prepare: error: cannot read {label} (not a tar archive?): {exc}") from exc
    return members


def check_tar(path: Path, label: Optional[str] = None, opts: Optional[Options] = None) -> list:
    """The members of a tarball, after refusing it when any would land outside its directory
    (or, given OPTS, when it would extract to more than its bound)."""
    label = label or str(path)
    limit = opts.extract_limit(path.stat().st_size) if opts is not None else None
    members = _tar_members(path, label, limit, opts)
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


def _check_zip_entry(label: str, info: zipfile.ZipInfo) -> None:
    if "\\" in info.filename or "\n" in info.filename:
        raise UnsafeArchive(
            f"prepare: error: refusing {label}: member {info.filename!r} has a backslash or newline in its name"
        )
    if info.flag_bits & 0x1:  # unzip would stop at a password prompt
        raise UnsafeArchive(f"prepare: error: refusing {label}: member {info.filename!r} is encrypted")
    if info.compress_type not in ZIP_METHODS:
        raise UnsafeArchive(
            f"prepare: error: refusing {label}: member {info.filename!r} uses compression method "
            f"{info.compress_type}, which prepare cannot extract"
        )


def check_zip(path: Path, label: Optional[str] = None, opts: Optional[Options] = None) -> list:
    """The entries of a zip archive, after the same checks as check_tar."""
    label = label or str(path)
    try:
        zf = zipfile.ZipFile(_opened(path))
    except READ_ERRORS as exc:
        raise FetchError(f"prepare: error: cannot read {label} (not a zip archive?): {exc}") from exc
    with zf:
        infos = zf.infolist()
        if opts is not None:
            limit = opts.extract_limit(path.stat().st_size)
            if sum(MEMBER_COST + i.file_size for i in infos) > limit:
                raise too_big(label, limit, opts)
        links: dict = {}
        for info in infos:
            _check_zip_entry(label, info)
            if _zip_is_link(info):
                clean = _clean(info.filename)
                if not clean:
                    raise UnsafeArchive(
                        f"prepare: error: refusing {label}: link {info.filename!r} is absolute or contains '..'"
                    )
                if info.file_size > 4096:  # PATH_MAX: no link target is longer
                    raise UnsafeArchive(
                        f"prepare: error: refusing {label}: link {info.filename!r} has a target longer than 4096 bytes"
                    )
                try:
                    links[clean] = zf.read(info).decode("utf-8", "surrogateescape")
                except READ_ERRORS as exc:
                    raise FetchError(f"prepare: error: cannot read {label}: {exc}") from exc
        _check_names(label, [i.filename for i in infos], set(links))
        _check_links(label, links)
    return infos


def _check_tree(root: Path, label: str) -> None:
    """After extraction, every link under ROOT still resolves inside ROOT."""
    real_root = os.path.realpath(root)
    for dirpath, dirnames, filenames in dirs_below(str(root)):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                real = os.path.realpath(path)
                if real != real_root and not real.startswith(real_root + os.sep):
                    raise UnsafeArchive(
                        f"prepare: error: refusing {label}: link {os.path.relpath(path, root)} "
                        f"points outside ({os.readlink(path)})"
                    )


def _opened(path: Path) -> BinaryIO:
    """A downloaded file (in the cache or a .part beside its target), opened through the read
    gate: a regular file, not blocking, no link leading out of its folder."""
    try:
        return open_read(str(path), what="a download")
    except SpecError as exc:
        raise FetchError(f"prepare: error: {exc}") from None


def _copy(src: IO[bytes], out: BinaryIO) -> None:
    while chunk := src.read(CHUNK):
        out.write(chunk)


def _umask() -> int:
    """The process's umask, read without setting it (setting it, even back, races with the
    process's other threads); where /proc does not say, set and restored."""
    try:
        status = read_bytes("/proc/self/status", 1 << 16, tree="/proc", what="the process's status")
        for line in status.decode("ascii", "replace").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (TipcError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # pragma: no cover - not Linux
    os.umask(mask)
    return mask


def _tar_filter(member: tarfile.TarInfo, path: str, mask: int = 0o022) -> tarfile.TarInfo:
    """As GNU tar --no-same-owner --no-same-permissions (what prepare.sh runs): no owner from
    the archive, its modes less the umask (`mask`) and the set-id and sticky bits."""
    mode = None if member.mode is None else member.mode & 0o777 & ~mask
    nobody: dict[str, Any] = dict(uid=None, gid=None, uname=None, gname=None)  # None: no chown
    return member.replace(mode=mode, deep=False, **nobody)


def _extract_tar(path: Path, dest: Path) -> None:
    with _opened(path) as fh, tarfile.open(fileobj=fh, mode="r:*") as tf:
        if hasattr(tarfile, "fully_trusted_filter"):  # checked by check_tar; extract like GNU tar
            mask = _umask()
            tf.extractall(dest, filter=lambda member, where: _tar_filter(member, where, mask))
        else:  # pragma: no cover - Python < 3.12 without the backported filters
            mask = _umask()
            for m in tf.getmembers():
                m.mode &= 0o777 & ~mask
                m.uid, m.gid, m.uname, m.gname = os.getuid(), os.getgid(), "", ""
            tf.extractall(dest)


def _extract_zip(path: Path, dest: Path) -> None:
    """Like `unzip -o`: links made on Unix become links, Unix permissions are kept."""
    with zipfile.ZipFile(_opened(path)) as zf:
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
            with zf.open(info) as src, open_output(str(target), mode=0o666) as out:
                _copy(src, out)
            mode = (info.external_attr >> 16) & 0o777
            if info.create_system == 3 and mode:
                os.chmod(target, mode)
            mtime = time.mktime((*info.date_time, 0, 0, -1))
            os.utime(target, (mtime, mtime))


def check_archive(path: Path, fmt: str, label: str, opts: Optional[Options] = None) -> None:
    """Refuse the archive PATH of format FMT (tar, zip; a plain file needs no check) before extracting."""
    if fmt == "tar":
        check_tar(path, label, opts)
    elif fmt == "zip":
        check_zip(path, label, opts)


def unpack(src: Path, dest: Path, file: str, fmt: str, label: str) -> None:
    """Copy SRC to DEST/FILE (format `file`: with the mode new files get, whatever SRC's, a
    cache file of 0600) or extract it into DEST, then check DEST's links."""
    try:
        if fmt == "file":
            with _opened(src) as fh, open_output(str(dest / file), mode=0o666) as out:
                _copy(fh, out)
        elif fmt == "tar":
            _extract_tar(src, dest)
        else:
            _extract_zip(src, dest)
    except (*READ_ERRORS, RuntimeError, NotImplementedError) as exc:
        raise FetchError(f"prepare: error: cannot extract {src}: {exc}") from exc
    if fmt != "file":
        _check_tree(dest, label)
