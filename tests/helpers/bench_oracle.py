"""The benchmark_train.sh oracle: run a REAL upstream `test_tipc/benchmark_train.sh` (with its own
test_train_inference_python.sh, from ../shared/upstream/<repo>/) and OUR generated pair on the same
config and PARAMS, each in a scratch model repo with a recording interpreter, and compare what they
ran; then compare ours with `plan_benchmark` (the Plan of the run).

    diff = compare_bench(config, "paddleseg", "dynamic_bs8_fp32_DP_N1C1")
    assert diff.faithful, diff.describe()

Both runs are staged alike (helpers/upstream.py's recorder and shims: `sleep` returns at once,
`timeout D CMD` runs CMD, `pip`/`nvidia-smi`/network tools fail at once): the repo root is
`<scratch>/repo` (so both name logs `repo_<model>_...`), BENCHMARK_ROOT is set (so both run the
analysis, recorded as a `python .../scripts/analysis.py` command), BENCHMARK_LOG_DIR is unset (logs
under the repo root). PaddleDetection's dataset configs exist with a `repeat:` line 10.

What is compared, each a `Difference` with a category a deliberate deviation can explain
(tipcgen.plan.benchmark_train.DEVIATIONS; anything else is unfaithful):
- commands: every interpreter call in order (argv with the name it was called by,
  CUDA_VISIBLE_DEVICES, cwd): the probe, each inner run's train command, filters, analyses;
- logs: the files each run created under the repo (the scratch root written as `.`);
- results: benchmark_log/results.log's lines and each inner results_python.log's lines;
- datasets: PaddleDetection's dataset files as each run leaves them (ours restores them);
- plan: our recorded commands and logs against `plan_benchmark` + `commands()`.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from helpers.upstream import (
    PYTHONS,
    RECORDER,
    SHIMS,
    Command,
    Difference,
    recorded_argv,
    records,
    snapshot,
    upstream_dir,
    write_exe,
)

# PaddleDetection's benchmark script rewrites line 10 of these (the datasets' `repeat`).
DET_DATASETS = ("configs/datasets/coco_detection.yml", "configs/datasets/coco_instance.yml", "configs/datasets/mot.yml")


# The inner runner's deviations (tipcgen.plan.runners.*.DEVIATIONS) as a benchmark run shows them.
INNER = {
    # upstream's train verdict is the exit of `cat <log>/train.log` (absent here: Run failed)
    "train-status-from-trainer": (r"^inner status: verdicts only$",),
    # PaddleDetection builds DINO's op before each of its trainings
    "no-dino-op-build": (r"^upstream builds the DINO op$",),
    # upstream writes one scratch train.log in the mode's log directory
    "train-log-per-run": (r"^logs: upstream \+\./test_tipc/output/[^/]+/benchmark_train/train\.log$",),
}


@dataclass
class BenchRun:
    side: str  # "upstream" | "ours"
    returncode: Optional[int]  # None: timed out
    elapsed: float
    commands: list = field(default_factory=list)  # [Command]
    files: list = field(default_factory=list)  # files the run created, "./..." relative to the repo
    results: list = field(default_factory=list)  # benchmark_log/results.log lines
    status: dict = field(default_factory=dict)  # inner results_python.log path -> lines
    datasets: dict = field(default_factory=dict)  # PaddleDetection's dataset files after the run
    stdout: str = ""
    stderr: str = ""


@dataclass
class BenchDiff:
    dialect: str
    config: str
    params: str
    upstream: BenchRun
    ours: BenchRun
    differences: list = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.differences

    def deviations(self) -> list:
        """(name, patterns): the benchmark script's deviations and those of the inner runner the
        benchmark runs (as they show in a benchmark run)."""
        from tipcgen.dialects import get_layout
        from tipcgen.plan.benchmark_train import BENCH, DEVIATIONS
        from tipcgen.plan.planner import runner_for

        out = [(dev.name, dev.categories) for dev in DEVIATIONS]
        inner = runner_for(get_layout(self.dialect), BENCH[self.dialect].runner)
        out += [(dev.name, (*dev.categories, *INNER.get(dev.name, ()))) for dev in inner.DEVIATIONS]
        return out

    def unexplained(self) -> list:
        patterns = [re.compile(p) for _name, pats in self.deviations() for p in pats]
        return [d for d in self.differences if not any(p.search(d.category) for p in patterns)]

    def explained_by(self) -> list:
        return [
            name
            for name, pats in self.deviations()
            if any(re.search(p, d.category) for p in pats for d in self.differences)
        ]

    @property
    def faithful(self) -> bool:
        return not self.unexplained()

    def describe(self) -> str:
        head = f"{self.dialect} {Path(self.config).parent.name}/{Path(self.config).name} PARAMS={self.params!r}"
        if not self.differences:
            return f"{head}: identical"
        lines = [f"{head}: {len(self.differences)} difference(s)"]
        lines += [f"  [{d.aspect}] {d.category}: {d.detail}" for d in self.differences]
        lines.append(f"  upstream exit {self.upstream.returncode}, ours exit {self.ours.returncode}")
        lines.append(f"  ours stderr: {self.ours.stderr[-800:]}")
        return "\n".join(lines)


def _stage(scratch: Path, side: str, test_tipc: dict, config: Path, dialect: str) -> tuple[Path, str]:
    """bin/ (recorder and shims) and repo/ (test_tipc/ files, the config, what a checkout has)."""
    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    for name in PYTHONS:
        write_exe(bin_dir / name, RECORDER)
    for name, body in SHIMS.items():
        # Upstream's `sleep 5`s return at once; ours sleeps for real (a step limit's watcher
        # sleeps out the limit).
        if not (name == "sleep" and side == "ours"):
            write_exe(bin_dir / name, body)
    root = scratch / "repo"
    (root / "test_tipc").mkdir(parents=True)
    for name, content in test_tipc.items():
        (root / "test_tipc" / name).write_bytes(content)
    conf_dir = root / "test_tipc" / "configs" / config.parent.name
    conf_dir.mkdir(parents=True)
    shutil.copyfile(config, conf_dir / config.name)
    (root / "deploy").mkdir()
    if dialect == "paddledetection":
        (root / "ppdet" / "modeling" / "transformers" / "ext_op").mkdir(parents=True)
        for rel in DET_DATASETS:
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_dataset_text(rel, ()))
    (scratch / "bm" / "scripts").mkdir(parents=True)
    return root, f"test_tipc/configs/{config.parent.name}/{config.name}"


def run_bench(side: str, test_tipc: dict, config: Path, dialect: str, params: str, timeout: float = 120) -> BenchRun:
    """Run `bash test_tipc/benchmark_train.sh CONFIG benchmark_train [PARAMS]` with `test_tipc`'s
    files (name -> bytes) in a scratch repo."""
    scratch = Path(tempfile.mkdtemp(prefix=f"tipc-bench-{side}-"))
    try:
        root, config_arg = _stage(scratch, side, test_tipc, config, dialect)
        record = scratch / "record.bin"
        drop = ("CUDA_VISIBLE_DEVICES", "TIPC_RECORD_FAIL", "BENCHMARK_LOG_DIR", "PROFILING_TIMER_ONLY", "BASH_ENV")
        env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("TIPC_")}
        env.update(
            PATH=f"{scratch / 'bin'}{os.pathsep}{env.get('PATH', '')}",
            TIPC_RECORD=str(record),
            BENCHMARK_ROOT=str(scratch / "bm"),
            TMPDIR=str(scratch),
        )
        before = snapshot(root)
        args = ["bash", "test_tipc/benchmark_train.sh", config_arg, "benchmark_train"] + ([params] if params else [])
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            args, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        try:
            out, err = proc.communicate(timeout=timeout)
            code: Optional[int] = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            code = None
        run = BenchRun(side, code, time.perf_counter() - t0)
        run.stdout = out.decode("utf-8", "replace")[-4000:]
        run.stderr = err.decode("utf-8", "replace")[-4000:]

        def norm(s: str) -> str:  # the scratch paths differ between the two runs
            return s.replace(str(root), ".").replace(str(scratch), "<scratch>")

        text = lambda p: norm(p.read_bytes().decode("utf-8", "replace"))  # noqa: E731
        run.commands = [
            Command(tuple(norm(a) for a in c.argv), c.cuda_visible_devices, c.cwd) for c in records(record, root)
        ]
        for path in sorted(snapshot(root) - before):
            rel = "./" + path.relative_to(root).as_posix()
            run.files.append(rel)
            if path.name == "results.log":
                run.results = text(path).splitlines()
            elif path.name == "results_python.log":
                run.status[rel] = text(path).splitlines()
        if dialect == "paddledetection":
            run.datasets = {rel: (root / rel).read_text() for rel in DET_DATASETS}
        return run
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def upstream_files(dialect: str) -> dict:
    from tipcgen.plan.benchmark_train import BENCH

    folder = upstream_dir() / BENCH[dialect].upstream
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def our_files(dialect: str) -> dict:
    """The generated benchmark_train.sh, test_train_inference_python.sh and common_func.sh."""
    from tipcgen.dialects import get_layout
    from tipcgen.emit.files import benchmark_script, runner_script
    from tipcgen.plan.benchmark_train import BENCH

    layout, runner = get_layout(dialect), BENCH[dialect].runner
    script, common = runner_script(layout, "benchmark oracle", runner)
    bench = benchmark_script(layout, "benchmark oracle", runner)
    assert bench is not None, dialect
    return {
        "test_train_inference_python.sh": script.encode(),
        "common_func.sh": common.encode(),
        "benchmark_train.sh": bench.encode(),
    }


# ---- comparing


def _first_command_difference(up: list, ours: list) -> Optional[Difference]:
    from tipcgen.plan.runner import EVAL_CUT

    for i, (u, o) in enumerate(zip(up, ours)):
        if u != o:
            joined_u, joined_o = " ".join(u.argv), " ".join(o.argv)
            if u.argv != o.argv and joined_o.startswith(joined_u + ";"):
                cat = EVAL_CUT
            elif u.argv != o.argv:
                only_u = [a for a in u.argv if a not in o.argv]
                only_o = [a for a in o.argv if a not in u.argv]
                cat = f"command {i}: upstream +{only_u[:3]} ours +{only_o[:3]}"
            elif u.cuda_visible_devices != o.cuda_visible_devices:
                cat = (
                    f"command {i}: CUDA_VISIBLE_DEVICES upstream {u.cuda_visible_devices} ours {o.cuda_visible_devices}"
                )
            else:
                cat = f"command {i}: cwd upstream {u.cwd} ours {o.cwd}"
            return Difference("commands", cat, f"\n    upstream: {' '.join(u.argv)}\n    ours:     {' '.join(o.argv)}")
    if len(up) != len(ours):
        longer, side = (up, "upstream") if len(up) > len(ours) else (ours, "ours")
        extra = longer[min(len(up), len(ours))]
        return Difference(
            "commands",
            f"count: upstream {len(up)}, ours {len(ours)}",
            f"first {side} has alone: {' '.join(extra.argv)}",
        )
    return None


def _compare_runs(up: BenchRun, ours: BenchRun) -> list:
    diffs = []
    if (up.returncode == 0) != (ours.returncode in (0, 1)) or up.returncode is None or ours.returncode is None:
        diffs.append(Difference("exit", f"exit upstream {up.returncode} ours {ours.returncode}", ours.stderr[-500:]))
    # PaddleDetection builds DINO's op before each training (a deviation of its runner): set its
    # calls aside so the rest is still compared command by command.
    up_commands = [c for c in up.commands if "setup_ms_deformable_attn_op.py" not in c.argv]
    if len(up_commands) != len(up.commands):
        diffs.append(
            Difference("commands", "upstream builds the DINO op", f"{len(up.commands) - len(up_commands)} calls")
        )
    d = _first_command_difference(up_commands, ours.commands)
    if d:
        diffs.append(d)
    up_files, our_files_ = set(up.files), set(ours.files)
    for f in sorted(up_files - our_files_):
        diffs.append(Difference("logs", f"logs: upstream +{f}", "a file only upstream's run created"))
    for f in sorted(our_files_ - up_files):
        diffs.append(Difference("logs", f"logs: ours +{f}", "a file only our run created"))
    if up.results != ours.results:
        first = next((i for i, (a, b) in enumerate(zip(up.results, ours.results)) if a != b), None)
        if first is None:
            detail = f"upstream {len(up.results)} lines, ours {len(ours.results)}"
        else:
            detail = f"line {first}:\n    upstream: {up.results[first]!r}\n    ours:     {ours.results[first]!r}"
        diffs.append(Difference("results", "results.log lines", detail))
    for path in sorted(set(up.status) | set(ours.status)):
        a, b = up.status.get(path), ours.status.get(path)
        if a != b:
            verdicts_only = a is not None and b is not None and list(map(_unverdict, a)) == list(map(_unverdict, b))
            first = next((i for i, (x, y) in enumerate(zip(a or [], b or [])) if x != y), None)
            detail = f"{path}" + (
                f" line {first}:\n    upstream: {a[first]!r}\n    ours:     {b[first]!r}" if first is not None else ""
            )
            diffs.append(
                Difference("results", "inner status: verdicts only" if verdicts_only else "inner status lines", detail)
            )
    if up.datasets != ours.datasets:
        diffs.append(
            Difference("datasets", "datasets: upstream leaves them rewritten", "dataset files differ after the run")
        )
    return diffs


def _unverdict(line: str) -> str:
    return re.sub(r"Run (failed|successfully) with command", "Run <verdict> with command", line)


def _unwrapped(argv: tuple) -> tuple:
    """A command without the `timeout [OPTION]... DURATION`s it runs under (the timeout shim
    records them before each command it runs, directly or through the runner)."""
    while argv and argv[0] == "timeout":
        i = 1
        while i < len(argv) and argv[i].startswith("-"):
            i += 2 if argv[i] in ("-s", "-k", "--signal", "--kill-after") else 1
        argv = argv[i + 1 :]
    return argv


def _compare_plan(upstream: BenchRun, ours: BenchRun, config: Path, dialect: str, params: str) -> list:
    """Our recorded commands and train/profile logs against the Plan."""
    from tipcgen.dialects import get_layout
    from tipcgen.errors import UsageError
    from tipcgen.plan.benchmark_train import commands, plan_benchmark

    text = config.read_bytes().decode("utf-8")
    try:
        bp = plan_benchmark(text, dialect, params, repo_name="repo", save_log=".", benchmark_root="<scratch>/bm")
        want = [recorded_argv(argv) for argv, _kind in commands(bp, get_layout(dialect))]
    except UsageError as exc:
        if ours.returncode == 2:
            return []
        return [Difference("plan", "plan refuses what the script ran", str(exc))]
    if ours.returncode == 2:
        return [Difference("plan", "script refuses what the plan runs", ours.stderr[-500:])]
    got = [_unwrapped(c.argv)[1:] for c in ours.commands]
    diffs = []
    # the caps (the bench's on the runner, the runner's on training) are compared with upstream's
    # in _compare_runs; here what runs under them
    want_args = [_unwrapped(w)[1:] for w in want]
    if got != want_args:
        first = next((i for i, (a, b) in enumerate(zip(got, want_args)) if a != b), min(len(got), len(want_args)))
        g = " ".join(got[first]) if first < len(got) else "<end>"
        w = " ".join(want_args[first]) if first < len(want_args) else "<end>"
        diffs.append(Difference("plan", f"plan command {first}", f"\n    script: {g}\n    plan:   {w}"))
    logs = {"./" + s.log.lstrip("./") for s in bp.runs()}
    missing = sorted(log for log in logs if log not in set(ours.files))
    if missing:
        diffs.append(Difference("plan", "plan log not written", ", ".join(missing[:3])))
    if dialect == "paddledetection":
        # upstream leaves the datasets as the runs read them: the Plan's edits; ours restores them
        edited = {rel: _dataset_text(rel, bp.dataset_edits) for rel in DET_DATASETS}
        if upstream.datasets != edited:
            diffs.append(Difference("plan", "plan dataset edits", f"upstream {upstream.datasets} plan {edited}"))
        if ours.datasets != {rel: _dataset_text(rel, ()) for rel in DET_DATASETS}:
            diffs.append(Difference("datasets", "datasets: ours not restored", str(ours.datasets)))
    return diffs


def _dataset_text(rel: str, edits: tuple) -> str:
    """A staged dataset file with the (path, line, text) edits that name it."""
    lines = [f"line{n}: {n}" if n != 10 else "  repeat: 1" for n in range(1, 13)]
    for path, number, text in edits:
        if path == rel:
            lines[number - 1] = text
    return "".join(line + "\n" for line in lines)


def _model_name_restored(run: BenchRun, model: str) -> bool:
    """PaddleOCR's status_check sets the global model_name to its 4th argument, which the
    benchmark script never passes: every run after the first analysis is named `repo__bs...`.
    Put the name back in `run` (True: it was lost)."""
    if not model:
        return False

    def fix(s: str) -> str:
        return s.replace("/repo__bs", f"/repo_{model}_bs").replace("--model_name _bs", f"--model_name {model}_bs")

    before = (run.commands, run.files, run.results)

    def fix_argv(argv: tuple) -> tuple:
        return tuple(
            model + a if a.startswith("_bs") and argv[i - 1] == "--model_name" else fix(a) for i, a in enumerate(argv)
        )

    run.commands = [Command(fix_argv(c.argv), c.cuda_visible_devices, c.cwd) for c in run.commands]
    run.files = sorted(fix(f) for f in run.files)
    run.results = [fix(line) for line in run.results]
    return (run.commands, run.files, run.results) != before


def _take_sleeps(up: BenchRun) -> list:
    """Upstream's recorded `sleep`s (the oracle's sleep shim records them; ours sleeps for real,
    unrecorded) out of its commands, as the one difference migrate's oracle names them by."""
    slept = [c for c in up.commands if c.argv and c.argv[0] == "sleep"]
    if not slept:
        return []
    up.commands = [c for c in up.commands if not (c.argv and c.argv[0] == "sleep")]
    args = " ".join(dict.fromkeys(" ".join(c.argv[1:]) or "<none>" for c in slept))
    return [Difference("commands", f"sleep: upstream sleeps {args}", f"{len(slept)} sleeps")]


def compare_bench(config: Path, dialect: str, params: str = "") -> BenchDiff:
    from tipcgen.plan.benchmark_train import parser_value

    up = run_bench("upstream", upstream_files(dialect), config, dialect, params)
    ours = run_bench("ours", our_files(dialect), config, dialect, params)
    diff = BenchDiff(dialect, str(config), params, up, ours)
    lines = [line for line in config.read_bytes().decode("utf-8", "replace").split("\n") if line]
    lost = _model_name_restored(up, parser_value(lines[1]) if len(lines) > 1 else "")
    diff.differences = (
        ([Difference("logs", "upstream loses the model name after the first analysis", "")] if lost else [])
        + _take_sleeps(up)
        + _compare_runs(up, ours)
        + _compare_plan(up, ours, config, dialect, params)
    )
    return diff
