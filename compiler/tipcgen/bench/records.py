"""One JSON record per benchmark run, in the shape Paddle's benchmark tooling stores.

The first fields are those upstream's analysis scripts write for the benchmark database
(`benchmark_train.sh` -> `analysis.py --model_name ... --base_batch_size ... --run_mode ...
--fp_item ... --keyword ips: --skip_steps N --device_num N1C1 --speed_unit samples/s
--convergence_key loss:`): model_branch, model_commit, model_name, batch_size, fp_item,
run_process_type, run_mode, convergence_value, convergence_key, ips, speed_unit, device_num,
model_run_time, frame_commit, frame_version. `ips` is, as there, the mean of the `ips:` values
after the skipped steps, times the number of processes (each line is one process's rate).

tipcgen's own fields follow: what the run was (model, run_id, nodes, workers, global batch),
how it went (status, exit codes), and what the log said beyond one number (min/max ips, the
step time, the trainer's own samples/s lines, the loss curve, memory).
"""

from __future__ import annotations

import json
import math
import os
import statistics
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    ValidationError,
    model_validator,
)

from tipcgen.bench.execute import Outcome
from tipcgen.bench.matrix import BenchRun
from tipcgen.bench.parse import TrainLog
from tipcgen.errors import Problem, SpecError
from tipcgen.inputs import dotted
from tipcgen.spec.bench_section import MAX_RUN_COUNT, MAX_WORKERS
from tipcgen.spec.policy import MAX_NAME, refuse_control

SPEED_UNIT = "samples/s"
# What `tipcgen report` needs from a record (the rest is informative).
REQUIRED = ("model", "run_id", "ips", "workers", "nodes", "device_num", "fp_item", "global_batch_size")


def _round(value: Optional[float], digits: int = 3) -> Optional[float]:
    return None if value is None else round(float(value), digits)


def throughput(log: TrainLog, skip: int, workers: int) -> dict[str, Any]:
    """ips (all processes), its min/max, the step time, from the `ips:` records after `skip`."""
    kept = log.ips[skip:]
    if not kept:
        return {"ips": 0.0, "ips_per_card": None, "ips_min": None, "ips_max": None, "step_time": None}
    values = [r.ips for r in kept]
    costs = [r.batch_cost for r in kept if r.batch_cost is not None]
    return {
        "ips": _round(statistics.mean(values) * workers),
        "ips_per_card": _round(statistics.mean(values)),
        "ips_min": _round(min(values) * workers),
        "ips_max": _round(max(values) * workers),
        "step_time": _round(statistics.mean(costs), 5) if costs else None,
    }


def thin(points: list) -> list:
    """At most MAX_CURVE of `points`, evenly spaced, the last one kept (what `report` reads)."""
    if len(points) <= MAX_CURVE:
        return points
    kept = points[:: -(-len(points) // MAX_CURVE)]
    kept[-1] = points[-1]
    return kept


def _curves(log: TrainLog) -> dict[str, Any]:
    steps = [(r.step if r.step is not None else i + 1, r.loss) for i, r in enumerate(log.ips) if r.loss is not None]
    epochs = [(e.epoch, e.loss) for e in log.epochs]
    final = epochs[-1][1] if epochs else (steps[-1][1] if steps else None)
    acc = log.metrics.get("acc")
    return {
        "convergence_value": final,
        "loss_curve": thin([[s, _round(v, 6)] for s, v in steps]),
        "epoch_loss": thin([[e, _round(v, 6)] for e, v in epochs]),
        "accuracy": acc[-1][2] if acc else None,
    }


def _trainer_speed(log: TrainLog, warmup_epochs: int) -> dict[str, Any]:
    """The trainer's own epoch lines: global samples/s (epochs after the warm-up) and time."""
    if not log.epochs:
        return {"trainer_samples_per_s": None, "train_time": None}
    steady = log.epochs[warmup_epochs:] or log.epochs[-1:]
    return {
        "trainer_samples_per_s": _round(statistics.mean(e.samples_per_s for e in steady)),
        "train_time": _round(sum(e.seconds for e in log.epochs)),
    }


# What upstream's benchmark jobs export for analysis.py to copy into the record (lower case, as
# benchmark_train.sh sets them: `export frame_version=...`).
_JOB_ENV = ("model_branch", "model_commit", "frame_commit", "frame_version")


def make_record(
    run: BenchRun,
    outcome: Outcome,
    log: TrainLog,
    finished_at: Optional[str] = None,
    root: str = ".",
    ran: Optional[dict] = None,
) -> dict:
    from tipcgen.run.provenance import now, provenance

    finished_at = finished_at or now()
    mode = run.run_mode
    job = {name: os.environ.get(name) for name in _JOB_ENV}
    speed = throughput(log, run.warmup_steps, mode.workers)
    curves = _curves(log)
    per_epoch = len(log.ips) // len(log.epochs) if log.epochs and log.ips else 0
    warmup_epochs = -(-run.warmup_steps // per_epoch) if per_epoch else 1
    trainer = _trainer_speed(log, warmup_epochs)
    if trainer["train_time"] is None:
        trainer["train_time"] = _round(outcome.seconds)
    record: dict[str, Any] = {
        "model_branch": job["model_branch"],
        "model_commit": job["model_commit"],
        "model_name": f"{run.model}_bs{run.batch_size}_{run.fp_item}_{mode.run_mode}",
        "batch_size": run.batch_size,
        "fp_item": run.fp_item,
        "run_process_type": "SingleP" if mode.workers == 1 else "MultiP",
        "run_mode": mode.run_mode,
        "convergence_value": curves.pop("convergence_value"),
        "convergence_key": "loss:",
        "ips": speed.pop("ips"),
        "speed_unit": SPEED_UNIT,
        "device_num": mode.device_num,
        "model_run_time": round(outcome.seconds),
        "frame_commit": job["frame_commit"],
        "frame_version": job["frame_version"] or log.frame_version,
        # tipcgen's fields
        "model": run.model,
        "run_id": run.run_id,
        "status": outcome.status,
        "returncodes": outcome.returncodes,
        "device": run.device,
        "nodes": mode.nodes,
        "procs_per_node": mode.procs,
        "workers": mode.workers,
        "ips_list": list(mode.ips),
        "global_batch_size": run.global_batch_size,
        "max_epochs": run.max_epochs,
        "max_iters": run.max_iters,
        "skip_steps": run.warmup_steps,
        "ips_records": len(log.ips),
        **speed,
        **trainer,
        "peak_rss_mb": _round(outcome.peak_rss_mb, 1),
        "max_mem_reserved_mb": log.max_mem_reserved_mb,
        "max_mem_allocated_mb": log.max_mem_allocated_mb,
        "autolog_rss_mb": log.autolog_rss_mb,
        **curves,
        "log_file": run.main_log,
        "commands": [list(n.argv) for n in run.nodes],
        "finished_at": finished_at,
        "record": provenance("bench", root, finished_at, ran),
    }
    return record


def _is_odd_point(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and any(isinstance(v, float) and not math.isfinite(v) for v in value)


def finite_json(value: Any) -> Any:
    """`value` as strict JSON can carry it, and `report` reads it: a curve point with a NaN or
    infinite value (a diverged run's loss) is left out, any other such number becomes null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value if not _is_odd_point(v)]
    return value


def write_record(record: dict, out: str) -> str:
    from tipcgen.fsio import write_atomic

    data = finite_json(record)
    if data["ips"] is None:
        data["ips"] = 0.0  # no throughput: not a row of the speed-up table
    path = os.path.join(out, f"{record['run_id']}.json")
    write_atomic(path, (json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8"))
    return path


# What `report` and `build --results` read: a record comes from a pull request or another
# machine, so it is read as hostile input (docs/untrusted.md): bounded, typed, one
# located error for the first problem.
MAX_RECORDS = 10_000  # records of one command: the largest bench matrix is 64 x 64 x 2 = 8192 runs
MAX_TOTAL_BYTES = 128 << 20  # all records of one command: reading and parsing stay within seconds
MAX_CURVE = 20_000  # points of one curve (bench keeps every k-th point of a longer log; a plot draws 1400)
MAX_POINTS = 1_000_000  # curve points of all records together: about 120 MB once parsed
MAX_LONG_TEXT = 65_536  # a string not shown in a report (a command's argument, the log path)
_DEVICE_NUM = r"^N[0-9]{1,4}C[0-9]{1,4}$"


def _shown_text(value: str) -> str:
    refuse_control(value)  # a newline or ESC would forge report lines or drive a terminal
    return value


def _finite(value: float) -> float:
    if not math.isfinite(value):  # the parser refuses these first; a record made in Python too
        raise ValueError("must be a finite number")
    return value


Name = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME), AfterValidator(_shown_text)]
Text = Annotated[str, StringConstraints(max_length=MAX_LONG_TEXT), AfterValidator(_shown_text)]
Number = Annotated[float, Strict(), AfterValidator(_finite)]
NonNegative = Annotated[float, Strict(), Field(ge=0), AfterValidator(_finite)]
Count = Annotated[int, Strict(), Field(ge=0, le=MAX_RUN_COUNT)]
Curve = Annotated[list[tuple[Number, Number]], Field(max_length=MAX_CURVE)]
_Scalar = Union[Annotated[int, Strict()], Text]
# run.provenance's block (schema, kind, tipcgen, finished_at, root, model_commit, machine, paddle, node)
RecordBlock = Annotated[dict[Name, Union[_Scalar, Annotated[dict[Name, _Scalar], Field(max_length=32)]]],
                        Field(max_length=32)]  # fmt: skip


class _Typed(BaseModel):
    # Fields tipcgen does not know are ignored (another version's, upstream's); those it knows
    # are checked, whether a report shows them or not.
    model_config = ConfigDict(extra="ignore", frozen=True)


class ConvergenceRecord(_Typed):
    verdict: Literal["PASS", "FAIL"]
    metric: Name
    target: Number
    direction: Literal["min", "max"] = "min"
    tolerance: Optional[NonNegative] = None
    within: Annotated[dict[Literal["epochs", "steps"], Count], Field(min_length=1, max_length=1)]
    best_value: Optional[Number] = None
    curve: Curve = []


class RunRecord(_Typed):
    """A run record as `report` and `build --results` accept it (make_record writes these)."""

    model: Name
    run_id: Name
    ips: NonNegative
    workers: Annotated[int, Strict(), Field(ge=1, le=MAX_WORKERS)]
    nodes: Annotated[int, Strict(), Field(ge=1, le=MAX_WORKERS)]
    device_num: Annotated[Name, StringConstraints(pattern=_DEVICE_NUM)]
    fp_item: Name
    global_batch_size: Annotated[int, Strict(), Field(ge=1, le=MAX_RUN_COUNT * MAX_WORKERS)]
    # upstream's benchmark fields
    model_branch: Optional[Text] = None
    model_commit: Optional[Text] = None
    model_name: Optional[Name] = None
    batch_size: Optional[Count] = None
    run_process_type: Optional[Name] = None
    run_mode: Optional[Name] = None
    convergence_value: Optional[Number] = None
    convergence_key: Optional[Name] = None
    speed_unit: Optional[Name] = None
    model_run_time: Optional[NonNegative] = None
    frame_commit: Optional[Text] = None
    frame_version: Optional[Text] = None
    # tipcgen's
    status: Optional[Name] = None
    returncodes: Annotated[
        list[Optional[Annotated[int, Strict(), Field(ge=-(2**31), le=2**31)]]], Field(max_length=MAX_WORKERS)
    ] = []
    device: Optional[Literal["cpu", "gpu"]] = None
    procs_per_node: Optional[Annotated[int, Strict(), Field(ge=1, le=MAX_WORKERS)]] = None
    ips_list: Annotated[list[Name], Field(max_length=MAX_WORKERS)] = []
    max_epochs: Optional[Count] = None
    max_iters: Optional[Count] = None
    skip_steps: Optional[Count] = None
    ips_records: Optional[Annotated[int, Strict(), Field(ge=0)]] = None
    ips_per_card: Optional[NonNegative] = None
    ips_min: Optional[NonNegative] = None
    ips_max: Optional[NonNegative] = None
    step_time: Optional[NonNegative] = None
    trainer_samples_per_s: Optional[NonNegative] = None
    train_time: Optional[NonNegative] = None
    peak_rss_mb: Optional[NonNegative] = None
    max_mem_reserved_mb: Optional[NonNegative] = None
    max_mem_allocated_mb: Optional[NonNegative] = None
    autolog_rss_mb: Optional[NonNegative] = None
    accuracy: Optional[Number] = None
    loss_curve: Curve = []
    epoch_loss: Curve = []
    log_file: Optional[Text] = None
    commands: Annotated[list[Annotated[list[Text], Field(max_length=4096)]], Field(max_length=MAX_WORKERS)] = []
    finished_at: Optional[Name] = None
    convergence: Optional[ConvergenceRecord] = None
    record: Optional[RecordBlock] = None

    @model_validator(mode="after")
    def _nodes(self):
        if self.nodes > self.workers:
            raise ValueError(f"nodes {self.nodes} is more than workers {self.workers} (processes of all nodes)")
        return self

    def points(self) -> int:
        return len(self.loss_curve) + len(self.epoch_loss) + (len(self.convergence.curve) if self.convergence else 0)


def _problem(path: str, message: str, field: Optional[str] = None, line: Optional[int] = None, col=None):
    from tipcgen.errors import printable

    return SpecError([Problem(printable(path), line, col, field, message)])


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        return f"a JSON array of {len(value)}"
    text = json.dumps(value, ensure_ascii=True) if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:40] + "..." + text[-12:]


def check_record(data: Any, path: str) -> RunRecord:
    """The typed record, or one located error: the file and the first bad field."""
    if not isinstance(data, dict):
        raise _problem(path, "not a run record: a run record is a JSON object (written by `tipcgen bench`)")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise _problem(path, f"run record without {', '.join(missing)} (written by `tipcgen bench`?)")
    try:
        return RunRecord.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        message = str(err["msg"]).removeprefix("Value error, ").replace("Input should", "should", 1)
        message = message[:1].lower() + message[1:]
        if err["type"] not in ("missing", "value_error"):  # a value error shows the value itself
            message += f", got {_shown(err.get('input'))}"
        raise _problem(path, message, field=dotted(err["loc"]) or None) from None


def _record_files(paths: list[str]) -> list[tuple[str, Optional[str]]]:
    """(file, the directory tree it was found in; None: a file argument), at most MAX_RECORDS."""
    files: list[tuple[str, Optional[str]]] = []
    for p in paths:
        if not os.path.isdir(p):
            files.append((p, None))
            continue
        found = []
        with os.scandir(p) as entries:
            for entry in entries:
                if entry.name.endswith(".json"):
                    found.append(entry.path)
                    if len(files) + len(found) > MAX_RECORDS:
                        raise _problem(p, f"more than {MAX_RECORDS} run records (*.json); give fewer at once")
        if not found:
            raise _problem(p, "no *.json run records in this directory")
        files.extend((f, p) for f in sorted(found))
    if len(files) > MAX_RECORDS:
        raise _problem(paths[-1], f"more than {MAX_RECORDS} run records in all; give fewer at once")
    return files


def read_json(path: str, tree: Optional[str] = None) -> Any:
    """A record file's JSON through the one reader of records (run.provenance.read_record)."""
    from tipcgen.run.provenance import read_record

    return read_record(path, tree)


def load_records(paths: list[str]) -> list[dict]:
    """Records from files (a directory: its *.json), each read within the bounds of the one
    reader of records and checked against RunRecord; of several records of one run_id the latest
    (`finished_at`) wins. In a directory, JSON that is no bench record (Paddle's
    backup_env.*.json beside bench's records, a run's report) is passed over without a word; a
    file named on the command line is checked whatever it holds. The dicts hold the fields given
    (None left out), with their checked types."""
    from tipcgen.run.provenance import record_kind

    latest: dict[str, dict] = {}
    size = points = 0
    empty = {p for p in paths if os.path.isdir(p)}
    for path, tree in _record_files(paths):
        data = read_json(path, tree)
        size += os.stat(path).st_size  # read above: a regular file within the bound
        if size > MAX_TOTAL_BYTES:
            raise _problem(path, f"the records add up to more than {MAX_TOTAL_BYTES >> 20} MiB; give fewer at once")
        if tree is not None and isinstance(data, dict) and record_kind(data) in (None, "run", "fleet"):
            continue  # found in a folder and not a bench record: not ours to read
        empty.discard(tree or "")
        record = check_record(data, path)
        points += record.points()
        if points > MAX_POINTS:
            raise _problem(path, f"the records hold more than {MAX_POINTS} curve points in all; give fewer at once")
        data = record.model_dump(exclude_none=True)
        old = latest.get(record.run_id)
        if old is None or data.get("finished_at", "") >= old.get("finished_at", ""):
            latest[record.run_id] = data
    for p in sorted(empty):
        raise _problem(p, "no run records of `tipcgen bench` in this directory (other JSON is passed over)")
    return list(latest.values())
