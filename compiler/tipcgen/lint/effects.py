"""What a finding's defect does on THIS config's runner, read off its Plan.

A rule like "a plain value where a mode table belongs: the flag is dropped" is true of PaddleOCR's
runner and false of PaddleClas's (which passes the value as it is). So the findings that claim an
effect on what runs (TIPC001 bool-typo, TIPC003 missing-mode, TIPC004 not-a-mode-table, TIPC011
device-list-short, TIPC021 a `|` the scripts `eval`) are checked here: the config is planned as it
is and with the defect fixed, in every mode of its runner. Where the two Plans differ the finding
stands and names the runner; where they agree the defect changes nothing that runs: a typo is
kept as a note (worth fixing, no effect), the others are dropped.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

from tipcgen.dialects import Layout
from tipcgen.errors import UsageError
from tipcgen.lint.booleans import fixed_booleans
from tipcgen.lint.rules import INFO, Finding
from tipcgen.script.lines import split_line
from tipcgen.spec.modes import TRAIN_MODES

CLAIMS = ("TIPC001", "TIPC003", "TIPC004", "TIPC011", "TIPC021")

# How messages name a runner (plan/runners/<name>.py).
RUNNER_NAMES = {
    "ocr": "PaddleOCR's (seed-era) runner",
    "ocr_head": "PaddleOCR's runner",
    "paddleclas": "PaddleClas's runner",
    "paddleseg": "PaddleSeg's runner",
    "paddlevideo": "PaddleVideo's runner",
    "paddledetection": "PaddleDetection's runner",
    "models": "the models tutorials' runner",
}


def runner_name(layout: Layout, runner: Optional[str]) -> str:
    name = runner or layout.dialect.runners[0]
    return RUNNER_NAMES.get(name, f"the {name} runner")


def _plans(text: str, layout: Layout, runner: Optional[str]) -> Optional[dict]:
    """{mode: steps} of every mode of the runner, None when the runner refuses the config."""
    from tipcgen.plan.planner import mode_plans

    try:
        return {mode: plan.steps for mode, plan in mode_plans(text, layout, runner).items()}
    except (UsageError, ValueError):
        return None


def _comparable(plans: dict) -> list:
    return [[(s.kind, s.argv, s.cwd, s.cuda_visible_devices, s.log, s.skip) for s in steps] for steps in plans.values()]


def flag_word(key: str) -> str:
    """The word of a config key a command carries (`-o Global.epochs` -> `Global.epochs`)."""
    return key.split()[-1] if key.split() else key


def passes_flag(argv: Optional[tuple], word: str) -> bool:
    return argv is not None and any(t == word or t.startswith(word + "=") for t in argv)


def _train_argvs(plans: dict, modes) -> list:
    return [s.argv for mode in modes if mode in plans for s in plans[mode] if s.kind == "train"]


def claim_holds(
    f: Finding, lines: list[str], i: int, plans: dict, layout: Layout, runner: Optional[str], text: str
) -> bool:
    """Whether the effect the finding states shows in the Plans."""
    word = flag_word(split_line(lines[i])[0])
    if f.rule == "TIPC004":  # "the scripts drop the flag": no train command carries it
        argvs = _train_argvs(plans, TRAIN_MODES)
        return bool(argvs) and not any(passes_flag(a, word) for a in argvs)
    if f.rule == "TIPC003":  # "dropped in that mode"
        mode = next((m for m in TRAIN_MODES if f" {m} " in f" {f.message} "), None)
        argvs = _train_argvs(plans, [mode] if mode else TRAIN_MODES)
        return bool(argvs) and not all(passes_flag(a, word) for a in argvs)
    if f.rule == "TIPC011":  # "runs past the list lose the device flag": some train command lacks it
        argvs = _train_argvs(plans, TRAIN_MODES)
        return any(passes_flag(a, word) for a in argvs) and not all(passes_flag(a, word) for a in argvs)
    if f.rule == "TIPC021":  # "the scripts eval this `|`": only where a command still carries it
        return _bar_evaluated(f, lines[i], plans)
    if f.rule == "TIPC001":  # the typo changes what runs
        from tipcgen.plan.planner import WHOLE, roles_read

        read = roles_read(text, layout, runner)
        at = layout.index(f.role) if f.role is not None else None
        if WHOLE not in read and at is not None and at not in {layout.index(r) for r in read}:
            return False  # no Plan read its line (by any role): fixing it cannot change one
        fixed = _fixed(text, lines[i], f)
        after = None if fixed is None else _plans(fixed, layout, runner)
        return after is None or _comparable(after) != _comparable(plans)
    return True


def _bar_evaluated(f: Finding, line: str, plans: dict) -> bool:
    """A `|` of the line's value is in some planned command's text (what upstream evals), or the
    finding is about another character. Where the runner splits the value on `|` first (a mode
    table, a use_gpu or gpu_list loop), no command carries it: the `|` is structure, not a pipe."""
    if "'|'" not in f.message:
        return True
    key, value = split_line(line)
    pieces = [w for w in f"{key} {value}".split() if "|" in w]
    commands = [s.command for steps in plans.values() for s in steps]
    return any(p in c or p.split("|", 1)[0] + "|" in c for p in pieces for c in commands)


def _fixed(text: str, line: str, finding: Finding) -> Optional[str]:
    """The config's text with the bool typo of `line` (its physical line finding.line) fixed
    (None: nothing to fix)."""
    key, value = split_line(line)
    new = fixed_booleans(value, finding.role)
    if new == value or finding.line is None:
        return None
    physical = text.split("\n")
    physical[finding.line - 1] = f"{key}:{new}"
    return "\n".join(physical)


def with_effects(
    findings: list[Finding],
    lines: list[str],
    layout: Layout,
    by_role: dict,
    line_index: dict,
    runner: Optional[str],
    text: str,
) -> list[Finding]:
    """`findings` with every effect claim checked against the Plans (see the module docstring).
    `line_index`: physical line number -> index into `lines`; `text`: the config whose non-empty
    lines they are (BOM and CRLF removed), planned as it is: its blank lines count toward the
    lines a script reads, and its Plans are the ones validation made already."""
    claims = [f for f in findings if f.rule in CLAIMS and f.line in line_index]
    if not claims:
        return findings
    plans = _plans(text, layout, runner)
    if plans is None:
        # the runner refuses the config (its own error says so): claims stay as they are, but for
        # a `|`, which no Plan can place until the refusal is fixed (then it is decided again)
        return [f for f in findings if not (f in claims and f.rule == "TIPC021" and "'|'" in f.message)]
    who = runner_name(layout, runner)
    out: list[Finding] = []
    for f in findings:
        if f not in claims:
            out.append(f)
        elif claim_holds(f, lines, line_index[f.line], plans, layout, runner, text):
            out.append(dataclasses.replace(f, message=f"{f.message} ({who})"))
        elif f.rule == "TIPC001":
            key = split_line(lines[line_index[f.line]])[0]
            token = re.search(r"'([^']*)'", f.message)
            what = token.group(1) if token else "it"
            out.append(
                dataclasses.replace(
                    f,
                    severity=INFO,
                    message=f"{what!r} in `{key}` is not a boolean, but {who} runs the same commands either way:"
                    " the typo has no effect",
                )
            )
        # TIPC003/004/011 whose effect this runner does not have: nothing to report
    return out
