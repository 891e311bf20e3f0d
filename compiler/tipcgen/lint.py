"""Lint rules for legacy configs (and, through lowering, for specs).

Each rule reads a config as the scripts do (layout table, line index) and reports what the
scripts would silently do wrong. The spec validator runs the same rules on every suite's
lowered config, so a spec cannot describe a defect unless the suite `allow`s it by rule id.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import asdict, dataclass
from typing import Callable, Optional

from .configview import split_line
from .layouts import Layout
from .modes import MODES, TRAIN_MODES

ERROR, WARNING, INFO = "error", "warning", "info"


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    severity: str
    summary: str


RULES = {r.id: r for r in [
    Rule("TIPC001", "bool-typo", ERROR, "a misspelt boolean (e.g. `Fasle`) is neither True nor False to the scripts"),
    Rule("TIPC002", "unknown-mode", ERROR, "a mode table names a mode no script runs"),
    Rule("TIPC003", "missing-mode", WARNING, "a mode table lacks a training mode another table has: the flag vanishes in that mode"),
    Rule("TIPC004", "not-a-mode-table", WARNING, "a plain value where a mode table belongs: the scripts drop the flag in every mode"),
    Rule("TIPC005", "misplaced-key", ERROR, "a key is not on its line (shifted or missing): the scripts read lines by index"),
    Rule("TIPC006", "truncated", ERROR, "the config is shorter than its layout: the missing fields read as empty"),
    Rule("TIPC007", "hash-separator", WARNING, "`#` where the layout has the `##` separator"),
    Rule("TIPC008", "model-name-mismatch", ERROR, "model_name disagrees with the model the file is named after"),
    Rule("TIPC009", "null-with-spaces", WARNING, "`null` with trailing spaces is a value, not null"),
    Rule("TIPC010", "trainer-without-slot", WARNING, "a trainer name matches no trainer slot: it runs the norm trainer only by fallback"),
    Rule("TIPC011", "device-list-short", ERROR, "fewer device values than gpu_list entries: later runs lose the device flag"),
    Rule("TIPC012", "double-extension", WARNING, "a config file named `*.txt.txt`"),
    Rule("TIPC013", "whitespace-line", ERROR, "a line of only spaces counts as a line and shifts every index after it"),
    Rule("TIPC014", "line-ends", WARNING, "CRLF line ends or a BOM: the scripts keep `\\r`/the BOM inside values"),
    Rule("TIPC015", "unverified-artifact", INFO, "prepare downloads an artifact without a sha256"),
    Rule("TIPC016", "empty-config", ERROR, "the config has no train_params lines"),
    Rule("TIPC017", "tipcgen-extension", WARNING, "tipcgen syntax upstream scripts do not understand (cpuxN CPU processes)"),
]}

_BOOLISH = re.compile(r"^[A-Za-z]{4,5}$")


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    file: str
    line: Optional[int]  # 1-based physical line
    message: str
    hint: str = ""
    role: Optional[str] = None  # the layout role of the line, when known

    def render(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        hint = f" ({self.hint})" if self.hint else ""
        return f"{where}: {self.severity}: {self.rule} {RULES[self.rule].name}: {self.message}{hint}"


def _physical_numbers(text: str) -> list[int]:
    """1-based physical line number of each non-empty line (the scripts' index -> file line)."""
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        if line != "" and line != "\r":
            out.append(n)
    return out


def lint_text(text: str, layout: Optional[Layout], path: str) -> list[Finding]:
    """Findings for one config's text (BOM/CRLF still in place)."""
    findings: list[Finding] = []
    base = os.path.basename(path)
    if base.endswith(".txt.txt"):
        findings.append(Finding("TIPC012", WARNING, path, None, f"{base} ends in .txt.txt",
                                "rename it to a single .txt"))
    if text.startswith("\ufeff") or "\r\n" in text:
        findings.append(Finding("TIPC014", WARNING, path, 1, "CRLF line ends or a BOM",
                                "save the file with LF line ends and no BOM"))
    clean = text.lstrip("\ufeff").replace("\r\n", "\n")
    numbers = _physical_numbers(clean)
    lines = [line for line in clean.split("\n") if line != ""]
    if not lines:
        return findings + [Finding("TIPC016", ERROR, path, None, "empty file")]
    for i, line in enumerate(lines):
        if line.strip() == "":
            findings.append(Finding("TIPC013", ERROR, path, numbers[i], "a line of only whitespace",
                                    "delete the line"))
    if layout is None:
        return findings
    rows = layout.rows
    lines_by_role = {}
    for i, row in enumerate(rows):
        if i >= len(lines):
            break
        if row.kind == "field":
            lines_by_role[row.role] = (i, lines[i])
    if len(lines) < len(rows):
        findings.append(Finding("TIPC006", ERROR, path, numbers[-1],
                                f"{len(lines)} lines where the {layout.name} layout has {len(rows)}",
                                "add the missing lines (null:null disables a field)"))
    findings += _shifted(lines, rows, numbers, path)
    for i, row in enumerate(rows[: len(lines)]):
        line = lines[i]
        if row.kind == "sep" and line.strip() == "#":
            findings.append(Finding("TIPC007", WARNING, path, numbers[i], "`#` instead of `##`", "write ##"))
        if row.kind != "field":
            continue
        key, value = split_line(line)
        for part, what in ((key, "key"), (value, "value")):
            if part != "null" and part.rstrip() == "null":
                findings.append(Finding("TIPC009", WARNING, path, numbers[i], f"{what} {part!r} is not null",
                                        "remove the trailing spaces", row.role))
        for token in re.split(r"[|,]", value):
            if _BOOLISH.match(token) and token not in ("True", "False", "true", "false"):
                close = difflib.get_close_matches(token, ["True", "False"], n=1, cutoff=0.6)
                if close and token.lower() not in ("none", "null"):
                    findings.append(Finding("TIPC001", ERROR, path, numbers[i],
                                            f"{token!r} in `{key}` is not a boolean (the scripts compare with"
                                            f" {close[0]!r} exactly)", f"write {close[0]}", row.role))
    findings += _mode_tables(lines_by_role, numbers, path)
    findings += _trainers(lines_by_role, numbers, path, layout)
    findings += _devices(lines_by_role, numbers, path)
    findings += _model_name(lines_by_role, numbers, path)
    return findings


def _expected(row) -> tuple:
    """Keys (or header name) a row's line may carry, for lint."""
    if row.kind == "header":
        return (row.name,)
    if row.kind == "field":
        return ((row.key,) if row.key is not None else ()) + tuple(row.lint_keys)
    return ()


def _shifted(lines: list, rows: tuple, numbers: list, path: str) -> list[Finding]:
    """The first fixed (or conventional) key or header that is not on its line."""
    def key_at(j: int) -> Optional[str]:
        if not 0 <= j < len(lines):
            return None
        return split_line(lines[j])[0] if rows[min(j, len(rows) - 1)].kind != "header" else _header(lines[j])

    def expect(j: int) -> tuple:
        return _expected(rows[j]) if 0 <= j < len(rows) else ()

    for i, row in enumerate(rows[: len(lines)]):
        want = expect(i)
        if not want:
            continue
        got = split_line(lines[i])[0] if row.kind == "field" else _header(lines[i])
        if got in want:
            continue
        for delta in (-1, 1):
            if got is not None and got in expect(i + delta):
                return [Finding("TIPC005", ERROR, path, numbers[i],
                                f"`{got}` is on line {numbers[i]}, one line {'before' if delta > 0 else 'after'}"
                                f" its place (index {i + delta})",
                                "add or remove a line above it so every key sits on its index")]
            if key_at(i + delta) in want:
                j = i + delta
                return [Finding("TIPC005", ERROR, path, numbers[j],
                                f"`{key_at(j)}` is on line {numbers[j]}, one line "
                                f"{'before' if delta < 0 else 'after'} its place (index {i})",
                                "add or remove a line above it so every key sits on its index")]
        if row.kind == "header" or row.key is not None:
            return [Finding("TIPC005", ERROR, path, numbers[i],
                            f"`{got}` on line {numbers[i]} where the layout has `{want[0]}` (index {i})",
                            f"put `{want[0]}` on this line")]
    return []


def _header(line: str) -> Optional[str]:
    m = re.match(r"^=+\s*([A-Za-z0-9_ ]*?)\s*=+\s*$", line)
    return m.group(1).strip() if m else None


def _mode_tables(by_role: dict, numbers: list, path: str) -> list[Finding]:
    out = []
    tables = {}
    for role in ("train.epochs", "train.batch_size"):
        if role not in by_role:
            continue
        i, line = by_role[role]
        key, value = split_line(line)
        if key == "null" or value in ("null", ""):
            continue
        items = value.split("|")
        if not any("=" in item for item in items):
            out.append(Finding("TIPC004", WARNING, path, numbers[i],
                               f"`{key}:{value}` is not a mode table; the scripts look up the current mode in it"
                               " and drop the flag", f"write lite_train_lite_infer={value}|...", role))
            continue
        modes = []
        for item in items:
            mode = item.split("=", 1)[0]
            modes.append(mode)
            if mode not in MODES:
                close = difflib.get_close_matches(mode, TRAIN_MODES, n=1)
                out.append(Finding("TIPC002", ERROR, path, numbers[i], f"unknown mode {mode!r} in `{key}`",
                                   f"did you mean {close[0]!r}?" if close else "modes: " + ", ".join(TRAIN_MODES),
                                   role))
        tables[role] = (i, key, {m for m in modes if m in TRAIN_MODES})
    everywhere = set().union(*(t[2] for t in tables.values())) if tables else set()
    for role, (i, key, modes) in tables.items():
        for mode in sorted(everywhere - modes):
            out.append(Finding("TIPC003", WARNING, path, numbers[i],
                               f"`{key}` has no {mode} entry (another table has): the flag is dropped in that mode",
                               f"add {mode}=... to the table", role))
    return out


def _trainers(by_role: dict, numbers: list, path: str, layout: Layout) -> list[Finding]:
    if "train.run" not in by_role or layout.dialect.family != "ocr":
        return []
    i, line = by_role["train.run"]
    keys = {split_line(by_role[r][1])[0] for r in by_role if r.startswith("trainer.") and r.endswith(".train")}
    out = []
    for name in split_line(line)[1].split("|"):
        if name and name not in keys:
            out.append(Finding("TIPC010", WARNING, path, numbers[i],
                               f"trainer {name!r} matches no trainer slot ({', '.join(sorted(k for k in keys if k != 'null'))})",
                               "name it after its slot key", "train.run"))
    return out


def _devices(by_role: dict, numbers: list, path: str) -> list[Finding]:
    if "gpu_list" not in by_role or "train.device" not in by_role:
        return []
    gi, gline = by_role["gpu_list"]
    di, dline = by_role["train.device"]
    entries = [e for e in split_line(gline)[1].split("|") if e]
    out = []
    for e in entries:
        if re.match(r"^(?:.*;)?cpux[0-9]+$", e):
            out.append(Finding("TIPC017", WARNING, path, numbers[gi],
                               f"gpu_list entry {e!r} runs CPU processes through paddle.distributed.launch;"
                               " only tipcgen's generated scripts understand it",
                               "use the generated test_train_inference_python.sh or tipcgen run", "gpu_list"))
    dkey, dvalue = split_line(dline)
    values = [v for v in dvalue.split("|")] if dvalue else []
    if dkey != "null" and len(values) < len(entries):
        return out + [Finding("TIPC011", ERROR, path, numbers[di],
                        f"{len(values)} value(s) in `{dkey}` for {len(entries)} gpu_list entries: runs past"
                        " the list lose the device flag", "give one value per gpu_list entry", "train.device")]
    return out


def _model_name(by_role: dict, numbers: list, path: str) -> list[Finding]:
    if "model_name" not in by_role:
        return []
    i, line = by_role["model_name"]
    name = split_line(line)[1]
    base = os.path.basename(path)
    m = re.match(r"^(.+?)_train_(?:amp_|pact_|ptq_|fleet_)?infer_python\.txt$", base)
    prefix = m.group(1) if m else None
    if prefix and not prefix.startswith(name) and not name.startswith(prefix) and prefix not in ("win",):
        return [Finding("TIPC008", ERROR, path, numbers[i],
                        f"model_name {name!r} but the file is named for {prefix!r}",
                        f"write model_name:{prefix}", "model_name")]
    return []


def findings_json(findings: list[Finding]) -> str:
    return json.dumps([asdict(f) for f in findings], indent=2, ensure_ascii=False)


def rule_ids() -> list[str]:
    return list(RULES)


FindingFilter = Callable[[Finding], bool]
