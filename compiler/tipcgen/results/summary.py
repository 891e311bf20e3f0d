"""A run's result as GitHub-flavoured markdown a reviewer reads in ten seconds: what ran (model,
mode, chain, nodes), the counts, then each failed step with its command and the last lines of its
log, and a link to the log (a path relative to the summary file). `run`, `fleet` and `bench`
write it with `--summary FILE`, and append it to `$GITHUB_STEP_SUMMARY` when that is set.

Everything a record holds goes through the one markdown escaper (tipcgen.escape.for_markdown):
names as literal markdown text (a `|` cannot split a table row, `<script>` is shown, not run),
commands and logs in code spans and fences longer than any backtick run they hold. A log path is
linked, and its tail shown, only when it resolves (every link followed) inside the run's directory:
a record naming `/etc/passwd`, or a step that swapped its log for a link leading out, gets the
path shown as text and nothing read.
"""

from __future__ import annotations

import os
import urllib.parse
from typing import Any, Optional

from tipcgen.escape import for_markdown, for_terminal
from tipcgen.run.reports import log_inside, log_tail, read_log

TAIL = 15  # log lines per failed step: enough for a traceback's end
MAX_FAILED = 10  # failed steps shown in full; the rest are listed
COLUMNS = ("passed", "failed", "skipped", "timed out", "stalled")
_FAILING = ("failed", "timed out", "stalled", "stopped", "not run", "lost", "refused")


def _link(log: str, cwd: str, where: str, tree: Optional[str] = None) -> str:
    """A markdown link to `log` (relative to the repo root `cwd`) from the directory `where`, when
    it resolves inside `tree` (default `cwd`); else the path as text, saying why."""
    if not log_inside(cwd, log, tree):
        return f"{for_markdown(log, 'code')} (not linked: it leads outside the run's directory)"
    target = os.path.relpath(os.path.join(cwd, log), where).replace(os.sep, "/")
    # percent-encoded: no scheme (`javascript:`), no `)` or space ending the link early
    return f"[{for_markdown(log)}](<{urllib.parse.quote(target)}>)"


def _counts(statuses: list[str]) -> str:
    cells = [str(sum(1 for s in statuses if s == c)) for c in COLUMNS]
    return "| " + " | ".join(COLUMNS) + " |\n|" + "---:|" * len(COLUMNS) + "\n| " + " | ".join(cells) + " |"


def _verdict(failed: bool) -> str:
    return "❌ FAILED" if failed else "✅ PASSED"


def _failed_step(step: dict, log_text: Optional[str], log_link: str, label: str) -> list[str]:
    why = step.get("reason") or (f"exit status {step['returncode']}" if step.get("returncode") is not None else "")
    kind, group = for_markdown(step.get("kind", ""), "code"), for_markdown(step.get("group", ""))
    status = for_markdown(step.get("status", "")) + (f" ({for_markdown(why)})" if why else "")
    out = [f"#### {label}step {int(step['index']) + 1} {kind} {group}: {status}"]
    if step.get("command"):
        out += ["", for_markdown(step["command"], "block")]
    tail = log_tail(log_text, lines=TAIL)
    if log_link:
        # a log not read (missing, or leading out of the run's directory) is not called empty
        empty = " (empty)" if log_text is not None else ""
        out += ["", f"last {TAIL} lines of {log_link}:" if tail else f"log: {log_link}{empty}"]
    if tail:
        out += ["", for_markdown(tail, "block")]
    return [*out, ""]


def run_summary(data: dict, cwd: str = ".", where: str = ".") -> str:
    """The summary of `tipcgen run`'s JSON report `data` (logs read below `cwd`, linked from `where`)."""
    steps = data.get("steps") or []
    statuses = [s.get("status", "") for s in steps]
    failed = [s for s in steps if s.get("status") in _FAILING]
    head = (
        f"### {_verdict(bool(failed))}: {for_markdown(data.get('model_name'))} · {for_markdown(data.get('mode'))} · "
        f"{for_markdown(data.get('layout'))} · 1 node"
    )
    out = [head, "", _counts(statuses), ""]
    if failed:
        out += ["**Failed steps**", ""]
    for step in failed[:MAX_FAILED]:
        log = step.get("log")
        out += _failed_step(step, read_log(cwd, log), _link(log, cwd, where) if log else "", "")
    out += _more(failed)
    log_dir = data.get("log_dir")
    if log_dir:
        out.append(f"Logs: {_link(log_dir, cwd, where)}")
    return "\n".join(out).rstrip("\n") + "\n"


def _more(failed: list) -> list[str]:
    if len(failed) <= MAX_FAILED:
        return []
    rest = ", ".join(f"{int(s['index']) + 1} {for_markdown(s.get('kind', ''))}" for s in failed[MAX_FAILED:])
    return [f"... and {len(failed) - MAX_FAILED} more failed steps: {rest}", ""]


def fleet_summary(data: dict, cwd: str = ".", where: str = ".") -> str:
    """The summary of `tipcgen fleet`'s JSON report: a row per node, each node's failed steps
    with the tail of the log gathered from it (`<log dir>/nodes/<ip>/`)."""
    nodes = data.get("nodes") or []
    log_dir = str(data.get("log_dir") or "")
    bad = int(data.get("exit_code") or 0) != 0
    head = (
        f"### {_verdict(bad)}: {for_markdown(data.get('model_name'))} · {for_markdown(data.get('mode'))} · "
        f"{for_markdown(data.get('layout') or 'fleet')} · {len(nodes)} nodes"
    )
    out = [head, "", "| node | state | " + " | ".join(COLUMNS) + " | not run |", "|---|---|" + "---:|" * 6]
    for n in nodes:
        st = [s.get("status", "") for s in n.get("steps") or []]
        cells = [str(sum(1 for s in st if s == c)) for c in (*COLUMNS, "not run")]
        out.append(f"| {for_markdown(n.get('ip'))} | {for_markdown(n.get('state'))} | " + " | ".join(cells) + " |")
    out.append("")
    if data.get("stopped"):
        out += [f"Stopped every node: {for_markdown(data['stopped'])}", ""]
    if data.get("refused"):  # the record of a run that never started says so, and why
        out += ["Refused to start; nothing was started on any node:", ""]
        out += [f"- {for_markdown(p)}" for p in data["refused"][:MAX_FAILED]] + [""]
    for n in nodes:
        if n.get("state") == "lost" or n.get("stop_problem"):
            what = (
                n.get("reason") if n.get("state") == "lost" else "could not stop its run: " + str(n.get("stop_problem"))
            )
            out += [f"Node {for_markdown(n.get('ip'))}: {for_markdown(what)}", ""]
    shown = 0
    for n in nodes:
        ip = str(n.get("ip"))
        for step in n.get("steps") or []:
            if step.get("status") not in ("failed", "timed out", "stalled", "stopped") or shown >= MAX_FAILED:
                continue
            shown += 1
            log = _node_log(log_dir, ip, step.get("log"))
            if not log and log_dir:  # a step writing to the terminal: the node's console output
                log = os.path.join(log_dir, "nodes", ip, "fleet_run.out")
                log = log if os.path.isfile(os.path.join(cwd, log)) else ""
            # the status line holds the command: "Run failed with command - MODEL - COMMAND!"
            line = str(step.get("status_line") or "")
            command = line.split(" - ", 2)[2].rstrip("! ") if line.count(" - ") >= 2 else ""
            step = {**step, "reason": step.get("reason") or n.get("reason"), "command": command}
            text = read_log(cwd, log) if log else None
            out += _failed_step(step, text, _link(log, cwd, where) if log else "", f"node {for_markdown(ip)}: ")
    if log_dir:
        out.append(f"Logs of each node: {_link(os.path.join(log_dir, 'nodes'), cwd, where)}")
    return "\n".join(out).rstrip("\n") + "\n"


def _node_log(log_dir: str, ip: str, log: Any) -> str:
    """Where fleet gathered a node's step log: `<log dir>/nodes/<ip>/<its path below the log dir>`."""
    if not isinstance(log, str) or not log or not log_dir:
        return ""
    prefix = os.path.normpath(log_dir) + "/"
    name = os.path.normpath(log)
    return os.path.join(log_dir, "nodes", ip, name[len(prefix) :] if name.startswith(prefix) else name)


def bench_summary(records: list[dict], cwd: str = ".", where: str = ".", tree: Optional[str] = None) -> str:
    """The summary of `tipcgen bench`: a row per run (status, throughput), each failed run's
    command and log tail (logs read and linked only inside `tree`, bench's --out; default `cwd`)."""
    failed = [r for r in records if r.get("status", "passed") != "passed"]
    model = for_markdown(records[0]["model"]) if records else "-"
    out = [f"### {_verdict(bool(failed))}: {model} · bench · {len(records)} runs", ""]
    out += ["| run | status | setup | throughput | final loss |", "|---|---|---|---:|---:|"]
    for r in records:
        ips, loss = r.get("ips"), r.get("convergence_value")
        speed = f"{ips:.1f} {for_markdown(r.get('speed_unit') or '')}" if ips else "-"
        final = "-" if loss is None else f"{loss:.4g}"
        run_id, status = for_markdown(r["run_id"], "code", table=True), for_markdown(r.get("status", "passed"))
        out.append(f"| {run_id} | {status} | {for_markdown(r.get('device_num', ''))} | {speed} | {final} |")
    out.append("")
    for r in failed[:MAX_FAILED]:
        rc = [c for c in r.get("returncodes") or [] if c]
        step = {
            "index": 0,
            "kind": "train",
            "group": r["run_id"],
            "status": r.get("status"),
            "reason": f"exit status {rc[0]}" if rc else "",
            "command": " ".join(r["commands"][0]) if r.get("commands") else "",
        }
        log = r.get("log_file")
        text = read_log(cwd, log, tree)
        out += _failed_step(step, text, _link(log, cwd, where, tree) if log else "", "")
    return "\n".join(out).rstrip("\n") + "\n"


def write_summary(path: Optional[str], text: str) -> None:
    """Write the summary to `path` (when given) and append it to `$GITHUB_STEP_SUMMARY` (when set),
    both through the write gate (never through a link, into a FIFO or a device). The step summary
    is the CI runner's file, not the user's: one that cannot be written is a warning naming it,
    and the command's exit status stays what the run decided."""
    import sys

    from tipcgen.fsio import PathError, append_text
    from tipcgen.run.reports import write_report

    if path:
        write_report(path, text)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        try:
            append_text(step_summary, text + "\n")
        except PathError as exc:
            shown = for_terminal(str(exc))  # the terminal's escaper: this line is a warning, not markdown
            print(f"tipcgen: warning: $GITHUB_STEP_SUMMARY not written: {shown}", file=sys.stderr)
