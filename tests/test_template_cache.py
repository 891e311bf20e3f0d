"""The compiled-template cache (emit/template_cache.py): a build compiles each template once per
user, not once per run; the cache changes no byte of the output; and what is loaded from it runs as
code, so it is read only from a private directory of the user's (never through a link, never from a
directory others may write), and a damaged entry is compiled again."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import jinja2
import pytest
from typer.testing import CliRunner

from conftest import SPECS
from tipcgen.cli import app
from tipcgen.emit import files
from tipcgen.emit.template_cache import TemplateCache

SPEC = SPECS / "tiny_rec.yml"
MARK = "PLANTED-BY-THE-TEST"


@pytest.fixture
def build(monkeypatch):
    """build(cache, out): `tipcgen build` as a new process would run it (a fresh template
    environment) with $TIPC_CACHE=cache; the tree it wrote, path -> bytes."""

    def run(cache: Path, out: Path) -> dict:
        monkeypatch.setenv("TIPC_CACHE", str(cache))
        files._env.cache_clear()
        result = CliRunner().invoke(app, ["build", str(SPEC), "--out", str(out)])
        assert result.exit_code == 0, result.output
        return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}

    yield run
    files._env.cache_clear()  # the other tests of this worker: the environment of their own $TIPC_CACHE


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / "templates").glob("*.cache"))


def test_a_second_build_loads_what_the_first_compiled_and_writes_the_same_bytes(tmp_path, build):
    cache = tmp_path / "cache"
    first = build(cache, tmp_path / "a")
    entries = _entries(cache)
    assert len(entries) >= 5, "each template the build used is kept"
    assert stat.S_IMODE((cache / "templates").stat().st_mode) == 0o700
    assert all(stat.S_IMODE(e.stat().st_mode) == 0o600 for e in entries)
    before = {e: e.stat().st_mtime_ns for e in entries}
    assert build(cache, tmp_path / "b") == first
    assert {e: e.stat().st_mtime_ns for e in _entries(cache)} == before, "loaded, not compiled and written again"
    # no cache at all (its directory cannot be made): the same bytes
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert build(blocker / "cache", tmp_path / "c") == first


def test_a_damaged_entry_is_compiled_again(tmp_path, build):
    cache = tmp_path / "cache"
    first = build(cache, tmp_path / "a")
    for n, entry in enumerate(_entries(cache)):
        entry.write_bytes([b"", b"j2", b"garbage" * 50, entry.read_bytes()[:40]][n % 4])
    assert build(cache, tmp_path / "b") == first
    assert all(e.stat().st_size > 100 for e in _entries(cache)), "each rewritten whole"


def _plant(cache: Path, salt: str) -> None:
    """An entry for common_func.sh.j2 that passes jinja2's checks (the real source's checksum)
    but holds the code of another template: what someone able to write the cache could put there."""
    name = "common_func.sh.j2"
    root = files._env().loader.searchpath[0]  # type: ignore[union-attr]
    filename = os.path.normpath(os.path.join(root, name))
    keys = TemplateCache(str(cache / "templates"), salt)
    bucket = jinja2.bccache.Bucket(
        jinja2.Environment(), keys.get_cache_key(name, filename), keys.get_source_checksum(Path(filename).read_text())
    )
    bucket.code = jinja2.Environment().compile(f"# {MARK}\n", name, filename)
    (cache / "templates").mkdir(parents=True, exist_ok=True)
    (cache / "templates" / f"{salt}-{bucket.key}.cache").write_bytes(bucket.bytecode_to_string())


def _salt(tmp_path, build) -> str:
    probe = tmp_path / "probe"
    build(probe, tmp_path / "probe-out")
    return _entries(probe)[0].name.split("-", 1)[0]


def test_an_entry_is_trusted_only_in_a_private_directory_of_the_users(tmp_path, build):
    salt = _salt(tmp_path, build)
    # A private cache: the planted entry is what runs (the test can see the cache being read).
    private = tmp_path / "private"
    _plant(private, salt)
    (private / "templates").chmod(0o700)
    tree = build(private, tmp_path / "a")
    assert any(MARK.encode() in data for data in tree.values())
    # The same entry where another user may write, or behind a link: never loaded, nothing written.
    shared = tmp_path / "shared"
    _plant(shared, salt)
    (shared / "templates").chmod(0o777)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "templates").symlink_to(private / "templates")
    clean = build(tmp_path / "clean", tmp_path / "b")
    for cache in (shared, linked):
        count = len(list((cache / "templates").iterdir()))
        assert build(cache, tmp_path / f"out-{cache.name}") == clean
        assert len(list((cache / "templates").iterdir())) == count
