"""Lower a Suite to legacy config text through a layout table (pure: Spec in, bytes out).

What a suite may say at all is checked before, by `tipcgen.check.spec`."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, cast, get_args

from tipcgen.dialects import Layout
from tipcgen.spec.ir import Suite
from tipcgen.spec.policy import text

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
    "infer_model_url": (_value(lambda s: s.infer_model_url), ("infer_model_url",)),
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


def _path_getter(path: tuple[str, ...]) -> Callable[[Suite], Any]:
    def get(s: Suite) -> Any:
        node: Any = s
        for part in path:
            node = getattr(node, part, None) if node is not None else None
        return node

    return get


def _chain_roles() -> None:
    """The other chains' own roles (spec/chain_fields.py types them from the same tables)."""
    from tipcgen.spec.chain_fields import chain_roles

    render = {"value": _value, "values": _joined, "flag": _flag, "list_flag": _flag}
    for role, kind in chain_roles().items():
        path = tuple(role.split("."))
        ROLES[role] = (render[kind](_path_getter(path)), path)


_chain_roles()


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
            lines.append(f"{row.key if row.key is not None else key}{layout.row_separator(row)}{value}")
    if trivia.tail is not None:
        lines.extend(trivia.tail)
        return lines
    lines.extend(trivia.pre_sections)
    for name, params in suite.sections.items():
        lines.append(trivia.headers.get(name, layout.section_header(name)))
        params = params or {}  # (a `null` section was dropped by validation)
        for param in trivia.section_keys.get(name, params):
            if param in params:  # (a listed key the section lacks is check_spec's error)
                lines.append(f"{param}{layout.separator}{text(params[param])}")
    return lines


# A build lowers each suite for its checks, its config file and its docs: once is enough. Keyed
# by the (frozen) suite's identity; the entry holds the suite, so that identity is not reused
# while it is cached. Bounded: a process that loads many specs keeps the latest.
_LOWERED: OrderedDict[tuple[int, str], tuple[Suite, str]] = OrderedDict()
_LOWERED_MAX = 1024


def config_text(suite: Suite, layout: Layout) -> str:
    """The legacy config a suite lowers to through `layout` (the same string for the same suite)."""
    key = (id(suite), layout.name)
    hit = _LOWERED.get(key)
    if hit is not None and hit[0] is suite:
        _LOWERED.move_to_end(key)
        return hit[1]
    text_ = _config_text(suite, layout)
    _LOWERED[key] = (suite, text_)
    if len(_LOWERED) > _LOWERED_MAX:
        _LOWERED.popitem(last=False)
    return text_


def _config_text(suite: Suite, layout: Layout) -> str:
    trivia = suite.trivia
    lines = config_lines(suite, layout)
    for position in sorted(trivia.blank_lines):
        lines.insert(position, "")
    eol = "\r\n" if trivia.crlf else "\n"
    body = eol.join(lines) + (eol if trivia.final_newline else "")
    return "\ufeff" + body if trivia.bom else body


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
