"""Synthetic run records for the status page's tests and benchmark: run reports in the shape
`tipcgen run --json` writes (schema 2, or the old unversioned shape) with their step logs, and
`tipcgen bench` sessions (one directory per session, as `--out` makes them)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Optional

STEPS = (("train", "norm_train"), ("eval", "eval"), ("export", "export"), ("infer", "cpu bs1"), ("infer", "cpu bs6"))


def stamp(i: int) -> str:
    day, hour = divmod(i, 24)
    return f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T{hour:02d}:00:00+00:00"


def run_report(
    model: str,
    mode: str,
    statuses: list[str],
    when: str,
    *,
    commit: str = "a" * 40,
    paddle: Optional[str] = "3.0.0",
    layout: str = "paddleocr",
    versioned: bool = True,
    reasons: Optional[dict] = None,
    suite: Optional[str] = None,
    config: Optional[str] = None,
) -> dict:
    log_dir = f"test_tipc/output/{model}/{mode}"
    steps = []
    for i, ((kind, group), status) in enumerate(zip(STEPS, statuses)):
        steps.append(
            {
                "index": i,
                "kind": kind,
                "group": group,
                "nodes": 1,
                "depends_on": None,
                "argv": ["python3", "tools/train.py"],
                "command": f"python3 tools/{kind}.py -c configs/{model}.yml",
                "log": f"{log_dir}/{kind}_{i}.log",
                "cuda_visible_devices": None,
                "status": status,
                "returncode": 1 if status == "failed" else (0 if status == "passed" else None),
                "seconds": 1.5,
                "reason": (reasons or {}).get(i),
                "limit": None,
                "status_line": None,
                "benchmark": None,
            }
        )
    data = {
        "tipcgen": "0.1.0",
        "source": f"specs/{model}.yml",
        "layout": layout,
        "mode": mode,
        "model_name": model,
        "log_dir": log_dir,
        "status_log": f"{log_dir}/results_python.log",
        "summary": {"steps": len(steps)},
        "steps": steps,
    }
    if versioned:
        data = {
            "record": {
                "schema": 2,
                "kind": "run",
                "tipcgen": "0.1.0",
                "finished_at": when,
                "root": "",
                "model_commit": commit,
                "machine": {"host": "ci-1", "system": "Linux", "arch": "x86_64", "cpus": 2, "python": "3.11"},
                "paddle": paddle,
                **({"suite": suite} if suite else {}),
                **({"config": config} if config else {}),
            },
            **data,
        }
    return data


def bench_record(model: str, device_num: str, workers: int, nodes: int, ips: float, when: str, **kw) -> dict:
    r = {
        "record": {"schema": 2, "kind": "bench", "tipcgen": "0.1.0", "finished_at": when, "root": ""},
        "model": model,
        "run_id": f"{model}_bs32_fp32_{'sp' if workers == 1 else 'mp'}_{device_num}",
        "ips": ips,
        "workers": workers,
        "nodes": nodes,
        "device_num": device_num,
        "device": "cpu",
        "fp_item": "fp32",
        "global_batch_size": 32,
        "speed_unit": "samples/s",
        "status": "passed",
        "run_mode": "sp" if workers == 1 else "mp",
        "finished_at": when,
    }
    r.update(kw)
    return r


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


REGRESSED = (9, 10)  # runs (0-based) whose multi-process throughput drops 12 %


def regression_history(root: Path, runs: int = 20, model: str = "tiny_rec", seed: int = 7) -> Path:
    """`runs` bench sessions (N1C1 and N1C2 each), noise within ±1.5 %, and N1C2's throughput
    12 % lower in the runs REGRESSED (a regression that was fixed two runs later)."""
    rng = random.Random(seed)
    for i in range(runs):
        when = stamp(i)
        sp = 300.0 * (1 + rng.uniform(-0.015, 0.015))
        mp = 500.0 * (1 + rng.uniform(-0.015, 0.015)) * (0.88 if i in REGRESSED else 1.0)
        session = root / f"bench_{i:03d}"
        write(session / f"{model}_sp.json", bench_record(model, "N1C1", 1, 1, round(sp, 2), when))
        write(session / f"{model}_mp.json", bench_record(model, "N1C2", 2, 1, round(mp, 2), when))
    return root


def with_logs(root: Path, data: dict, text: str = "") -> None:
    """Write each step's log below `root` (the repo root the report's paths start from)."""
    for st in data["steps"]:
        if st["status"] != "skipped":
            log = root / st["log"]
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(text or f"{st['kind']} log\nline 2\n", encoding="utf-8")


def _fleet_record(fleet, nodes: list, when: str, reason=None, refused=None) -> dict:
    """A fleet record as `tipcgen fleet` writes it (fleet.report.report_data), dated `when`."""
    from tipcgen.fleet.report import report_data

    failed = any(n.state != "passed" for n in nodes)
    data = report_data(fleet, nodes, reason, 1 if failed else 0, {"name": "ssh"}, refused)
    data["record"]["finished_at"] = when
    return data


def status_scenario(root: Path, spec: str) -> dict:
    """The records of the page tests: two suites of one model (`normal` twice, `multiproc` twice,
    its second train timed out), a two-node fleet run whose node 2 was lost after a passing run
    (node 1, trainer 0, stopped by it), and a fleet run refused before it started. Fleet records
    come from the real writer (fleet_for on the bundled spec, report_data). Returns names."""
    import os

    from tipcgen.fleet.nodes import fleet_for
    from tipcgen.fleet.report import NodeOutcome, StepOutcome
    from tipcgen.fleet.run import refused_outcomes

    mode = "lite_train_lite_infer"
    rec = root / "records"
    normal = dict(suite="normal", config="specs/tiny_rec.yml")
    multi = dict(suite="multiproc", config="specs/tiny_rec.yml")
    write(rec / "run/n1.json", run_report("tiny_rec", mode, ["passed"] * 5, stamp(0), **normal))
    write(rec / "run/m1.json", run_report("tiny_rec", mode, ["passed"] * 5, stamp(1), **multi))
    write(rec / "run/n2.json", run_report("tiny_rec", mode, ["passed"] * 5, stamp(2), **normal))
    write(rec / "run/m2.json", run_report("tiny_rec", mode, ["timed out"] + ["skipped"] * 4, stamp(3),
                                         reasons={0: "timed out after 600 s", **{i: "train failed" for i in range(1, 5)}},
                                         **multi))  # fmt: skip
    for i in range(3):  # Paddle's environment dumps beside the records: not records
        write(rec / f"run/backup_env.{i}.json", {"PADDLE_TRAINER_ID": str(i), "PATH": "/usr/bin"})
    cwd = os.getcwd()
    os.chdir(root)
    try:
        fleet = fleet_for(spec, mode, suite="fleet", root=str(root), start_port=17000)
    finally:
        os.chdir(cwd)
    one, two = (n.ip for n in fleet.nodes)

    def steps(node, statuses, reasons=None):
        return [StepOutcome(s.index, s.kind, s.group, s.log, st, (reasons or {}).get(s.index))
                for s, st in zip(node.plan.steps, statuses)]  # fmt: skip

    n1, n2 = fleet.nodes
    count = len(n1.plan.steps)
    rest = count - 1
    ok = [NodeOutcome(one, n1.dir, "passed", 0, 40.0, None, steps(n1, ["passed"] * count), []),
          NodeOutcome(two, n2.dir, "passed", 0, 40.0, None, steps(n2, ["passed"] + ["skipped"] * rest), [])]  # fmt: skip
    write(rec / "fleet/f1.json", _fleet_record(fleet, ok, stamp(4)))
    lost_why = ("lost: node " + two + ": ssh: connect to host " + two + " port 22: Connection timed out "
                "(its run did not end; its last word: epoch 1 step 3 loss 2.31)")  # fmt: skip
    stopped_why = "stopped: node " + two + " was lost"
    lost = [NodeOutcome(one, n1.dir, "stopped", None, 26.0, stopped_why,
                        steps(n1, ["stopped"] + ["not run"] * rest, {0: stopped_why}), []),
            NodeOutcome(two, n2.dir, "lost", None, 26.0, lost_why,
                        steps(n2, ["lost"] + ["not run"] * rest, {i: lost_why for i in range(count)}), [])]  # fmt: skip
    write(rec / "fleet/f2.json", _fleet_record(fleet, lost, stamp(5), reason=f"node {two} lost"))
    refused_why = [f"node {two}: ssh: connect to host {two} port 22: Connection refused"]
    write(rec / "fleet_refused/f3.json", {**_fleet_record(fleet, refused_outcomes(fleet, refused_why), stamp(6),
                                                          refused=refused_why), "mode": "whole_train_whole_infer"})  # fmt: skip
    return {"mode": mode, "one": one, "two": two, "lost_why": lost_why, "refused_why": refused_why[0]}
