"""Hostile inputs at the gates, as a pull request or a careless user brings them: links leading
out, FIFOs, devices and malformed JSON at every input path, and links, FIFOs and devices at every
output path, through the real CLI. Each must be a clean answer (exit 2 naming the path, or the
documented fallback), never a hang, never a read of the link's target, never a write through it.
The gates themselves are tests/test_gates.py; this file is what a user meets."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, SPECS
from helpers.cli import run_cli

# Each case runs the real CLI a few times (a repo built and checked first): the second tier.
pytestmark = pytest.mark.slow

SPEC = SPECS / "tiny_rec.yml"
CONFIG = "test_tipc/configs/tiny_rec/train_infer_python.txt"
MODE = "lite_train_lite_infer"
SECRET = "TIPCGEN-CANARY-SECRET"  # the content of every file a link leads to: never printed


def tipcgen(*args, cwd: Path, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ if env is None else env)
    env.setdefault("TIPC_CACHE", str(cwd / ".cache"))  # a cache of the test's own
    return run_cli(*args, cwd=cwd, env=env, timeout=timeout)


def clean(proc: subprocess.CompletedProcess, code: int, *names: str) -> str:
    out = proc.stdout + proc.stderr
    assert proc.returncode == code, out
    assert "Traceback" not in out, out
    assert SECRET not in out, out
    for name in names:
        assert name in out, (name, out)
    return out


@pytest.fixture()
def secret(tmp_path_factory) -> Path:
    """A file outside every tree a test gives tipcgen (a sibling of tmp_path, not inside it)."""
    path = tmp_path_factory.mktemp("outside") / "secret.txt"
    path.write_text(f"{SECRET}\nroot:x:0:0\n")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A model repo switched to tipcgen (repo mode), built and checked once per module."""
    root = tmp_path_factory.mktemp("built") / "repo"
    (root / "test_tipc" / "specs").mkdir(parents=True)
    shutil.copy(SPEC, root / "test_tipc" / "specs")
    clean(tipcgen("build", cwd=root), 0)
    clean(tipcgen("check", cwd=root), 0, "up to date")
    return root


@pytest.fixture()
def repo(tmp_path, built) -> Path:
    """A fresh copy of the built repo (without its cache) for each test to spoil."""
    root = tmp_path / "repo"
    shutil.copytree(built, root, symlinks=True, ignore=shutil.ignore_patterns(".cache"))
    return root


def snapshot(root: Path) -> dict:
    out = {}
    for path in sorted(root.rglob("*")):
        if ".cache" in path.parts:
            continue
        st = os.lstat(path)
        out[str(path.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


# --- reads: a generated file swapped for a link, a FIFO or a device ---------------------------------

GENERATED = ["test_tipc/common_func.sh", "test_tipc/prepare.sh", "test_tipc/.tipcgen.manifest", CONFIG]


def _swap(path: Path, kind: str, secret: Path) -> None:
    path.unlink()
    if kind == "link-out":
        path.symlink_to(secret)
    elif kind == "link-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)


@pytest.mark.parametrize("kind", ["link-out", "link-zero", "fifo"])
@pytest.mark.parametrize("rel", GENERATED)
def test_repo_check_and_build_on_swapped_generated_file(repo, secret, rel, kind):
    """check: stale (exit 1) naming the file, without reading the target; build: refused (exit 2)
    before the first write (the tree stays as it was)."""
    _swap(repo / rel, kind, secret)
    proc = tipcgen("check", "--no-cache", cwd=repo, timeout=30)
    clean(proc, 1, rel)
    before = snapshot(repo)
    proc = tipcgen("build", cwd=repo, timeout=30)
    clean(proc, 2, rel, "cannot write")
    assert snapshot(repo) == before
    assert secret.read_text().startswith(SECRET)


@pytest.mark.parametrize("kind", ["link-out", "fifo"])
def test_spec_mode_check_on_link_below_out(tmp_path, secret, kind):
    out = tmp_path / "gen"
    clean(tipcgen("build", SPEC, "--out", out, cwd=tmp_path), 0)
    _swap(out / "tiny_rec" / "test_tipc" / "common_func.sh", kind, secret)
    clean(tipcgen("check", SPEC, "--out", out, "--no-cache", cwd=tmp_path, timeout=30), 1, "common_func.sh")


def test_repo_specs_folder_link_leading_out(repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(SPEC, elsewhere / "other.yml")
    shutil.rmtree(repo / "test_tipc" / "specs")
    (repo / "test_tipc" / "specs").symlink_to(elsewhere)
    before = snapshot(repo)
    for command in ("check", "build"):
        clean(tipcgen(command, cwd=repo), 2, "test_tipc/specs", "outside the repo")
    assert snapshot(repo) == before


def test_settings_specs_naming_a_link_leading_out(repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(SPEC, elsewhere / "other.yml")
    (repo / "lnk").symlink_to(elsewhere)
    (repo / "tipcgen.yml").write_text("specs: lnk\n")
    for command in ("check", "build"):
        clean(tipcgen(command, cwd=repo), 2, "tipcgen.yml", "field `specs`", "outside the repo")


@pytest.mark.parametrize("kind", ["fifo", "link-out", "link-zero"])
def test_settings_file_swapped(repo, secret, kind):
    (repo / "tipcgen.yml").write_text("lang: zh\n")
    _swap(repo / "tipcgen.yml", kind, secret)
    clean(tipcgen("check", cwd=repo, timeout=30), 2, "tipcgen.yml")


@pytest.mark.parametrize("kind", ["fifo", "link-out", "link-zero"])
def test_spec_and_config_inputs_swapped(tmp_path, secret, kind):
    for name, args in (("s.yml", ["validate"]), ("c.txt", ["plan"]), ("l.txt", ["lint"])):
        path = tmp_path / name
        path.write_text("x\n")
        _swap(path, kind, secret)
        clean(tipcgen(*args, path, cwd=tmp_path, timeout=30), 2, name)


# --- JSON inputs: baselines, the check cache, records --------------------------------------------

BASELINE = {"format": "tipcgen-lint-baseline", "version": 1}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**BASELINE, "findings": 5}, "findings"),
        (
            {**BASELINE, "findings": [{"rule": "a", "file": "b", "role": "c", "message": "d", "count": -1000000}]},
            "count",
        ),
        ({**BASELINE, "findings": [{"rule": 5, "file": "b", "role": "c", "message": "d"}]}, "rule"),
        ({**BASELINE, "findings": [{"rule": "a", "file": "b", "role": "c"}]}, "message"),
        ({**BASELINE, "findings": [{"rule": "a", "file": "b", "role": "c", "message": "d", "count": True}]}, "count"),
        ({**BASELINE, "findings": [[]]}, "findings[0]"),
    ],
)
def test_lint_baseline_typed(tmp_path, body, field):
    (tmp_path / "b.json").write_text(json.dumps(body))
    out = clean(tipcgen("lint", SPEC, "--baseline", "b.json", cwd=tmp_path), 2, "b.json", field)
    assert "fixed since" not in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "tipcgen-lint-baseline", "version": 1, "findings": [{"count": 1e400}]}', "does not fit"),
        ("[" * 100_000 + "]" * 100_000, "nested"),
        ('{"format": "tipcgen-lint-baseline", "format": "x"}', "given twice"),
        ("\ufeff{}", "not a lint baseline"),
    ],
)
def test_lint_baseline_bounded(tmp_path, text, message):
    (tmp_path / "b.json").write_text(text)
    clean(tipcgen("lint", SPEC, "--baseline", "b.json", cwd=tmp_path), 2, "b.json", message)


@pytest.mark.parametrize("kind", ["fifo", "link-out", "link-zero"])
def test_lint_baseline_swapped(tmp_path, secret, kind):
    (tmp_path / "b.json").write_text("{}")
    _swap(tmp_path / "b.json", kind, secret)
    clean(tipcgen("lint", SPEC, "--baseline", "b.json", cwd=tmp_path, timeout=30), 2, "b.json")


@pytest.mark.parametrize(
    "cache",
    [
        "fifo",
        "link-out",
        "[" * 100_000,
        '{"version": 1, "entries": {"k": {"model": "tiny_rec", "files": 1e400}}}',
        '{"version": 1, "entries": {"k": {"model": 5}}}',
        '{"version": 1, "entries": []}',
    ],
)
def test_check_cache_hostile_is_a_miss(repo, secret, cache):
    """The cache comes from the machine, maybe from an earlier hostile checkout: anything odd in
    it is a miss (the tree is rendered and compared), never a hang, a traceback or a false hit."""
    path = repo / ".cache" / "check-v1.json"
    path.parent.mkdir(exist_ok=True)
    path.unlink(missing_ok=True)
    if cache in ("fifo", "link-out"):
        path.write_text("{}")
        _swap(path, cache, secret)
    else:
        path.write_text(cache)
    (repo / "test_tipc" / "common_func.sh").write_text("edited\n")
    clean(tipcgen("check", cwd=repo, timeout=30), 1, "common_func.sh")


def test_status_records_swapped(tmp_path, secret):
    records = tmp_path / "records"
    records.mkdir()
    os.mkfifo(records / "fifo.json")
    (records / "link.json").symlink_to(secret)
    (records / "deep.json").write_text("[" * 50_000)
    out = clean(tipcgen("status", records, "--out", tmp_path / "site", cwd=tmp_path, timeout=30), 0)
    for name in ("fifo.json", "link.json", "deep.json"):
        assert name in out
    page = (tmp_path / "site" / "index.html").read_text()
    assert SECRET not in page


# --- writes: outputs that are links, FIFOs or devices ---------------------------------------------


def _outputs(tmp_path: Path) -> dict:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    (tmp_path / "link").symlink_to(victim)
    os.mkfifo(tmp_path / "fifo")
    return {"link": tmp_path / "link", "fifo": tmp_path / "fifo", "device": Path("/dev/null")}


@pytest.mark.parametrize("kind", ["link", "fifo", "device"])
def test_write_baseline_refused(tmp_path, kind):
    target = _outputs(tmp_path)[kind]
    clean(tipcgen("lint", SPEC, "--write-baseline", target, cwd=tmp_path, timeout=30), 2, str(target))
    assert (tmp_path / "victim.txt").read_text() == "keep\n"


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_schema_out_refused(tmp_path, kind):
    target = _outputs(tmp_path)[kind]
    clean(tipcgen("schema", "--out", target, cwd=tmp_path, timeout=30), 2, str(target))
    assert (tmp_path / "victim.txt").read_text() == "keep\n"


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_status_page_output_refused(tmp_path, kind):
    records = tmp_path / "records"
    records.mkdir()
    site = tmp_path / "site"
    site.mkdir()
    target = _outputs(tmp_path)[kind]
    os.rename(target, site / "index.html")
    clean(tipcgen("status", records, "--out", site, cwd=tmp_path, timeout=30), 2, "index.html")
    assert (tmp_path / "victim.txt").read_text() == "keep\n"


@pytest.mark.parametrize("option", ["--summary", "--json", "--junit"])
@pytest.mark.parametrize("kind", ["link", "fifo", "device"])
def test_run_reports_refused_before_running(tmp_path, option, kind):
    """A report path that is a link, FIFO or device is refused before any step runs."""
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "generated" / "tiny_rec", repo)
    target = _outputs(tmp_path)[kind]
    proc = tipcgen("run", CONFIG, "--mode", MODE, option, target, cwd=repo, timeout=30)
    clean(proc, 2, str(target))
    assert not (repo / "test_tipc" / "output").exists()
    assert (tmp_path / "victim.txt").read_text() == "keep\n"


def _failing_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "generated" / "tiny_rec", repo)
    config = repo / CONFIG
    config.write_text(config.read_text().replace("python:python3\n", "python:false\n", 1))
    return repo


@pytest.mark.parametrize("kind", ["device-full", "fifo", "link"])
def test_step_summary_that_cannot_be_written_keeps_the_exit_status(tmp_path, kind):
    """$GITHUB_STEP_SUMMARY is the CI runner's file: one that cannot be written (a full device, a
    FIFO, a link) is a warning naming it; the run's own verdict (exit 1: a step failed) stands."""
    repo = _failing_repo(tmp_path)
    outputs = _outputs(tmp_path)
    target = Path("/dev/full") if kind == "device-full" else outputs[kind]
    env = dict(os.environ, GITHUB_STEP_SUMMARY=str(target))
    proc = tipcgen("run", CONFIG, "--mode", MODE, cwd=repo, env=env, timeout=120)
    out = clean(proc, 1, str(target), "GITHUB_STEP_SUMMARY")
    assert "None" not in out.split("GITHUB_STEP_SUMMARY", 1)[1].splitlines()[0]
    assert (tmp_path / "victim.txt").read_text() == "keep\n"


def test_build_out_with_a_link_where_a_file_goes(tmp_path):
    """Spec mode: a generated path that is a link (even to a file inside --out) is refused and
    nothing of the build is written."""
    out = tmp_path / "gen"
    clean(tipcgen("build", SPEC, "--out", out, cwd=tmp_path), 0)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    target = out / "tiny_rec" / "test_tipc" / "prepare.sh"
    target.unlink()
    target.symlink_to(victim)
    (SPECS / "tiny_rec.yml").read_text()
    before = snapshot(out)
    clean(tipcgen("build", SPEC, "--out", out, cwd=tmp_path), 2, "prepare.sh", "symbolic link")
    assert snapshot(out) == before
    assert victim.read_text() == "keep\n"


def test_import_out_refuses_link(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    (specs / "tiny_rec.yml").symlink_to(victim)
    config = REPO / "generated" / "tiny_rec" / CONFIG
    clean(tipcgen("import", config, "--out", specs, "--prepare", "none", cwd=tmp_path), 2, "tiny_rec.yml")
    assert victim.read_text() == "keep\n"


# --- import --prepare: the script itself -----------------------------------------------------------


def _configs_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "generated" / "tiny_rec", repo)
    return repo


def test_import_prepare_link_leading_out_is_an_error(tmp_path, secret):
    repo = _configs_repo(tmp_path)
    (repo / "test_tipc" / "prepare.sh").unlink()
    (repo / "test_tipc" / "prepare.sh").symlink_to(secret)
    proc = tipcgen("import", "test_tipc/configs/tiny_rec", "--out", "specs_out", cwd=repo, timeout=120)
    clean(proc, 2, "prepare.sh", "outside")
    assert not (repo / "specs_out").exists()


def test_import_prepare_that_is_no_script_is_refused(tmp_path):
    """`--prepare /etc/shadow` (or any file that is not a prepare.sh): the trace runs nothing in
    any mode, and that is an error, not an empty `prepare` section."""
    repo = _configs_repo(tmp_path)
    bogus = tmp_path / "notes.txt"
    bogus.write_text("these are not shell commands ((\n")
    proc = tipcgen(
        "import", "test_tipc/configs/tiny_rec", "--out", "specs_out", "--prepare", bogus, cwd=repo, timeout=300
    )
    clean(proc, 2, "notes.txt", "ran no command")
    assert not (repo / "specs_out").exists()


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_import_prepare_fifo_or_device(tmp_path, kind):
    repo = _configs_repo(tmp_path)
    target = tmp_path / "fifo.sh"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target = Path("/dev/zero")
    proc = tipcgen(
        "import", "test_tipc/configs/tiny_rec", "--out", "specs_out", "--prepare", target, cwd=repo, timeout=60
    )
    clean(proc, 2, str(target))
