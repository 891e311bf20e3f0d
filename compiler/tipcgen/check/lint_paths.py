"""Lint inputs of every kind: legacy configs (by detected layout) and specs (through lowering)."""

from __future__ import annotations

import os

from tipcgen.dialects import LAYOUTS, any_layout, detect, get_layout
from tipcgen.errors import SpecError, UsageError
from tipcgen.inputs import walk
from tipcgen.lint.checks import lint_text
from tipcgen.lint.rules import INFO, Finding
from tipcgen.script.decode import decode, read_config


def _walk(paths: list[str]) -> list[str]:
    out = []
    for path in paths:
        if os.path.isdir(path):
            out += walk(path, (".txt", ".yml", ".yaml"))
        elif os.path.exists(path):
            out.append(path)
        else:
            raise UsageError(f"{path}: no such file or directory")
    return out


def lint_config(path: str, layout: str = "auto") -> list[Finding]:
    data = read_config(path)
    try:
        dec = decode(path, data)
    except SpecError as exc:
        p = exc.problems[0]
        rule = "TIPC016" if "empty" in p.message else None
        if rule:
            return [Finding(rule, "error", path, None, p.message)]
        raise
    if layout == "auto":
        name, _ = detect(dec.lines)
    else:
        if layout not in LAYOUTS:
            raise UsageError(f"unknown layout {layout!r}; layouts: {', '.join(LAYOUTS)}")
        name = layout
    return lint_text(data.decode("utf-8", "replace"), get_layout(name) if name else None, path)


def lint_spec(path: str) -> list[Finding]:
    """Findings of every suite's lowered config (allowed rules included, as warnings), and
    prepare artifacts without a checksum."""
    from tipcgen.check.spec import load_spec
    from tipcgen.lower.text import config_text
    from tipcgen.spec.prepare import Download

    spec = load_spec(path)
    out = []
    for name, suite in spec.suites.items():
        layout = any_layout(spec.suite_layout(name))
        label = f"{path} [suite {name}: test_tipc/configs/{spec.model}/{suite.file}]"
        for f in lint_text(config_text(suite, layout), layout, label):
            if f.rule in suite.allow:
                f = Finding(f.rule, "warning", f.file, f.line, f.message + " (allowed by the suite)", f.hint, f.role)
            out.append(f)
    for mode, steps in spec.prepare.items():
        for step in steps:
            if isinstance(step, Download) and not step.sha256:
                out.append(
                    Finding(
                        "TIPC015",
                        INFO,
                        path,
                        None,
                        f"{mode}: {step.url} has no sha256",
                        "run `tipcgen hash URL` and add it",
                    )
                )
    return out


def lint_paths(paths: list[str], layout: str = "auto") -> list[Finding]:
    """Findings file by file (in walk order), each file's by line (file-level ones first), then rule."""
    findings: list[Finding] = []
    for path in _walk(paths):
        found = lint_spec(path) if path.endswith((".yml", ".yaml")) else lint_config(path, layout)
        findings += sorted(found, key=lambda f: (f.line or 0, f.rule))
    return findings
