"""Every lint finding that states an effect on what runs is true of the config's own runner: over
the whole corpus (and each config with its mode tables made plain, for the dialects whose corpus
has none), the Plan is asked directly whether the effect shows, and a finding must be there exactly
when it does (corpus tier)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tipcgen.dialects import detect, get_layout
from tipcgen.lint.checks import lint_text
from tipcgen.plan.planner import plan_config, runner_for
from tipcgen.script.lines import split_line, split_lines
from tipcgen.spec.modes import TRAIN_MODES

pytestmark = pytest.mark.corpus


def _word(key: str) -> str:
    return key.split()[-1]


def _train_argvs(text: str, layout, modes) -> list:
    argvs = []
    for mode in modes:
        argvs += [s.argv or () for s in plan_config(text, layout, mode).steps if s.kind == "train"]
    return argvs


def _carries(argv, word: str) -> bool:
    return any(t == word or t.startswith(word + "=") for t in argv)


def _configs(corpus: Path) -> list:
    out = []
    for path in sorted(corpus.rglob("*.txt")):
        text = path.read_bytes().decode("utf-8", "replace")
        name, _ = detect(split_lines(text))
        if name is not None:
            out.append((path, text, get_layout(name)))
    return out


def _plainified(text: str, layout) -> str:
    """The config with its epochs/batch-size mode tables replaced by their lite value."""
    lines = [line for line in text.split("\n") if line]
    for role in ("train.epochs", "train.batch_size"):
        i = layout.index(role)
        if i is not None and i < len(lines):
            key, value = split_line(lines[i])
            if "=" in value:
                lines[i] = f"{key}:{value.split('|')[0].split('=', 1)[1]}"
    return "\n".join(lines) + "\n"


def _check(path: Path, text: str, layout, tally: Counter) -> list[str]:
    """The claims of one config's findings against its Plans; the problems found."""
    try:
        lite = _train_argvs(text, layout, TRAIN_MODES)
    except Exception:  # the runner refuses the config (TIPC025): no effect to check
        return []
    findings = lint_text(text, layout, str(path))
    lines = [line for line in text.split("\n") if line]
    problems = []
    for role in ("train.epochs", "train.batch_size"):
        i = layout.index(role)
        if i is None or i >= len(lines):
            continue
        key, value = split_line(lines[i])
        if key == "null" or value in ("", "null") or "=" in value:
            continue
        dropped = bool(lite) and not any(_carries(a, _word(key)) for a in lite)
        found = any(f.rule == "TIPC004" and f.role == role for f in findings)
        tally[("TIPC004", layout.name, dropped)] += 1
        if dropped != found:
            problems.append(f"{path}: `{key}:{value}` dropped by the Plan: {dropped}; TIPC004 reported: {found}")
    di, gi = layout.index("train.device"), layout.index("gpu_list")
    if di is not None and gi is not None and max(di, gi) < len(lines):
        dkey, dvalue = split_line(lines[di])
        entries = [e for e in split_line(lines[gi])[1].split("|") if e]
        if dkey != "null" and dvalue and len(dvalue.split("|")) < len(entries):
            with_flag = [_carries(a, _word(dkey)) for a in lite]
            lost = any(with_flag) and not all(with_flag)
            found = any(f.rule == "TIPC011" for f in findings)
            tally[("TIPC011", layout.name, lost)] += 1
            if lost != found:
                problems.append(f"{path}: device flag lost on some run: {lost}; TIPC011 reported: {found}")
    for f in findings:
        if f.rule != "TIPC001" or f.line is None:
            continue
        tally[("TIPC001", layout.name, f.severity)] += 1
        assert f.severity in ("error", "info"), f.render()
        claims_effect = f.severity == "error"
        # the Plans with the typo fixed by hand, in every mode of the runner
        bad = f.message.split("'")[1]
        fixed_value = "False" if "False" in f.hint or "False" in f.message else "True"
        fixed = text.replace(bad, fixed_value)
        modes = runner_for(layout, None).MODES
        same = all(
            [s.argv for s in plan_config(text, layout, m).steps]
            == [s.argv for s in plan_config(fixed, layout, m).steps]
            for m in modes
        )
        if claims_effect == same:
            problems.append(f"{path}:{f.line}: TIPC001 {f.severity} but the Plans {'agree' if same else 'differ'}")
    return problems


def test_every_effect_a_finding_states_shows_in_the_plan(corpus):
    tally: Counter = Counter()
    problems = []
    seen = Counter()
    for path, text, layout in _configs(corpus):
        problems += _check(path, text, layout, tally)
        # and with plain values where the corpus has tables: a few configs of every layout
        if seen[layout.name] < 4:
            seen[layout.name] += 1
            problems += _check(path, _plainified(text, layout), layout, tally)
    assert not problems, f"{len(problems)} findings disagree with the Plan; first: {problems[:5]}"
    # the sweep did look at both sides of each claim somewhere
    assert tally[("TIPC004", "paddleclas", False)] > 0  # PaddleClas passes a plain batch size
    assert any(k[0] == "TIPC004" and k[2] is True for k in tally), tally  # a runner that drops it
    assert tally[("TIPC001", "paddleclas", "info")] > 0  # infer_quant: never read by PaddleClas's runner
