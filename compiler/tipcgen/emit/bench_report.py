"""The speed-up report: benchmark records as seed 003's table, in Chinese or English.

Seed 003 compares one machine of 8 cards with 2/3/4 machines (time/accuracy, 加速比). Here the
records of one model, device, precision and global batch form a group; its baseline is the run
with the fewest processes (one process: N1C1). Each run of the group is a row: its time and
accuracy next to the baseline's, its throughput, the speed-up (throughput over the baseline's,
warm-up steps skipped) and the efficiency (speed-up over the ratio of processes; seed 002
expects about 0.8 for data-parallel training on GPUs).

Rendering is pure (records in, text out) and deterministic: rows sort by model, device,
precision, global batch, then processes and nodes.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import Any, Optional

# every record string reaches the markdown through the one markdown escaper
from tipcgen.escape import for_markdown

WORDS: dict[str, dict[str, Any]] = {
    "zh": {
        "heading": "性能与加速比",
        "columns": (
            "模型",
            "精度",
            "全局 batch",
            "配置",
            "基线耗时/精度",
            "耗时/精度",
            "吞吐 ({unit})",
            "加速比",
            "效率",
        ),
        "setup": "{nodes}机{procs}{what}",
        "cpu": "进程",
        "gpu": "卡",
        "note": (
            "加速比 = 吞吐（`ips:`，跳过前 {skip} 步 warm-up）与基线之比；效率 = 加速比 / 进程数之比"
            "（理想值 1，种子文档 002 期望数据并行约 0.8）。耗时为训练耗时（训练日志所记，不含启动）；"
            "精度未知时记 `-`。由 `tipcgen bench` 测得，`tipcgen report` 生成。"
        ),
        "failed": "未成功的运行（不计入表格）：{runs}",
        "converge": "收敛性验证：",
        "verdict": "- {run}：{verdict}（{goal}，{limit} 个 {unit} 内；最优值 {best}）",
    },
    "en": {
        "heading": "Speed and speed-up",
        "columns": (
            "model",
            "precision",
            "global batch",
            "setup",
            "baseline time/accuracy",
            "time/accuracy",
            "throughput ({unit})",
            "speed-up",
            "efficiency",
        ),
        "setup": "{nodes} node(s) x {procs} {what}",
        "cpu": "process(es)",
        "gpu": "card(s)",
        "note": (
            "Speed-up = throughput (`ips:`, the first {skip} warm-up steps skipped) over the baseline's;"
            " efficiency = speed-up / the ratio of processes (ideal 1; seed document 002 expects about"
            " 0.8 for data-parallel training). Time is the training time the log records (start-up"
            " excluded); `-` where the accuracy is unknown. Measured by `tipcgen bench`, tabulated by"
            " `tipcgen report`."
        ),
        "failed": "Runs that did not pass (left out of the table): {runs}",
        "converge": "Convergence:",
        "verdict": "- {run}: {verdict} ({goal} within {limit} {unit}; best value {best})",
    },
}


@dataclass(frozen=True)
class Row:
    record: dict
    baseline: dict
    speedup: float
    efficiency: float


def _key(r: dict) -> tuple:
    return (str(r["model"]), str(r.get("device", "")), str(r["fp_item"]), float(r["global_batch_size"]))


def passed(records: list[dict]) -> list[dict]:
    """Speed runs that passed (a `--converge` run answers another question: see `verdicts`)."""
    return [r for r in records if r.get("status", "passed") == "passed" and r["ips"] > 0 and "convergence" not in r]


def verdicts(records: list[dict], lang: str) -> list[str]:
    """One line per convergence record: its verdict, target and best value."""
    out = []
    for r in sorted((r for r in records if isinstance(r.get("convergence"), dict)), key=lambda r: str(r["run_id"])):
        c = r["convergence"]
        unit, limit = next(iter((c.get("within") or {"-": "-"}).items()))
        sign = "<=" if c.get("direction") == "min" else ">="
        best = c.get("best_value")
        out.append(
            WORDS[lang]["verdict"].format(
                run=for_markdown(r["run_id"], "code"),
                verdict=for_markdown(c.get("verdict")),
                goal=f"{for_markdown(c.get('metric'))} {sign} {for_markdown(c.get('target'))}",
                limit=for_markdown(limit),
                unit=for_markdown(unit),
                best="-" if best is None else f"{best:g}",
            )
        )
    return out


def speedup_rows(records: list[dict]) -> list[Row]:
    """One row per passed record, grouped as the module docstring says."""
    ordered = sorted(passed(records), key=lambda r: (*_key(r), r["workers"], r["nodes"], str(r["run_id"])))
    rows: list[Row] = []
    baseline: Optional[dict] = None
    for r in ordered:
        if baseline is None or _key(baseline) != _key(r):
            baseline = r
        speedup = r["ips"] / baseline["ips"]
        rows.append(Row(r, baseline, speedup, speedup / (r["workers"] / baseline["workers"])))
    return rows


def fmt_time(seconds: Optional[float]) -> str:
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.1f}s"
    if seconds < 7200:
        return f"{seconds / 60:.1f}min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.2f}h"
    return f"{seconds / 86400:.2f}d"


def fmt_accuracy(value) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "-"
    return f"{value * 100:.1f}%" if 0 <= value <= 1 else f"{value:g}"


def _time_acc(r: dict) -> str:
    return f"{fmt_time(r.get('train_time'))}/{fmt_accuracy(r.get('accuracy'))}"


def setup(r: dict, lang: str) -> str:
    w = WORDS[lang]
    what = w["gpu"] if r.get("device") == "gpu" else w["cpu"]
    return w["setup"].format(nodes=r["nodes"], procs=r["workers"] // max(1, r["nodes"]), what=what) + (
        f" ({for_markdown(r['device_num'])})"
    )


def table(records: list[dict], lang: str = "zh") -> str:
    """The speed-up table (markdown), without heading or notes."""
    w = WORDS[lang]
    rows = speedup_rows(records)
    unit = rows[0].record.get("speed_unit", "samples/s") if rows else "samples/s"
    cols = [c.format(unit=for_markdown(unit)) for c in w["columns"]]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join(":---:" for _ in cols) + "|"]
    for row in rows:
        r = row.record
        cells = [
            for_markdown(r["model"]),
            for_markdown(r["fp_item"]),
            f"{r['global_batch_size']:g}",
            setup(r, lang),
            _time_acc(row.baseline),
            _time_acc(r),
            f"{r['ips']:.1f}",
            f"**{row.speedup:.2f}**",
            f"{row.efficiency:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def section(records: list[dict], lang: str = "zh", level: int = 2) -> str:
    """Heading, table, notes and the runs left out: what `report` writes and docs embed."""
    w = WORDS[lang]
    skips = sorted({int(r.get("skip_steps") or 0) for r in passed(records)})
    out = [f"{'#' * level} {w['heading']}", "", table(records, lang).rstrip("\n"), ""]
    out.append(w["note"].format(skip="/".join(str(s) for s in skips) or "0"))
    ok = {id(r) for r in passed(records)}  # by identity: comparing dicts is quadratic in the records
    bad = sorted(str(r["run_id"]) for r in records if id(r) not in ok and "convergence" not in r)
    if bad:
        out += ["", w["failed"].format(runs=", ".join(for_markdown(b, "code") for b in bad))]
    lines = verdicts(records, lang)
    if lines:
        out += ["", w["converge"], "", *lines]
    return "\n".join(out) + "\n"


def report_markdown(records: list[dict], lang: str, plots: list[str]) -> str:
    """The report file: the section, then the plots (paths relative to the report)."""
    text = section(records, lang, level=1)
    for path in plots:
        if path.endswith(".png"):
            # the path as literal alt text and a percent-encoded link target (no `)` or scheme)
            text += f"\n![{for_markdown(path)}](<{urllib.parse.quote(path)}>)\n"
    return text
