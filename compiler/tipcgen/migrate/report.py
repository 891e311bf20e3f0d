"""The migration report: markdown a maintainer pastes into the pull request that switches the repo.

Everything from the repo (paths, config names, commands, prepare steps, details) reaches the
markdown through the one markdown escaper: a config path or a prepare command holding
`<img onerror>`, a backtick run or a `|` is shown literally, never HTML, a link or a new cell.
"""

from __future__ import annotations

from collections import Counter

from tipcgen.escape import for_markdown
from tipcgen.migrate.switch import Migration, Row

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


def report_markdown(m: Migration, rows_limit: int = 2000) -> str:
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
    out += _changed(m)
    if m.not_imported:
        out += ["## Not imported (would be lost)", ""]
        out += [f"- {_code(k)}: {_text(v)}" for k, v in sorted(m.not_imported.items())]
        out.append("")
    used = {n for r in (*m.rows, *m.chain_rows) if r.runner == "faithful" for n in r.runner_detail.split(", ") if n}
    used |= {
        f"prepare: {n}"
        for r in (*m.rows, *m.chain_rows)
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
            "The repo's prepare.sh also serves these modes (the benchmark's and other chains' downloads and builds);"
            " the generated"
            " prepare.sh does not yet: keep what they fetch another way before applying: "
            + ", ".join(_code(mode) for mode in sorted(m.prepare_modes_lost))
            + ".",
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
    out += ["## Per config and mode", "", "| config | mode | runner | prepare |", "|---|---|---|---|"]
    for r in m.rows[:rows_limit]:
        out.append(f"| {_code(r.config, table=True)} | {_text(r.mode)} | {_row_verdicts(r)} |")
    if len(m.rows) > rows_limit:
        out.append(f"| ... {len(m.rows) - rows_limit} more | | | |")
    out.append("")
    verdict = "ready" if m.ok else "NOT ready: unexplained changes or configs that would be lost (above)"
    out.append(f"Migration: {verdict}.")
    return "\n".join(out) + "\n"


def _row_verdicts(r: Row) -> str:
    """The runner's and prepare.sh's cells of a row."""
    return f"{_verdict(r.runner, r.runner_detail)} | {_verdict(r.prepare, r.prepare_detail)}"


def _changed(m: Migration) -> list[str]:
    out: list[str] = []
    if not m.changed:
        return out
    out += ["## CHANGED: commands that would change (first difference)", ""]
    for r in m.changed[:200]:
        if r.runner == "CHANGED":
            first, *rest = r.runner_detail.split("\n")
            first = first.replace(", plan '", ", tipcgen '")
            out.append(f"- {_code(r.config)} {_text(r.mode)}, {_text(r.script)}: {_text(first)}")
            if rest:  # the two sides in a code block inside the list item (indented under it)
                block = for_markdown("\n".join(_side(line) for line in rest), "block")
                out += ["", *(f"  {line}" for line in block.split("\n")), ""]
        if r.prepare == "CHANGED":
            out.append(f"- {_code(r.config)} {_text(r.mode)}, prepare.sh: {_text(r.prepare_detail)}")
    out.append("")
    return out
