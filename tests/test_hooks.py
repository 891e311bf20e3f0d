"""What other repositories use: the pre-commit hooks (.pre-commit-hooks.yaml) run by the real
pre-commit in a scratch model repository whose config names this checkout, and the example CI
workflow (docs/ci/) passes actionlint."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.actionlint import actionlint
from helpers.cli import run_argv
from helpers.tools import require

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / "docs" / "ci" / "tipc.yml"


def _need(tool_ok: bool, why: str) -> None:
    require("" if tool_ok else why)


_actionlint = actionlint


def test_example_workflow_passes_actionlint(tmp_path):
    proc = _actionlint(WORKFLOW)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # and actionlint does look: a typo in a key of the same workflow is found
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("runs-on:", "runs-onn:"))
    proc = _actionlint(broken)
    assert proc.returncode == 1 and 'unexpected key "runs-onn"' in proc.stdout, proc.stdout + proc.stderr


def test_example_workflow_runs_tipcgen_commands_that_exist():
    """The workflow's tipcgen steps name real commands and options (no drift from the CLI)."""
    from typer.testing import CliRunner

    from tipcgen.cli import app

    text = WORKFLOW.read_text()
    for args in (["check", "--help"], ["lint", "--help"], ["run", "--help"]):
        assert CliRunner().invoke(app, args).exit_code == 0
    # `tipcgen check` at a repo root (checks test_tipc/ itself) is the action's (tests/test_action.py)
    assert "uses: your-org/tipcgen@v" in text
    assert "--suite" in CliRunner().invoke(app, ["run", "--help"]).output and "--dry-run" in text
    # tipcgen is not on PyPI: the action installs its own source (or a wheel) and the workflow says so
    assert "pip install tipcgen\n" not in text and ".whl" in text


def test_example_workflow_dry_run_step_runs_for_real_on_this_repos_specs(tmp_path):
    """The workflow's dry-run step, run as it is written (bash -euo pipefail), in a copy of this
    repo's specs: it prints every suite's commands and exits 0 (it once imported a module that
    moved, and crashed)."""
    import yaml

    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["tipc"]["steps"]
    script = next(s["run"] for s in steps if s.get("name") == "Dry run of every suite")
    shutil.copytree(REPO / "specs", tmp_path / "test_tipc" / "specs")
    proc = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    for spec in sorted((tmp_path / "test_tipc" / "specs").glob("*.yml")):
        for suite in _suite_names(spec):
            assert f"::group::test_tipc/specs/{spec.name} [{suite}]" in proc.stdout
    assert "tools/train.py" in proc.stdout


def _suite_names(spec: Path) -> list[str]:
    from typer.testing import CliRunner

    from tipcgen.cli import app

    result = CliRunner().invoke(app, ["validate", str(spec), "--suites"])
    assert result.exit_code == 0, result.output
    return result.stdout.split()


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _snapshot(dest: Path) -> Path:
    """This working tree (tracked and untracked, not ignored files) as a one-commit git repo:
    what the hooks are tried from, whatever a developer edits or commits meanwhile."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, check=True, capture_output=True, text=True,
    ).stdout.split("\0")  # fmt: skip
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    _git(dest, "init", "-q")
    _git(dest, "add", ".")
    _git(dest, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "snapshot")
    return dest


def _hook(model: Path, hook: str, home: Path, source: Path) -> subprocess.CompletedProcess:
    """`pre-commit run HOOK --all-files` in `model`, whose committed .pre-commit-config.yaml names
    the `source` snapshot at its commit, as a repo adopting the hooks does: the hook environment
    is installed once (in `home`) and reused by every later run."""
    config = model / ".pre-commit-config.yaml"
    if not config.exists():
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=source, check=True, capture_output=True, text=True
        ).stdout.strip()
        config.write_text(
            f"repos:\n  - repo: {source}\n    rev: {rev}\n    hooks:\n      - id: tipcgen-check\n"
            "      - id: tipcgen-lint\n"
        )
        _git(model, "add", ".pre-commit-config.yaml")
        _git(model, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "pre-commit hooks")
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", hook, "--all-files"],
        cwd=model,
        env={**os.environ, "PRE_COMMIT_HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        capture_output=True,
        text=True,
        timeout=900,
    )


def _workflow_steps() -> list[tuple[str, str]]:
    import re

    import yaml

    doc = yaml.safe_load(WORKFLOW.read_text())
    env = doc.get("env") or {}

    def runs(step: dict) -> bool:
        # as Actions would: a step guarded by `env.X != ''` runs only when the workflow sets X
        guard = re.search(r"env\.(\w+) != ''", str(step.get("if", "")))
        return guard is None or bool(env.get(guard.group(1)))

    steps = doc["jobs"]["tipc"]["steps"]
    return [(s["name"], s["run"]) for s in steps if "run" in s and s["name"] != "Install tipcgen" and runs(s)]


def _run_step(model: Path, script: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-e", "-c", script], cwd=model, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"},
    )  # fmt: skip


@pytest.mark.slow
def test_workflow_and_precommit_hooks_pass_in_a_switched_repo_and_fail_with_the_diff_when_stale(tmp_path):
    """A PaddleClas slice (its corpus configs and real scripts) switched with `tipcgen migrate
    --apply`: every step of the example workflow (but the install) and both hooks, for real."""
    from helpers.repo_slice import repo_slice

    _need(shutil.which("git") is not None, "git is not installed")
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        _need(False, "pre-commit is not installed (the dev extra installs it)")
    model = repo_slice(tmp_path, "PaddleClas")
    migrate = run_argv(
        ["migrate", "--apply", "--accept-changes", "--mode", "lite_train_lite_infer"],
        cwd=model, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert migrate.returncode == 0, migrate.stdout[-2000:] + migrate.stderr[-2000:]
    # off a terminal, the import's progress: its last line counts every model
    said = re.findall(r"^tipcgen migrate: imported (\d+) of (\d+) models \(\d+ s\)$", migrate.stderr, re.M)
    assert said and said[-1][0] == said[-1][1], migrate.stderr
    _git(model, "init", "-q")
    _git(model, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(model, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "switch to tipcgen")
    for name, script in _workflow_steps():
        proc = _run_step(model, script)
        assert proc.returncode == 0, f"{name}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    home = tmp_path / "pre-commit-home"
    source = _snapshot(tmp_path / "tipcgen")

    fresh = _hook(model, "tipcgen-check", home, source)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert "tipcgen check" in fresh.stdout and "Passed" in fresh.stdout
    lint = _hook(model, "tipcgen-lint", home, source)
    assert lint.returncode == 0, lint.stdout + lint.stderr

    spec = model / "test_tipc" / "specs" / "AlexNet.yml"
    spec.write_text(spec.read_text().replace("python: python3.7", "python: python3.9", 1))
    stale = _hook(model, "tipcgen-check", home, source)
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "Failed" in stale.stdout and "+python:python3.9" in stale.stdout, stale.stdout
    from helpers.action import installed_here, run_action

    installed_here(tmp_path / "runner")  # the action's check step, with this checkout's tipcgen
    check = run_action(model, tmp_path / "runner", only=("check",)).step("check")
    assert check.returncode == 1 and "+python:python3.9" in check.stdout
