"""Read a spec file: YAML with positions -> merged suites -> validated Spec.

Every problem becomes a `Problem` with file:line:col, the dotted field and,
for unknown keys, the closest valid key.
"""

from __future__ import annotations

import difflib
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from .errors import Problem, SpecError
from .spec import Spec, SpecFile, Suite
from .yamlpos import Path, Positions, load_yaml


def deep_merge(base: Any, over: Any, bpath: Path, opath: Path, origin: dict, out_path: Path = ()) -> Any:
    """Merge `over` onto `base` (mappings recurse, anything else replaces).

    `origin` maps each path of the result to the source path it came from, so
    errors in a merged suite point at the line that set the value.
    """
    if isinstance(base, dict) and isinstance(over, dict):
        result = {}
        for k in list(base) + [k for k in over if k not in base]:
            if k in over and k in base:
                result[k] = deep_merge(base[k], over[k], bpath + (k,), opath + (k,), origin, out_path + (k,))
            elif k in over:
                result[k] = over[k]
                _record(over[k], opath + (k,), out_path + (k,), origin)
            else:
                result[k] = base[k]
                _record(base[k], bpath + (k,), out_path + (k,), origin)
        origin[out_path] = opath
        return result
    _record(over, opath, out_path, origin)
    return over


def _record(value: Any, src: Path, dst: Path, origin: dict) -> None:
    origin[dst] = src
    if isinstance(value, dict):
        for k, v in value.items():
            _record(v, src + (k,), dst + (k,), origin)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _record(v, src + (i,), dst + (i,), origin)


def _fields_at(model: type, loc: tuple) -> list[str]:
    """Field names of the model reached by following `loc` (for key suggestions)."""
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            if isinstance(part, str) and part in current.model_fields:
                current = current.model_fields[part].annotation
                continue
            return []
        origin = get_origin(current)
        if origin in (list, dict):
            current = get_args(current)[-1]
            continue
        return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _unwrap(tp: Any) -> Any:
    """Strip Optional/Annotated/Union-of-one-model wrappers."""
    for _ in range(5):
        args = get_args(tp)
        origin = get_origin(tp)
        if origin is None:
            return tp
        if origin in (list, dict):
            return tp
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        if len(models) == 1:
            return models[0]
        non_none = [a for a in args if a is not type(None)]
        if len(non_none) >= 1 and origin is not None and str(origin).endswith("Annotated"):
            tp = args[0]
            continue
        if len(non_none) == 1:
            tp = non_none[0]
            continue
        return tp
    return tp


def _dotted(loc: Path) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_UNION_TAGS = {"bool", "int", "float", "str", "list", "dict"}


def clean_loc(loc: tuple) -> tuple:
    """Drop pydantic's union/validator tags (e.g. 'function-before[...]', 'Download', 'str')."""
    return tuple(p for p in loc if not (isinstance(p, str) and ("[" in p or p[:1].isupper() or p in _UNION_TAGS)))


def _problems(exc: ValidationError, model: type, filename: str, pos: Positions,
              to_source, field_prefix: Path = ()) -> list[Problem]:
    problems = []
    suggested = set()
    errors = exc.errors(include_url=False)
    for err in errors:
        if err["type"] == "extra_forbidden":
            loc = clean_loc(tuple(err["loc"]))
            close = difflib.get_close_matches(str(loc[-1]), _fields_at(model, loc[:-1]), n=1, cutoff=0.5)
            if close:
                suggested.add(loc[:-1] + (close[0],))
    for err in errors:
        if err["type"] == "missing" and clean_loc(tuple(err["loc"])) in suggested:
            continue  # the misspelt key already explains it
        loc = clean_loc(tuple(err["loc"]))
        src = to_source(loc)
        hint = None
        if err["type"] == "extra_forbidden":
            key = loc[-1]
            choices = _fields_at(model, loc[:-1])
            close = difflib.get_close_matches(str(key), choices, n=1, cutoff=0.5)
            msg = f"unknown key {key!r}"
            if close:
                hint = f"did you mean {close[0]!r}?"
            elif choices:
                hint = "valid keys: " + ", ".join(choices)
            where = pos.locate(src, prefer_key=True)
        else:
            msg = err["msg"]
            if msg.startswith("Value error, "):
                msg = msg[len("Value error, "):]
            if err["type"] == "missing":
                msg = "required field is missing"
            elif any(isinstance(p, str) and p in _UNION_TAGS for p in err["loc"]):
                got = type(err.get("input")).__name__
                got = {"list": "a list", "dict": "a mapping", "NoneType": "null"}.get(got, got)
                msg = f"expected a single value (text, number or true/false), got {got}"
            where = pos.locate(src)
        line, col = where if where else (None, None)
        problems.append(Problem(filename, line, col, _dotted(field_prefix + loc), msg, hint))
    return problems


def load_spec_text(text: str, filename: str) -> Spec:
    data, pos = load_yaml(text, filename)
    if not isinstance(data, dict):
        raise SpecError([Problem(filename, 1, 1, None, "a spec is a YAML mapping (model, layout, suites, ...)")])
    try:
        top = SpecFile.model_validate(data)
    except ValidationError as exc:
        raise SpecError(_sorted(_problems(exc, SpecFile, filename, pos, lambda loc: loc))) from None

    defaults = data.get("defaults") or {}
    problems: list[Problem] = []
    suites: dict[str, Suite] = {}
    for name, overlay in top.suites.items():
        origin: dict = {}
        merged = deep_merge(defaults, overlay or {}, ("defaults",), ("suites", name), origin)
        merged.setdefault("model_name", top.model)

        def to_source(loc, origin=origin, name=name):
            loc = tuple(loc)
            while loc and loc not in origin:
                loc = loc[:-1]
            return origin.get(loc, ("suites", name))

        try:
            suites[name] = Suite.model_validate(merged)
        except ValidationError as exc:
            problems.extend(_problems(exc, Suite, filename, pos, to_source, ("suites", name)))
    if problems:
        raise SpecError(_sorted(_dedupe(problems)))

    spec = Spec(source=filename, model=top.model, layout=top.layout, docs=top.docs,
                prepare=top.prepare, suites=suites, other_configs=top.other_configs)
    from .lower import check_expressible  # the layout decides what a suite may say

    layout_problems = check_expressible(spec, pos) + _semantic_checks(spec, pos)
    if layout_problems:
        raise SpecError(_sorted(layout_problems))
    return spec


def _where(pos: Positions, suite: str, path: tuple) -> tuple:
    """Position of a suite field: set in the suite itself, or inherited from defaults."""
    own = ("suites", suite) + path
    if own in pos.values or own in pos.keys:
        return pos.locate(own)
    inherited = ("defaults",) + path
    if inherited in pos.values or inherited in pos.keys:
        return pos.locate(inherited)
    return pos.locate(own) or (None, None)


def _semantic_checks(spec: Spec, pos: Positions) -> list[Problem]:
    """Lint every suite's lowered config; error findings the suite does not `allow` fail."""
    from .layouts import get_layout
    from .lint import ERROR, lint_text
    from .lower import ROLES, config_text

    problems = []
    for name, suite in spec.suites.items():
        layout = get_layout(spec.suite_layout(name))
        config = f"test_tipc/configs/{spec.model}/{suite.file}"
        for finding in lint_text(config_text(suite, layout), layout, config):
            if finding.severity != ERROR or finding.rule in suite.allow:
                continue
            path = ROLES[finding.role][1] if finding.role in ROLES else ()
            line, col = _where(pos, name, path)
            problems.append(Problem(
                spec.source, line, col, ".".join(("suites", name) + path),
                f"{finding.rule}: {finding.message} (in {config} line {finding.line})",
                (finding.hint + "; " if finding.hint else "") + f"or add {finding.rule} to the suite's `allow`"))
    return problems


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen, out = set(), []
    for p in problems:
        key = (p.line, p.col, p.field, p.message)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _sorted(problems: list[Problem]) -> list[Problem]:
    """By position; problems without a position (missing fields) last."""
    return sorted(_dedupe(problems), key=lambda p: (p.line is None, p.line or 0, p.col or 0))


def read_text(path: str) -> str:
    """Read a UTF-8 file or raise a located SpecError."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise SpecError([Problem(path, None, None, None, f"cannot read file: {exc.strerror}")]) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError([Problem(path, line, None, None, "file is not UTF-8 text")]) from None


def load_spec(path: str) -> Spec:
    return load_spec_text(read_text(path), path)
