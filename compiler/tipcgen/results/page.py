"""The status page: run records over time as one static HTML file (inline CSS and SVG, no
script, no CDN), in Chinese or English.

- the grid: the latest run of each model x chain x mode (x node) with a cell per step (passed,
  failed, skipped with its reason, timed out, stalled...), each linking to its log;
- what changed since the previous run of the same model, chain, mode, suite (and node): steps
  that newly fail or newly pass, and what the records say changed (tipcgen, the model repo's
  commit, paddle, the machine);
- per benchmark a trend chart of throughput, speed-up and efficiency over the runs, with the
  regression band: a run whose value is below the median of the previous BASE_RUNS runs by more
  than the threshold is flagged regressed (above by as much: improved).

One change rule, both directions. A step's state has a level: passed (2), no verdict (1:
skipped, not run, absent from the earlier run, a state this tipcgen does not know), failing (0:
failed, timed out, stalled, stopped, lost, refused). A step whose level rose since the previous
run of its row is newly passing (skipped -> passed, failed -> passed, failed -> skipped: it no
longer fails); one whose level fell is newly failing (passed -> skipped, passed -> failed,
skipped -> timed out). A step whose level stayed is no change, so `skipped -> not run` on a node
that is never trainer 0 (its eval and export are skipped when it runs, not run when the fleet
stopped it) is listed in neither; the step that stopped it is.

A regression needs a history: a value is judged only against at least MIN_HISTORY earlier runs
(the median of up to BASE_RUNS of them), so the second and third runs of a new benchmark are
never flagged against one or two noisy values. DEFAULT_THRESHOLD is 10 %: on a machine shared
with other jobs, run-to-run noise of a few percent is common and 5 % flagged most comparisons.

Every value the template prints reaches the HTML through the one HTML escaper
(tipcgen.escape.for_html, as the environment's finalize; autoescape behind it), in text and in
attributes, so a model named `<script>` is shown, not run, and a U+202E cannot reverse a cell. A
log is linked only when its real path lies inside the records' tree (the model repo holding the
records, else the directory given to `status`: history.records_tree); any other path a record
names is shown as text. Rendering is deterministic: the same records give the
same bytes (the page's date is the newest record's, not the clock's).
"""

from __future__ import annotations

import functools
import os
import re
import statistics
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Optional

from tipcgen.fleet.report import BYSTANDER
from tipcgen.results.history import FAILING, Run, StepCell

BASE_RUNS = 5  # the reference: median of this many previous runs (one noisy run cannot move it)
MIN_HISTORY = 3  # earlier runs a value needs before it is judged (asv-like: no verdict on 1 or 2)
DEFAULT_THRESHOLD = 0.10
MARKERS_UP_TO = 60  # a chart with more points marks only flagged ones and the last (page size)
_W, _H, _PAD_L, _PAD_R, _PAD_T, _PAD_B = 640, 170, 62, 12, 14, 30

WORDS: dict[str, dict[str, str]] = {
    "zh": {
        "title": "TIPC 运行状态",
        "as_of": "截至最新记录",
        "records": "条记录",
        "runs": "次运行",
        "skipped_records": "个记录被跳过",
        "grid": "状态总览",
        "grid_note": "每个模型 × 链路 × 模式 × 套件（× 节点）最近一次运行，每格一个步骤；点击格子打开日志。",
        "model": "模型",
        "chain": "链路",
        "mode": "模式",
        "suite": "套件",
        "node": "节点",
        "when": "时间",
        "steps": "步骤",
        "recent": "最近运行",
        "changes": "与上一次运行相比",
        "changes_note": "同一模型、链路、模式、套件（与节点）的最近两次运行。",
        "newly_failing": "新失败",
        "newly_passing": "新通过",
        "what_changed": "记录中的变化",
        "no_changes": "最近两次运行之间没有状态变化。",
        "regressions": "性能回退",
        "regressions_note": (
            "某次运行的值低于其前 {base} 次运行中位数超过 {pct} 即记为回退（高出同样幅度记为提升）；"
            "之前至少有 {min} 次运行才做判断。灰带为中位数 ±{pct}。"
        ),
        "no_regressions": "没有超出阈值的运行。",
        "benchmark": "基准",
        "metric": "指标",
        "value": "值",
        "reference": "参考（中位数）",
        "ratio": "比值",
        "trends": "趋势",
        "ips": "吞吐",
        "speedup": "加速比",
        "efficiency": "效率",
        "regressed": "回退",
        "improved": "提升",
        "problems": "被跳过的记录",
        "legend": "图例",
        "passed": "通过",
        "failed": "失败",
        "skipped": "跳过",
        "timed out": "超时",
        "stalled": "停滞",
        "stopped": "被停止",
        "not run": "未运行",
        "lost": "节点失联",
        "refused": "被拒绝运行",
        "unknown": "未知",
        "new": "新步骤",
        "commit": "提交",
        "machine": "机器",
        "global_batch": "全局批大小",
        "cause": "最先失败",
        "colon": "：",
        "cause_note": "多节点运行中，最先失败的节点排在前面，受其影响而停止的节点在后。",
        # step kinds and the reasons tipcgen itself writes (a record's other text is shown as written)
        "kind:train": "训练",
        "kind:eval": "评估",
        "kind:export": "导出",
        "kind:infer": "推理",
        "kind:prep": "准备",
        "reason:train failed": "训练失败",
        "reason:not trainer 0": "非 0 号训练节点",
        "reason:interrupted": "被中断",
        "reason:bystander": "因其他节点的问题未运行（所有节点都没有启动）",
        "reason:timed out after": "运行 {s} 秒后超时",
        "reason:stalled": "{s} 秒没有日志输出，判为停滞",
        "reason:limit from": "（限制来自 {x}）",
        "no_log": "无日志文件",
        "log_outside": "日志不在记录所在的仓库或目录内，不链接",
        "empty": "没有可读的记录。",
        "lang_other": "English",
    },
    "en": {
        "title": "TIPC run status",
        "as_of": "as of the newest record",
        "records": "records",
        "runs": "runs",
        "skipped_records": "records skipped",
        "grid": "Status grid",
        "grid_note": (
            "The latest run of each model x chain x mode x suite (x node), a cell per step; a cell opens its log."
        ),
        "model": "model",
        "chain": "chain",
        "mode": "mode",
        "suite": "suite",
        "node": "node",
        "when": "when",
        "steps": "steps",
        "recent": "recent runs",
        "changes": "Since the previous run",
        "changes_note": "The two latest runs of the same model, chain, mode and suite (and node).",
        "newly_failing": "newly failing",
        "newly_passing": "newly passing",
        "what_changed": "changed in the records",
        "no_changes": "No step changed state between the two latest runs.",
        "regressions": "Regressions",
        "regressions_note": (
            "A run whose value is below the median of its {base} previous runs by more than {pct} is flagged"
            " regressed (above by as much: improved); a run is judged only after at least {min} earlier runs."
            " The grey band is that median ±{pct}."
        ),
        "no_regressions": "No run beyond the threshold.",
        "benchmark": "benchmark",
        "metric": "metric",
        "value": "value",
        "reference": "reference (median)",
        "ratio": "ratio",
        "trends": "Trends",
        "ips": "throughput",
        "speedup": "speed-up",
        "efficiency": "efficiency",
        "regressed": "regressed",
        "improved": "improved",
        "problems": "Records skipped",
        "legend": "legend",
        "passed": "passed",
        "failed": "failed",
        "skipped": "skipped",
        "timed out": "timed out",
        "stalled": "stalled",
        "stopped": "stopped",
        "not run": "not run",
        "lost": "node lost",
        "refused": "refused",
        "unknown": "unknown",
        "new": "new",
        "commit": "commit",
        "machine": "machine",
        "global_batch": "global batch",
        "cause": "failed first",
        "colon": ": ",
        "cause_note": "In a multi-node run the node that failed first comes first, the nodes it stopped after it.",
        "kind:train": "train",
        "kind:eval": "eval",
        "kind:export": "export",
        "kind:infer": "infer",
        "kind:prep": "prep",
        "reason:train failed": "train failed",
        "reason:not trainer 0": "not trainer 0",
        "reason:interrupted": "interrupted",
        "reason:bystander": BYSTANDER,
        "reason:timed out after": "timed out after {s} s",
        "reason:stalled": "stalled: no log output for {s} s",
        "reason:limit from": " (limit from {x})",
        "no_log": "no log file",
        "log_outside": "the log lies outside the repo or directory holding the records: not linked",
        "empty": "No readable records.",
        "lang_other": "中文",
    },
}
SYMBOL = {
    "passed": "✓",
    "failed": "✗",
    "skipped": "–",
    "timed out": "◷",
    "stalled": "‖",
    "stopped": "■",
    "not run": "·",
    "lost": "⚠",
    "refused": "⊘",
    "unknown": "?",
}


# ----------------------------------------------------------------------------- the grid


def _inside(path: str, tree: str) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(tree)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _tree(run: Run) -> str:
    return run.tree or os.path.dirname(os.path.abspath(run.path))


def _candidates(run: Run, log: str) -> list[str]:
    """Where a record's log path may be, all inside the records' tree: below the repo root the
    record names (when that lies inside the tree), else below the record's directory or one of
    its parents up to the tree."""
    tree = _tree(run)
    if os.path.isabs(log):
        return [log]
    bases = [run.root] if run.root and _inside(run.root, tree) else []
    d = os.path.dirname(os.path.abspath(run.path))
    for _ in range(6):
        if not _inside(d, tree):
            break
        bases.append(d)
        d = os.path.dirname(d)
    return [os.path.join(b, log) for b in bases]


def _node_log(run: Run, log: str) -> str:
    prefix = os.path.normpath(run.log_dir) + "/"
    name = os.path.normpath(log)
    return os.path.join(run.log_dir, "nodes", run.node, name[len(prefix) :] if name.startswith(prefix) else name)


def log_href(run: Run, cell: StepCell, site: str) -> tuple[Optional[str], str]:
    """(a link from the site directory to the step's log file, or None; why not, as the words'
    key). A record names the log: it is linked only when it is a file whose real path (every
    link followed) lies inside the records' tree; an absolute path or a link leading elsewhere
    is shown as text."""
    if "\0" in cell.log + run.log_dir + run.node:
        return None, "no_log"
    if run.kind == "fleet" and run.log_dir:  # gathered; a step without a log: the node's console
        log = _node_log(run, cell.log) if cell.log else os.path.join(run.log_dir, "nodes", run.node, "fleet_run.out")
    elif cell.log:
        log = cell.log
    else:
        return None, "no_log"
    why = "no_log"
    for path in _candidates(run, log) or [log]:
        if not _inside(path, _tree(run)):
            why = "log_outside" if os.path.lexists(path) else why
            continue
        if os.path.isfile(path):
            rel = os.path.relpath(os.path.abspath(path), os.path.abspath(site)).replace(os.sep, "/")
            return urllib.parse.quote(rel), ""
    return None, why


def kind_word(kind: str, w: dict) -> str:
    """A step kind in the page's language (a kind tipcgen does not know: as the record says)."""
    return w.get(f"kind:{kind}", kind)


# The reasons with numbers tipcgen's executor writes (run.executor: a step stopped at its limit).
_LIMIT_REASONS = (
    ("reason:timed out after", re.compile(r"timed out after (?P<s>[0-9.e+]+) s(?: \(limit from (?P<x>[^()]*)\))?\Z")),
    (
        "reason:stalled",
        re.compile(r"stalled: no log output for (?P<s>[0-9.e+]+) s(?: \(limit from (?P<x>[^()]*)\))?\Z"),
    ),
)


def reason_word(reason: str, w: dict) -> str:
    """A reason tipcgen itself writes, in the page's language (from the words' `reason:` labels);
    any other text (a command's error, a node's last word) as the record says it."""
    if reason == BYSTANDER:
        return w["reason:bystander"]
    for label, pattern in _LIMIT_REASONS:
        m = pattern.match(reason)
        if m:
            limit = w["reason:limit from"].format(x=m["x"]) if m["x"] else ""
            return w[label].format(s=m["s"]) + limit
    return w.get(f"reason:{reason}", reason)


def _cells(run: Run, site: str, w: dict) -> list[dict]:
    """A run's cells; a kind that repeats (two inference runs) is told apart by its step number."""
    repeated = {k for k in (c.kind for c in run.steps) if sum(1 for d in run.steps if d.kind == k) > 1}
    cells = []
    for c in run.steps:
        cell = _cell(run, c, site, w)
        if c.kind in repeated:
            cell["kind"] += f" #{c.index + 1}"
        cells.append(cell)
    return cells


SHOWN_REASON = 160  # characters of a reason shown in its cell; the whole of it is the cell's title


def _cell(run: Run, c: StepCell, site: str, w: dict) -> dict:
    state = c.status
    said = c.reason.removeprefix(f"{state}: ")  # fleet's "lost: ...": the cell's label says lost
    reason = reason_word(said, w)
    title = f"{c.index + 1} {kind_word(c.kind, w)} {c.group}".rstrip() + f": {w.get(state, state)}"
    if reason:
        title += f" ({reason})"
    href, why = log_href(run, c, site)
    if not href and c.log:
        title += f" [{w[why]}: {c.log}]"
    # a node's own reason (lost, refused), on its steps too: said once, beside its row
    own = bool(run.why) and run.why in (said, c.reason.removeprefix(f"{run.state}: "))
    shown = "" if own or state == "passed" else reason
    return {
        "state": state,
        "css": state.replace(" ", "-"),
        "symbol": SYMBOL.get(state, "?"),
        "kind": kind_word(c.kind, w),
        "why": shown[:SHOWN_REASON] + ("…" if len(shown) > SHOWN_REASON else ""),
        "title": title,
        "href": href,
    }


def when(stamp: str) -> str:
    """`2026-01-01T09:00:00+00:00` as `2026-01-01 09:00` (UTC: records write UTC)."""
    return stamp[:16].replace("T", " ") if len(stamp) >= 16 and stamp[10:11] == "T" else stamp


def _short(commit: Any) -> str:
    return commit[:10] if isinstance(commit, str) else "-"


RECENT = 10  # runs of a key shown as its recent history (newest last)


def verdict(run: Run) -> str:
    """A run's state in one word: its first failing step's (failed, timed out, stalled...),
    else passed (skipped when nothing ran); a lost or refused node is that, whatever its steps say."""
    if run.state:
        return run.state
    bad = next((c.status for c in run.steps if c.status in FAILING), None)
    if bad:
        return bad
    return "passed" if any(c.status == "passed" for c in run.steps) else "skipped"


def _recent(hist: list[Run], site: str, w: dict) -> list[dict]:
    out = []
    for r in hist[-RECENT:]:
        state = verdict(r)
        out.append({"state": state, "css": state.replace(" ", "-"), "symbol": SYMBOL.get(state, "?"),
                    "title": f"{when(r.finished_at)}: {w.get(state, state)}", "href": _rel(r.path, site)})  # fmt: skip
    return out


def suite_label(run: Run) -> str:
    """The suite column: a spec's suite, else the config file's name (a legacy config is its own
    suite); the full path is the cell's title."""
    return run.suite or os.path.basename(run.config) or "-"


def mode_label(run: Run, w: dict) -> str:
    """The mode column: a run's mode; a benchmark's run mode, NxCy, precision and global batch."""
    b = run.bench
    if b is None:
        return run.mode
    batch = f"{w['global_batch']} {b['global_batch_size']:g}"
    return f"{b.get('run_mode') or 'run'} {b['device_num']} {b['fp_item']} {batch}"


def _order(key: tuple, hist: list[Run]) -> tuple:
    """Rows of one suite stay together; among a fleet run's nodes the node that caused its
    failure comes first, the bystanders after."""
    *what, node = key
    return (*(str(p) for p in what), not hist[-1].cause, str(node))


def grid_rows(latest: list[list[Run]], site: str, w: dict) -> list[dict]:
    rows = []
    for hist in latest:
        run = hist[-1]
        rows.append(
            {
                "model": run.model,
                "chain": run.chain,
                "mode": mode_label(run, w),
                "suite": suite_label(run),
                "why": reason_word(run.why, w),
                "why_label": w.get(run.state, run.state),
                "why_symbol": SYMBOL.get(run.state, "?"),
                "why_state": run.state,
                "cause": run.cause and verdict(run) in FAILING,
                "config": run.config or "-",
                "node": run.node or "-",
                "when": when(run.finished_at),
                "record": _rel(run.path, site),
                "failing": verdict(run) in FAILING,
                "cells": _cells(run, site, w),
                "commit": _short(run.meta.get("model_commit")),
                "recent": _recent(hist, site, w),
            }
        )
    return rows


# ----------------------------------------------------------------------------- changes


_META = (("tipcgen", "tipcgen"), ("model_commit", "commit"), ("paddle", "paddle"), ("host", "machine"))


STEP_FAILING = tuple(s for s in FAILING if s != "not run")  # not run: no verdict on the step


def level(status: Optional[str]) -> int:
    """The change rule's level of a step state (module docstring): 2 passed, 0 failing, 1 else."""
    return 2 if status == "passed" else 0 if status in STEP_FAILING else 1


def step_change(old: Optional[str], new: str) -> str:
    """ "failing", "passing" or "" for a step that was `old` (None: absent) and is `new`: the one
    rule of both lists."""
    before, after = level(old), level(new)
    return "" if before == after else "passing" if after > before else "failing"


def changes(prev: Run, last: Run, w: Optional[dict] = None) -> dict:
    """What differs between two runs of one key: steps newly failing / passing (step_change),
    provenance; states in the page's words `w` (default: the record's)."""
    w = w or {}
    before = {c.key: c.status for c in prev.steps}
    fails, passes = [], []
    for c in last.steps:
        old = before.get(c.key)
        label = f"{c.index + 1} {kind_word(c.kind, w)} {c.group}".rstrip()
        move = step_change(old, c.status)
        text = f"{label} ({w.get(old or 'new', old or 'new')} → {w.get(c.status, c.status)})"
        if move == "failing":
            fails.append(text)
        elif move == "passing":
            passes.append(text)
    meta = []
    for key, name in _META:
        a, b = prev.meta.get(key), last.meta.get(key)
        if a != b and (a or b):
            show = _short if key == "model_commit" else (lambda v: "-" if v is None else str(v))
            meta.append(f"{w.get(name, name)} {show(a)} → {show(b)}")
    return {"failing": fails, "passing": passes, "meta": meta}


# ----------------------------------------------------------------------------- trends


@dataclass
class Series:
    key: tuple
    label: tuple  # (model, precision, global batch, NxCy): bench_label words it per language
    anchor: str
    points: list = field(default_factory=list)  # (finished_at, {metric: value}, record path)


def _bench_series(runs: list[Run]) -> list[Series]:
    """Bench runs by benchmark, oldest first; speed-up and efficiency within each run's session
    (the records of one `tipcgen bench` output directory)."""
    from tipcgen.emit.bench_report import speedup_rows

    sessions: dict[str, list[Run]] = {}
    for r in runs:
        if r.bench is not None:
            sessions.setdefault(os.path.dirname(r.path), []).append(r)
    ratio: dict[int, tuple] = {}
    for members in sessions.values():
        by_id = {id(m.bench): m for m in members}
        for row in speedup_rows([m.bench for m in members if m.bench is not None]):
            ratio[id(by_id[id(row.record)])] = (row.speedup, row.efficiency, row.baseline is row.record)
    series: dict[tuple, Series] = {}
    for r in runs:
        b = r.bench
        if b is None or id(r) not in ratio:  # failed runs have no throughput to trend
            continue
        key = (b["model"], b.get("device", ""), b["fp_item"], b["global_batch_size"], b["device_num"])
        s = series.get(key)
        if s is None:
            label = (b["model"], b["fp_item"], f"{b['global_batch_size']:g}", b["device_num"])
            s = series[key] = Series(key, label, f"trend-{len(series) + 1}")
        speedup, eff, is_base = ratio[id(r)]
        values = {"ips": b["ips"]} if is_base else {"ips": b["ips"], "speedup": speedup, "efficiency": eff}
        s.points.append((when(r.finished_at), values, r.path))
    return sorted(series.values(), key=lambda s: tuple(str(k) for k in s.key))


def flags(values: list[Optional[float]], threshold: float) -> list[tuple[Optional[float], Optional[float], str]]:
    """(reference, ratio, flag) per value: the reference is the median of up to BASE_RUNS
    previous values, once there are MIN_HISTORY of them (else None: not judged); flag is
    "regressed" below 1 - threshold, "improved" above 1 + threshold."""
    out: list[tuple[Optional[float], Optional[float], str]] = []
    seen: list[float] = []
    for v in values:
        ref = statistics.median(seen[-BASE_RUNS:]) if len(seen) >= MIN_HISTORY else None
        flag, ratio = "", None
        if v is not None and ref:
            ratio = v / ref
            flag = "regressed" if ratio < 1 - threshold else "improved" if ratio > 1 + threshold else ""
        out.append((ref, ratio, flag))
        if v is not None:
            seen.append(v)
    return out


def bench_label(label: tuple, w: dict) -> str:
    model, fp, batch, device = label
    return f"{model} · {fp} · {w['global_batch']} {batch} · {device}"


def _fmt(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return f"{v:.1f}" if abs(v) >= 100 else f"{v:.3g}"


def chart(metric: str, points: list, threshold: float) -> dict:
    """The SVG geometry of one metric of one benchmark: the line, the band, the marks."""
    values = [p[1].get(metric) for p in points]
    judged = flags(values, threshold)
    lows = [ref * (1 - threshold) for ref, _, _ in judged if ref] + [v for v in values if v is not None]
    highs = [ref * (1 + threshold) for ref, _, _ in judged if ref] + [v for v in values if v is not None]
    lo, hi = min(lows), max(highs)
    if hi - lo < 1e-9 * max(1.0, abs(hi)):
        lo, hi = lo - 1, hi + 1
    pad = (hi - lo) * 0.08
    lo, hi = lo - pad, hi + pad
    n = len(points)
    inner_w, inner_h = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B

    xs = [_PAD_L + (inner_w * i / (n - 1) if n > 1 else inner_w / 2) for i in range(n)]
    scale = inner_h / (hi - lo)

    def y(v: float) -> str:
        return f"{_PAD_T + (hi - v) * scale:.1f}"

    line = " ".join(f"{xs[i]:.1f},{y(v)}" for i, v in enumerate(values) if v is not None)
    upper = [f"{xs[i]:.1f},{y(ref * (1 + threshold))}" for i, (ref, _, _) in enumerate(judged) if ref]
    lower = [f"{xs[i]:.1f},{y(ref * (1 - threshold))}" for i, (ref, _, _) in enumerate(judged) if ref]
    band = " ".join(upper + lower[::-1])
    marks = []
    for i, ((at, _, path), v, (_, ratio, flag)) in enumerate(zip(points, values, judged)):
        if v is None or not (n <= MARKERS_UP_TO or flag or i == n - 1):
            continue
        marks.append(
            {
                "x": f"{xs[i]:.1f}",
                "y": y(v),
                "flag": flag,
                "run": i + 1,
                "when": at,
                "value": _fmt(v),
                "ratio": "-" if ratio is None else f"{ratio:.3f}",
                "record": path,
            }
        )
    return {
        "metric": metric,
        "width": _W,
        "height": _H,
        "line": line,
        "band": band,
        "marks": marks,
        "judged": judged,
        "values": values,
        "top": _fmt(hi - pad),
        "bottom": _fmt(lo + pad),
        "y_top": float(y(hi - pad)),
        "y_bottom": float(y(lo + pad)),
        "first": points[0][0] if points else "",
        "last": points[-1][0] if points else "",
        "n": n,
        "x0": _PAD_L,
        "x1": _W - _PAD_R,
        "y_axis": _H - _PAD_B,
    }


def trends(runs: list[Run], threshold: float) -> tuple[list[dict], list[dict]]:
    """(a chart block per benchmark, the flagged points of all of them)."""
    blocks, flagged = [], []
    for s in _bench_series(runs):
        charts = []
        for metric in ("ips", "speedup", "efficiency"):
            if not any(metric in p[1] for p in s.points):
                continue
            c = chart(metric, s.points, threshold)
            charts.append(c)
            for i, ((at, _, path), v, (ref, ratio, flag)) in enumerate(zip(s.points, c["values"], c["judged"])):
                if flag:
                    flagged.append(
                        {
                            "benchmark": s.label,
                            "anchor": s.anchor,
                            "metric": metric,
                            "run": i + 1,
                            "when": at,
                            "value": _fmt(v),
                            "reference": _fmt(ref),
                            "ratio": f"{ratio:.3f}",
                            "flag": flag,
                            "record": path,
                        }
                    )
        blocks.append({"label": s.label, "anchor": s.anchor, "charts": charts, "runs": len(s.points)})
    return blocks, flagged


# ----------------------------------------------------------------------------- the page


def _shared(runs: list[Run], problems: list[str], threshold: float, site: str) -> dict:
    """What the page says in every language: the latest runs, the changes, the trends."""
    by_key: dict[tuple, list[Run]] = {}
    for r in runs:  # oldest first (load_history sorts)
        by_key.setdefault(r.key, []).append(r)
    keys = sorted(by_key, key=lambda k: _order(k, by_key[k]))
    blocks, flagged = trends(runs, threshold)
    for b in blocks:  # the record links of the marks, relative to the site
        for c in b["charts"]:
            for m in c["marks"]:
                m["record"] = _rel(m["record"], site)
    for f in flagged:
        f["record"] = _rel(f["record"], site)
    return {
        "latest": [by_key[k] for k in keys],
        "as_of": when(runs[-1].finished_at) if runs else "",
        "records": len({r.path for r in runs}),
        "runs": len(runs),
        "states": list(SYMBOL),
        "symbols": SYMBOL,
        "blocks": blocks,
        "flagged": flagged,
        "problems": problems,
        "threshold_pct": f"{threshold * 100:g} %",
        "base_runs": BASE_RUNS,
        "min_history": MIN_HISTORY,
    }


def change_list(latest: list[list[Run]], w: dict) -> list[dict]:
    """The rows whose two latest runs differ (changes), in the grid's order, in the words `w`."""
    changed = []
    for hist in latest:
        if len(hist) < 2:
            continue
        diff = changes(hist[-2], hist[-1], w)
        if diff["failing"] or diff["passing"] or diff["meta"]:
            last = hist[-1]
            shown = (last.model, last.chain, last.mode, suite_label(last), last.node)
            changed.append({"key": " · ".join(p for p in shown if p and p != "-"), "from": when(hist[-2].finished_at),
                            "to": when(last.finished_at), **diff})  # fmt: skip
    return changed


def page_contexts(runs: list[Run], problems: list[str], threshold: float, site: str) -> dict[str, dict]:
    """{lang: the template's context} for both languages (the shared part computed once)."""
    shared = _shared(runs, problems, threshold, site)
    latest = shared.pop("latest")
    out = {}
    for lang, w in WORDS.items():
        worded = {
            "blocks": [{**b, "label": bench_label(b["label"], w)} for b in shared["blocks"]],
            "flagged": [{**f, "benchmark": bench_label(f["benchmark"], w)} for f in shared["flagged"]],
        }
        out[lang] = {**shared, **worded, "lang": lang, "w": w, "other": "en" if lang == "zh" else "zh",
                     "rows": grid_rows(latest, site, w), "changes": change_list(latest, w)}  # fmt: skip
    return out


def page_context(runs: list[Run], problems: list[str], lang: str, threshold: float, site: str) -> dict:
    return page_contexts(runs, problems, threshold, site)[lang]


def _rel(path: str, site: str) -> str:
    return urllib.parse.quote(os.path.relpath(os.path.abspath(path), os.path.abspath(site)).replace(os.sep, "/"))


@functools.lru_cache(maxsize=1)
def _template() -> Any:
    from importlib import resources

    import jinja2
    from markupsafe import Markup

    from tipcgen.escape import for_html

    def finalize(value: Any) -> Any:
        # every value the template prints goes through the one HTML escaper (control and bidi
        # characters shown, markup escaped); what is Markup already was escaped by it
        return value if isinstance(value, Markup) else Markup(for_html(value))

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resources.files("tipcgen.templates"))),
        autoescape=True,  # every record string is text, in an element or an attribute
        finalize=finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env.get_template("status_page.html.j2")


def render_page(ctx: dict) -> str:
    """The page's HTML from page_context (links relative to the directory the page is written to)."""
    return str(_template().render(**ctx))
