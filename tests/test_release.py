"""A release: the version written once (tipcgen.__version__: pyproject reads it, CHANGELOG.md's first
version names it), and (slow tier) the sdist and wheel as a user gets them: `python -m build`,
`twine check --strict`, the wheel holding every module and template, installed in a fresh venv
where `tipcgen --help` runs and the bundled specs build byte for byte into `generated/`."""

from __future__ import annotations

import fnmatch
import importlib.util
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import GENERATED, REPO, SPECS
from tipcgen import __version__

VERSION_HEADING = re.compile(r"^## (\d+)\.(\d+)\.(\d+) - (Unreleased|\d{4}-\d{2}-\d{2})$")


def _section(text: str, name: str) -> str:
    match = re.search(rf"^\[{re.escape(name)}\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M)
    assert match, f"pyproject.toml has no [{name}]"
    return match.group(1)


def test_the_version_is_written_once_and_pyproject_reads_it():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    project = _section(text, "project")
    assert not re.search(r"^version\s*=", project, re.M), "a static version in [project]"
    assert re.search(r'^dynamic = \["version"\]$', project, re.M)
    assert re.search(r'^version = \{ attr = "tipcgen.__version__" \}$', _section(text, "tool.setuptools.dynamic"), re.M)
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    assigned = [
        f"{path.relative_to(REPO)}"
        for path in (REPO / "compiler").rglob("*.py")
        if re.search(r"^__version__\s*=", path.read_text(encoding="utf-8"), re.M)
    ]
    assert assigned == ["compiler/tipcgen/__init__.py"], assigned


def test_the_changelog_is_per_version_newest_first_and_names_the_package_version():
    lines = (REPO / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
    headings = [line for line in lines if line.startswith("## ")]
    assert headings, "CHANGELOG.md has no version"
    parsed = []
    for heading in headings:
        match = VERSION_HEADING.match(heading)
        assert match, f"{heading!r}: a version heading is `## X.Y.Z - YYYY-MM-DD` or `## X.Y.Z - Unreleased`"
        parsed.append((tuple(int(n) for n in match.groups()[:3]), match.group(4)))
    assert ".".join(map(str, parsed[0][0])) == __version__, "the first version is not tipcgen.__version__"
    versions = [v for v, _ in parsed]
    assert versions == sorted(set(versions), reverse=True), "versions are not newest first, or repeat"
    assert all(date != "Unreleased" for _, date in parsed[1:]), "only the newest version may be unreleased"
    for first, second in zip(headings, headings[1:]):  # no version without a line of content
        body = lines[lines.index(first) + 1 : lines.index(second)]
        assert any(line.startswith("- ") for line in body), f"{first}: no entry"


def test_every_file_the_package_reads_is_package_data():
    """templates/ is read at run time (importlib.resources): each of its files matches a
    package-data pattern, or the wheel would lack it."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    data = _section(text, "tool.setuptools.package-data")
    patterns = re.findall(r'"([^"]+)"', re.search(r'^"tipcgen.templates" = \[(.*)\]$', data, re.M).group(1))
    missing = [
        p.name
        for p in (REPO / "templates").iterdir()
        if p.is_file() and p.suffix != ".py" and not any(fnmatch.fnmatch(p.name, pat) for pat in patterns)
    ]
    assert not missing, f"templates not shipped in the wheel: {missing}"


# ---- the built distribution (slow tier)


def _tools_missing() -> str:
    missing = [name for name in ("build", "twine") if importlib.util.find_spec(name) is None]
    return f"{' and '.join(missing)} not installed (pip install build twine; .ci/run does)" if missing else ""


def _clean_env(venv: Path | None = None) -> dict:
    """The user's environment: nothing points back into this checkout or its venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and not p.startswith(str(REPO))]
    if venv is not None:
        path.insert(0, str(venv / "bin"))
    env["PATH"] = os.pathsep.join(path)
    return env


def _run(argv: list, cwd: Path, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    from helpers.tools import require

    require(_tools_missing())
    out = tmp_path_factory.mktemp("dist")
    # sdist first, then the wheel from the unpacked sdist (build's default): a file the sdist
    # lacks is missing from the wheel too, as for a user installing from the sdist
    _run([sys.executable, "-m", "build", "--outdir", out, REPO], cwd=out, env=_clean_env())
    return out


@pytest.mark.slow
def test_the_sdist_and_wheel_pass_twine_check_strict(dist):
    files = sorted(dist.iterdir())
    assert [f.name for f in files] == [f"tipcgen-{__version__}-py3-none-any.whl", f"tipcgen-{__version__}.tar.gz"]
    proc = _run([sys.executable, "-m", "twine", "check", "--strict", *files], cwd=dist, env=_clean_env())
    assert proc.stdout.count("PASSED") == 2, proc.stdout


@pytest.mark.slow
def test_the_wheel_holds_every_module_and_template(dist):
    wheel = dist / f"tipcgen-{__version__}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    package = REPO / "compiler" / "tipcgen"
    wanted = {f"tipcgen/{p.relative_to(package)}" for p in package.rglob("*.py") if "__pycache__" not in p.parts}
    wanted |= {"tipcgen/py.typed"}
    wanted |= {f"tipcgen/templates/{p.name}" for p in (REPO / "templates").iterdir() if p.is_file()}
    assert not wanted - names, f"missing from the wheel: {sorted(wanted - names)}"
    metadata = zipfile.ZipFile(wheel).read(f"tipcgen-{__version__}.dist-info/METADATA").decode()
    assert f"\nVersion: {__version__}\n" in metadata and "\nLicense-Expression: Apache-2.0\n" in metadata


@pytest.mark.slow
def test_the_wheel_in_a_fresh_venv_runs_and_builds_the_bundled_specs(dist, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=tmp_path, env=_clean_env())
    env = _clean_env(venv)
    wheel = dist / f"tipcgen-{__version__}-py3-none-any.whl"
    _run([venv / "bin/python", "-m", "pip", "install", "--quiet", wheel], cwd=tmp_path, env=env)
    where = _run([venv / "bin/python", "-c", "import tipcgen; print(tipcgen.__file__)"], cwd=tmp_path, env=env)
    assert where.stdout.strip().startswith(str(venv)), where.stdout  # the wheel's code, not this checkout's
    tipcgen = venv / "bin" / "tipcgen"
    shown = _run([tipcgen, "--help"], cwd=tmp_path, env=env).stdout
    for command in ("build", "check", "new", "migrate", "lint", "run"):
        assert re.search(rf"^\s+{command}\s", shown, re.M), (command, shown)
    assert _run([tipcgen, "--version"], cwd=tmp_path, env=env).stdout.strip() == __version__
    work = tmp_path / "work"
    (work / "specs").mkdir(parents=True)
    for spec in SPECS.glob("*.yml"):
        (work / "specs" / spec.name).write_bytes(spec.read_bytes())
    _run([tipcgen, "build", "specs/", "--out", "generated"], cwd=work, env=env)
    _run([tipcgen, "schema", "--out", "generated/spec.schema.json"], cwd=work, env=env)
    assert _tree(work / "generated") == _tree(GENERATED), "the wheel builds other files than this checkout"
    _run([tipcgen, "check", "specs/", "--out", "generated"], cwd=work, env=env)
