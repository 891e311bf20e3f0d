"""The composite action (action.yml) run as the Actions runner runs it: each step's `if:`, its
`env:` with `${{ inputs.* }}` / `${{ steps.*.outputs.* }}` substituted, its `run:` text in
`bash --noprofile --norc -eo pipefail FILE` (`shell: bash`), the runner's files
(GITHUB_OUTPUT per step, GITHUB_PATH, GITHUB_STEP_SUMMARY) and variables (RUNNER_TEMP,
GITHUB_ACTION_PATH, GITHUB_WORKSPACE as the working directory)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
ACTION = REPO / "action.yml"
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")

# The `if:` expressions the action uses, as the runner evaluates them. An expression not listed
# here fails the harness: a new condition gets its meaning written down, not guessed.
CONDITIONS = {
    "!cancelled() && steps.install.outcome == 'success'": lambda outcomes: outcomes.get("install") == "success",
    "always()": lambda outcomes: True,
}


def installed_here(runner_temp: Path) -> None:
    """What the install step leaves, made of this checkout's tipcgen (the real one, as its venv's
    console script): for running the other steps without installing (the slow tier installs)."""
    (runner_temp / "tipcgen-venv" / "bin").mkdir(parents=True)
    (runner_temp / "tipcgen-venv" / "bin" / "tipcgen").symlink_to(Path(sys.executable).parent / "tipcgen")
    (runner_temp / "tipcgen-action").mkdir()


def load_action(path: Path = ACTION) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@dataclass
class StepRun:
    name: str
    id: str
    outcome: str  # success, failure, skipped
    returncode: int | None
    stdout: str
    stderr: str


@dataclass
class ActionRun:
    steps: list[StepRun] = field(default_factory=list)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    summary: str = ""
    path_added: list[str] = field(default_factory=list)

    def step(self, step_id: str) -> StepRun:
        return next(s for s in self.steps if s.id == step_id)

    @property
    def ok(self) -> bool:
        return all(s.outcome != "failure" for s in self.steps)


def _value(expr: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    match = re.fullmatch(r"inputs\.([\w-]+)", expr)
    if match:
        return inputs[match.group(1)]
    match = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
    if match:
        return outputs.get(match.group(1), {}).get(match.group(2), "")
    raise AssertionError(f"the harness does not evaluate ${{{{ {expr} }}}}")


def substitute(text: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    return EXPR.sub(lambda m: _value(m.group(1), inputs, outputs), text)


def _read_outputs(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
    return out


def run_action(
    workspace: Path,
    runner_temp: Path,
    given: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    action_path: Path = REPO,
    only: tuple[str, ...] | None = None,
    timeout: float = 900,
) -> ActionRun:
    """Run action.yml's steps (all, or the ids in `only`, the others counting as succeeded
    earlier) in `workspace` with the inputs `given` over the defaults."""
    action = load_action(action_path / "action.yml")
    declared = action["inputs"]
    unknown = set(given or {}) - set(declared)
    assert not unknown, f"inputs the action does not declare: {unknown}"
    inputs = {name: str(spec.get("default", "")) for name, spec in declared.items()}
    inputs.update(given or {})
    files = runner_temp / "_runner_files"
    files.mkdir(parents=True, exist_ok=True)
    summary, path_file = files / "step_summary.md", files / "path"
    for f in (summary, path_file):
        f.touch()
    run = ActionRun()
    outcomes: dict[str, str] = {}
    for index, step in enumerate(action["runs"]["steps"]):
        step_id = step.get("id", f"__{index}")
        if only is not None and step_id not in only:
            outcomes[step_id] = "success"
            continue
        condition = step.get("if", "success()")
        condition = EXPR.fullmatch(condition).group(1) if EXPR.fullmatch(condition) else condition
        if condition == "success()":
            wanted = all(o != "failure" for o in outcomes.values())
        else:
            assert condition in CONDITIONS, f"step {step_id}: the harness does not evaluate `if: {condition}`"
            wanted = CONDITIONS[condition](outcomes)
        if not wanted:
            outcomes[step_id] = "skipped"
            run.steps.append(StepRun(step.get("name", step_id), step_id, "skipped", None, "", ""))
            continue
        assert step.get("shell") == "bash", f"step {step_id}: shell must be bash"
        output_file = files / f"output_{index}"
        output_file.write_text("")
        script = files / f"step_{index}.sh"
        script.write_text(substitute(step["run"], inputs, run.outputs), encoding="utf-8")
        step_env = {
            **(env or os.environ),
            "RUNNER_TEMP": str(runner_temp),
            "GITHUB_ACTION_PATH": str(action_path),
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_PATH": str(path_file),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_ACTIONS": "true",
            "CI": "true",
        }
        for key, value in (step.get("env") or {}).items():
            step_env[key] = substitute(str(value), inputs, run.outputs)
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace, env=step_env, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        outcome = "success" if proc.returncode == 0 else "failure"
        outcomes[step_id] = outcome
        run.outputs[step_id] = _read_outputs(output_file)
        run.steps.append(
            StepRun(step.get("name", step_id), step_id, outcome, proc.returncode, proc.stdout, proc.stderr)
        )
    run.summary = summary.read_text(encoding="utf-8")
    run.path_added = path_file.read_text(encoding="utf-8").split()
    return run
