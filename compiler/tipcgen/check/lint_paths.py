"""Lint inputs of every kind: legacy configs (by detected layout) and specs (through lowering)."""

from __future__ import annotations

import os
import re

from tipcgen.dialects import LAYOUTS, detect, get_layout
from tipcgen.dialects.chains import chain_of_lines
from tipcgen.errors import SpecError, UsageError
from tipcgen.inputs import read_bytes, walk
from tipcgen.lint.checks import lint_text
from tipcgen.lint.rules import INFO, Finding
from tipcgen.script.decode import decode, read_config


def _walk(paths: list[str]) -> list[str]:
    """The files to lint: each one named, and in a folder its TIPC configs (.txt) and its specs. A
    folder's other YAML files are the models' own configs (PaddleDetection's and PaddleSeg's
    test_tipc/configs/ hold them next to the TIPC configs): not specs, not linted."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            out += [p for p in walk(path, (".txt", ".yml", ".yaml")) if p.endswith(".txt") or is_spec_file(p)]
        elif os.path.exists(path):
            out.append(path)
        else:
            raise UsageError(f"{path}: no such file or directory")
    return out


_SPEC_KEY = re.compile(rb"^tipcgen[ \t]*:", re.M)


def is_spec_file(path: str) -> bool:
    """A YAML file that is a tipcgen spec: a top-level `tipcgen:` key (every spec starts with its
    version) in its first 64 KiB."""
    try:
        head = read_bytes(path, 1 << 16, what="a YAML file")
    except SpecError:
        return True  # unreadable (a link out, a FIFO): lint_spec names why
    return _SPEC_KEY.search(head) is not None


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
    chain = chain_of_lines(dec.lines, os.path.basename(path))
    if chain is not None:  # another chain's config: read by its own table, whatever --layout says
        return lint_text(data.decode("utf-8", "replace"), chain, path)
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
        layout = get_layout(spec.suite_layout(name))
        label = f"{path} [suite {name}: {spec.config_path(suite.file)}]"
        for f in lint_text(config_text(suite, layout), layout, label):
            if f.rule in suite.allow:
                f = Finding(f.rule, "warning", f.file, f.line, f.message + " (allowed by the suite)", f.hint, f.role)
            out.append(f)
    out += _chain_findings(spec, path)
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


def _chain_findings(spec, path: str) -> list[Finding]:
    """Other chains' suites: a model folder no prepare step of the chain's mode provides
    (TIPC027); suites of one model naming different inference models (TIPC028)."""
    from tipcgen.lint.rules import WARNING

    out = []
    urls: dict[str, dict[str, str]] = {}
    for name, suite in spec.chain_suites.items():
        if suite.infer_model_url is not None:
            urls.setdefault(suite.model_name, {}).setdefault(str(suite.infer_model_url), name)
        label = f"{path} [suite {name}: {spec.config_path(suite.file)}]"
        for mode, folder in _unprepared(spec, name):
            out.append(
                Finding(
                    "TIPC027",
                    WARNING,
                    label,
                    None,
                    f"{mode}: no prepare step provides {folder!r}, which the chain's script reads",
                    f"add a `prepare: {{{mode}: [...]}}` step that fetches it (a download extracted into its parent)",
                )
            )
    for model, named in sorted(urls.items()):
        if len(named) > 1:
            shown = "; ".join(f"suite {n}: {u}" for u, n in named.items())
            out.append(
                Finding(
                    "TIPC028",
                    WARNING,
                    path,
                    None,
                    f"model {model!r} names {len(named)} inference models: {shown}",
                    "give `infer_model_url` once, in `defaults`, unless the chains test different models on purpose",
                )
            )
    return out


def _unprepared(spec, name: str) -> list[tuple[str, str]]:
    """(mode, folder) of each model folder a chain suite's config reads from the repo root that no
    prepare step of the chain's mode lands in or links (`<chain>.model_dir`; a nested one, such as
    paddle2onnx's predictor's, is read from another folder)."""
    from tipcgen.lower.text import ROLES
    from tipcgen.plan.planner import runner_for
    from tipcgen.spec.modes import CHAIN_MODES
    from tipcgen.spec.prepare import Download, Extract, Link

    suite = spec.suites[name]
    layout = get_layout(str(suite.layout))
    modes = [m for m in runner_for(layout).MODES if m in CHAIN_MODES]
    if not modes:
        return []
    mode = modes[0]
    landed = []
    for step in spec.prepare_for(name, mode):
        if isinstance(step, (Download, Extract)):
            landed.append(step.to)
        elif isinstance(step, Link):
            landed.append(os.path.join(step.dir, step.link))
    out = []
    for role in layout.roles:
        if len(role.split(".")) != 2 or not role.endswith(".model_dir"):
            continue
        value = ROLES[role][0](suite)[1]
        for folder in value.split("|") if value not in ("", "null") else ():
            norm = os.path.normpath(folder)
            if not any(norm == os.path.normpath(to) or norm.startswith(os.path.normpath(to) + os.sep) for to in landed):
                out.append((mode, folder))
    return out


def lint_paths(paths: list[str], layout: str = "auto") -> list[Finding]:
    """Findings file by file (in walk order), each file's by line (file-level ones first), then rule."""
    findings: list[Finding] = []
    for path in _walk(paths):
        found = lint_spec(path) if path.endswith((".yml", ".yaml")) else lint_config(path, layout)
        findings += sorted(found, key=lambda f: (f.line or 0, f.rule))
    return findings
