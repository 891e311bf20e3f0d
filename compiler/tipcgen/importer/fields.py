"""Per-suite fields: one decoded config -> the suite dict that lowers back to its exact bytes.

Each core line is decoded into its role's field through the layout table; a line no typed field
reproduces (a shifted key, a value the Spec rejects) is kept verbatim in `trivia.line_overrides`.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pydantic import ValidationError

from tipcgen.dialects import Layout
from tipcgen.dialects.base import Row
from tipcgen.errors import Problem, SpecError
from tipcgen.lower.text import ROLES, config_text, roles_typed
from tipcgen.script.decode import Decoded, _fail
from tipcgen.script.lines import has_separator, header_name, split_line
from tipcgen.spec.chain_fields import chain_roles
from tipcgen.spec.ir import IMPORT_SENTINELS, TRAINER_SLOTS, ListFlag, ModeFlag, RawConfig, Suite
from tipcgen.spec.load import clean_loc
from tipcgen.spec.modes import TRAIN_MODES
from tipcgen.spec.policy import is_name, text

INT = re.compile(r"^(0|-?[1-9][0-9]*)$")

# Roles whose line is a `|`-separated list of values (the train tables', and the chains' looped lines
# whose key the config chooses: serving's `--use_gpu`, PaddleOCR Lite's rec/cls models), and those
# whose value is a mode table.
_LIST_FLAG_ROLES = roles_typed(ListFlag) | frozenset(r for r, k in chain_roles().items() if k == "list_flag")
_MODE_FLAG_ROLES = roles_typed(ModeFlag)
_WHOLE_INFER_ROLES = ("whole_infer.models", "whole_infer.exports", "whole_infer.quant")
# Other chains' fixed-key lines the script loops over: a list of values (spec/chain_fields.py).
_VALUE_LIST_ROLES = frozenset(role for role, kind in chain_roles().items() if kind == "values")


def _scalar(s: str) -> Any:
    """Legacy text -> the YAML scalar that renders back to the same text."""
    if s == "null":
        return None
    if s in ("True", "False"):
        return s == "True"
    if INT.match(s) and len(s) < 16:
        return int(s)
    return s


def _flag(key: str, value: str) -> Optional[dict]:
    if key == "null" and value == "null":
        return None
    return {"key": _scalar(key) if key != "null" else None, "value": _scalar(value)}


def _list_flag(key: str, value: str) -> Optional[dict]:
    if key == "null" and value == "null":
        return None
    items = [v if v == "null" else _scalar(v) for v in value.split("|")] if value else []
    return {"key": key if key != "null" else None, "values": items}


def _mode_flag(key: str, value: str) -> Optional[dict]:
    if key == "null" and value == "null":
        return None
    table: dict = {}
    for item in value.split("|") if value else []:
        mode, eq, v = item.partition("=")
        if not eq or mode not in TRAIN_MODES or mode in table or "=" in v:
            return {"key": key if key != "null" else None, "value": _scalar(value)}
        table[mode] = _scalar(v)
    return {"key": key if key != "null" else None, "by_mode": table}


def _topology(value: str) -> Optional[list]:
    out: list[Any] = []
    for entry in value.split("|"):
        if entry == "-1":
            out.append("cpu")
        elif re.fullmatch(r"[0-9]+", entry) and str(int(entry)) == entry:
            out.append(int(entry))
        elif re.fullmatch(r"[0-9]+(,[0-9]+)+", entry) and all(str(int(g)) == g for g in entry.split(",")):
            out.append([int(g) for g in entry.split(",")])
        elif re.fullmatch(r"cpux[1-9][0-9]?", entry):
            out.append({"cpus": int(entry[4:])})
        elif ";" in entry and re.fullmatch(r"[^;]*;cpux[1-9][0-9]?", entry):
            ips, _, procs = entry.partition(";")
            out.append({"ips": ips.split(","), "cpus": int(procs[4:])})
        elif ";" in entry:
            ips, _, gpus = entry.partition(";")
            if not re.fullmatch(r"[0-9]+(,[0-9]+)*", gpus) or any(str(int(g)) != g for g in gpus.split(",")):
                return None
            out.append({"ips": ips.split(","), "gpus": [int(g) for g in gpus.split(",")]})
        else:
            return None
    return out or None


def _set(data: dict, path: tuple, value: Any) -> None:
    for part in path[:-1]:
        data = data.setdefault(part, {})
    data[path[-1]] = value


def _decode_trainer(role: str, key: str, value: str, data: dict) -> None:
    """A `trainer.<slot>.<train|export>` line: the slot's name when not the default, and its command."""
    _, slot, part = role.split(".")
    default_key = TRAINER_SLOTS[slot][0 if part == "train" else 1]
    name_field = "name" if part == "train" else "export_name"
    if key != text(default_key):
        data.setdefault("trainers", {}).setdefault(slot, {})[name_field] = None if key == "null" else key
    command = None if value == "null" else value
    if command is not None:
        data.setdefault("trainers", {}).setdefault(slot, {})[part] = command


def _decode_field(role: str, row_key: Optional[str], key: str, value: str, data: dict) -> bool:
    """Put one line's meaning into `data` (a suite dict); False when no field can hold it."""
    path = ROLES[role][1]
    if role in ("model_name", "python"):
        data[role] = value
    elif role == "gpu_list":
        topo = _topology(value)
        if topo is None:
            return False
        data["topology"] = topo
    elif role == "train.run":
        if value and not all(is_name(n) for n in value.split("|")):
            return False
        _set(data, path, value.split("|") if value else [])
    elif role.startswith("trainer."):
        _decode_trainer(role, key, value, data)
    elif role in _MODE_FLAG_ROLES:
        _set(data, path, _mode_flag(key, value))
    elif role in _LIST_FLAG_ROLES:
        _set(data, path, _list_flag(key, value))
    elif role in _VALUE_LIST_ROLES:
        _set(data, path, [_scalar(v) for v in value.split("|")] if value != "null" else [])
    elif row_key is not None:  # a fixed key: the value alone carries the meaning
        _set(data, path, _scalar(value))
    else:
        _set(data, path, _flag(key, value))
    return True


# Suite fields a role's line sets besides ROLES' own path (a trainer line's key is the slot's name).
_ALSO = {
    f"trainer.{slot}.{part}": (("trainers", slot, "name" if part == "train" else "export_name"),)
    for slot in TRAINER_SLOTS
    for part in ("train", "export")
}


def _roles_for_loc(loc: tuple, layout: Layout) -> list[str]:
    """Layout roles whose suite field is (a prefix of) a validation error's location."""
    hits = []
    for role in layout.roles:
        if any(tuple(loc[: len(p)]) == p for p in _ALSO.get(role, ())):
            hits.append(role)
            continue
        path = ROLES[role][1]
        n = min(len(path), len(loc))
        if n and tuple(loc[:n]) == tuple(path[:n]):
            hits.append(role)
    return hits


def import_suite(dec: Decoded, layout: Layout, file: str) -> dict:
    """A suite dict (as it would appear in a spec) that lowers back to exactly `dec`."""
    rows = layout.rows
    core, tail = dec.lines[: len(rows)], dec.lines[len(rows) :]
    trivia: dict = {}
    data: dict = {"file": file}
    headers, overrides = _decode_core(core, layout, data)
    if len(core) < len(rows):
        trivia["core_lines"] = len(core)
    pre = _pre_sections(tail)
    sections = _sections(tail[len(pre) :], layout, headers)
    if sections is None:
        trivia["tail"] = list(tail)
    else:
        if pre:
            trivia["pre_sections"] = pre
        if sections:
            data["sections"] = sections
    if headers:
        trivia["headers"] = headers
    trivia.update(_file_trivia(dec))
    data.setdefault("model_name", _placeholder_name(file))
    if layout.dialect.family != "chain":
        data.setdefault("topology", ["cpu"])
    data.pop("trivia", None)
    return _settle(data, trivia, overrides, core, layout, dec)


def _decode_core(core: list, layout: Layout, data: dict) -> tuple[dict, dict]:
    """Decode the layout's lines into `data`; return ({section: header line} for headers not in
    their default bytes, {line index: line} for lines kept verbatim)."""
    headers: dict = {}
    overrides: dict = {}
    infer_lists: dict = {}
    for i, line in enumerate(core):
        row = layout.rows[i]
        if not _decode_line(i, line, row, layout.row_separator(row), data, headers, infer_lists):
            overrides[i] = line
    _decode_whole_infer(infer_lists, data, overrides, core)
    return headers, overrides


def _decode_line(i: int, line: str, row: Row, sep: str, data: dict, headers: dict, infer_lists: dict) -> bool:
    """Decode core line `i` (a field's key and value split on `sep`) into `data` (or `headers`,
    `infer_lists`); False when it must be kept verbatim."""
    if row.kind == "header":
        if header_name(line) != row.name:
            return False
        if line != row.text:
            headers[row.name] = line
        return True
    if row.kind == "sep":
        return line == row.text
    if not has_separator(line, sep):
        return False
    key, value = split_line(line, sep)
    if row.key is not None and key != row.key:
        return False
    role = row.role or ""  # field rows always have a role
    if role.startswith("whole_infer."):
        infer_lists[role] = (i, value)
        return True
    return _decode_field(role, row.key, key, value, data)


def _file_trivia(dec: Decoded) -> dict:
    """What the file's bytes have beyond its lines: no final newline, blank lines, BOM, CRLF."""
    trivia: dict = {}
    if not dec.final_newline:
        trivia["final_newline"] = False
    if dec.blank_lines:
        trivia["blank_lines"] = list(dec.blank_lines)
    if dec.bom:
        trivia["bom"] = True
    if dec.crlf:
        trivia["crlf"] = True
    return trivia


def _decode_whole_infer(infer_lists: dict, data: dict, overrides: dict, core: list) -> None:
    present = [r for r in _WHOLE_INFER_ROLES if r in infer_lists]
    if not present:
        return
    split = {r: infer_lists[r][1].split("|") for r in present}
    lengths = {len(v) for v in split.values()}
    if len(present) == 3 and len(lengths) == 1:
        models = []
        for m, e, q in zip(*(split[r] for r in _WHOLE_INFER_ROLES)):
            models.append({"model": _scalar(m), "export": _scalar(e), "quant": _scalar(q)})
        data["whole_infer"] = models
    elif set(present) == {"whole_infer.models", "whole_infer.quant"} and len(lengths) == 1:
        # PaddleDetection: infer_mode (the trainer whose export is inferred) paired with infer_quant.
        data["whole_infer"] = [
            {"model": _scalar(m), "quant": _scalar(q)}
            for m, q in zip(split["whole_infer.models"], split["whole_infer.quant"])
        ]
    elif len(present) == 2 and "whole_infer.quant" not in present and len(lengths) == 1:
        data["whole_infer"] = [
            {"model": _scalar(m), "export": _scalar(e)}
            for m, e in zip(split["whole_infer.models"], split["whole_infer.exports"])
        ]
    else:
        for r in present:
            overrides[infer_lists[r][0]] = core[infer_lists[r][0]]


def _pre_sections(tail: list) -> list:
    """The lines before the first `===name===` header (all of them when there is none)."""
    for i, line in enumerate(tail):
        if header_name(line) is not None:
            return list(tail[:i])
    return list(tail)


def _sections(tail: list, layout: Layout, headers: dict) -> Optional[dict]:
    """Trailing `===name===` sections as {name: {key: value}}, or None when they cannot be typed."""
    sections: dict = {}
    current: Optional[dict] = None
    for line in tail:
        name = header_name(line)
        if name is not None:
            if name in sections or name in headers:
                return None
            sections[name] = current = {}
            if line != layout.section_header(name):
                headers[name] = line
        elif current is None or not has_separator(line, layout.separator):
            return None
        else:
            key, value = split_line(line, layout.separator)
            if key in current:
                return None
            current[key] = _scalar(value)
    return sections


def _placeholder_name(file: str) -> str:
    return IMPORT_SENTINELS["model_name"](file)


def _settle(data: dict, trivia: dict, overrides: dict, core: list, layout: Layout, dec: Decoded) -> dict:
    """Validate; lines whose field the Spec rejects become overrides, until the suite is valid
    and lowers back to the input byte for byte."""
    for _ in range(8):
        trivia_now = dict(trivia)
        if overrides:
            trivia_now["line_overrides"] = dict(sorted(overrides.items()))
        candidate = dict(data, trivia=trivia_now)
        try:
            suite = Suite.model_validate(candidate)
        except ValidationError as exc:
            if not _give_up_rejected(exc, data, trivia, overrides, core, layout, dec):
                raise _cannot_import(exc, dec.path) from None
            continue
        # Lines the typed fields do not reproduce exactly become overrides too.
        extra = _not_reproduced(suite, layout, core, overrides)
        if extra:
            overrides.update(extra)
            continue
        return candidate
    raise SpecError([Problem(dec.path, None, None, None, "cannot import: the config does not settle")])


def _give_up_rejected(
    exc: ValidationError, data: dict, trivia: dict, overrides: dict, core: list, layout: Layout, dec: Decoded
) -> bool:
    """Keep the lines of every field the Spec rejects verbatim instead; False when nothing changed."""
    changed = False
    for err in exc.errors(include_url=False):
        loc = clean_loc(tuple(err["loc"]))
        for role in _roles_for_loc(loc, layout):
            i = layout.index(role)
            if i is not None and i < len(core) and i not in overrides:
                overrides[i] = core[i]
                for path in (ROLES[role][1], *_ALSO.get(role, ())):
                    _drop(data, path)
                changed = True
        if loc and loc[0] == "sections" and "sections" in data:
            # a section value the Spec refuses: keep every trailing line verbatim instead
            trivia["tail"] = list(dec.lines[len(layout.rows) :])
            trivia.pop("pre_sections", None)
            del data["sections"]
            changed = True
        if loc and loc[0] in ("model_name", "topology", "python"):
            data[loc[0]] = {
                "model_name": _placeholder_name(data["file"]),
                "topology": ["cpu"],
                "python": "python",
            }[loc[0]]
            changed = True
    return changed


def _cannot_import(exc: ValidationError, path: str, line: Optional[int] = None) -> SpecError:
    """The first validation error of a suite (or raw config) no override can save, located at its file."""
    err = exc.errors(include_url=False)[0]
    msg = err["msg"][len("Value error, ") :] if err["msg"].startswith("Value error, ") else err["msg"]
    where = ".".join(str(p) for p in clean_loc(tuple(err["loc"])))
    return SpecError([Problem(path, line, None, None, f"cannot import: {where + ': ' if where else ''}{msg}")])


def _not_reproduced(suite: Suite, layout: Layout, core: list, overrides: dict) -> dict:
    """{line index: input line} for core lines the suite lowers to different text (and not yet overridden)."""
    emitted = config_text(suite, layout).replace("\r\n", "\n").lstrip("\ufeff").split("\n")
    emitted_lines = [line for line in emitted if line != ""]
    return {
        i: core[i]
        for i in range(len(core))
        if i < len(emitted_lines) and emitted_lines[i] != core[i] and i not in overrides
    }


def _drop(data: dict, path: tuple) -> None:
    node: Any = data
    for part in path[:-1]:
        node = node.get(part)
        if not isinstance(node, dict):
            return
    if isinstance(node, dict):
        node.pop(path[-1], None)


def raw_config(dec: Decoded) -> dict:
    """A non-train config, kept verbatim (blank lines and line ends included)."""
    physical = dec.text.split("\n")
    if dec.final_newline:
        physical.pop()
    if dec.bom or dec.crlf:
        _fail(dec.path, "a BOM or CRLF line ends in a non-train config cannot be kept; convert it first")
    out: dict[str, Any] = {"lines": physical}
    if not dec.final_newline:
        out["final_newline"] = False
    try:
        RawConfig.model_validate(out)
    except ValidationError as exc:  # e.g. a stray carriage return: a clean error, not a traceback
        loc = exc.errors(include_url=False)[0]["loc"]
        index = loc[1] if len(loc) > 1 and loc[0] == "lines" and isinstance(loc[1], int) else None
        raise _cannot_import(exc, dec.path, None if index is None else index + 1) from None
    return out
