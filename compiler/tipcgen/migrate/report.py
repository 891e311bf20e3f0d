"""The migration report: markdown a maintainer pastes into the pull request that switches the repo."""

from __future__ import annotations

from collections import Counter

from tipcgen.migrate.switch import Migration

VERDICTS = ("identical", "faithful", "CHANGED")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


def report_markdown(m: Migration, rows_limit: int = 2000) -> str:
    runner = Counter(r.runner for r in m.rows)
    prepare = Counter(r.prepare for r in m.rows)
    configs = sorted({r.config for r in m.rows})
    out = [
        f"# tipcgen migrate: {m.root}",
        "",
        f"Dialect `{m.layout}`" + (f" (runner `{m.runner}`)" if m.runner else "") + f"; {len(m.specs)} spec(s); "
        f"{len(configs)} train config(s) x {len({r.mode for r in m.rows})} mode(s) = {len(m.rows)} runs, each run"
        " with the repo's own scripts and with the generated ones (recording shims: nothing downloaded,"
        " trained or installed).",
        "",
        "| verdict | test_train_inference_python.sh | prepare.sh |",
        "|---|---|---|",
    ]
    out += [f"| {v} | {runner.get(v, 0)} | {prepare.get(v, 0)} |" for v in VERDICTS]
    out.append("")
    if m.changed:
        out += ["## CHANGED: commands that would change (first difference)", ""]
        for r in m.changed[:200]:
            if r.runner == "CHANGED":
                out.append(f"- `{r.config}` {r.mode}, runner: {_cell(r.runner_detail)}")
            if r.prepare == "CHANGED":
                out.append(f"- `{r.config}` {r.mode}, prepare: {_cell(r.prepare_detail)}")
        out.append("")
    if m.not_imported:
        out += ["## Not imported (would be lost)", ""]
        out += [f"- `{k}`: {_cell(v)}" for k, v in sorted(m.not_imported.items())]
        out.append("")
    used = {n for r in m.rows if r.runner == "faithful" for n in r.runner_detail.split(", ") if n}
    used |= {f"prepare: {n}" for r in m.rows if r.prepare == "faithful" for n in r.prepare_detail.split(", ") if n}
    if used:
        out += ["## Faithful: the deliberate deviations behind each difference", ""]
        out += [f"- **{name}**: {_cell(m.deviations.get(name, ''))}" for name in sorted(used)]
        out.append("")
    if m.untyped:
        out += ["## prepare.sh commands kept as `run` steps (review them)", ""]
        for model, commands in sorted(m.untyped.items()):
            out.append(f"- {model}: " + "; ".join(f"`{c}`" for c in commands))
        out.append("")
    out += ["## Per config and mode", "", "| config | mode | runner | prepare |", "|---|---|---|---|"]
    for r in m.rows[:rows_limit]:
        rd = f"{r.runner} ({_cell(r.runner_detail)[:120]})" if r.runner_detail else r.runner
        pd = f"{r.prepare} ({_cell(r.prepare_detail)[:120]})" if r.prepare_detail else r.prepare
        out.append(f"| `{r.config}` | {r.mode} | {rd} | {pd} |")
    if len(m.rows) > rows_limit:
        out.append(f"| ... {len(m.rows) - rows_limit} more | | | |")
    out.append("")
    verdict = "ready" if m.ok else "NOT ready: unexplained changes or configs that would be lost (above)"
    out.append(f"Migration: {verdict}.")
    return "\n".join(out) + "\n"
