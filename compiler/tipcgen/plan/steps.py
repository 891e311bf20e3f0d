"""What a Plan is: its steps, the status line each step gets, and when a step is skipped."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Optional

from tipcgen.script.shellwords import sed_literal

# Status-line formats ({verdict} {model} {command} {log}), as each family's status_check prints
# them: the models tutorial (and seed document 000) end `!  `, the repos' common_func.sh name the
# step's log after a dash, with one or two trailing blanks or ` ! `.
STATUS_BANG = "{verdict} with command - {model} - {command}!  "

# Steps upstream runs without a status line (PaddleClas's C++ chain writes the demo's yaml before
# each inference run): they run, and count when they fail, but write no line to the status log.
SILENT_KINDS = frozenset({"prep"})
FILL_BYTES = 1 << 16  # a run-time fill reads the first lines of a small file the step wrote


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
    # A background service (the serving chains' servers): "start" runs the command in the
    # background and waits up to `warmup` seconds, its status being whether it is still up (or
    # ended well) by then; "stop" runs the service's own stop command, then stops what is left of
    # the last started service's process group.
    service: str = ""
    warmup: int = 0
    # No status line, and its failure fails nothing: what upstream runs without status_check (a
    # service's stop command, the serving chains' edits of their config files).
    quiet: bool = False
    # Text the argv takes from files at run time (the serving chains read a converted model's
    # feed variable): (placeholder, file relative to the repo root, line index); the placeholder
    # becomes that line's value, as func_parser_value cuts it ("" when the file is absent).
    fills: tuple = ()
    # Its argv words with `*` are globbed at run time, in its cwd (upstream's eval globs them);
    # a word matching nothing stays as it is.
    globs: bool = False

    @property
    def writes_status_line(self) -> bool:
        """Whether running it appends a status line: not a silent kind (SILENT_KINDS), not a quiet
        step, not one whose nested runner writes its own."""
        return self.writes_status and not self.quiet and self.kind not in SILENT_KINDS

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
        for step in data["steps"]:
            # Fields only some chains use (services, files, nested status): omitted at their defaults,
            # so the plans of the other runners read as before.
            for name, default in _SERVICE_DEFAULTS.items():
                if step.get(name) == default:
                    del step[name]
        return json.dumps(data, indent=2, ensure_ascii=False)


_SERVICE_DEFAULTS = {
    "files": (),
    "writes_status": True,
    "service": "",
    "warmup": 0,
    "quiet": False,
    "fills": (),
    "globs": False,
}


def runtime_argv(step: Step, root: str) -> Optional[tuple]:
    """The argv a step runs with, its run-time parts (`fills`, `globs`) resolved in `root` (the
    repo root the step's cwd is relative to). What the comparers hold a recorded command to."""
    import glob
    import os

    from tipcgen.errors import TipcError
    from tipcgen.inputs import read_bytes

    if step.argv is None:
        return None
    where = os.path.join(root, step.cwd or ".")
    argv = list(step.argv)
    for placeholder, path, index in step.fills:
        value = ""
        try:
            data = read_bytes(os.path.join(root, path), FILL_BYTES, tree=root, what="a file a step reads")
        except TipcError:
            data = b""  # missing, a link leading out of the repo, not a regular file: as an empty file
        # upstream: awk's first three lines, split on newlines (empty ones vanish)
        lines = [line for line in data[:FILL_BYTES].decode("utf-8", "replace").split("\n")[:3] if line]
        if index < len(lines):
            parts = lines[index].split(":")
            value = parts[1] if len(parts) > 1 else ""
        # a fill lands in a sed replacement (the serving chains' feed variable): as data
        argv = [a.replace(placeholder, sed_literal(value)) for a in argv]
    if step.globs:
        out: list = []
        for a in argv:
            hits = sorted(glob.glob(a, root_dir=where)) if "*" in a else []
            out += hits or [a]
        argv = out
    return tuple(argv)
