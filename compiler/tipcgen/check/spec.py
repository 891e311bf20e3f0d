"""Validation of a loaded spec, in one place: what the typed model alone cannot see.

`spec.load.parse_spec_text` types every value and locates it; this module adds the checks that
need the lowered configs, the layouts and lint (stages above `spec/`):

- across suites: files and docs two suites would both write, the spec's total step matrix;
- per suite: fields its layout has no line for, trivia pointing past its lines, what the
  generated runner would refuse, and lint's error findings the suite does not `allow`;
- `docs.inference_devices` against the inference matrices.

`load_spec`/`load_spec_text` (parse, then these checks) are what every command loads a spec with.
"""

from __future__ import annotations

import functools
from typing import Any, Optional

from tipcgen.dialects import get_layout
from tipcgen.errors import Problem, SpecError, UsageError
from tipcgen.inputs import read_text, spec_paths
from tipcgen.lint.checks import lint_text
from tipcgen.lint.rules import ERROR, RULES
from tipcgen.lower.configview import ConfigView
from tipcgen.lower.text import ROLES, config_lines, config_text
from tipcgen.plan.planner import mode_plans
from tipcgen.plan.refusals import check_bytes, check_view, matrix_size
from tipcgen.spec.chain_fields import inherits_all
from tipcgen.spec.ir import IMPORT_SENTINELS, Eval, Export, Inference, Spec, Suite, Train, Trainers, is_chain_layout
from tipcgen.spec.load import parse_spec_text, sorted_problems
from tipcgen.spec.yamlpos import Positions


def load_spec_text(text: str, filename: str) -> Spec:
    """A spec's text, typed and checked; every problem located, raised as one SpecError."""
    spec, pos = parse_spec_text(text, filename, rule_ids=RULES)
    # Each suite's config, lowered once for every check below.
    texts = {name: config_text(suite, get_layout(spec.suite_layout(name))) for name, suite in spec.suites.items()}
    problems = check_spec(spec, pos, texts) + check_expressible(spec, pos)
    problems += _semantic_checks(spec, pos, texts) + _docs_checks(spec, pos)
    if problems:
        raise SpecError(sorted_problems(problems))
    return spec


def load_imported_text(text: str, label: str, origin: str) -> Spec:
    """A spec `import` or `migrate` made in memory from the configs at `origin`: checked like any
    spec, but a problem names `origin` and quotes the YAML line (`label` was never written, so a
    `label:12:3` location would point at no file)."""
    try:
        return load_spec_text(text, label)
    except SpecError as exc:
        lines = text.splitlines()
        problems = []
        for p in exc.problems:
            quoted = ""
            if p.line is not None and 0 < p.line <= len(lines):
                quoted = f" (line {p.line} of the imported spec: {lines[p.line - 1].strip()[:160]!r})"
            message = f"the spec imported from here ({label}, not written) is invalid: {p.message}{quoted}"
            problems.append(Problem(origin, None, None, p.field, message, p.hint))
        raise SpecError(problems) from None


def load_spec(path: str) -> Spec:
    return load_spec_text(read_text(path), path)


def load_specs(paths: list[str]) -> list[Spec]:
    """Every spec of `paths` (files or directories), checked; all their problems at once, and two
    specs of one model refused."""
    specs, problems = [], []
    for path in spec_paths(paths):
        try:
            specs.append(load_spec(path))
        except SpecError as exc:
            problems.extend(exc.problems)
    if problems:
        raise SpecError(problems)
    seen: dict[str, str] = {}
    for spec in specs:
        if spec.model in seen:
            raise UsageError(f"{spec.source} and {seen[spec.model]} both describe model {spec.model!r}")
        seen[spec.model] = spec.source
    return specs


# Field defaults a suite starts from, to tell "set by the spec" from "left alone".
_DEFAULTS = {
    "train": Train(),
    "trainers": Trainers(),
    "eval": Eval(),
    "export": Export(),
    "inference": Inference(),
    "whole_infer": [],
}


def _get(obj: Any, path: tuple) -> Any:
    for part in path:
        obj = obj.get(part) if isinstance(obj, dict) else getattr(obj, part, None)
    return obj


# Step combinations (products of `|` lists) over all suites of a spec: docs and plans list every
# one of them in every mode. The largest real model holds about 2,100 (see check_spec).
MAX_SPEC_MATRIX = 16384


def _problem(spec: Spec, pos: Positions, suite: str, path: tuple, message: str, hint: str) -> Problem:
    line, col = _where(pos, suite, path)
    return Problem(spec.source, line, col, ".".join(str(p) for p in ("suites", suite, *path)), message, hint)


def check_spec(spec: Spec, pos: Positions, texts: dict[str, str]) -> list[Problem]:
    """What no single suite's validation sees: files and docs two suites would both write, and
    trivia that points past the lines a suite's layout has (it would be silently ignored)."""
    problems = []
    files: dict[str, str] = {}
    docs: dict[str, str] = {}
    steps, too_many = 0, False
    to_plan: list[str] = []
    for name, suite in spec.suites.items():
        if suite.file in files:
            problems.append(
                _problem(
                    spec,
                    pos,
                    name,
                    ("file",),
                    f"suites {files[suite.file]!r} and {name!r} both write configs/{spec.model}/{suite.file}:"
                    " one would silently overwrite the other",
                    "give each suite its own `file:`",
                )
            )
        files.setdefault(suite.file, name)
        doc = suite.doc_name(name)
        if doc in docs:
            problems.append(
                _problem(
                    spec,
                    pos,
                    name,
                    ("doc",),
                    f"suites {docs[doc]!r} and {name!r} would both write docs/{doc}",
                    "give one of them its own `doc:` file name",
                )
            )
        docs.setdefault(doc, name)
        problems += _check_trivia(spec, pos, name, suite)
        # (a train table's: the train suites' and PTQ's gpu_list line)
        if suite.topology is None and (not is_chain_layout(suite.layout) or inherits_all(suite.layout)):
            problems.append(
                _problem(
                    spec,
                    pos,
                    name,
                    ("topology",),
                    "`topology` is required for a train suite (its gpu_list line: cpu, GPU ids, or nodes)",
                    "give `topology`, e.g. [0] or [cpu], here or in `defaults`",
                )
            )
        found, size = _check_runner(spec, pos, name, suite, texts[name])
        problems += found
        steps += size
        if not found:
            to_plan.append(name)
        if steps > MAX_SPEC_MATRIX and not too_many:
            too_many = True
            problems.append(
                _problem(
                    spec,
                    pos,
                    name,
                    ("file",),
                    f"the suites up to this one multiply to {steps} step combinations; a spec may hold at "
                    f"most {MAX_SPEC_MATRIX} (the largest real model, PaddleClas ResNet's 58 configs, holds "
                    "about 2,100)",
                    "split the model into several specs, or shorten its `|` lists",
                )
            )
    if not too_many:  # (a spec whose steps explode is refused without planning them)
        for name in to_plan:
            problems += _check_planning(spec, pos, name, spec.suites[name], texts[name])
    for file in spec.other_configs:
        if file in files:
            where = pos.locate(("other_configs", file), prefer_key=True) or (None, None)
            problems.append(
                Problem(
                    spec.source,
                    where[0],
                    where[1],
                    f"other_configs.{file}",
                    f"suite {files[file]!r} already writes configs/{spec.model}/{file}",
                    "rename the other config, or drop it",
                )
            )
    return problems


def _check_runner(spec: Spec, pos: Positions, name: str, suite: Suite, text_: str) -> tuple[list[Problem], int]:
    """What the generated runner would refuse at run time (plan/refusals.py: control bytes, logs
    outside test_tipc/output/, a step matrix too large), refused here instead; and the suite's
    step matrix, which the spec's total is bounded by."""
    # the layout the generated bash reads every config with (another chain's: its own script's)
    layout = get_layout(str(suite.layout)) if is_chain_layout(suite.layout) else get_layout(spec.layout)
    label = f"[suite {name}: {suite.file}]"
    try:
        check_bytes(text_, label)
        view = ConfigView.parse(text_, layout)
        check_view(view, label)
    except UsageError as exc:
        return [_problem(spec, pos, name, ("file",), str(exc), "the generated runner refuses this config")], 0
    return [], matrix_size(view)


def _check_planning(spec: Spec, pos: Positions, name: str, suite: Suite, text_: str) -> list[Problem]:
    """What the suite's runner refuses while it plans, in every mode (build plans the same for
    the docs): refused here, so that what validate accepts, build builds."""
    chain = is_chain_layout(suite.layout)
    layout = get_layout(str(suite.layout)) if chain else get_layout(spec.layout)
    label = f"[suite {name}: {suite.file}]"
    refused = _planning_refusal(text_, layout.name, None if chain else spec.runner, label, not chain)
    if refused:
        return [_problem(spec, pos, name, ("file",), refused, "the generated runner refuses this config")]
    return []


@functools.lru_cache(maxsize=512)
def _planning_refusal(text_: str, layout_name: str, runner: Optional[str], label: str, shared: bool) -> Optional[str]:
    """What the runner says planning the config in each of its modes (None: it plans them all);
    cached, as the same suites are validated again and again (build, then each command).
    `shared`: a train runner, whose Plans do not depend on the config's name (only its messages
    name it): the Plans lint and the docs use are made here once (mode_plans); a refusal is planned
    again to name the suite. A chain's may (a serving config's name says which script it is for)."""
    layout = get_layout(layout_name)
    if shared:
        try:
            mode_plans(text_, layout, runner)
            return None
        except UsageError:
            pass
    try:
        mode_plans(text_, layout, runner, source=label)
    except UsageError as exc:
        return str(exc)
    return None


def _check_trivia(spec: Spec, pos: Positions, name: str, suite: Suite) -> list[Problem]:
    layout = get_layout(spec.suite_layout(name))
    trivia, rows = suite.trivia, len(layout.rows)
    last = min(rows, trivia.core_lines if trivia.core_lines is not None else rows) - 1
    out = []
    for index in trivia.line_overrides:
        out += _shadowed(spec, pos, name, suite, layout, index)
        if index > last:
            out.append(
                _problem(
                    spec,
                    pos,
                    name,
                    ("trivia", "line_overrides", index),
                    f"line index {index} is past the last line the config has (index {last};"
                    f" the {layout.name} layout has {rows}): the override would be ignored",
                    "remove it",
                )
            )
    if trivia.core_lines is not None and trivia.core_lines > rows:
        out.append(
            _problem(
                spec,
                pos,
                name,
                ("trivia", "core_lines"),
                f"core_lines {trivia.core_lines} is more than the {layout.name} layout's {rows} lines",
                f"remove it, or give at most {rows}",
            )
        )
    if trivia.tail is not None and (suite.sections or trivia.pre_sections):
        what = "`sections`" if suite.sections else "`trivia.pre_sections`"
        out.append(
            _problem(
                spec,
                pos,
                name,
                ("trivia", "tail"),
                f"trivia.tail replaces the trailing sections, so {what} would be ignored",
                f"give {what} or `trivia.tail`, not both",
            )
        )
    for section, keys in trivia.section_keys.items():
        have = suite.sections.get(section) or {}
        missing = [k for k in keys if k not in have]
        if missing or len(set(keys)) != len(keys):
            what = f"`{missing[0]}` is not a key of section {section!r}" if missing else "a key is listed twice"
            out.append(
                _problem(
                    spec,
                    pos,
                    name,
                    ("trivia", "section_keys", section),
                    f"trivia.section_keys: {what}",
                    "list keys of the section, each once",
                )
            )
    if trivia.blank_lines:
        base = len(config_lines(suite, layout))
        for k, position in enumerate(sorted(trivia.blank_lines)):
            if position > base + k:
                out.append(
                    _problem(
                        spec,
                        pos,
                        name,
                        ("trivia", "blank_lines"),
                        f"blank line {position} is past the end of the config ({base + k} lines"
                        " before it): it would land elsewhere",
                        "remove it",
                    )
                )
                break
    return out


_PYTHON_DEFAULT = Suite.model_fields["python"].default


def _shadowed(spec: Spec, pos: Positions, name: str, suite: Suite, layout, index: int) -> list[Problem]:
    """An override of a line a typed field also writes: the field's edits would never reach the
    config (the override wins), nor would the docs and plans agree with what is edited."""
    row = layout.rows[index] if index < len(layout.rows) else None
    role = row.role if row is not None and row.kind == "field" else None
    if role is None or role not in ROLES:
        return []
    path = ROLES[role][1]
    required = path[0] in ("model_name", "python", "topology")
    if not required and _get(suite, path) == _get(_DEFAULTS, path):
        return []
    if required:  # import's sentinel value: the override is the line's only source
        value = suite.gpu_list if path[0] == "topology" else _get(suite, path)
        if value == IMPORT_SENTINELS[path[0]](suite.file) or (path[0] == "python" and value == _PYTHON_DEFAULT):
            return []
    field = ".".join(path)
    fix = (
        f"remove the override and give the value in `{field}`"
        if required
        else f"remove the override (the line is then `{field}`'s), or set `{field}: null` (the line is then"
        " the override's)"
    )
    return [
        _problem(
            spec,
            pos,
            name,
            ("trivia", "line_overrides", index),
            f"line {index} ({role}) is written by `{field}` and replaced by this override: an edit of `{field}`"
            " would never reach the config",
            fix,
        )
    ]


def check_expressible(spec: Spec, pos: Positions) -> list[Problem]:
    """Fields a suite sets that its layout has no line for: an error, never silently dropped."""
    problems = []
    for name, suite in spec.suites.items():
        layout = get_layout(spec.suite_layout(name))
        present = set(layout.roles)
        present_paths = {ROLES[r][1] for r in present if r in ROLES}
        for role, (_, path) in ROLES.items():
            if role in present or path[0] in ("model_name", "python", "topology"):
                continue
            if path in present_paths:
                continue
            if _get(suite, path) != _get(_DEFAULTS, path):
                where = pos.locate(("suites", name, *path)) or pos.locate(("defaults", *path))
                if ("suites", name, *path) not in pos.values and ("defaults", *path) in pos.values:
                    where = pos.locate(("defaults", *path))
                line, col = where if where else (None, None)
                problems.append(
                    Problem(
                        spec.source,
                        line,
                        col,
                        ".".join(("suites", name, *path)),
                        f"layout {layout.name!r} has no line for this field",
                        "remove it, or use a layout that has it",
                    )
                )
    return problems


def _docs_checks(spec: Spec, pos: Positions) -> list[Problem]:
    """`docs.inference_devices` may only say what the inference matrices run (the docs' table is
    derived from them; a hand-kept list drifted: `device_GPU -` above `--use_gpu=True` lines)."""
    given = spec.docs.inference_devices
    if given is None:
        return []
    for name, suite in spec.train_suites.items():
        runs = suite.inference_devices
        if sorted(given) != sorted(runs):
            line, col = pos.locate(("docs", "inference_devices")) or (None, None)
            return [
                Problem(
                    spec.source,
                    line,
                    col,
                    "docs.inference_devices",
                    f"says {', '.join(given) or 'no device'} but suite {name!r} runs inference on"
                    f" {', '.join(runs) or 'no device'} (inference.use_gpu)",
                    "remove it: the docs' table is derived from inference.use_gpu",
                )
            ]
    return []


def _where(pos: Positions, suite: str, path: tuple) -> tuple[int | None, int | None]:
    """Position of a suite field: set in the suite itself, or inherited from defaults."""
    own = ("suites", suite, *path)
    for source in (own, ("defaults", *path)):
        if source in pos.values or source in pos.keys:
            return pos.locate(source) or (None, None)
    return pos.locate(own) or (None, None)


def _semantic_checks(spec: Spec, pos: Positions, texts: dict[str, str]) -> list[Problem]:
    """Lint every suite's lowered config; error findings the suite does not `allow` fail."""
    problems = []
    for name, suite in spec.suites.items():
        layout = get_layout(spec.suite_layout(name))
        config = spec.config_path(suite.file)
        for finding in lint_text(texts[name], layout, config):
            if finding.severity != ERROR or finding.rule in suite.allow:
                continue
            path = ROLES[finding.role][1] if finding.role in ROLES else ()
            if finding.role and finding.role.startswith("sections."):
                path = ("sections", *finding.role.split(".", 2)[1:])
            index = layout.index(finding.role) if finding.role in ROLES else None
            if index is not None and index in suite.trivia.line_overrides:
                path = ("trivia", "line_overrides", index)  # the verbatim line, not the typed field
            line, col = _where(pos, name, path)
            problems.append(
                Problem(
                    spec.source,
                    line,
                    col,
                    ".".join(str(p) for p in ("suites", name, *path)),
                    f"{finding.rule}: {finding.message} (in {config} line {finding.line})",
                    (finding.hint + "; " if finding.hint else "") + f"or add {finding.rule} to the suite's `allow`",
                )
            )
    return problems


def pick_suite(spec: Spec, suite: Optional[str], source: Optional[str] = None) -> str:
    """The suite a command works on: `suite`, else the spec's first; a UsageError naming the
    suites, or saying that a spec of verbatim configs only has nothing to run."""
    where = source or spec.source
    if not spec.suites:
        shown = ", ".join(list(spec.other_configs)[:3]) + (" ..." if len(spec.other_configs) > 3 else "")
        raise UsageError(
            f"{where}: nothing to plan or run: the spec has no train suite, only configs kept verbatim"
            f" ({shown}), which test_train_inference_python.sh does not read (`tipcgen build` writes them;"
            " their chain's own script runs them)"
        )
    name = suite or next(iter(spec.train_suites or spec.suites))
    if name not in spec.suites:
        raise UsageError(f"{where}: no suite {name!r} (suites: {', '.join(spec.suites)})")
    return name
