"""What a Plan is: its steps, the status line each step gets, and when a step is skipped."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Optional

# Status-line formats ({verdict} {model} {command} {log}), as each family's status_check prints
# them: the models tutorial (and seed document 000) end `!  `, the repos' common_func.sh name the
# step's log after a dash, with one or two trailing blanks or ` ! `.
STATUS_BANG = "{verdict} with command - {model} - {command}!  "

# Steps upstream runs without a status line (PaddleClas's C++ chain writes the demo's yaml before
# each inference run): they run, and count when they fail, but write no line to the status log.
SILENT_KINDS = frozenset({"prep"})


@dataclass(frozen=True)
class Step:
    index: int
    kind: str  # train | eval | export | infer | prep (SILENT_KINDS)
    command: str  # the upstream command text, as the status line shows it
    argv: Optional[tuple]  # None: the command's quotes do not balance, it cannot run
    log: Optional[str]  # where stdout+stderr go (None: the terminal)
    cuda_visible_devices: Optional[str]  # None: unset
    # The train step whose failure skips this one (eval/export/infer of the same run). Upstream
    # runs them into a second failure; a failed export does not skip inference (as upstream).
    depends_on: Optional[int] = None
    nodes: int = 1
    group: str = ""  # e.g. "norm_train_gpus_0,1_autocast_fp32"
    # Why this step is skipped even when its train succeeds: on a node other than the first of a
    # multi-node run only trainer 0 saved the model ("not trainer 0").
    skip: Optional[str] = None
    # The log path the status line names (upstream's status_check 5th argument; None: none).
    status_path: Optional[str] = None
    # Where the command runs, relative to the repo root (None: the root), e.g. PaddleClas's deploy/.
    cwd: Optional[str] = None
    # How the output reaches `log`: "log" (`> log 2>&1`) or "tee" (`2>&1 | tee log`: also shown).
    output: str = "log"
    # Seconds the step may run (the spec's `limits`; None: tipcgen's default, plan/limits.py).
    timeout: Optional[int] = None
    # Seconds a train step's logs may stay unchanged before it counts as stalled (None: no watchdog).
    stall: Optional[int] = None
    # Files the step writes before it runs: ((path relative to the repo root, text), ...) (the
    # dy2static chain's per-run train configs).
    files: tuple = ()
    # False: the step appends no status line of its own (a nested runner writes its own).
    writes_status: bool = True

    def status_line(self, model_name: str, ok: bool, skipped: Optional[str] = None, fmt: str = STATUS_BANG) -> str:
        """The line results_python.log gets; `skipped` is the reason a step did not run."""
        verdict = f"Run skipped ({skipped})" if skipped else "Run successfully" if ok else "Run failed"
        return fmt.format(verdict=verdict, model=model_name, command=self.command, log=self.status_path or "")


def skip_reason(step: Step, failed: set) -> Optional[str]:
    """Why `step` is not run, given the indices of the steps that failed so far (None: run it)."""
    if step.depends_on is not None and step.depends_on in failed:
        return "train failed"
    return step.skip


@dataclass(frozen=True)
class Plan:
    layout: str
    mode: str
    model_name: str
    log_dir: str
    status_log: str
    steps: tuple
    status_format: str = STATUS_BANG
    # Lines the runner appends to the status log before any step (e.g. PaddleSeg's mode banner).
    preamble: tuple = ()
    # (NAME, VALUE) the runner exports for every step when NAME is unset or empty: the launcher's
    # PADDLE_START_PORT from FLAGS_START_PORT (paddle >= 2.3 reads only the former).
    env: tuple = ()

    def status_line(self, step: Step, ok: bool, skipped: Optional[str] = None) -> str:
        return step.status_line(self.model_name, ok, skipped, self.status_format)

    def to_json(self) -> str:
        data = asdict(self)
        for step in data["steps"]:  # fields only some chains use: shown when they say something
            for name, default in (("files", ()), ("writes_status", True)):
                if step[name] == default:
                    del step[name]
        return json.dumps(data, indent=2, ensure_ascii=False)
