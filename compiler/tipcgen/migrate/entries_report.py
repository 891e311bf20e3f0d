"""The report's part for the whole-tree oracle (Migration.entries): a summary per script, the same
differences across entry points collapsed with their count and configs, then every entry point.

Everything from the repo reaches the markdown through the one markdown escaper (tipcgen.escape).
"""

from __future__ import annotations

import os
import re
from collections import Counter

from tipcgen.escape import for_markdown
from tipcgen.migrate.entries import ENTRY_VERDICTS, EntryRow


def _text(text: str) -> str:
    return for_markdown(" ".join(str(text).split("\n")).strip())


def _code(text: str, table: bool = False) -> str:
    return for_markdown(str(text), "code", table=table)


def _folded(row: EntryRow) -> tuple:
    """The row's differences with what names its run (mode, config folder, model) folded, so the
    same edit on many configs and modes is one group."""
    out = []
    names = [n for n in (row.entry.mode, os.path.dirname(row.entry.config or "")) if n]
    for line in row.differences:
        for name in names:
            line = line.replace(name, "<MODE>" if name == row.entry.mode else "<CONFIG_DIR>")
        out.append(re.sub(r"\d+", "N", line))
    return (row.entry.script, tuple(out))


def entries_markdown(entries: list, left_out: tuple = ()) -> list[str]:
    """The markdown lines of the whole-tree part of the report (none when there are no entries);
    `left_out`: the runner modes `--mode` left out (no entry point ran in them)."""
    if not entries:
        return []
    per_script: dict = {}
    for row in entries:
        per_script.setdefault(row.entry.script, Counter())[row.verdict] += 1
    out = [
        "## Every entry point of the old test_tipc/, before and after",
        "",
        f"{len(entries)} entry point(s): each script of the old `test_tipc/` with each config it reads and each mode"
        " it takes (from the script and the repo's docs), run on the old tree and on the switched one under"
        " recorders (wrappers such as `timeout`, `nohup` and `sleep` with their arguments recorded too).",
        "",
        *(
            [
                "Not compared in " + ", ".join(_code(m) for m in left_out) + " (left out by `--mode`): run migrate"
                " without `--mode` before relying on those modes.",
                "",
            ]
            if left_out
            else []
        ),
        "| script | " + " | ".join(ENTRY_VERDICTS) + " |",
        "|---|" + "---|" * len(ENTRY_VERDICTS),
    ]
    for script, tally in sorted(per_script.items()):
        out.append(
            f"| {_code(script, table=True)} | " + " | ".join(str(tally.get(v, 0)) for v in ENTRY_VERDICTS) + " |"
        )
    out.append("")
    changed = [r for r in entries if r.verdict == "CHANGED"]
    if changed:
        groups: dict = {}
        for row in changed:
            groups.setdefault(_folded(row), []).append(row)
        out += [
            "### Changed entry points (the same differences collapsed)",
            "",
            f"{len(changed)} entry point(s) would change, in {len(groups)} group(s) of identical differences"
            " (mode, config folder and numbers folded).",
            "",
        ]
        for (script, _folded_lines), rows in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0][0])):
            first = rows[0]
            runs = ", ".join(f"{_code(r.entry.config or '-')} {_text(r.entry.mode or '')}".rstrip() for r in rows)
            out.append(f"- {_code(script)}, {len(rows)} run(s): {_text(first.detail)}; {runs}")
            block = for_markdown("\n".join(first.differences) or "(no command differs)", "block")
            out += ["", *(f"  {line}" for line in block.split("\n")), ""]
    out += [
        "### Every entry point",
        "",
        "| script | config | mode | verdict | commands before / after | exit before / after |",
        "|---|---|---|---|---|---|",
    ]
    for r in entries:
        verdict = _text(r.verdict) + (f" ({_text(r.detail)})" if r.detail else "")
        out.append(
            f"| {_code(r.entry.script, table=True)} | {_code(r.entry.config or '-', table=True)} | "
            f"{_text(r.entry.mode or '-')} | {verdict} | {r.before_commands} / {r.after_commands} | "
            f"{r.before_exit} / {r.after_exit} |"
        )
    out.append("")
    return out
