"""Hostile downloads and archives: every bound of prepare holds, in the generated prepare.sh (with
curl and with wget) and in `tipcgen prepare` / `tipcgen hash`.

A real HTTP server on 127.0.0.1 (tests/helpers/http_server.py) plays the hostile server: a body
dripping at 4 bytes a second, an endless body, a redirect loop, lying Content-Lengths, a silent
server, a 1 MiB header. Each case must end in one clear message (no traceback), within its
deadline, and leave nothing behind: no `.part` in the cache, no half-extracted directory in the
repo. The three implementations of one case run at the same time (bash in threads, Python in the
main thread, where its deadline alarm works), so the deadline cases cost their deadline once.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import struct
import subprocess
import sys
import tarfile
import time
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.cli import run_argv
from helpers.http_server import PrepareServer
from helpers.machine import bound
from test_prepare import HAVE_WGET, MODE, Model, clean_env, files_in, make_tar, make_zip, sha, spec_text
from tipcgen.check.spec import load_spec_text
from tipcgen.cli import app
from tipcgen.errors import SpecError

IMPLS = ["curl", "wget", "python"] if HAVE_WGET else ["curl", "python"]
UMASK = os.umask(0o022)
os.umask(UMASK)


@pytest.fixture(scope="module")
def server():
    srv = PrepareServer().start()
    yield srv
    srv.stop()


def repo_entries(model: Model) -> list:
    """What prepare left in the model repo (its test_tipc/ aside)."""
    return sorted(str(p.relative_to(model.root)) for p in model.root.rglob("*") if "test_tipc" not in p.parts)


def run_all(tmp_path: Path, prepare: dict, impls=IMPLS, python_process: bool = False, **env_extra) -> dict:
    """impl -> (exit code, output, seconds, model, cache dir) of one prepare per implementation,
    each in a repo and cache of its own, all at once: bash in threads, Python in the main thread
    (or, PYTHON_PROCESS, in a process of its own, so that several cases can run at once)."""
    models, envs = {}, {}
    for impl in impls:
        models[impl] = Model(tmp_path / impl / "repo", spec_text(prepare))
        envs[impl] = clean_env(tmp_path / impl, **env_extra)

    def timed(impl: str):
        start = time.monotonic()
        if impl == "python" and python_process:
            m = models[impl]
            argv = [
                sys.executable,
                "-m",
                "tipcgen.cli",
                "prepare",
                str(m.spec_path),
                "--mode",
                MODE,
                "--root",
                str(m.root),
            ]
            proc = subprocess.run(argv, env=envs[impl], capture_output=True, text=True, timeout=60)
            rc, out = proc.returncode, proc.stdout + proc.stderr
        else:
            rc, out = models[impl].run(impl, envs[impl])
        return rc, out, time.monotonic() - start, models[impl], tmp_path / impl / "cache"

    in_main = "python" in impls and not python_process
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {impl: pool.submit(timed, impl) for impl in impls if impl != "python" or not in_main}
        results = {"python": timed("python")} if in_main else {}
        results.update({impl: f.result(timeout=90) for impl, f in futures.items()})
    return results


def assert_refused(results: dict, *words: str, code: int = 1, seconds: float = 20) -> None:
    """Every implementation failed with CODE, saying WORDS, without a traceback, within SECONDS,
    leaving no file in its cache and nothing in its repo."""
    for impl, (rc, out, took, model, cache) in results.items():
        assert rc == code, (impl, out)
        assert "Traceback" not in out, (impl, out)
        for word in words:
            assert word in out, (impl, word, out)
        assert took < bound(seconds), (impl, took, out)  # a hang guard: stretched by the machine's load
        assert files_in(cache) == [], (impl, files_in(cache))
        assert repo_entries(model) == [], (impl, repo_entries(model))


GZ = gzip.compress(b"weights " * 200, mtime=0)[:1000].ljust(1000, b"\0")


# ---------------------------------------------------------------------------------------------
# Downloads: deadline, declared size, size cap, redirects


def test_dripping_and_silent_servers_meet_the_deadline_and_leave_no_part(server, tmp_path):
    """A body at 4 bytes a second, headers at 4 bytes a second (each read is quick: only the
    deadline ends it), a server that never answers (TIPC_TIMEOUT, 30, is not what ends it)."""
    cases = {}
    for fault in ("drip", "header_drip", "silent"):
        url = server.add(f"/{fault}/w.gz", GZ)
        server.always(f"/{fault}/w.gz", fault)
        cases[fault] = (url, {"url": url, "to": "./pretrain_models", "sha256": sha(GZ), "size": len(GZ)})
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {
            fault: pool.submit(run_all, tmp_path / fault, {MODE: [step]}, python_process=True, TIPC_DEADLINE=2)
            for fault, (_, step) in cases.items()
        }
        for fault, future in futures.items():
            url = cases[fault][0]
            assert_refused(future.result(), "took longer than 2 s, its deadline (TIPC_DEADLINE", url, seconds=2 + 5)


def test_an_endless_body_stops_at_the_declared_size(server, tmp_path):
    url = server.add("/endless/w.bin", b"")
    server.always("/endless/w.bin", "endless")
    results = run_all(tmp_path, {MODE: [{"url": url, "to": "./pretrain_models", "size": 1000}]})
    assert_refused(results, f"refusing {url}: larger than its declared size, 1000 bytes", seconds=10)


def test_an_endless_body_without_a_size_stops_at_tipc_max_size(server, tmp_path):
    url = server.add("/endless2/w.bin", b"")
    server.always("/endless2/w.bin", "endless")
    results = run_all(tmp_path, {MODE: [{"url": url, "to": "./pretrain_models"}]}, TIPC_MAX_SIZE="64K")
    assert_refused(results, f"refusing {url}: larger than TIPC_MAX_SIZE, 65536 bytes (no size declared)", seconds=10)


def test_a_redirect_loop_is_a_clean_error(server, tmp_path):
    url = server.add("/loop/w.bin", b"")
    server.always("/loop/w.bin", "loop")
    results = run_all(tmp_path, {MODE: [{"url": url, "to": "./pretrain_models"}]})
    assert_refused(results, f"download failed (more than 20 redirects): {url}")
    hashed = CliRunner().invoke(app, ["hash", url], env=clean_env(tmp_path / "hash"))
    assert hashed.exit_code == 1 and isinstance(hashed.exception, SystemExit), hashed.output
    assert f"download failed (more than 20 redirects): {url}" in hashed.output
    assert files_in(tmp_path / "hash" / "cache") == []


def test_a_redirect_to_a_file_url_is_refused(server, tmp_path):
    url = server.add("/tofile/passwd", b"")
    server.always("/tofile/passwd", ("redirect", "file:///etc/passwd"))
    results = run_all(tmp_path, {MODE: [{"url": url, "to": "./pretrain_models"}]})
    assert_refused(results, f"download failed (redirected to a URL that is not http(s)): {url}")


@pytest.mark.parametrize(
    "fault,words",
    [
        ("short_length", ["size mismatch"]),  # Content-Length 10 bytes short: 990 of 1000 bytes
        # 1000 bytes more announced than sent: Python refuses the announced size at once
        ("long_length", ["download failed after 2 tries", "larger than its declared size, 1000 bytes"]),
        ("huge_header", ["download failed after 2 tries"]),  # one header of 1 MiB
        ("html", ["size mismatch", "sha256 mismatch"]),  # a 200 with an HTML error page
    ],
)
def test_lying_servers_fail_cleanly_and_leave_nothing(server, tmp_path, fault, words):
    data = os.urandom(1000)
    url = server.add(f"/{fault}/w.bin", data)
    server.always(f"/{fault}/w.bin", fault)
    step = {"url": url, "to": "./pretrain_models", "sha256": sha(data), "size": len(data)}
    results = run_all(tmp_path, {MODE: [step]}, TIPC_RETRIES=2)
    assert_refused(results, url)
    for impl, (_, out, *_) in results.items():
        assert any(w in out for w in words), (impl, out)


def test_a_server_cutting_every_answer_is_tried_retries_times(server, tmp_path):
    data = os.urandom(4000)
    for impl in IMPLS:  # one URL per implementation, to count each one's requests
        url = server.add(f"/cuts/{impl}/w.bin", data)
        server.inject(f"/cuts/{impl}/w.bin", *["cut"] * 20)
        step = {"url": url, "to": "./w", "sha256": sha(data)}
        results = run_all(tmp_path / impl, {MODE: [step]}, impls=[impl], TIPC_RETRIES=3)
        assert_refused(results, "download failed after 3 tries")
        assert len(server.requests(f"/cuts/{impl}/w.bin")) == 3


# ---------------------------------------------------------------------------------------------
# Archives: bombs, lies, special members


BOMB = 201 * 1000 * 1000


def deflate_zeros(head: bytes, n: int) -> tuple[bytes, int]:
    """(raw deflate stream, crc32) of HEAD and N zero bytes, made in a blink: after a full flush
    the compressor forgets what came before, so every 1 MB block of zeros compresses alike."""
    block = bytes(1_000_000)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(head) + c.flush(zlib.Z_FULL_FLUSH)
    unit = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    assert unit == c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    rest = c.compress(bytes(n % len(block))) + c.flush()
    crc = zlib.crc32(head)
    for _ in range(n // len(block)):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(bytes(n % len(block)), crc)
    return first + unit * (n // len(block)) + rest, crc


@pytest.fixture(scope="module")
def bombs() -> dict:
    """A zip and a tar.gz of about 200 KB that each extract to 201 MB."""
    name = b"zeros.bin"
    data, crc = deflate_zeros(b"", BOMB)
    fields = struct.pack("<HHHHHIII", 20, 0, 8, 0, 0x5821, crc, len(data), BOMB)
    local = b"PK\x03\x04" + fields + struct.pack("<HH", len(name), 0) + name
    central = (
        b"PK\x01\x02" + struct.pack("<H", 3 << 8 | 20) + fields
        + struct.pack("<HHHHHII", len(name), 0, 0, 0, 0, 0o100644 << 16, 0) + name
    )  # fmt: skip
    end = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    zip_bomb = local + data + central + end
    info = tarfile.TarInfo("zeros.bin")
    info.size = BOMB
    header = info.tobuf(tarfile.GNU_FORMAT)
    tail = -(BOMB % -512) + 2 * 512 + 8 * 1024  # padding, the end blocks, the rest of the record
    body, crc = deflate_zeros(header, BOMB + tail)
    size = len(header) + BOMB + tail
    tgz_bomb = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + body + struct.pack("<II", crc, size & 0xFFFFFFFF)
    assert zipfile.ZipFile(io.BytesIO(zip_bomb)).infolist()[0].file_size == BOMB
    assert tarfile.open(fileobj=io.BytesIO(tgz_bomb), mode="r:gz").next().size == BOMB
    return {"bomb.zip": zip_bomb, "bomb.tar.gz": tgz_bomb}


@pytest.mark.parametrize("name", ["bomb.zip", "bomb.tar.gz"])
def test_archive_bombs_are_refused_before_extraction(server, tmp_path, bombs, name):
    data = bombs[name]
    assert len(data) < 1_000_000
    url = server.add(f"/bombs/{name}", data)
    step = {"url": url, "to": "./train_data", "sha256": sha(data), "extract": True}
    results = run_all(tmp_path, {MODE: [step]}, impls=["curl", "python"])
    for impl, (rc, out, took, model, _) in results.items():
        assert rc == 1 and "Traceback" not in out, (impl, out)
        assert f"refusing {url}: it would extract to more than {100 << 20} bytes (TIPC_MAX_RATIO=100" in out
        assert took < bound(10), (impl, took)
        assert repo_entries(model) == [], (impl, repo_entries(model))  # not even train_data/.tipcgen


def lying_zip(declared: int, actual: int) -> bytes:
    """A zip whose one entry says DECLARED bytes and inflates to ACTUAL (its CRC is right)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("a.bin", date_time=(2024, 1, 1, 0, 0, 0)), bytes(actual))
    raw = bytearray(buf.getvalue())
    raw[22:26] = declared.to_bytes(4, "little")  # local header
    cd = raw.find(b"PK\x01\x02")
    raw[cd + 24 : cd + 28] = declared.to_bytes(4, "little")  # central directory
    return bytes(raw)


def flagged_zip(flag: int = 0, method: int = -1) -> bytes:
    """A zip with FLAG set on its entry (1: encrypted) or its compression METHOD replaced."""
    raw = bytearray(make_zip([("secret.txt", "file", b"top secret\n")]))
    cd = raw.find(b"PK\x01\x02")
    for flags_at, method_at in ((6, 8), (cd + 8, cd + 10)):
        raw[flags_at] |= flag
        if method >= 0:
            raw[method_at : method_at + 2] = method.to_bytes(2, "little")
    return bytes(raw)


def special_tar(kind: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        tf.addfile(tarfile.TarInfo("ok.txt"), io.BytesIO())
        info = tarfile.TarInfo("special")
        info.type = kind
        tf.addfile(info)
    return buf.getvalue()


def many_members(n: int) -> bytes:
    return make_tar([(f"f{i}", "file", b"") for i in range(n)], gz=True)


def cut_gz() -> bytes:
    data = make_tar([("a.bin", "file", os.urandom(200_000))], gz=True)
    return data[: len(data) // 2]


ARCHIVES = {
    # name: (archive, settings, words every implementation says)
    "lying_zip": (lying_zip(1000, 3 << 20), {"TIPC_MAX_RATIO": 2}, ""),
    "encrypted_zip": (flagged_zip(flag=1), {}, "is encrypted"),
    "chardev_tar": (special_tar(tarfile.CHRTYPE), {}, "device, fifo or other special file"),
    "fifo_tar": (special_tar(tarfile.FIFOTYPE), {}, "device, fifo or other special file"),
    "many_members_tar": (many_members(300), {"TIPC_MAX_EXTRACT": "64K"}, "would extract to more than 65536 bytes"),
    "truncated_tgz": (cut_gz(), {}, "cannot"),
}


@pytest.mark.parametrize("name", list(ARCHIVES))
def test_hostile_archives_in_the_repo_are_refused_leaving_nothing(tmp_path, name):
    data, settings, words = ARCHIVES[name]
    fmt = "zip" if name.endswith("zip") else "tar.gz"
    step = {"extract": f"./shipped/a.{fmt}", "to": "./out"}
    for impl in ("curl", "python"):
        model = Model(tmp_path / impl / "repo", spec_text({MODE: [step]}))
        (model.root / "shipped").mkdir()
        (model.root / "shipped" / f"a.{fmt}").write_bytes(data)
        rc, out = model.run(impl, clean_env(tmp_path / impl, **settings))
        assert rc == 1 and "Traceback" not in out, (impl, out)
        assert words in out and ("refusing" in out or "cannot" in out), (impl, out)
        assert repo_entries(model) == ["shipped", f"shipped/a.{fmt}"], (impl, repo_entries(model))


def test_a_zip_with_an_unknown_compression_method_is_a_clean_error(tmp_path):
    data = flagged_zip(method=99)
    for impl in ("curl", "python"):
        model = Model(tmp_path / impl / "repo", spec_text({MODE: [{"extract": "./a.zip", "to": "./out"}]}))
        (model.root / "a.zip").write_bytes(data)
        rc, out = model.run(impl, clean_env(tmp_path / impl))
        assert rc == 1 and "Traceback" not in out, (impl, out)
        assert repo_entries(model) == ["a.zip"], (impl, repo_entries(model))


def test_a_gzip_bomb_inside_a_tar_is_extracted_as_the_small_file_it_is(tmp_path):
    inner = gzip.compress(bytes(50 << 20), compresslevel=9)
    data = make_tar([("inner.gz", "file", inner)], gz=True)
    for impl in ("curl", "python"):
        model = Model(tmp_path / impl / "repo", spec_text({MODE: [{"extract": "./a.tar.gz", "to": "./out"}]}))
        (model.root / "a.tar.gz").write_bytes(data)
        rc, out = model.run(impl, clean_env(tmp_path / impl))
        assert rc == 0, (impl, out)
        assert (model.root / "out" / "inner.gz").read_bytes() == inner


# ---------------------------------------------------------------------------------------------
# Modes: a private cache, normal files in the repo, no set-id bits or owners from archives


def test_the_cache_is_private_and_repo_files_get_normal_modes(server, tmp_path):
    data = os.urandom(2000)
    url = server.add("/modes/w.pdparams", data)
    tar = make_tar([("tool", "file", b"#!/bin/sh\n")])
    raw = bytearray(tar)  # the member: mode 4777, owner 4242 (the header's checksum is redone)
    raw[100:108] = b"0004777\0"
    raw[108:116] = raw[116:124] = b"0010222\0"
    raw[148:156] = b" " * 8
    raw[148:156] = f"{sum(raw[:512]):06o}\0 ".encode()
    tar_url = server.add("/modes/tool.tar", bytes(raw))
    steps = [
        {"url": url, "to": "./pretrain_models", "sha256": sha(data)},
        {"url": tar_url, "to": "./bin", "extract": True},
    ]
    results = run_all(tmp_path, {MODE: steps})
    for impl, (rc, out, _, model, cache) in results.items():
        assert rc == 0, (impl, out)
        assert stat.S_IMODE(cache.stat().st_mode) == 0o700, impl
        cached = cache / "sha256" / sha(data) / "w.pdparams"
        assert stat.S_IMODE(cached.stat().st_mode) == 0o600, impl
        placed = model.root / "pretrain_models" / "w.pdparams"
        assert stat.S_IMODE(placed.stat().st_mode) == 0o666 & ~UMASK, impl
        tool = (model.root / "bin" / "tool").stat()
        assert stat.S_IMODE(tool.st_mode) == 0o777 & ~UMASK, impl  # no setuid
        assert (tool.st_uid, tool.st_gid) == (os.getuid(), os.getgid()), impl


# ---------------------------------------------------------------------------------------------
# file:// URLs


def test_file_urls_are_refused_at_validation_unless_allowed(tmp_path, monkeypatch):
    spec = tmp_path / "s.yml"
    spec.write_text(spec_text({MODE: [{"url": "file:///etc/shadow", "to": "./x"}]}))
    monkeypatch.delenv("TIPC_ALLOW_FILE_URLS", raising=False)
    proc = run_argv(["validate", str(spec)], capture_output=True, text=True, timeout=60)
    prepared = CliRunner().invoke(app, ["prepare", str(spec), "--mode", MODE, "--root", str(tmp_path)])
    for code, err in ((proc.returncode, proc.stderr), (prepared.exit_code, prepared.output)):
        assert code == 2 and "Traceback" not in err, err
        assert f"{spec}:4:" in err and "file:// URL" in err and "TIPC_ALLOW_FILE_URLS" in err, err
    assert not (tmp_path / "x").exists()
    monkeypatch.setenv("TIPC_ALLOW_FILE_URLS", str(tmp_path / "mirror"))
    with pytest.raises(SpecError, match="lies outside"):
        load_spec_text(spec_text({MODE: [{"url": "file:///etc/shadow", "to": "./x"}]}), "demo.yml")
    with pytest.raises(SpecError, match="without `..`"):
        load_spec_text(spec_text({MODE: [{"url": f"file://{tmp_path}/mirror/../s", "to": "./x"}]}), "demo.yml")


def test_allowed_file_urls_never_read_through_a_link_leading_out(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "ok.bin").write_bytes(b"mirrored\n")
    (mirror / "ok.bin").chmod(0o640)
    secret = tmp_path / "secret.txt"
    secret.write_text("secret\n")
    (mirror / "leak.bin").symlink_to(secret)
    os.mkfifo(mirror / "pipe.bin")
    monkeypatch.setenv("TIPC_ALLOW_FILE_URLS", str(mirror))  # for the specs built here
    allow = {"TIPC_ALLOW_FILE_URLS": str(mirror)}  # for the prepares, whose environment is clean
    for name, words in (("leak.bin", f"leads to {secret}, outside {mirror}"), ("pipe.bin", "not a regular file")):
        results = run_all(tmp_path / name, {MODE: [{"url": f"file://{mirror}/{name}", "to": "./x"}]}, **allow)
        assert_refused(results, words, seconds=15)
    ok = run_all(tmp_path / "ok", {MODE: [{"url": f"file://{mirror}/ok.bin", "to": "./x"}]}, **allow)
    for impl, (rc, out, _, model, _) in ok.items():
        assert rc == 0, (impl, out)
        placed = model.root / "x" / "ok.bin"
        assert placed.read_bytes() == b"mirrored\n"
        assert stat.S_IMODE(placed.stat().st_mode) == 0o666 & ~UMASK, impl  # not the source's 640
    # The generated prepare.sh carries the URL; run without the setting, it refuses to read it.
    monkeypatch.delenv("TIPC_ALLOW_FILE_URLS")
    rc, out = ok["curl"][3].run("curl", clean_env(tmp_path / "unset"))
    assert rc == 0 and "up to date" in out  # in place already: nothing is read
    (ok["curl"][3].root / "x" / ".tipcgen" / "ok.bin.stamp").unlink()
    rc, out = ok["curl"][3].run("curl", clean_env(tmp_path / "unset"))
    assert rc == 1 and "TIPC_ALLOW_FILE_URLS" in out, out


def test_a_file_mirror_keeps_dotdot_urls_inside_it(tmp_path):
    """TIPC_MIRROR=file:///DIR with the host layout: a URL whose path climbs with `..` would
    name a file outside DIR; it is refused, not read."""
    mirror = tmp_path / "mirror"
    (mirror / "h").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("secret\n")
    step = {"url": "http://h/../../secret.txt", "to": "./x"}
    results = run_all(tmp_path, {MODE: [step]}, TIPC_MIRROR=f"file://{mirror}", TIPC_MIRROR_LAYOUT="host")
    assert_refused(results, f"leads to {tmp_path / 'secret.txt'}, outside {mirror}")


# ---------------------------------------------------------------------------------------------
# tipcgen hash, settings, spec fields


def test_hash_refuses_what_is_not_a_regular_file_without_blocking(tmp_path, server):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    proc = subprocess.run(  # a process of its own: were it to open the FIFO, the timeout ends it
        [sys.executable, "-m", "tipcgen.cli", "hash", str(fifo)],
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (
        proc.returncode == 2
        and proc.stderr
        == f"{fifo}: error: not a regular file (a FIFO, device or socket); give a file or an http(s) URL\n"
    )
    for target in ("/dev/zero", str(link), str(tmp_path)):
        result = CliRunner().invoke(app, ["hash", target], env=clean_env(tmp_path))
        assert result.exit_code == 2, (target, result.output)
        assert result.output.startswith(f"{target}: error: not a regular file"), result.output
    url = server.add("/hash/endless.bin", b"")
    server.always("/hash/endless.bin", "endless")
    result = CliRunner().invoke(app, ["hash", url], env=clean_env(tmp_path, TIPC_MAX_SIZE="1M"))
    assert result.exit_code == 1 and f"larger than TIPC_MAX_SIZE, {1 << 20} bytes" in result.output, result.output
    assert files_in(tmp_path / "cache") == []


BAD_SETTINGS = [
    ("TIPC_BACKOFF", "inf"),
    ("TIPC_BACKOFF", "nan"),
    ("TIPC_BACKOFF", "1e999"),
    ("TIPC_RETRIES", "99999999999999999999"),
    ("TIPC_TIMEOUT", "100000"),
    ("TIPC_DEADLINE", "0"),
    ("TIPC_MAX_SIZE", "0"),
    ("TIPC_MAX_SIZE", "12X"),
    ("TIPC_MAX_SIZE", "99999999999T"),
    ("TIPC_MAX_RATIO", "-1"),
    ("TIPC_ALLOW_FILE_URLS", "relative/dir"),
    ("TIPC_MIRROR", "file://relative"),
]


def test_hostile_settings_are_usage_errors(tmp_path):
    model = Model(tmp_path / "repo", spec_text({}))
    for name, value in BAD_SETTINGS:
        for impl in ("curl", "python"):
            rc, out = model.run(impl, clean_env(tmp_path, **{name: value}))
            assert rc == 2 and "Traceback" not in out, (name, value, impl, out)
            assert name in out and value in out, (name, value, impl, out)


BAD_URLS = [
    ({"url": "https://user:secret@x.org/a/b.tar", "to": "./i"}, "holds credentials"),
    ({"url": "https://x.org/a/b\x07.tar", "to": "./i"}, "control"),
    ({"url": "ftp://x.org/a/b.tar", "to": "./i"}, "not a plain http(s) URL"),
    ({"url": "file://etc/shadow", "to": "./i"}, "file:// URL"),
    ({"url": "https://x.org/a/b.tar", "to": "./i", "size": 10**30}, "more than 1 PiB"),
]


@pytest.mark.parametrize("step,words", BAD_URLS, ids=[w for _, w in BAD_URLS])
def test_hostile_urls_and_sizes_are_located_spec_errors(step, words, monkeypatch):
    monkeypatch.delenv("TIPC_ALLOW_FILE_URLS", raising=False)
    with pytest.raises(SpecError) as info:
        load_spec_text(spec_text({"whole_infer": [step]}), "demo.yml")
    assert words in str(info.value) and "prepare.whole_infer[0]" in str(info.value)


def test_the_python_prepare_never_changes_the_process_umask(tmp_path, monkeypatch):
    """The cache is private, but the umask is the whole process's: a bash prepare a thread starts
    meanwhile (as `run_all` does) once wrote the repo's files 0600. Private directories are made
    0700 themselves, and archives read the umask without setting it."""
    from tipcgen.run.prepare import archive, http

    def refuse(_mask):
        raise AssertionError("os.umask called: it changes the umask of every thread")

    monkeypatch.setattr(os, "umask", refuse)
    deep = tmp_path / "cache" / "a" / "b"
    http.private_dir(deep)
    http.private_dir(deep)  # again: already there
    for p in (deep, deep.parent, deep.parent.parent):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700, p
    assert archive._umask() == UMASK
