"""Lower a Suite to legacy config text through a layout table (pure: Spec in, bytes out)."""

from __future__ import annotations

from typing import Any, Callable, cast, get_args

from tipcgen.dialects import Layout, get_layout
from tipcgen.errors import Problem
from tipcgen.spec.model import Eval, Export, Inference, Spec, Suite, Train, Trainers, text

Line = tuple[str, str]  # (key text, value text)
NULL: Line = ("null", "null")


def _flag(get: Callable[[Suite], Any]) -> Callable[[Suite], Line]:
    def f(s: Suite) -> Line:
        flag = get(s)
        return NULL if flag is None else flag.line()

    return f


def _value(get: Callable[[Suite], Any]) -> Callable[[Suite], Line]:
    return lambda s: ("", text(get(s)))


def _joined(get: Callable[[Suite], list]) -> Callable[[Suite], Line]:
    def f(s: Suite) -> Line:
        items = get(s)
        return ("", "|".join(text(v) for v in items) if items else "null")

    return f


def _inference_flag(name: str) -> Callable[[Suite], Line]:
    return _flag(lambda s: getattr(s.inference, name))


def _trainer(slot: str, part: str) -> Callable[[Suite], Line]:
    def f(s: Suite) -> Line:
        tkey, tcmd, ekey, ecmd = s.trainers.slot(slot)
        return (tkey, tcmd) if part == "train" else (ekey, ecmd)

    return f


# role -> (how a suite renders it, the suite field it comes from)
ROLES: dict[str, tuple[Callable[[Suite], Line], tuple]] = {
    "model_name": (_value(lambda s: s.model_name), ("model_name",)),
    "python": (_value(lambda s: s.python), ("python",)),
    "gpu_list": (_value(lambda s: s.gpu_list), ("topology",)),
    "train.device": (_flag(lambda s: s.train.device), ("train", "device")),
    "train.autocast": (_flag(lambda s: s.train.autocast), ("train", "autocast")),
    "train.epochs": (_flag(lambda s: s.train.epochs), ("train", "epochs")),
    "train.save_dir": (_flag(lambda s: s.train.save_dir), ("train", "save_dir")),
    "train.batch_size": (_flag(lambda s: s.train.batch_size), ("train", "batch_size")),
    "train.pretrained": (_flag(lambda s: s.train.pretrained), ("train", "pretrained")),
    "train.model_file": (_value(lambda s: s.train.model_file), ("train", "model_file")),
    "train.infer_img_dir": (_value(lambda s: s.train.infer_img_dir), ("train", "infer_img_dir")),
    "train.data": (_flag(lambda s: s.train.data), ("train", "data")),
    "train.extra": (_flag(lambda s: s.train.extra), ("train", "extra")),
    "train.run": (_value(lambda s: "|".join(s.train.run)), ("train", "run")),
    "eval.command": (_value(lambda s: s.eval.command), ("eval", "command")),
    "eval.extra": (_flag(lambda s: s.eval.extra), ("eval", "extra")),
    "export.save_dir": (_flag(lambda s: s.export.save_dir), ("export", "save_dir")),
    "export.weights": (_flag(lambda s: s.export.weights), ("export", "weights")),
    "export.inference_dir": (_value(lambda s: s.export.inference_dir), ("export", "inference_dir")),
    "export.model_url": (_value(lambda s: s.export.model_url), ("export", "model_url")),
    "export.kl_quant": (_value(lambda s: s.export.kl_quant), ("export", "kl_quant")),
    "whole_infer.models": (_joined(lambda s: [m.model for m in s.whole_infer]), ("whole_infer",)),
    "whole_infer.exports": (_joined(lambda s: [m.export for m in s.whole_infer]), ("whole_infer",)),
    "whole_infer.quant": (_joined(lambda s: [m.quant for m in s.whole_infer]), ("whole_infer",)),
    "inference.script": (_value(lambda s: s.inference.script), ("inference", "script")),
}
for _slot in ("norm", "pact", "fpgm", "distill", "slot1", "slot2"):
    ROLES[f"trainer.{_slot}.train"] = (_trainer(_slot, "train"), ("trainers", _slot, "train"))
    ROLES[f"trainer.{_slot}.export"] = (_trainer(_slot, "export"), ("trainers", _slot, "export"))
for _name in (
    "use_gpu",
    "mkldnn",
    "threads",
    "batch_size",
    "tensorrt",
    "precision",
    "model_dir",
    "data",
    "save_log",
    "benchmark",
    "extra",
    "extra2",
):
    ROLES[f"inference.{_name}"] = (_inference_flag(_name), ("inference", _name))


def config_lines(suite: Suite, layout: Layout) -> list[str]:
    """The non-empty lines of the legacy config, in order (without line terminators)."""
    trivia = suite.trivia
    rows = layout.rows if trivia.core_lines is None else layout.rows[: trivia.core_lines]
    lines: list[str] = []
    # Row's optional fields are set by kind (see dialects.base: H, SEP, F); cast() only says so.
    for index, row in enumerate(rows):
        if index in trivia.line_overrides:
            lines.append(trivia.line_overrides[index])
        elif row.kind == "header":
            lines.append(suite.trivia.headers.get(cast(str, row.name), cast(str, row.text)))
        elif row.kind == "sep":
            lines.append(cast(str, row.text))
        else:
            key, value = ROLES[cast(str, row.role)][0](suite)
            lines.append(f"{row.key if row.key is not None else key}:{value}")
    if trivia.tail is not None:
        lines.extend(trivia.tail)
        return lines
    lines.extend(trivia.pre_sections)
    for name, params in suite.sections.items():
        lines.append(trivia.headers.get(name, layout.section_header(name)))
        params = params or {}  # (a `null` section was dropped by validation)
        for param in trivia.section_keys.get(name, params):
            if param in params:  # (a listed key the section lacks is check_spec's error)
                lines.append(f"{param}:{text(params[param])}")
    return lines


def config_text(suite: Suite, layout: Layout) -> str:
    trivia = suite.trivia
    lines = config_lines(suite, layout)
    for position in sorted(trivia.blank_lines):
        lines.insert(position, "")
    eol = "\r\n" if trivia.crlf else "\n"
    body = eol.join(lines) + (eol if trivia.final_newline else "")
    return "\ufeff" + body if trivia.bom else body


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


def _locate(pos, suite: str, path: tuple) -> tuple:
    """(line, col) of a suite field: set in the suite itself, else inherited from defaults."""
    own, inherited = ("suites", suite, *path), ("defaults", *path)
    if own not in pos.values and own not in pos.keys and (inherited in pos.values or inherited in pos.keys):
        return pos.locate(inherited) or (None, None)
    return pos.locate(own) or (None, None)


# Step combinations (products of `|` lists) over all suites of a spec: docs and plans list every
# one of them in every mode. The largest real model holds about 2,100 (see check_spec).
MAX_SPEC_MATRIX = 16384


def _problem(spec: Spec, pos, suite: str, path: tuple, message: str, hint: str) -> Problem:
    line, col = _locate(pos, suite, path)
    return Problem(spec.source, line, col, ".".join(str(p) for p in ("suites", suite, *path)), message, hint)


def check_spec(spec: Spec, pos) -> list[Problem]:
    """What no single suite's validation sees: files and docs two suites would both write, and
    trivia that points past the lines a suite's layout has (it would be silently ignored)."""
    problems = []
    files: dict[str, str] = {}
    docs: dict[str, str] = {}
    steps, too_many = 0, False
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
        found, size = _check_runner(spec, pos, name, suite)
        problems += found
        steps += size
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


def _check_runner(spec: Spec, pos, name: str, suite: Suite) -> tuple[list[Problem], int]:
    """What the generated runner would refuse at run time (plan/checks.py: control bytes, logs
    outside test_tipc/output/, a step matrix too large), refused here instead; and the suite's
    step matrix, which the spec's total is bounded by."""
    from tipcgen.errors import UsageError
    from tipcgen.legacy.configview import ConfigView
    from tipcgen.plan.checks import check_bytes, check_view, matrix_size

    layout = get_layout(spec.layout)  # the layout the generated bash reads every config with
    text_ = config_text(suite, get_layout(spec.suite_layout(name)))
    label = f"[suite {name}: {suite.file}]"
    try:
        check_bytes(text_, label)
        view = ConfigView.parse(text_, layout)
        check_view(view, label)
    except UsageError as exc:
        return [_problem(spec, pos, name, ("file",), str(exc), "the generated runner refuses this config")], 0
    return [], matrix_size(view)


def _check_trivia(spec: Spec, pos, name: str, suite: Suite) -> list[Problem]:
    layout = get_layout(spec.suite_layout(name))
    trivia, rows = suite.trivia, len(layout.rows)
    last = min(rows, trivia.core_lines if trivia.core_lines is not None else rows) - 1
    out = []
    for index in trivia.line_overrides:
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


def check_expressible(spec: Spec, pos) -> list[Problem]:
    """Fields a suite sets that its layout has no line for: an error, never silently dropped.
    Also runs `check_spec` (the checks across suites), which load.py does not call itself."""
    problems = check_spec(spec, pos)
    for name, suite in spec.suites.items():
        layout = get_layout(spec.suite_layout(name))
        present = set(layout.roles)
        for role, (_, path) in ROLES.items():
            if role in present or path[0] in ("model_name", "python", "topology"):
                continue
            if any(ROLES[r][1] == path for r in present):
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


def roles_typed(kind: type) -> frozenset[str]:
    """Roles whose suite field is a `kind` (e.g. ListFlag, ModeFlag), read off the Spec's types
    so the importer and lint cannot disagree with the model about what a line holds."""
    out = set()
    for role, (_, path) in ROLES.items():
        model: Any = Suite
        for part in path:
            fields = getattr(model, "model_fields", {})
            if part not in fields:
                model = None
                break
            annotation = fields[part].annotation
            args = [a for a in get_args(annotation) if a is not type(None)]
            model = args[0] if len(args) == 1 else annotation
        if model is kind:
            out.add(role)
    return frozenset(out)
