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

import datetime
import json
import os
import statistics
from typing import Any, Optional

from tipcgen.bench.execute import Outcome
from tipcgen.bench.matrix import BenchRun
from tipcgen.bench.parse import TrainLog
from tipcgen.errors import UsageError

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


def _curves(log: TrainLog) -> dict[str, Any]:
    steps = [(r.step if r.step is not None else i + 1, r.loss) for i, r in enumerate(log.ips) if r.loss is not None]
    epochs = [(e.epoch, e.loss) for e in log.epochs]
    final = epochs[-1][1] if epochs else (steps[-1][1] if steps else None)
    acc = log.metrics.get("acc")
    return {
        "convergence_value": final,
        "loss_curve": [[s, _round(v, 6)] for s, v in steps],
        "epoch_loss": [[e, _round(v, 6)] for e, v in epochs],
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


def make_record(run: BenchRun, outcome: Outcome, log: TrainLog, finished_at: Optional[str] = None) -> dict:
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
        "finished_at": finished_at or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    return record


def write_record(record: dict, out: str) -> str:
    from tipcgen.emit.fsio import write_atomic

    path = os.path.join(out, f"{record['run_id']}.json")
    write_atomic(path, (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return path


def _json_files(paths: list[str]) -> list[str]:
    files: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".json"))
            if not found:
                raise UsageError(f"{p}: no *.json run records in this directory")
            files.extend(found)
        else:
            files.append(p)
    return files


def load_records(paths: list[str]) -> list[dict]:
    """Records from files (a directory: its *.json), checked for what a report needs; of
    several records of one run_id the latest (`finished_at`) wins."""
    latest: dict[str, dict] = {}
    for path in _json_files(paths):
        try:
            with open(path, encoding="utf-8") as fh:
                record = json.load(fh)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{exc.lineno}:{exc.colno}: not a JSON run record: {exc.msg}") from None
        if not isinstance(record, dict):
            raise UsageError(f"{path}: a run record is a JSON object (written by `tipcgen bench`)")
        missing = [k for k in REQUIRED if k not in record]
        if missing:
            raise UsageError(f"{path}: run record without {', '.join(missing)} (written by `tipcgen bench`?)")
        bad = [k for k in ("ips", "workers", "nodes", "global_batch_size") if not _number(record[k])]
        if bad:
            raise UsageError(f"{path}: field {bad[0]} must be a number, not {record[bad[0]]!r}")
        old = latest.get(record["run_id"])
        if old is None or str(record.get("finished_at", "")) >= str(old.get("finished_at", "")):
            latest[record["run_id"]] = record
    return list(latest.values())


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
