"""Import legacy configs into specs: typed fields where the text allows, trivia where it does not.

The contract is exact bytes: `import` then `build` reproduces every input file. Each line is
decoded into its role's field through the layout table; a line no typed field reproduces
(a shifted key, a value the Spec rejects) is kept verbatim in `trivia.line_overrides`, and
lint reports why. Several configs of one model become one spec with shared `defaults`.

The jobs, one module each: `decode` (bytes -> lines), `fields` (one config -> a suite dict),
`factor` (suites -> one spec: names and shared `defaults`), `yaml_out` (the spec's YAML text).
This module runs them: one model directory in, a verified spec (or the reasons why not) out.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Any, Optional

from pydantic import ValidationError

from tipcgen.dialects import LAYOUTS, detect, get_layout
from tipcgen.dialects.chains import chain_family, chain_of_lines, foreign_chain
from tipcgen.errors import SpecError
from tipcgen.importer.factor import factor_defaults, factor_presets, model_dir_name, name_suites, suite_name
from tipcgen.importer.fields import import_suite, raw_config
from tipcgen.importer.result import ImportResult
from tipcgen.importer.yaml_out import spec_yaml
from tipcgen.lower.text import config_text
from tipcgen.script.decode import Decoded, UnreadableFile, _fail, decode, read_config
from tipcgen.script.lines import header_name
from tipcgen.spec.chain_fields import inherits_all, shared_defaults
from tipcgen.spec.ir import Suite, is_chain_layout
from tipcgen.spec.policy import name_problem

__all__ = [
    "GroupReport",
    "ImportResult",
    "config_groups",
    "distinct_models",
    "import_configs",
    "import_group",
    "import_groups",
    "import_suite",
    "repo_family",
    "spec_yaml",
    "suite_name",
    "verify_roundtrip",
]


def import_configs(
    paths: list[str],
    layout: str = "auto",
    model: Optional[str] = None,
    lenient: bool = False,
    family: Optional[str] = None,
) -> ImportResult:
    """Import the configs of one model into one spec (`lenient`: see factor_defaults; `family`:
    the repo's train layout, for a folder with no train config of its own: repo_family)."""
    decoded, kinds = _read_configs(paths, layout)
    kinds = _own_chains(decoded, kinds, family)
    foreign = _foreign_chains(kinds, family)
    kinds = {name: "raw" if name in foreign else kind for name, kind in kinds.items()}
    train = [(d, kinds[os.path.basename(d.path)]) for d in decoded if kinds[os.path.basename(d.path)] != "raw"]
    main_layout = _main_layout([k for _, k in train], family)
    suites: dict = {}
    model_names = []
    for dec, kind in train:
        data = import_suite(dec, get_layout(kind), os.path.basename(dec.path))
        if kind != main_layout:  # named right after the file: it says how to read the rest
            data = {"file": data.pop("file"), "layout": kind, **data}
        model_names.append(str(data["model_name"]))
        suites[os.path.basename(dec.path)] = data
    named = name_suites(suites, model_names)
    findings = _allowances(named, main_layout)
    other = {os.path.basename(d.path): raw_config(d) for d in decoded if kinds[os.path.basename(d.path)] == "raw"}
    for name in foreign:
        other[name]["own_script"] = True
    spec: dict = {"tipcgen": 1, "model": model or model_dir_name(paths, model_names), "layout": main_layout}
    defaults, named = factor_defaults(named, lenient)
    if defaults:
        spec["defaults"] = defaults
    if len(set(model_names)) > 1:
        layout_ = get_layout(main_layout)
        headers = {r.name: r.text for r in layout_.rows if r.kind == "header"}
        presets, named = factor_presets(named, defaults, model_names, headers)
        if presets:
            spec["presets"] = presets
    _unshadow(named, defaults, spec.get("presets") or {}, main_layout)
    if named:
        spec["suites"] = named
    if other:
        spec["other_configs"] = other
    return ImportResult(spec, {os.path.basename(p): p for p in paths}, kinds, findings)


def _own_chains(decoded: list, kinds: dict[str, str], family: Optional[str]) -> dict[str, str]:
    """A chain config that another family's table fits, typed by the folder's family's own table
    where it has one reading the same lines (the models tutorials' paddle2onnx configs are
    PaddleSeg's lines, run by their own script)."""
    main = _family_of(kinds, family)
    if main is None:
        return kinds
    out = dict(kinds)
    for dec in decoded:
        name = os.path.basename(dec.path)
        if is_chain_layout(kinds[name]) and foreign_chain(get_layout(kinds[name]), main):
            own = chain_of_lines(dec.lines, name, family=main)
            if own is not None and not foreign_chain(own, main):
                out[name] = own.name
    return out


def _family_of(kinds: dict[str, str], family: Optional[str]) -> Optional[str]:
    """The folder's family: its most common train layout, else the repo's `family`."""
    train = [k for k in kinds.values() if k != "raw" and not is_chain_layout(k)]
    return Counter(train).most_common(1)[0][0] if train else family


def _foreign_chains(kinds: dict[str, str], family: Optional[str] = None) -> set[str]:
    """The chain configs of another family than the folder's train configs that no table of the
    folder's family fits (_own_chains typed those it does: PaddleSeg's dy2static config fits
    PaddleClas's table and PaddleSeg's own): kept verbatim and left to the repo's own script
    (`own_script`); typed by a foreign table, a foreign script would run them. A folder without train
    configs (PaddleVideo's BMN/ holds only its dy2static config) is of the repo's `family`."""
    main = _family_of(kinds, family)
    if main is None:
        return set()
    return {name for name, kind in kinds.items() if is_chain_layout(kind) and foreign_chain(get_layout(kind), main)}


def _main_layout(kinds: list[str], family: Optional[str] = None) -> str:
    """The spec's `layout`: the most common train layout; without train configs, the repo's
    (`family`: its prepare.sh reads names as that family's does), else the chain configs' family's."""
    train = [k for k in kinds if not is_chain_layout(k)]
    if train:
        return Counter(train).most_common(1)[0][0]
    if family is not None:
        return family
    if kinds:
        return chain_family(Counter(kinds).most_common(1)[0][0])
    return "paddleocr"


def _unshadow(named: dict, defaults: dict, presets: dict, main_layout: str) -> None:
    """A suite whose line a `trivia.line_overrides` entry keeps verbatim must not also get that
    line's field from `defaults` or a preset (validation refuses the shadowing: an edit of the
    field would never reach the config): the suite sets the field to null."""
    from tipcgen.importer.factor import merge
    from tipcgen.lower.text import ROLES

    for suite in named.values():
        own = suite.get("layout")
        # another chain's suite inherits only the shared fields (spec/load.py), not the train
        # suites' trivia
        start = shared_defaults(defaults) if is_chain_layout(own) and not inherits_all(own) else defaults
        base = merge(start, presets.get(suite.get("preset")) or {}) if suite.get("preset") else start
        merged = merge(base, suite)
        layout = get_layout(merged.get("layout", main_layout))
        for index in (merged.get("trivia") or {}).get("line_overrides") or {}:
            row = layout.rows[int(index)] if int(index) < len(layout.rows) else None
            if row is None or row.role not in ROLES:
                continue
            path = ROLES[row.role][1]
            if path[0] in ("model_name", "python", "topology"):
                continue
            node: Any = merged
            for part in path:
                node = node.get(part) if isinstance(node, dict) else None
            if node is None:
                continue
            target: dict = suite
            for part in path[:-1]:
                target = target.setdefault(part, {})
            target[path[-1]] = None


def _read_configs(paths: list[str], layout: str) -> tuple[list[Decoded], dict[str, str]]:
    """Each config decoded, and {file name: its layout, or "raw" for a non-train config}."""
    decoded: list[Decoded] = []
    kinds: dict[str, str] = {}
    for path in paths:
        dec = decode(path, read_config(path))
        name = os.path.basename(path)
        problem = name_problem(name, ".txt")
        if problem:
            _fail(
                path,
                f"cannot import a config named {name!r}: {problem}",
                hint="a config file name is ASCII letters, digits and `._+-`, ending in .txt; rename it",
            )
        kinds[name] = _config_kind(dec, layout)
        if name in {os.path.basename(d.path) for d in decoded}:
            _fail(path, f"two configs named {name} in one import; import each model's directory separately")
        decoded.append(dec)
    return decoded, kinds


def _config_kind(dec: Decoded, layout: str) -> str:
    """The layout that reads `dec` ("raw" for a non-train config): detected for "auto", else `layout`."""
    if layout == "raw":
        return "raw"
    chain = chain_of_lines(dec.lines, os.path.basename(dec.path))
    if chain is not None:  # another chain's config is read by its own table, whatever --layout says
        return chain.name
    if layout != "auto":
        if layout not in LAYOUTS:
            _fail(dec.path, f"unknown layout {layout!r}", hint=f"layouts: {', '.join(LAYOUTS)}, raw")
        return layout
    detected, why = detect(dec.lines)
    if detected is None and _looks_like_train(dec.lines):
        _fail(dec.path, f"cannot tell this config's layout: {why}", hint=f"pass --layout ({', '.join(LAYOUTS)})")
    return detected or "raw"


def _looks_like_train(lines: list[str]) -> bool:
    """A train_params header and a `trainer:` line: a train config, whatever its layout."""
    return (
        bool(lines) and header_name(lines[0]) == "train_params" and any(line.startswith("trainer:") for line in lines)
    )


# ---------------------------------------------------------------- lint -> allow, checks


def _allowances(named: dict, main_layout: str) -> dict:
    """Give each (complete, not yet factored) suite an `allow` of its error-level lint findings, so
    the spec validates while staying byte-identical (`allow` is then shared like any value);
    return {suite name: [findings]} for the YAML comments."""
    from tipcgen.lint.checks import lint_text
    from tipcgen.lint.rules import ERROR

    found: dict = {}
    for name, data in named.items():
        layout = get_layout(data.get("layout", main_layout))
        suite = Suite.model_validate(data)
        findings = [f for f in lint_text(config_text(suite, layout), layout, suite.file) if f.severity == ERROR]
        if findings:
            data["allow"] = sorted({f.rule for f in findings})
            found[name] = findings
    return found


def _import_verified(
    paths: list[str], layout: str, model: Optional[str], lenient: bool, family: Optional[str] = None
) -> tuple:
    """(result, YAML text, names of configs it does not rebuild exactly)."""
    result = import_configs(paths, layout, model, lenient, family)
    text_ = spec_yaml(result, result.findings)
    return result, text_, verify_roundtrip(result, text_, f"{result.spec['model']}.yml")


def config_origin(result: ImportResult) -> str:
    """The folder (or file) of the configs an imported spec came from: what its errors name."""
    folders = sorted({os.path.dirname(p) or "." for p in result.sources.values()})
    return folders[0] if len(folders) == 1 else ", ".join(result.sources.values()) or "the imported configs"


def verify_roundtrip(result: ImportResult, yaml_text: str, label: str) -> list[str]:
    """Build the imported spec from its YAML text; the names of inputs not reproduced exactly."""
    from tipcgen.check.spec import load_imported_text
    from tipcgen.emit.files import config_files

    spec = load_imported_text(yaml_text, label, config_origin(result))
    files = {k: v.encode("utf-8") for k, v in config_files(spec).items()}
    return [name for name, path in result.sources.items() if files.get(spec.config_path(name)) != read_config(path)]


# ---------------------------------------------------------------- folders and reports


def config_groups(paths: list[str]) -> dict[str, list[str]]:
    """Config files by directory (one spec per model directory); directories are walked."""
    groups: dict = {}
    for path in paths:
        if os.path.isdir(path):
            from tipcgen.inputs import walk

            for found in walk(path, (".txt",)):
                groups.setdefault(os.path.dirname(found), []).append(found)
        else:
            groups.setdefault(os.path.dirname(path) or ".", []).append(path)
    return {d: sorted(ps) for d, ps in sorted(groups.items())}


@dataclass
class GroupReport:
    directory: str
    files: int
    exact: int
    layouts: dict
    failures: dict  # file -> reason
    yaml: Optional[str] = None
    model: Optional[str] = None
    result: Optional[ImportResult] = None


def import_group(
    paths: list[str], layout: str = "auto", model: Optional[str] = None, family: Optional[str] = None
) -> GroupReport:
    """Import one model's configs, rebuild them from the YAML text, and report what round-trips
    (`family`: the repo's train layout, repo_family)."""
    directory = os.path.dirname(paths[0]) or "."
    try:
        try:  # share what most suites share; if that cannot rebuild every config, only what all do
            result, text_, bad = _import_verified(paths, layout, model, True, family)
        except (SpecError, ValidationError):
            bad = ["lenient"]
        if bad:
            result, text_, bad = _import_verified(paths, layout, model, False, family)
    except UnreadableFile:
        raise  # the file, not its import, is at fault: an error, not a report line
    except SpecError as exc:
        first = exc.problems[0] if exc.problems else None
        reason = (first.message + (f" ({first.hint})" if first.hint else "")) if first else str(exc)
        return GroupReport(directory, len(paths), 0, {}, {os.path.basename(p): reason for p in paths})
    failures = {name: "rebuilt bytes differ" for name in bad}
    exact = len(paths) - len(bad)
    return GroupReport(
        directory, len(paths), exact, dict(result.layouts), failures, text_, result.spec["model"], result
    )


def import_groups(groups: list, layout: str = "auto", model: Optional[str] = None) -> list:
    """import_group over each folder's configs of one tree; a folder without train configs is then
    imported again as the repo's family (repo_family): its chain configs of another family's table
    (a dy2static config alone in PaddleVideo's BMN/) stay with the repo's own script."""
    first = [import_group(paths, layout, model) for paths in groups]
    family = repo_family(first)
    if family is None:
        return first
    return [
        import_group(paths, layout, model, family) if r.result is not None and not _has_train(r) else r
        for r, paths in zip(first, groups)
    ]


def _has_train(report: GroupReport) -> bool:
    return any(k != "raw" and not is_chain_layout(k) for k in report.layouts.values())


def repo_family(reports: list) -> Optional[str]:
    """The train layout most of a repo's folders' train configs have (None: none has one)."""
    train = Counter(k for r in reports for k in r.layouts.values() if k != "raw" and not is_chain_layout(k))
    return train.most_common(1)[0][0] if train else None


def distinct_models(kept: list, layout: str = "auto", family: Optional[str] = None) -> list:
    """Reports of (report, its configs) from different directories never share a model name (they
    could not be built into one tree): a repeated one is re-imported as `<parent directory>_<model>`
    (PaddleDetection's configs/ppyoloe/ and configs/rotate/ppyoloe/ ...)."""
    names = Counter(r.model for r, _ in kept)
    out = []
    for r, paths in kept:
        if names[r.model] > 1:
            r = import_group(
                paths, layout, f"{os.path.basename(os.path.dirname(os.path.abspath(r.directory)))}_{r.model}", family
            )
        out.append(r)
    return out
