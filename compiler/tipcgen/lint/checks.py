"""The lint checks: each reads a config as the scripts do (layout table, line index) and reports
what the scripts would silently do wrong, as Findings of the rules in `tipcgen.lint.rules`.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
from typing import Optional

from tipcgen.dialects import Layout
from tipcgen.errors import UsageError
from tipcgen.lint.booleans import BOOLISH, SWITCH_ROLES, YAML11_BOOL, near_boolean
from tipcgen.lint.rules import ERROR, WARNING, Finding
from tipcgen.lower.text import roles_typed
from tipcgen.script.lines import split_line
from tipcgen.spec.ir import ListFlag, ModeFlag
from tipcgen.spec.modes import MODES, TRAIN_MODES
from tipcgen.spec.policy import MAX_GPU_ID, SECTION_META, SHELL_META, char_name, first_control
from tipcgen.spec.sections import BENCHMARK_SECTIONS, read_params

# Lines whose value is a `|`-separated list the scripts split before use (gpu_list also has `;`):
# the list- and mode-table-typed fields of the Spec, plus the lines it models as lists itself.
_LIST_ROLES = (
    roles_typed(ListFlag)
    | roles_typed(ModeFlag)
    | {"gpu_list", "train.run", "whole_infer.models", "whole_infer.exports", "whole_infer.quant"}
)


def _physical_numbers(text: str) -> list[int]:
    """1-based physical line number of each non-empty line (the scripts' index -> file line)."""
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        if line != "" and line != "\r":
            out.append(n)
    return out


def lint_text(text: str, layout: Optional[Layout], path: str, runner: Optional[str] = None) -> list[Finding]:
    """Findings for one config's text (BOM/CRLF still in place); `runner`: the one of the layout's
    runners the config is run by (default: the dialect's first), whose Plans decide what a
    defect does (lint.effects)."""
    findings = _file_name_and_encoding(text, path)
    clean = text.lstrip("\ufeff").replace("\r\n", "\n")
    numbers = _physical_numbers(clean)
    lines = [line for line in clean.split("\n") if line != ""]
    if not lines:
        return [*findings, Finding("TIPC016", ERROR, path, None, "empty file")]
    findings += _blank_and_control(lines, numbers, path)
    findings += _all_null(lines, numbers, path)
    if layout is None:
        return findings + _no_layout(lines, numbers, path)
    return findings + _layout_checks(lines, layout, numbers, path, runner, clean)


def _layout_checks(
    lines: list, layout: Layout, numbers: list, path: str, runner: Optional[str], text: str
) -> list[Finding]:
    """The checks that read lines through the layout table, in report order; `text`: the config
    (BOM and CRLF removed) whose non-empty lines `lines` are."""
    rows = layout.rows
    by_role = _lines_by_role(lines, rows)
    findings = _truncated(lines, layout, numbers, path)
    findings += _shifted(lines, layout, numbers, path)
    findings += _row_values(lines, rows, numbers, path)
    findings += _metachars(lines, rows, numbers, path)
    findings += _mode_tables(by_role, numbers, path)
    findings += _trainers(by_role, numbers, path, layout)
    findings += _devices(by_role, numbers, path, layout.dialect.device_whole)
    findings += _gpu_list(by_role, numbers, path)
    findings += _model_name(by_role, numbers, path)
    findings += _benchmark_params(lines, len(rows), numbers, path)
    findings += _runner_refuses(lines, layout, by_role, numbers, path)
    findings += _onnx_opset(by_role, numbers, path)
    from tipcgen.lint.effects import with_effects

    index = {n: i for i, n in enumerate(numbers[: len(lines)])}
    return with_effects(findings, lines, layout, by_role, index, runner, text)


# The opsets paddle2onnx 2.x converts to ("The Opset Version must be between 7 and 21").
ONNX_OPSETS = range(7, 22)


def _onnx_opset(by_role: dict, numbers: list, path: str) -> list[Finding]:
    """paddle2onnx's `--opset_version`: a whole number it converts to (null: its default)."""
    hit = by_role.get("p2o.opset")
    if hit is None:
        return []
    i, line = hit
    value = split_line(line)[1].split(":", 1)[0]  # (the script keeps a value up to its next colon)
    if value == "null" or (value.isdigit() and int(value) in ONNX_OPSETS):
        return []
    return [
        Finding(
            "TIPC026",
            ERROR,
            path,
            numbers[i],
            f"--opset_version {value!r} is not an opset paddle2onnx converts to"
            f" ({ONNX_OPSETS[0]} to {ONNX_OPSETS[-1]})",
            "give a whole number in that range (11 suits most deployments), or null for paddle2onnx's default",
            "p2o.opset",
        )
    ]


def _runner_refuses(lines: list, layout: Layout, by_role: dict, numbers: list, path: str) -> list[Finding]:
    """What `plan`, `run` and the bash refuse (plan/refusals.py), so lint never passes a config
    none of them would run."""
    from tipcgen.lower.configview import ConfigView
    from tipcgen.plan.refusals import check_view

    try:
        check_view(ConfigView.parse("\n".join(lines) + "\n", layout), "")
    except UsageError as exc:
        message = str(exc).removeprefix(": ")
        role = "model_name" if message.startswith("model_name") else None
        line = numbers[by_role[role][0]] if role and role in by_role else None
        return [Finding("TIPC025", ERROR, path, line, message, "", role)]
    return []


def _benchmark_params(lines: list, core: int, numbers: list, path: str) -> list[Finding]:
    """Benchmark parameters a benchmark script misreads (TIPC023) or that end in blanks (TIPC024)."""
    findings = []
    section = None
    for i in range(core, len(lines)):
        name = _header(lines[i])
        if name is not None:
            section = name
            continue
        if section not in BENCHMARK_SECTIONS or ":" not in lines[i]:
            continue
        key, value = split_line(lines[i])
        for issue in read_params({key: value})[1]:
            severity = ERROR if issue.rule == "TIPC023" else WARNING
            role = f"sections.{section}.{key}"  # the spec field, for the validator's position
            findings.append(Finding(issue.rule, severity, path, numbers[i], issue.message, issue.hint, role))
    return findings


def _file_name_and_encoding(text: str, path: str) -> list[Finding]:
    """A `*.txt.txt` name (TIPC012); CRLF line ends (an error: the runner refuses them) or a BOM (TIPC014)."""
    findings = []
    base = os.path.basename(path)
    if base.endswith(".txt.txt"):
        findings.append(
            Finding("TIPC012", WARNING, path, None, f"{base} ends in .txt.txt", "rename it to a single .txt")
        )
    if "\r\n" in text:  # every value would end in a CR: the runner, plan and run refuse the config
        findings.append(
            Finding(
                "TIPC014",
                ERROR,
                path,
                1,
                "CRLF line ends: the runner refuses this config (each value would end in a carriage return)",
                "save the file with LF line ends",
            )
        )
    elif text.startswith("\ufeff"):
        findings.append(Finding("TIPC014", WARNING, path, 1, "a BOM", "save the file without a BOM"))
    return findings


def _blank_and_control(lines: list, numbers: list, path: str) -> list[Finding]:
    """Lines of only whitespace (TIPC013) and control characters inside a line (TIPC022), line by line."""
    findings = []
    for i, line in enumerate(lines):
        if line.strip() == "":
            findings.append(Finding("TIPC013", ERROR, path, numbers[i], "a line of only whitespace", "delete the line"))
        ch = first_control(line)
        if ch is not None:
            findings.append(
                Finding(
                    "TIPC022",
                    ERROR,
                    path,
                    numbers[i],
                    f"{char_name(ch)} at column {line.index(ch) + 1}: the scripts keep it in the value",
                    "delete the character",
                )
            )
    return findings


def _all_null(lines: list, numbers: list, path: str) -> list[Finding]:
    """Every key:value line is null:null (TIPC019)."""
    content = [line for line in lines if _header(line) is None and line.strip() not in ("", "#", "##")]
    if not content or not all(line == "null:null" for line in content):
        return []
    return [
        Finding(
            "TIPC019",
            ERROR,
            path,
            numbers[0],
            f"all {len(content)} key:value lines are null:null",
            "fill in the fields, or delete the file",
        )
    ]


def _lines_by_role(lines: list, rows: tuple) -> dict:
    """{role: (line index, line)} of the field rows the config has lines for."""
    by_role = {}
    for i, row in enumerate(rows):
        if i >= len(lines):
            break
        if row.kind == "field":
            by_role[row.role] = (i, lines[i])
    return by_role


def _truncated(lines: list, layout: Layout, numbers: list, path: str) -> list[Finding]:
    """Fewer lines than the layout has rows (TIPC006), its optional last rows aside."""
    if len(lines) >= len(layout.rows) - layout.optional_rows:
        return []
    return [
        Finding(
            "TIPC006",
            ERROR,
            path,
            numbers[-1],
            f"{len(lines)} lines where the {layout.name} layout has {len(layout.rows)}",
            "add the missing lines (null:null disables a field)",
        )
    ]


def _row_values(lines: list, rows: tuple, numbers: list, path: str) -> list[Finding]:
    """Line by line: `#` for `##` (TIPC007), `null ` with trailing spaces (TIPC009), boolean typos (TIPC001)."""
    findings = []
    for i, row in enumerate(rows[: len(lines)]):
        line = lines[i]
        if row.kind == "sep" and line.strip() == "#":
            findings.append(Finding("TIPC007", WARNING, path, numbers[i], "`#` instead of `##`", "write ##"))
        if row.kind != "field":
            continue
        key, value = split_line(line)
        findings += _spaced_nulls(key, value, row.role, numbers[i], path)
        findings += _bool_typos(key, value, row.role, numbers[i], path)
    return findings


def _spaced_nulls(key: str, value: str, role: Optional[str], number: int, path: str) -> list[Finding]:
    findings = []
    for part, what in ((key, "key"), (value, "value")):
        if part != "null" and part.rstrip() == "null":
            findings.append(
                Finding(
                    "TIPC009",
                    WARNING,
                    path,
                    number,
                    f"{what} {part!r} is not null",
                    "remove the trailing spaces",
                    role,
                )
            )
    return findings


def _bool_typos(key: str, value: str, role: Optional[str], number: int, path: str) -> list[Finding]:
    """Values the scripts compare with True/False that are neither: YAML 1.1 spellings in switch
    lines, and near misses like `Fasle` anywhere."""
    findings = []
    for token in re.split(r"[|,]", value):
        if role in SWITCH_ROLES and token.lower() in YAML11_BOOL:
            findings.append(
                Finding(
                    "TIPC001",
                    ERROR,
                    path,
                    number,
                    f"{token!r} in `{key}` is not a boolean (the scripts compare with True/False exactly)",
                    f"write {YAML11_BOOL[token.lower()]}; YAML 1.2 reads an unquoted {token} as the text {token!r}",
                    role,
                )
            )
        elif BOOLISH.match(token) and token not in ("True", "False", "true", "false"):
            close = near_boolean(token)
            if close and token.lower() not in ("none", "null"):
                findings.append(
                    Finding(
                        "TIPC001",
                        ERROR,
                        path,
                        number,
                        f"{token!r} in `{key}` is not a boolean (the scripts compare with {close[0]!r} exactly)",
                        f"write {close[0]}",
                        role,
                    )
                )
    return findings


def _metachars(lines: list, rows: tuple, numbers: list, path: str) -> list[Finding]:
    """Shell metacharacters the scripts would `eval` (structural `|` and gpu_list's `;` aside)."""
    out = []
    for i, line in enumerate(lines):
        if i < len(rows) and rows[i].kind != "field":
            continue
        if _header(line) is not None:
            continue
        role = rows[i].role if i < len(rows) else None
        key, value = split_line(line)
        if i >= len(rows):
            refused = SECTION_META  # trailing sections: benchmark values split on `;` and `|`
        else:
            refused = SHELL_META.replace("|", "") if role in _LIST_ROLES else SHELL_META
            if role == "gpu_list":
                refused = refused.replace(";", "")
        bad = next((c for c in key if c in SHELL_META), None) or next((c for c in value if c in refused), None)
        if bad is not None:
            out.append(
                Finding(
                    "TIPC021",
                    ERROR,
                    path,
                    numbers[i],
                    f"{bad!r} in `{line if len(line) <= 80 else line[:77] + '...'}`: the scripts"
                    " build commands from this line and `eval` them",
                    "remove the shell metacharacter",
                    role,
                )
            )
    return out


def _no_layout(lines: list, numbers: list, path: str) -> list[Finding]:
    """A config that starts like a train config (train_params) but that no layout fits."""
    from tipcgen.dialects import LAYOUTS

    if _header(lines[0]) != "train_params":
        return []
    shortest = min(LAYOUTS.values(), key=lambda lay: len(lay.rows))
    keys = [split_line(line)[0] for line in lines[:30]]
    if "trainer" not in keys and len(lines) < len(shortest.rows):
        return [
            Finding(
                "TIPC006",
                ERROR,
                path,
                numbers[-1],
                f"{len(lines)} lines and no `trainer:` line: a train config has at least"
                f" {len(shortest.rows)} (the {shortest.name} layout)",
                "add the missing lines (null:null disables a field)",
            )
        ]
    where = (
        f"`trainer:` on line index {keys.index('trainer')}"
        if "trainer" in keys
        else "no `trainer:` line in the first 30 lines"
    )
    return [
        Finding(
            "TIPC018",
            ERROR,
            path,
            numbers[0],
            f"a train_params config whose layout cannot be told ({where})",
            "put each key on its layout's line, or lint with --layout NAME",
        )
    ]


def _expected(row) -> tuple:
    """Keys (or header name) a row's line may carry, for lint."""
    if row.kind == "header":
        return (row.name, *row.lint_keys)
    if row.kind == "field":
        return ((row.key,) if row.key is not None else ()) + tuple(row.lint_keys)
    return ()


def _shifted(lines: list, layout: Layout, numbers: list, path: str) -> list[Finding]:
    """The first fixed (or conventional) key or header that is not on its line (keys split on
    the layout's separator)."""
    rows = layout.rows

    def key_at(j: int) -> Optional[str]:
        if not 0 <= j < len(lines):
            return None
        row = rows[min(j, len(rows) - 1)]
        return split_line(lines[j], layout.row_separator(row))[0] if row.kind != "header" else _header(lines[j])

    def expect(j: int) -> tuple:
        return _expected(rows[j]) if 0 <= j < len(rows) else ()

    for i, row in enumerate(rows[: len(lines)]):
        want = expect(i)
        if not want:
            continue
        got = split_line(lines[i], layout.row_separator(row))[0] if row.kind == "field" else _header(lines[i])
        if got in want:
            continue
        for delta in (-1, 1):
            if got is not None and got in expect(i + delta):
                return [
                    Finding(
                        "TIPC005",
                        ERROR,
                        path,
                        numbers[i],
                        f"`{got}` is on line {numbers[i]}, one line {'before' if delta > 0 else 'after'}"
                        f" its place (index {i + delta})",
                        "add or remove a line above it so every key sits on its index",
                    )
                ]
            if key_at(i + delta) in want:
                j = i + delta
                return [
                    Finding(
                        "TIPC005",
                        ERROR,
                        path,
                        numbers[j],
                        f"`{key_at(j)}` is on line {numbers[j]}, one line "
                        f"{'before' if delta < 0 else 'after'} its place (index {i})",
                        "add or remove a line above it so every key sits on its index",
                    )
                ]
        if row.kind == "header" or row.key is not None:
            return [
                Finding(
                    "TIPC005",
                    ERROR,
                    path,
                    numbers[i],
                    f"`{got}` on line {numbers[i]} where the layout has `{want[0]}` (index {i})",
                    f"put `{want[0]}` on this line",
                )
            ]
    return []


def _header(line: str) -> Optional[str]:
    m = re.match(r"^=+\s*([A-Za-z0-9_ ]*?)\s*=+\s*$", line)
    return m.group(1).strip() if m else None


def _mode_tables(by_role: dict, numbers: list, path: str) -> list[Finding]:
    out = []
    tables: dict[str, tuple[int, str, set[str]]] = {}
    for role in ("train.epochs", "train.batch_size"):
        if role not in by_role:
            continue
        i, line = by_role[role]
        key, value = split_line(line)
        if key == "null" or value in ("null", ""):
            continue
        items = value.split("|")
        if not any("=" in item for item in items):
            out.append(
                Finding(
                    "TIPC004",
                    WARNING,
                    path,
                    numbers[i],
                    f"`{key}:{value}` is not a mode table; the scripts look up the current mode in it"
                    " and drop the flag",
                    f"write lite_train_lite_infer={value}|...",
                    role,
                )
            )
            continue
        modes = []
        for item in items:
            mode = item.split("=", 1)[0]
            modes.append(mode)
            if mode not in MODES:
                close = difflib.get_close_matches(mode, TRAIN_MODES, n=1)
                out.append(
                    Finding(
                        "TIPC002",
                        ERROR,
                        path,
                        numbers[i],
                        f"unknown mode {mode!r} in `{key}`",
                        f"did you mean {close[0]!r}?" if close else "modes: " + ", ".join(TRAIN_MODES),
                        role,
                    )
                )
        tables[role] = (i, key, {m for m in modes if m in TRAIN_MODES})
    everywhere: set[str] = set().union(*(t[2] for t in tables.values())) if tables else set()
    for role, (i, key, present) in tables.items():
        for mode in sorted(everywhere - present):
            out.append(
                Finding(
                    "TIPC003",
                    WARNING,
                    path,
                    numbers[i],
                    f"`{key}` has no {mode} entry (another table has): the flag is dropped in that mode",
                    f"add {mode}=... to the table",
                    role,
                )
            )
    return out


def _trainers(by_role: dict, numbers: list, path: str, layout: Layout) -> list[Finding]:
    if "train.run" not in by_role or layout.dialect.family != "ocr":
        return []
    i, line = by_role["train.run"]
    keys = {split_line(by_role[r][1])[0] for r in by_role if r.startswith("trainer.") and r.endswith(".train")}
    out = []
    named = sorted(k for k in keys if k != "null")
    for name in split_line(line)[1].split("|"):
        if name and name not in keys:
            close = difflib.get_close_matches(name, named, n=1, cutoff=0.5)
            out.append(
                Finding(
                    "TIPC010",
                    ERROR,
                    path,
                    numbers[i],
                    f"trainer {name!r} matches no trainer slot ({', '.join(named)}): the scripts"
                    " run the norm trainer for it",
                    f"did you mean {close[0]!r}?" if close else "name it after its slot key",
                    "train.run",
                )
            )
    return out


def _devices(by_role: dict, numbers: list, path: str, device_whole: bool = False) -> list[Finding]:
    if "gpu_list" not in by_role or "train.device" not in by_role:
        return []
    gi, gline = by_role["gpu_list"]
    di, dline = by_role["train.device"]
    entries = [e for e in split_line(gline)[1].split("|") if e]
    out = []
    for e in entries:
        if re.match(r"^(?:.*;)?cpux[0-9]+$", e):
            out.append(
                Finding(
                    "TIPC017",
                    WARNING,
                    path,
                    numbers[gi],
                    f"gpu_list entry {e!r} runs CPU processes through paddle.distributed.launch;"
                    " only tipcgen's generated scripts understand it",
                    "use the generated test_train_inference_python.sh or tipcgen run",
                    "gpu_list",
                )
            )
    dkey, dvalue = split_line(dline)
    values = [v for v in dvalue.split("|")] if dvalue else []
    if dkey != "null" and len(values) < len(entries) and not device_whole:
        return [
            *out,
            Finding(
                "TIPC011",
                ERROR,
                path,
                numbers[di],
                f"{len(values)} value(s) in `{dkey}` for {len(entries)} gpu_list entries: runs past"
                " the list lose the device flag",
                "give one value per gpu_list entry",
                "train.device",
            ),
        ]
    return out


def gpu_entry_problem(entry: str) -> Optional[str]:
    """Why a gpu_list entry is not one the scripts can run, or None."""
    if entry == "-1":
        return None
    ips, sep, devices = entry.rpartition(";")
    if sep:
        if not ips:
            return "nothing before `;` (the node IPs)"
        seen = set()
        for ip in ips.split(","):
            try:
                ipaddress.IPv4Address(ip)
            except ValueError:
                return f"{ip!r} is not an IPv4 address"
            if ip in seen:
                return f"IP {ip} is listed twice"
            seen.add(ip)
    if re.fullmatch(r"cpux[0-9]+", devices):
        return None if re.fullmatch(r"cpux[1-9][0-9]?", devices) else f"{devices!r}: cpuxN takes 1 to 99 processes"
    ids = devices.split(",")
    for gpu in ids:
        if not re.fullmatch(r"0|[1-9][0-9]*", gpu):
            return f"{gpu!r} is not a GPU id" + (" (-1 means CPU, alone)" if gpu == "-1" else "")
        if int(gpu) > MAX_GPU_ID:
            return f"GPU id {gpu} is not a device ordinal (0 to {MAX_GPU_ID})"
    if len(set(ids)) != len(ids):
        return f"GPU id {next(g for g in ids if ids.count(g) > 1)} is listed twice"
    return None


def _gpu_list(by_role: dict, numbers: list, path: str) -> list[Finding]:
    if "gpu_list" not in by_role:
        return []
    i, line = by_role["gpu_list"]
    value = split_line(line)[1]
    out = []
    for entry in value.split("|"):
        problem = "an empty entry" if entry == "" else gpu_entry_problem(entry)
        if problem:
            out.append(
                Finding(
                    "TIPC020",
                    ERROR,
                    path,
                    numbers[i],
                    f"gpu_list entry {entry!r}: {problem}",
                    "write -1 (CPU), GPU ids like 0,1, or ip1,ip2;0,1",
                    "gpu_list",
                )
            )
    return out


def _model_name(by_role: dict, numbers: list, path: str) -> list[Finding]:
    """The scripts never read a config's file name, so a model_name that disagrees with it runs
    all the same: a warning. model_name names the log folder and, when other lines use it, the
    model's files: the hint never tells to rename a model_name that something else names."""
    if "model_name" not in by_role:
        return []
    i, line = by_role["model_name"]
    name = split_line(line)[1]
    base = os.path.basename(path)
    m = re.match(r"^(.+?)_train_(?:amp_|pact_|ptq_|fleet_)?infer_python\.txt$", base)
    prefix = m.group(1) if m else None
    if prefix and not prefix.startswith(name) and not name.startswith(prefix) and prefix not in ("win",):
        used = [r for r, (j, text) in by_role.items() if j != i and name and name in split_line(text)[1]]
        # never "write model_name:<prefix>": the runner reads the trained model from a folder named
        # after model_name (PaddleClas: its yaml's Arch.name, e.g. DistillationModel)
        where = f" (also in `{split_line(by_role[used[0]][1])[0]}`)" if used else ""
        hint = f"rename the file to {name}_train_infer_python.txt, or leave it: the runner uses model_name{where}"
        return [
            Finding(
                "TIPC008",
                WARNING,
                path,
                numbers[i],
                f"model_name {name!r} but the file is named for {prefix!r} (the scripts never read the file name)",
                hint,
                "model_name",
            )
        ]
    return []
