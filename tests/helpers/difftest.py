"""The differential harness: run the generated bash with a recording interpreter and compare
what it ran with `plan()` for the same config and mode (argv, CUDA_VISIBLE_DEVICES, status log)."""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from conftest import RECORDER
from tipcgen.dialects import get_layout
from tipcgen.emit.files import runner_script
from tipcgen.errors import UsageError
from tipcgen.migrate.oracle import nested_recorder
from tipcgen.plan.planner import plan_config, runner_for
from tipcgen.plan.steps import runtime_argv, skip_reason

PYTHONS = ("python", "python3", "python3.7", "python3.10")
# Other programs a chain's steps run (test_paddle2onnx.sh's converter), recorded the same way.
TOOLS = ("paddle2onnx",)
RECORDED = PYTHONS + TOOLS
# Programs a chain's steps run by their path in the repo (PaddleClas's C++ demos, PaddleDetection's,
# built before the run): each work directory gets a recorder there.
BUILT = (
    "./deploy/cpp/build/clas_system",
    "./deploy/cpp_shitu/build/pp_shitu",
    "./deploy/cpp/build/main",
    "./deploy/cpp_infer/build/ppvideo",
    "./deploy/cpp_infer/build/ppocr",
    "./test_tipc/cpp/build/seg_system",
    "./deploy/inference_cpp/build/clas_system",
    "./ocr_db_crnn",  # PaddleOCR's Lite demo, in the device folder the script runs from
)


def _recorded(argv0: str, recorded: tuple = RECORDED) -> bool:
    return argv0 in recorded or argv0 in BUILT


@dataclass(frozen=True)
class Case:
    config: str  # path of the config file
    layout: str
    mode: str
    gpuid: Optional[str] = None
    cuda: Optional[str] = None
    fail: Optional[str] = None  # argv substring the recorder fails on
    node_ip: Optional[str] = None  # TIPC_NODE_IP
    start_port: Optional[str] = None  # FLAGS_START_PORT
    runner: Optional[str] = None  # one of the layout's runners (None: its default)


class Harness:
    """`tools`: more programs to record (a chain's: Lite's adb and sed, the serving chains' sed/cp
    edits); only for scripts that run them as steps (the train runners' scripts use sed themselves)."""

    def __init__(self, root: Path, workers: int = 2, tools: tuple = ()):
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        self.recorded = RECORDED + tuple(tools)
        for name in self.recorded:
            path = self.bin / name
            path.write_text(RECORDER)
            path.chmod(0o755)
        self.workers = workers
        self.scripts: dict = {}

    def script(self, layout: str, runner: Optional[str] = None) -> Path:
        key = (layout, runner)
        if key not in self.scripts:
            d = self.root / "runners" / f"{layout}-{runner or 'default'}" / "test_tipc"
            d.mkdir(parents=True, exist_ok=True)
            script, common = runner_script(get_layout(layout), "differential test", runner)
            (d / "test_train_inference_python.sh").write_text(script)
            (d / "common_func.sh").write_text(common)
            self.scripts[key] = d / "test_train_inference_python.sh"
        return self.scripts[key]

    def run(self, cases: list[Case]) -> list[str]:
        """Mismatch descriptions (empty: bash and plan agree on every case)."""
        for layout, runner in {(c.layout, c.runner) for c in cases}:
            self.script(layout, runner)
        with ThreadPoolExecutor(self.workers) as pool:
            results = pool.map(self._one, enumerate(cases))
        return [r for r in results if r]

    def _one(self, item) -> Optional[str]:
        n, case = item
        work = self.root / f"w{n}"
        work.mkdir()
        (work / "deploy").mkdir()  # a checkout's directories a runner may run steps from
        for built in BUILT:
            path = work / built
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(RECORDER)
            path.chmod(0o755)
        # A chain that runs another runner script (dy2static: test_train_inference_python.sh) finds
        # a recorder there, which also records the config it is given.
        nested = getattr(runner_for(get_layout(case.layout), case.runner), "ORACLE_NESTED", ())
        for name in nested:
            (work / "test_tipc").mkdir(exist_ok=True)
            (work / "test_tipc" / name).write_text(nested_recorder(RECORDER))
        module = runner_for(get_layout(case.layout), case.runner)
        for rel, text in getattr(module, "ORACLE_CHECKOUT", {}).items():  # what a checkout holds
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_text(text)
        record = work / "record.bin"
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("CUDA_VISIBLE_DEVICES", "TIPC_RECORD_FAIL", "TIPC_NODE_IP", "FLAGS_START_PORT")
        }
        if case.node_ip:
            env["TIPC_NODE_IP"] = case.node_ip
        if case.start_port:
            env["FLAGS_START_PORT"] = case.start_port
        env.update(PATH=f"{self.bin}{os.pathsep}{env.get('PATH', '')}", TIPC_RECORD=str(record))
        if case.cuda is not None:
            env["CUDA_VISIBLE_DEVICES"] = case.cuda
        if case.fail:
            env["TIPC_RECORD_FAIL"] = case.fail
        args = ["bash", str(self.scripts[(case.layout, case.runner)]), case.config, case.mode] + (
            [case.gpuid] if case.gpuid else []
        )
        try:
            with open(case.config, "rb") as fh:
                text = fh.read().decode("utf-8")
            dirs_for(text, case, work)
            proc = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True, timeout=120)
            try:
                plan = plan_config(
                    text,
                    get_layout(case.layout),
                    case.mode,
                    gpuid=case.gpuid,
                    cuda_visible_devices=case.cuda,
                    node_ip=case.node_ip,
                    start_port=case.start_port,
                    runner=case.runner,
                    root=str(work),
                    source=case.config,  # what the bash is given: a runner may read its name
                )
            except UsageError as exc:  # the plan refuses the config: the bash must refuse it too
                return _compare_refused(case, exc, proc, _records(record, work), work, bool(nested))
            return _compare(case, plan, proc, _records(record, work), work, self.recorded)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def dirs_for(text: str, case: Case, work: Path) -> None:
    """The directories a checkout has where the plan's steps run (the serving chains `cd` there)."""
    try:
        plan = plan_config(
            text, get_layout(case.layout), case.mode, gpuid=case.gpuid, runner=case.runner, source=case.config
        )
    except UsageError:
        return
    for step in plan.steps:
        if step.cwd and not os.path.isabs(step.cwd) and not step.cwd.startswith(".."):
            (work / step.cwd).mkdir(parents=True, exist_ok=True)


def _records(path: Path, work: Path) -> list:
    """(CUDA_VISIBLE_DEVICES, cwd relative to the work dir, argv[1:]) of each recorded command."""
    if not path.exists():
        return []
    out = []
    for rec in path.read_bytes().decode("utf-8").split("\x1e"):
        if rec:
            flag, cvd, cwd, *argv = rec.split("\x1f")
            out.append((cvd if flag == "set" else None, os.path.relpath(cwd, work), argv))
    return out


def _run_argv(argv: tuple) -> tuple:
    """The interpreter's argv of a step: a leading `timeout DURATION` runs the rest, `bash X.sh`
    runs X.sh (a nested runner, recorded under its path)."""
    if len(argv) > 1 and argv[0] == "bash" and argv[1].endswith(".sh"):
        return tuple(argv[1:])
    return tuple(argv[2:]) if len(argv) > 2 and argv[0] == "timeout" else tuple(argv)


def _step_argv(step) -> tuple:
    """What the recorder sees of a step: its argv, then the text of each file it writes first
    (the nested runner's recorder records the config it reads)."""
    return _run_argv(step.argv) + tuple(text for _path, text in step.files)


def _compare_refused(
    case: Case, exc: Exception, proc, records: list, work: Path, nested: bool = False
) -> Optional[str]:
    """The plan refused the config: the bash must exit 2 before running or writing anything
    (beside the nested runners' recorders this harness put in test_tipc/)."""
    placed = {(work / built).resolve() for built in BUILT}  # this harness's recorders (seg_system's in test_tipc/)
    made = (p for p in (work / "test_tipc").rglob("*") if p.is_file() and p.resolve() not in placed)
    wrote = (work / "test_tipc" / "output").exists() if nested else next(made, None) is not None
    if proc.returncode != 2 or records or wrote:
        return (
            f"{case}: plan refuses ({exc}) but bash exited {proc.returncode} after running "
            f"{len(records)} commands: {proc.stderr[-500:]}"
        )
    if not proc.stderr.startswith("tipc: "):
        return f"{case}: plan refuses ({exc}) but bash says {proc.stderr[-500:]!r}"
    return None


def _nested(program: str) -> bool:
    """A nested runner script the harness stands a recorder in for (test_tipc/<name>.sh)."""
    return program.startswith("test_tipc/") and program.endswith(".sh")


def _compare(case: Case, plan, proc, records: list, work: Path, recorded: tuple = RECORDED) -> Optional[str]:
    ran, failed, lines = [], set(), []
    for step in plan.steps:
        reason = skip_reason(step, failed)
        if reason:
            lines.append(plan.status_line(step, False, skipped=reason))
            continue
        resolved = runtime_argv(step, str(work))  # its run-time parts as the run left them
        # what the recorder sees: the argv, then the text of each file the step writes first
        argv = _run_argv(resolved) + tuple(t for _p, t in step.files) if resolved is not None else None
        ok = argv is not None and len(argv) > 0 and not (case.fail and any(case.fail in a for a in argv))
        if argv and not _recorded(argv[0], recorded) and not _nested(argv[0]):
            ok = False  # the interpreter named by the config is not on PATH
        ran.append((step, argv))
        if step.quiet:  # no status line; its failure fails nothing
            continue
        if not ok:
            failed.add(step.index)
        if step.writes_status_line:
            lines.append(plan.status_line(step, ok))
    want = [
        (s.cuda_visible_devices, s.cwd or ".", list(argv[1:]))
        for s, argv in ran
        if argv and (_recorded(argv[0], recorded) or _nested(argv[0]))
    ]
    if records != want:
        for i, (a, b) in enumerate(zip(records, want)):
            if a != b:
                return f"{case}: step {i}: bash ran {a}, plan says {b}"
        return f"{case}: bash ran {len(records)} commands, plan says {len(want)}"
    status = work / plan.status_log
    expected = "".join(f"{line}\n" for line in plan.preamble)
    expected += "".join(f"\033[33m {line}\033[0m\n" for line in lines)
    got = status.read_text() if status.exists() else ""
    if got != expected:
        return f"{case}: results_python.log differs:\n--- bash\n{got[:800]}\n--- plan\n{expected[:800]}"
    want_rc = 1 if failed else 0
    if proc.returncode != want_rc:
        return f"{case}: bash exited {proc.returncode}, plan implies {want_rc}: {proc.stderr[-500:]}"
    return None
