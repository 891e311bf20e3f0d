"""The migration report: markdown a maintainer pastes into the pull request that switches the repo.

Everything from the repo (paths, config names, commands, prepare steps, details) reaches the
markdown through the one markdown escaper: a config path or a prepare command holding
`<img onerror>`, a backtick run or a `|` is shown literally, never HTML, a link or a new cell.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import Any

from tipcgen.escape import for_markdown
from tipcgen.migrate.switch import Migration, Row, RowDifference

VERDICTS = ("identical", "faithful", "CHANGED")
_NOTES = {
    "test_train_inference_python.sh": " (compared above)",
    "prepare.sh": " (compared above)",
    "common_func.sh": " (sourced by the scripts compared above)",
    "benchmark_train.sh": " (not run by migrate: tests/test_upstream_benchmark.py compares each family's)",
    "test_paddle2onnx.sh": " (compared above: Other chains)",
    "test_inference_cpp.sh": " (compared above: Other chains)",
    "test_serving_infer_python.sh": " (compared above: Other chains)",
    "test_serving_infer_cpp.sh": " (compared above: Other chains)",
}


def _side(line: str) -> str:
    """One side of a differing command, as `upstream: ...` / `tipcgen:  ...` (a code block's line)."""
    side, _, command = line.strip().partition(":")
    return f"{'tipcgen' if side == 'plan' else side}:{' ' if side == 'plan' else ''} {command.strip()}"


def _text(text: str, limit: int = 0) -> str:
    """Repo text as literal markdown on one line (cut to `limit` characters before escaping, so
    no escape is cut in half)."""
    text = " ".join(str(text).split("\n")).strip()
    return for_markdown(text[:limit] if limit else text)


def _code(text: str, table: bool = False) -> str:
    return for_markdown(text, "code", table=table)


def _verdict(verdict: str, detail: str) -> str:
    return f"{_text(verdict)} ({_text(detail, 120)})" if detail else _text(verdict)


def report_markdown(m: Migration) -> str:
    """The whole report: a summary first (verdicts per script, each edit once with its count and
    configs), then every differing command of every run, then the full per-run table (no limit)."""
    runner = Counter(r.runner for r in m.rows)
    prepare = Counter(r.prepare for r in m.rows)
    configs = sorted({r.config for r in m.rows})
    out = [
        f"# tipcgen migrate: {_text(m.root)}",
        "",
        f"Dialect {_code(m.layout)}"
        + (f" (runner {_code(m.runner)})" if m.runner else "")
        + f"; {len(m.specs)} spec(s); "
        f"{len(configs)} train config(s) x {len({r.mode for r in m.rows})} mode(s) = {len(m.rows)} runs, each run"
        " with the repo's own scripts and with the generated ones (recording shims: nothing downloaded,"
        " trained or installed).",
        "",
        "| verdict | test_train_inference_python.sh | prepare.sh |",
        "|---|---|---|",
    ]
    out += [f"| {v} | {runner.get(v, 0)} | {prepare.get(v, 0)} |" for v in VERDICTS]
    out.append("")
    out += _per_script(m)
    out += _edits(m)
    out += _changed(m)
    if m.not_imported:
        out += ["## Not imported (would be lost)", ""]
        out += [f"- {_code(k)}: {_text(v)}" for k, v in sorted(m.not_imported.items())]
        out.append("")
    out += _kept_and_ignored(m)
    used = {n for r in (*m.rows, *m.chain_rows) if r.runner == "faithful" for n in r.runner_detail.split(", ") if n}
    used |= {
        f"prepare: {n}"
        for r in (*m.rows, *m.chain_rows, *m.prepare_rows)
        if r.prepare == "faithful"
        for n in r.prepare_detail.split(", ")
        if n
    }
    if used:
        out += ["## Faithful: the deliberate deviations behind each difference", ""]
        out += [f"- **{_text(name)}**: {_text(m.deviations.get(name, ''))}" for name in sorted(used)]
        out.append("")
    if m.chain_rows:
        tally = Counter(r.runner for r in m.chain_rows)
        ptally = Counter(r.prepare for r in m.chain_rows)
        out += [
            "## Other chains",
            "",
            f"{len(m.chain_rows)} config(s) of other chains that the generated tree now runs, each with the repo's own"
            " script and the generated one: " + ", ".join(f"{n} {_text(v)}" for v, n in sorted(tally.items())) + "; the"
            " repo's prepare.sh against ours in the chain's mode: "
            + ", ".join(f"{n} {_text(v)}" for v, n in sorted(ptally.items()))
            + ".",
            "",
            "| config | script | mode | verdict | prepare.sh |",
            "|---|---|---|---|---|",
        ]
        for r in m.chain_rows:
            out.append(f"| {_code(r.config, table=True)} | {_text(r.script)} | {_text(r.mode)} | {_row_verdicts(r)} |")
        out.append("")
    if m.prepare_modes_lost:
        out += [
            "## prepare.sh: modes not carried over",
            "",
            "The repo's prepare.sh (or its scripts and docs calling it) uses these modes, which the generated"
            " prepare.sh cannot carry yet (their configs are kept verbatim): the migration is not ready until"
            " they are: " + ", ".join(_code(mode) for mode in sorted(m.prepare_modes_lost)) + ".",
            "",
        ]
    if m.untyped:
        out += ["## prepare.sh commands kept as `run` steps (review them)", ""]
        for model, commands in sorted(m.untyped.items()):
            out.append(f"- {_text(model)}: " + "; ".join(_code(c) for c in commands))
        out.append("")
    if m.replaced or m.added:
        out += ["## Files", ""]
        out += [f"- replaced: {_code(rel)}{_NOTES.get(rel.rsplit('/', 1)[-1], '')}" for rel in m.replaced]
        shown = [rel for rel in m.added if not rel.startswith(("test_tipc/configs/", "test_tipc/docs/"))]
        out += [f"- new: {_code(rel)}" for rel in shown]
        hidden = len(m.added) - len(shown)
        if hidden:
            out.append(f"- new: {hidden} config(s)/doc(s) under `test_tipc/configs/` and `test_tipc/docs/`")
        out += ["", "Every other file in `test_tipc/` stays as it is; `.tipcgen.manifest` lists what tipcgen owns.", ""]
    out += _entries(m)
    out += ["## Per config and mode", "", "| config | mode | runner | prepare |", "|---|---|---|---|"]
    for r in m.rows:
        out.append(f"| {_code(r.config, table=True)} | {_text(r.mode)} | {_row_verdicts(r)} |")
    out.append("")
    verdict = "ready" if m.ok else "NOT ready: unexplained changes or configs that would be lost (above)"
    out.append(f"Migration: {verdict}.")
    return "\n".join(out) + "\n"


def _kept_and_ignored(m: Migration) -> list[str]:
    """The configs kept verbatim with their reason, and the .gitignore lines the new tree needs."""
    out: list[str] = []
    if m.sourced_kept:
        out += ["", "## Kept scripts that source a replaced one", ""]
        out += [
            f"- {_code(k)} sources {_code(v)}: the repo's own script, kept there for it (the generated one exits at"
            " its end and defines none of its functions)"
            for k, v in sorted(m.sourced_kept.items())
        ]
        out.append("")
    if m.configs_kept:
        out += ["## Kept verbatim (the repo's own script still runs them)", ""]
        out += [f"- {_code(k)}: {_text(v)}" for k, v in sorted(m.configs_kept.items())]
        out.append("")
    if m.gitignore_hidden:
        out += [
            "## .gitignore",
            "",
            "The repo's .gitignore hides files the new tree needs (a fresh clone's `tipcgen check` would miss them): "
            + ", ".join(_code(rel) for rel in m.gitignore_hidden)
            + ". `--apply` appends these lines to `test_tipc/.gitignore` (checked with git):",
            "",
            *(f"- {_code(line)}" for line in m.gitignore),
            "",
        ]
    return out


def _row_verdicts(r: Row) -> str:
    """The runner's and prepare.sh's cells of a row."""
    return f"{_verdict(r.runner, r.runner_detail)} | {_verdict(r.prepare, r.prepare_detail)}"


def _per_script(m: Migration) -> list[str]:
    """Verdict counts per script of every run (the train runner, prepare.sh, each chain's script),
    and of the whole-tree entry points when they were run."""
    tally: dict = {}
    for r in (*m.rows, *m.chain_rows, *m.prepare_rows):
        if r.runner != "not compared":  # (a prepare row of another mode: its prepare column only)
            tally.setdefault(r.script, Counter())[r.runner] += 1
        if r.prepare != "not compared":
            tally.setdefault("prepare.sh", Counter())[r.prepare] += 1
    for e in m.entries:
        tally.setdefault("entry point " + str(e.entry.script), Counter())[e.verdict] += 1
    if not tally:
        return []
    out = ["## Summary: verdicts per script", "", "| script | runs | verdicts |", "|---|---|---|"]
    for script, counts in sorted(tally.items()):
        out.append(
            f"| {_text(script)} | {sum(counts.values())} | "
            + ", ".join(f"{n} {_text(v)}" for v, n in sorted(counts.items()))
            + " |"
        )
    return [*out, ""]


def edits(m: Migration) -> list[dict]:
    """Every difference of every run, the same edit (script, category) once: how many runs show it,
    the configs it touches, the deviation that explains it ("" when none), an example; unexplained
    edits first, then by count."""
    found: dict = {}
    for n, r in enumerate((*m.rows, *m.chain_rows, *m.prepare_rows)):
        for d in r.differences:
            script = "prepare.sh" if d.side == "prepare" else r.script
            e = found.setdefault(
                (script, d.category),
                {"script": script, "category": d.category, "deviation": d.deviation, "runs": 0, "commands": 0,
                 "configs": [], "example": d.detail, "last": -1},
            )  # fmt: skip
            e["commands"] += 1  # a run may show the same edit in several of its commands
            if e["last"] != n:
                e["runs"], e["last"] = e["runs"] + 1, n
            if r.config not in e["configs"]:
                e["configs"].append(r.config)
    for e in found.values():
        del e["last"]
    return sorted(found.values(), key=lambda e: (bool(e["deviation"]), -e["runs"], e["script"], e["category"]))


def _edits(m: Migration) -> list[str]:
    listed = edits(m)
    if not listed:
        return []
    out = [
        "## Summary: each difference once",
        "",
        "The same edit across runs, with the number of runs showing it and every config it touches"
        " (unexplained first; a named deviation explains the others).",
        "",
        "| script | difference | runs | commands | configs | explained by |",
        "|---|---|---|---|---|---|",
    ]
    for e in listed:
        configs = ", ".join(_code(c, table=True) for c in e["configs"])
        out.append(
            f"| {_text(e['script'])} | {_text(e['category'])} | {int(e['runs'])} | {int(e['commands'])} | {configs} |"
            f" {_text(e['deviation']) if e['deviation'] else '**unexplained**'} |"
        )
    return [*out, ""]


def _entries(m: Migration) -> list[str]:
    """The whole-tree oracle's part: its summary, the same differences collapsed, every entry point."""
    from tipcgen.migrate.entries_report import entries_markdown

    return entries_markdown(m.entries, tuple(m.modes_left_out))


def _changed(m: Migration) -> list[str]:
    """Every run with an unexplained difference, and every one of its differing commands (both sides)."""
    out: list[str] = []
    if not m.changed:
        return out
    out += ["## CHANGED: every command that would change", ""]
    for r in m.changed:
        for side, script in (("runner", r.script), ("prepare", "prepare.sh")):
            if (r.runner if side == "runner" else r.prepare) != "CHANGED":
                continue
            shown = [d for d in r.differences if d.side == side and not d.deviation]
            if not shown:  # a row made by hand or by an older oracle: its detail is all there is
                shown = [RowDifference(side, side, "", r.runner_detail if side == "runner" else r.prepare_detail)]
            for d in shown:
                first, *rest = d.detail.split("\n")
                first = first.replace(", plan '", ", tipcgen '")
                out.append(f"- {_code(r.config)} {_text(r.mode)}, {_text(script)}: {_text(first)}")
                if rest:  # the two sides in a code block inside the list item (indented under it)
                    block = for_markdown("\n".join(_side(line) for line in rest), "block")
                    out += ["", *(f"  {line}" for line in block.split("\n")), ""]
    out.append("")
    return out


def report_json(m: Migration) -> dict[str, Any]:
    """Everything the report says, as data: every row with every difference (both sides), the
    whole-tree entries, the collapsed edits, the configs kept, lost, the deviations and files."""

    def row(r: Row) -> dict:
        data = asdict(r)
        data["differences"] = [{**asdict(d), "upstream": d.sides[0], "tipcgen": d.sides[1]} for d in r.differences]
        return data

    return {
        "format": "tipcgen-migrate-report",
        "version": 1,
        "root": m.root,
        "layout": m.layout,
        "runner": m.runner,
        "ready": m.ok,
        "specs": sorted(m.specs),
        "rows": [row(r) for r in m.rows],
        "chain_rows": [row(r) for r in m.chain_rows],
        "entries": [asdict(e) for e in m.entries],
        "edits": edits(m),
        "configs_kept": dict(m.configs_kept),
        "sourced_kept": dict(m.sourced_kept),
        "not_imported": dict(m.not_imported),
        "gitignore_hidden": list(m.gitignore_hidden),
        "gitignore": list(m.gitignore),
        "deviations": dict(m.deviations),
        "untyped": dict(m.untyped),
        "prepare_modes_lost": list(m.prepare_modes_lost),
        "modes_left_out": list(m.modes_left_out),
        "files": {"replaced": list(m.replaced), "added": list(m.added), "all": sorted(m.files)},
    }
