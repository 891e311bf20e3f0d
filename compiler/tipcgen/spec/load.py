"""Read a spec file: YAML with positions -> merged suites -> validated Spec.

Every problem becomes a `Problem` with file:line:col, the dotted field and,
for unknown keys, the closest valid key.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Collection
from typing import Annotated, Any, Callable, Optional, Union, get_args, get_origin

from pydantic import BaseModel, Tag, ValidationError

from tipcgen.errors import Problem, SpecError
from tipcgen.spec.chain_fields import inherits_all, shared_defaults
from tipcgen.spec.ir import Spec, SpecFile, Suite, is_chain_layout
from tipcgen.spec.policy import name_problem
from tipcgen.spec.yamlpos import MAX_NODES, Path, Positions, load_yaml

MAX_PROBLEMS = 100  # problems reported for one spec; the rest are counted
MAX_SUITES = 256  # suites in one spec (upstream models have at most 44 configs); each is merged and linted


def deep_merge(base: Any, over: Any, bpath: Path, opath: Path, origin: Optional[dict], out_path: Path = ()) -> Any:
    """Merge `over` onto `base` (mappings recurse, anything else replaces).

    `origin` maps each path of the result to the source path it came from, so
    errors in a merged suite point at the line that set the value (None: not needed, faster).
    """
    if isinstance(base, dict) and isinstance(over, dict):
        if origin is None:
            return {k: deep_merge(base[k], over[k], (), (), None) if k in over else base[k] for k in base} | {
                k: v for k, v in over.items() if k not in base
            }
        result = {}
        for k in list(base) + [k for k in over if k not in base]:
            if k in over and k in base:
                result[k] = deep_merge(base[k], over[k], (*bpath, k), (*opath, k), origin, (*out_path, k))
            elif k in over:
                result[k] = over[k]
                _record(over[k], (*opath, k), (*out_path, k), origin)
            else:
                result[k] = base[k]
                _record(base[k], (*bpath, k), (*out_path, k), origin)
        origin[out_path] = opath
        return result
    if origin is not None:
        _record(over, opath, out_path, origin)
    return over


# The one substitution a spec has: `${model_name}` in a suite's text is its model_name, so
# `defaults` can hold what suites of several models share (`-c configs/${model_name}.yaml`).
# `$` cannot appear otherwise (the character policy refuses it), so the expansion is exact.
MODEL_NAME_VAR = "${model_name}"


def expand_model_name(value: Any, model_name: Any) -> Any:
    """`value` with `${model_name}` in every string value replaced by `model_name` (mapping keys
    are field names, modes and indexes: never expanded, so error positions stay exact)."""
    if not isinstance(model_name, str) or MODEL_NAME_VAR in model_name:
        return value  # model_name is checked by validation; no expansion through a bad one
    if isinstance(value, str):
        return value.replace(MODEL_NAME_VAR, model_name)
    if isinstance(value, dict):
        return {k: expand_model_name(v, model_name) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_model_name(v, model_name) for v in value]
    return value


def _record(value: Any, src: Path, dst: Path, origin: dict) -> None:
    origin[dst] = src
    if isinstance(value, dict):
        for k, v in value.items():
            _record(v, (*src, k), (*dst, k), origin)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _record(v, (*src, i), (*dst, i), origin)


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
        if isinstance(part, str) and len(part) > 60:  # a user's key can be long
            part = part[:40] + "..." + part[-12:]
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_UNION_TAGS = {"bool", "int", "float", "str", "list", "dict"}


def _strip(tp: Any) -> tuple[Any, list | None]:
    """`tp` without Annotated/Optional wrappers, and its members when it is a union of several."""
    for _ in range(20):
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
            continue
        if origin is Union or origin is types.UnionType:
            members = [a for a in get_args(tp) if a is not type(None)]
            if len(members) == 1:
                tp = members[0]
                continue
            return tp, members
        return tp, None
    return Any, None


def _member(members: list, tag: str) -> Any:
    """The union member pydantic names `tag` (its Tag, class name, or 'literal[...]'-style label)."""
    for m in members:
        meta = get_args(m)[1:] if get_origin(m) is Annotated else ()
        if any(isinstance(x, Tag) and x.tag == tag for x in meta):
            return m
        base = _strip(m)[0]
        if isinstance(base, type) and base.__name__ == tag:
            return m
        origin = get_origin(base)
        if origin is not None and tag.startswith(getattr(origin, "__name__", str(origin)).lower() + "["):
            return m
    return Any


def _walk_loc(loc: tuple, model: type) -> tuple[tuple, list]:
    """Split a pydantic error location into the user's path and pydantic's own tags.

    Walks `loc` along the model's types: under a union of several members the next part is
    the member's tag (`str`, `Download`, "literal[...]", "function-after[...]"); after a dict
    key, `[key]` marks an error in the key itself. Everything else is a field, a key or a list
    index the user wrote, kept whatever it looks like (`Model`, `Train`, `str`, `3`)."""
    out: list = []
    dropped: list = []
    tp: Any = model
    after_key = False
    for part in loc:
        if after_key and part == "[key]":
            dropped.append(part)
            after_key = False
            continue
        after_key = False
        members = None
        if tp is not Any:
            tp, members = _strip(tp)
        if members is not None and isinstance(part, str):
            dropped.append(part)
            tp = _member(members, part)
            continue
        out.append(part)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            info = tp.model_fields.get(part) if isinstance(part, str) else None
            tp = info.annotation if info is not None else Any
        elif get_origin(tp) is dict:
            args = get_args(tp)
            tp = args[1] if len(args) == 2 else Any
            after_key = True
        elif get_origin(tp) in (list, tuple, set, frozenset):
            args = get_args(tp)
            tp = args[0] if args else Any
        else:
            tp = Any
    return tuple(out), dropped


def clean_loc(loc: tuple, model: type = Suite) -> tuple:
    """The user's path in a pydantic error location of `model`: union tags and `[key]` dropped,
    every key the user wrote kept (see `_walk_loc`)."""
    return _walk_loc(tuple(loc), model)[0]


def _short(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:60] + "..." + shown[-12:]


def _message(err: Any, model: type, loc: tuple, dropped: list) -> tuple[str, str | None, bool]:
    """(message, hint, whether the key rather than the value is at fault) of one pydantic error."""
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if err["type"] == "extra_forbidden" and loc:
        choices = _fields_at(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), choices, n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}?" if close else ("valid keys: " + ", ".join(choices) if choices else None)
        return f"unknown key {_short(loc[-1])}", hint, True
    if err["type"] == "invalid_key" or "[key]" in dropped:
        # a key of the wrong type: YAML gives integer keys for `3:`; only trivia.line_overrides takes them
        key = err.get("input")
        if isinstance(key, int) and not isinstance(key, bool):
            return f'keys must be text, but key {key} is a number (quote it: "{key}")', None, True
        return f"key {_short(key)}: {msg}", None, True
    if err["type"] == "missing":
        name = loc[-1] if loc else "?"
        return "required field is missing", f"add `{name}: ...`" if len(loc) == 1 else None, False
    got = _kind_of(err.get("input"))
    if any(isinstance(p, str) and p in _UNION_TAGS for p in dropped):
        return f"expected a single value (text, number or true/false), got {got}", None, False
    if err["type"] in _EXPECTED:
        return f"expected {_EXPECTED[err['type']]}, got {got}", None, False
    return msg, None, False


# pydantic's error types a YAML author meets most, in the words of YAML (not of Python).
_EXPECTED = {
    "list_type": "a list (`[a, b]`, or one `- item` per line)",
    "dict_type": "a mapping (`key: value` lines)",
    "model_type": "a mapping (`key: value` lines)",
    "model_attributes_type": "a mapping (`key: value` lines)",
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}


def _kind_of(value: Any) -> str:
    """How a YAML author would call a value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the text {_short(value)}"
    return {"list": "a list", "dict": "a mapping"}.get(type(value).__name__, type(value).__name__)


def _problems(
    exc: ValidationError,
    model: type,
    filename: str,
    pos: Positions,
    to_source: Callable[[tuple], tuple],
    field_prefix: Path = (),
    limit: int = MAX_PROBLEMS,
) -> list[Problem]:
    """Located problems of the first `limit` errors of `exc` (the caller counts the rest)."""
    errors = exc.errors(include_url=False)[: max(0, limit)]
    walked = [_walk_loc(tuple(err["loc"]), model) for err in errors]
    suggested = set()
    for err, (loc, _) in zip(errors, walked):
        if err["type"] == "extra_forbidden" and loc:
            close = difflib.get_close_matches(str(loc[-1]), _fields_at(model, loc[:-1]), n=1, cutoff=0.5)
            if close:
                suggested.add((*loc[:-1], close[0]))
    problems = []
    for err, (loc, dropped) in zip(errors, walked):
        if err["type"] == "missing" and loc in suggested:
            continue  # the misspelt key already explains it
        msg, hint, at_key = _message(err, model, loc, dropped)
        source = to_source(loc)
        where = pos.locate(source, prefer_key=at_key)
        line, col = where if where else (None, None)
        if line is None and err["type"] == "missing" and len(loc) == 1 and not field_prefix:
            line, col = 1, 1  # a top-level key is missing: point at the document's start
        # A value set in `defaults` is named there (and reported once, not once per suite).
        shared = {"defaults": 1, "presets": 2}.get(str(source[0]) if source else "")
        prefix = source[:shared] if shared else field_prefix
        problem = Problem(filename, line, col, _dotted(prefix + loc) or None, msg, hint)
        if problem not in problems:
            problems.append(problem)
    return problems


def _size(value: Any) -> int:
    """Number of values in plain YAML data (depth is bounded by yamlpos.MAX_DEPTH)."""
    if isinstance(value, dict):
        return 1 + sum(_size(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_size(v) for v in value)
    return 1


def parse_spec_text(text: str, filename: str, rule_ids: Optional[Collection[str]] = None) -> tuple[Spec, Positions]:
    """The Spec a YAML text describes, each value typed and located, and its positions.

    Checks across fields and suites are `tipcgen.check`'s (`check.spec.load_spec_text` runs both);
    `rule_ids`: the lint rule ids an `allow` may name (None: not checked here)."""
    context = {"rule_ids": rule_ids}
    data, pos = load_yaml(text, filename)
    if not isinstance(data, dict):
        raise SpecError([Problem(filename, 1, 1, None, "a spec is a YAML mapping (model, layout, suites, ...)")])
    try:
        top = SpecFile.model_validate(data, context=context)
    except ValidationError as exc:
        raise SpecError(
            sorted_problems(
                _problems(exc, SpecFile, filename, pos, lambda loc: loc),
                hidden=max(0, exc.error_count() - MAX_PROBLEMS),
            )
        ) from None

    defaults = data.get("defaults") or {}
    # Every suite is validated (and linted) merged over `defaults`: bound what that costs.
    line, col = pos.locate(("suites",), prefer_key=True) or (None, None)
    if len(top.suites) > MAX_SUITES:
        raise SpecError(
            [Problem(filename, line, col, "suites", f"{len(top.suites)} suites; a spec has at most {MAX_SUITES}")]
        )
    shared = _size(defaults)
    work = sum(shared + _size(overlay) for overlay in top.suites.values())
    if work > MAX_NODES:
        raise SpecError(
            [
                Problem(
                    filename,
                    line,
                    col,
                    "suites",
                    f"{len(top.suites)} suites, each merged over the {shared} values of `defaults`,"
                    f" make {work} values to check; a spec is at most {MAX_NODES}",
                )
            ]
        )
    problems: list[Problem] = _inherited_allow(top, pos, filename)
    hidden = 0
    suites: dict[str, Suite] = {}
    for name, overlay in top.suites.items():
        try:  # merged without tracking where each value came from: only an error needs that
            merged = _merged(top, defaults, name, overlay or {}, pos, filename, None)
            suites[name] = Suite.model_validate(merged, context=context)
        except SpecError as exc:  # an unknown preset
            problems.extend(p for p in exc.problems if p not in problems)
        except ValidationError:
            origin: dict = {}
            try:
                merged = _merged(top, defaults, name, overlay or {}, pos, filename, origin)
                suites[name] = Suite.model_validate(merged, context=context)
            except ValidationError as exc:
                limit = MAX_PROBLEMS - len(problems)
                found = _problems(exc, Suite, filename, pos, _source_of(origin, name), ("suites", name), limit)
                problems.extend(p for p in found if p not in problems)
                hidden += max(0, exc.error_count() - max(0, limit))
    if problems:
        raise SpecError(sorted_problems(problems, hidden))

    spec = Spec(
        source=filename,
        model=top.model,
        layout=top.layout,
        runner=top.runner,
        configs=top.configs,
        docs=top.docs,
        prepare=top.prepare,
        suites=suites,
        other_configs=top.other_configs,
        bench=top.bench,
        convergence=top.convergence,
        devices=top.devices,
    )
    return spec, pos


def _inherited_allow(top: SpecFile, pos: Positions, filename: str) -> list[Problem]:
    """`allow` keeps a suite's own upstream defects: in `defaults` or a preset every suite would
    inherit it, one added later too, whose defects would then pass unchecked."""
    places: list[tuple[tuple, dict]] = [(("defaults", "allow"), top.defaults)]
    places += [(("presets", name, "allow"), preset or {}) for name, preset in top.presets.items()]
    out = []
    for path, node in places:
        if isinstance(node, dict) and "allow" in node:
            line, col = pos.locate(path) or (None, None)
            out.append(
                Problem(
                    filename,
                    line,
                    col,
                    ".".join(path),
                    "`allow` is per suite: here every suite inherits it (one added later too), and its defects"
                    " would pass unchecked",
                    "list the rules in each suite that keeps an upstream defect",
                )
            )
    return out


def _source_of(origin: dict, name: str) -> Callable[[tuple], tuple]:
    """Where a merged suite's value was written: the longest known prefix of its path."""

    def to_source(loc: tuple) -> tuple:
        loc = tuple(loc)
        while loc and loc not in origin:
            loc = loc[:-1]
        return origin.get(loc, ("suites", name))

    return to_source


def _merged(
    top: SpecFile, defaults: dict, name: str, overlay: dict, pos: Positions, filename: str, origin: Optional[dict]
) -> dict:
    """Suite `name` merged over its preset and `defaults`, `${model_name}` expanded; `origin`
    (when given) gets the source path of every value."""
    chain = overlay.get("layout", defaults.get("layout"))
    if is_chain_layout(chain) and not inherits_all(chain):
        # another chain's suite takes only the shared fields from `defaults` (its preset, of its
        # own kind, whole)
        defaults = shared_defaults(defaults)
    base, bpath, base_origin = _preset_base(top, defaults, name, overlay, pos, filename, origin is not None)
    merged = deep_merge(base, overlay, bpath, ("suites", name), origin)
    if origin is not None and bpath == ("<preset>",):  # name what came from `defaults` or the preset
        origin.update({k: base_origin[v[1:]] for k, v in origin.items() if v[:1] == bpath})
    merged.setdefault("model_name", top.model)
    return expand_model_name(merged, merged["model_name"])


def _preset_base(
    top: SpecFile, defaults: dict, name: str, overlay: dict, pos: Positions, filename: str, track: bool = True
) -> tuple:
    """(what suite `name` merges over, its source path, the origin map of a preset merge): `defaults`,
    or `defaults` with the suite's `preset` (one of `presets`) merged over them."""
    own = "preset" in overlay
    preset = overlay["preset"] if own else defaults.get("preset")
    if preset is None or name_problem(preset):  # a bad name: Suite.preset's policy says why
        return defaults, ("defaults",), {}
    if preset not in top.presets:
        where = ("suites", name, "preset") if own else ("defaults", "preset")
        line, col = pos.locate(where) or (None, None)
        close = difflib.get_close_matches(str(preset), list(top.presets), n=1, cutoff=0.5)
        known = ", ".join(top.presets) or "none are defined"
        hint = f"did you mean {close[0]!r}?" if close else f"`presets` has: {known}"
        raise SpecError([Problem(filename, line, col, _dotted(where), f"unknown preset {preset!r}", hint)])
    origin: Optional[dict] = {} if track else None
    base = deep_merge(defaults, top.presets[preset] or {}, ("defaults",), ("presets", preset), origin)
    return base, ("<preset>",), origin


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen, out = set(), []
    for p in problems:
        key = (p.line, p.col, p.field, p.message)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def sorted_problems(problems: list[Problem], hidden: int = 0) -> list[Problem]:
    """By position; problems without a position (missing fields) last; at most MAX_PROBLEMS, then
    one line counting the rest (`hidden`: problems already left out)."""
    out = sorted(_dedupe(problems), key=lambda p: (p.line is None, p.line or 0, p.col or 0))
    hidden += max(0, len(out) - MAX_PROBLEMS)
    out = out[:MAX_PROBLEMS]
    if hidden and out:
        out.append(Problem(out[0].file, None, None, None, f"... and {hidden} more problems (not shown)"))
    return out
