"""Import legacy configs into specs: typed fields where the text allows, trivia where it does not.

The contract is exact bytes: `import` then `build` reproduces every input file. Each line is
decoded into its role's field through the layout table; a line no typed field reproduces
(a shifted key, a value the Spec rejects) is kept verbatim in `trivia.line_overrides`, and
lint reports why. Several configs of one model become one spec with shared `defaults`.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

from pydantic import ValidationError

from tipcgen.dialects import LAYOUTS, Layout, detect, get_layout
from tipcgen.errors import Problem, SpecError
from tipcgen.legacy.configview import split_line
from tipcgen.legacy.lower import ROLES, config_text
from tipcgen.spec.load import clean_loc
from tipcgen.spec.model import TRAINER_SLOTS, RawConfig, Suite, text
from tipcgen.spec.modes import TRAIN_MODES
from tipcgen.spec.policy import is_name, name_problem

MAX_BYTES = 1 << 20  # configs are a few KB; anything over a MiB is not one
HEADER = re.compile(r"^=+\s*([A-Za-z0-9_ ]*?)\s*=+\s*$")
INT = re.compile(r"^(0|-?[1-9][0-9]*)$")


class ImportError_(SpecError):
    """A file that cannot be imported (binary, not UTF-8, too large, unknown layout)."""


def _fail(path: str, message: str, line: Optional[int] = None, hint: Optional[str] = None):
    raise ImportError_([Problem(path, line, None, None, message, hint)])


@dataclass
class Decoded:
    """A config file's text split the way the importer and the scripts see it."""

    path: str
    text: str  # without BOM, with \n line ends
    lines: list  # non-empty lines
    blank_lines: list
    final_newline: bool
    bom: bool
    crlf: bool


def decode(path: str, data: bytes) -> Decoded:
    if len(data) > MAX_BYTES:
        _fail(path, f"file is {len(data) / 1e6:.1f} MB; a TIPC config is a few KB, so this is not one")
    if b"\0" in data:
        _fail(path, "binary file (it contains NUL bytes), not a TIPC config")
    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        data = data[3:]
    try:
        text_ = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail(path, f"not UTF-8 text (byte 0x{data[exc.start]:02x})", data[: exc.start].count(b"\n") + 1)
    crlf = "\r\n" in text_ and text_.count("\r\n") == text_.count("\n")
    if crlf:
        text_ = text_.replace("\r\n", "\n")
    if text_ == "":
        _fail(path, "empty file")
    final_newline = text_.endswith("\n")
    physical = text_.split("\n")
    if final_newline:
        physical.pop()
    blank = [i for i, line in enumerate(physical) if line == ""]
    return Decoded(path, text_, [line for line in physical if line != ""], blank, final_newline, bom, crlf)


def header_name(line: str) -> Optional[str]:
    m = HEADER.match(line)
    return m.group(1).strip() if m and m.group(1).strip() else None


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
    out = []
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


def _decode_field(role: str, row_key: Optional[str], key: str, value: str, data: dict) -> bool:
    """Put one line's meaning into `data` (a suite dict); False when no field can hold it."""
    path = ROLES[role][1]
    if role == "model_name":
        data["model_name"] = value
    elif role == "python":
        data["python"] = value
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
        _, slot, part = role.split(".")
        default_key = TRAINER_SLOTS[slot][0 if part == "train" else 1]
        name_field = "name" if part == "train" else "export_name"
        if key != text(default_key):
            data.setdefault("trainers", {}).setdefault(slot, {})[name_field] = None if key == "null" else key
        command = None if value == "null" else value
        if command is not None:
            data.setdefault("trainers", {}).setdefault(slot, {})[part] = command
    elif role in ("train.epochs", "train.batch_size"):
        _set(data, path, _mode_flag(key, value))
    elif role in ("train.device", "train.autocast") or role in (
        "inference.use_gpu",
        "inference.mkldnn",
        "inference.threads",
        "inference.batch_size",
        "inference.tensorrt",
        "inference.precision",
    ):
        _set(data, path, _list_flag(key, value))
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
    headers: dict = {}
    overrides: dict = {}
    data: dict = {"file": file}
    infer_lists: dict = {}
    for i, line in enumerate(core):
        row = rows[i]
        if row.kind == "header":
            if header_name(line) != row.name:
                overrides[i] = line
            elif line != row.text:
                headers[row.name] = line
        elif row.kind == "sep":
            if line != row.text:
                overrides[i] = line
        elif ":" not in line:
            overrides[i] = line
        else:
            key, value = split_line(line)
            if row.key is not None and key != row.key:
                overrides[i] = line
            elif row.role.startswith("whole_infer."):
                infer_lists[row.role] = (i, value)
            elif not _decode_field(row.role, row.key, key, value, data):
                overrides[i] = line
    _decode_whole_infer(infer_lists, data, overrides, core)
    if len(core) < len(rows):
        trivia["core_lines"] = len(core)
    sections = _sections(tail, layout, headers)
    if sections is None:
        trivia["tail"] = list(tail)
    elif sections:
        data["sections"] = sections
    if headers:
        trivia["headers"] = headers
    if not dec.final_newline:
        trivia["final_newline"] = False
    if dec.blank_lines:
        trivia["blank_lines"] = list(dec.blank_lines)
    if dec.bom:
        trivia["bom"] = True
    if dec.crlf:
        trivia["crlf"] = True
    data.setdefault("model_name", _placeholder_name(file))
    data.setdefault("topology", ["cpu"])
    data.pop("trivia", None)
    return _settle(data, trivia, overrides, core, layout, dec)


def _decode_whole_infer(infer_lists: dict, data: dict, overrides: dict, core: list) -> None:
    roles = ("whole_infer.models", "whole_infer.exports", "whole_infer.quant")
    present = [r for r in roles if r in infer_lists]
    if not present:
        return
    split = {r: infer_lists[r][1].split("|") for r in present}
    lengths = {len(v) for v in split.values()}
    if len(present) == 3 and len(lengths) == 1:
        models = []
        for m, e, q in zip(*(split[r] for r in roles)):
            models.append({"model": _scalar(m), "export": _scalar(e), "quant": _scalar(q)})
        data["whole_infer"] = models
    elif len(present) == 2 and "whole_infer.quant" not in present and len(lengths) == 1:
        data["whole_infer"] = [
            {"model": _scalar(m), "export": _scalar(e)}
            for m, e in zip(split["whole_infer.models"], split["whole_infer.exports"])
        ]
    else:
        for r in present:
            overrides[infer_lists[r][0]] = core[infer_lists[r][0]]


def _sections(tail: list, layout: Layout, headers: dict) -> Optional[dict]:
    """Trailing `===name===` sections as {name: {key: value}}, or None when they cannot be typed."""
    sections: dict = {}
    current = None
    for line in tail:
        name = header_name(line)
        if name is not None:
            if name in sections or name in headers:
                return None
            sections[name] = current = {}
            if line != layout.section_header(name):
                headers[name] = line
        elif current is None or ":" not in line:
            return None
        else:
            key, value = split_line(line)
            if key in current:
                return None
            current[key] = _scalar(value)
    return sections


def _placeholder_name(file: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._+-]", "_", os.path.splitext(file)[0]).lstrip("._+-")
    return stem or "model"


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
                    del data["sections"]
                    changed = True
                if loc and loc[0] in ("model_name", "topology", "python"):
                    data[loc[0]] = {
                        "model_name": _placeholder_name(data["file"]),
                        "topology": ["cpu"],
                        "python": "python",
                    }[loc[0]]
                    changed = True
            if not changed:
                err = exc.errors(include_url=False)[0]
                msg = err["msg"][len("Value error, ") :] if err["msg"].startswith("Value error, ") else err["msg"]
                where = ".".join(str(p) for p in clean_loc(tuple(err["loc"])))
                raise SpecError(
                    [Problem(dec.path, None, None, None, f"cannot import: {where + ': ' if where else ''}{msg}")]
                ) from None
            continue
        # Lines the typed fields do not reproduce exactly become overrides too.
        emitted = config_text(suite, layout).replace("\r\n", "\n").lstrip("\ufeff").split("\n")
        emitted_lines = [line for line in emitted if line != ""]
        extra = {
            i: core[i]
            for i in range(len(core))
            if i < len(emitted_lines) and emitted_lines[i] != core[i] and i not in overrides
        }
        if extra:
            overrides.update(extra)
            continue
        return candidate
    raise SpecError([Problem(dec.path, None, None, None, "cannot import: the config does not settle")])


def _drop(data: dict, path: tuple) -> None:
    node = data
    for part in path[:-1]:
        node = node.get(part)
        if not isinstance(node, dict):
            return
    if isinstance(node, dict):
        node.pop(path[-1], None)


# ---------------------------------------------------------------- several files -> one spec

_SUITE_NAME = [
    (re.compile(r"^train_infer_python$"), "normal"),
    (re.compile(r"^train_linux_gpu_normal_normal_infer_python_linux_gpu_cpu$"), "normal"),
    (re.compile(r"^train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu$"), "fleet"),
    (re.compile(r"^train_linux_gpu_normal_amp_infer_python_linux_gpu_cpu$"), "amp"),
    (re.compile(r"^train_linux_gpu_fleet_amp_infer_python_linux_gpu_cpu$"), "fleet_amp"),
    (re.compile(r"^train_linux_gpu_(\w+?)_infer_python_linux_gpu_cpu$"), None),
    (re.compile(r"^train_(\w+?)_infer_python$"), None),
]


def suite_name(file: str, model_names: list[str]) -> str:
    stem = os.path.splitext(os.path.basename(file))[0]
    while stem.endswith(".txt"):
        stem = stem[:-4]
    for name in sorted(model_names, key=len, reverse=True):
        if stem.startswith(name + "_"):
            stem = stem[len(name) + 1 :]
            break
    for pattern, fixed in _SUITE_NAME:
        m = pattern.match(stem)
        if m:
            return fixed or m.group(1)
    return re.sub(r"[^A-Za-z0-9_]", "_", stem) or "suite"


# Mappings whose order is part of the emitted text: shared whole or not at all, because a merge
# puts the defaults' keys first.
_ORDERED = {"by_mode", "sections"}


def _common(dicts: list) -> dict:
    """The part every dict agrees on (mappings recurse; other values must be equal)."""
    out = {}
    for key in dicts[0]:
        if not all(key in d for d in dicts):
            continue
        values = [d[key] for d in dicts]
        if key in _ORDERED:
            if all(list(v.items()) == list(values[0].items()) for v in values):
                out[key] = values[0]
        elif all(isinstance(v, dict) for v in values):
            sub = _common(values)
            if sub:
                out[key] = sub
        elif all(v == values[0] for v in values):
            out[key] = values[0]
    return out


def _minus(d: dict, common: dict) -> dict:
    out = {}
    for key, value in d.items():
        if key not in common:
            out[key] = value
        elif key in _ORDERED:
            if list(value.items()) != list(common[key].items()):
                out[key] = value
        elif isinstance(value, dict) and isinstance(common[key], dict):
            rest = _minus(value, common[key])
            if rest or not common[key]:
                out[key] = rest
        elif value != common[key]:
            out[key] = value
    return out


@dataclass
class ImportResult:
    spec: dict  # the spec as plain data (ready for YAML)
    sources: dict = field(default_factory=dict)  # config file name -> source path
    layouts: dict = field(default_factory=dict)  # config file name -> layout (or "raw")


def import_configs(paths: list[str], layout: str = "auto", model: Optional[str] = None) -> ImportResult:
    """Import the configs of one model into one spec."""
    decoded, kinds = [], {}
    for path in paths:
        with open(path, "rb") as fh:
            dec = decode(path, fh.read())
        name = os.path.basename(path)
        problem = name_problem(name, ".txt")
        if problem:
            _fail(
                path,
                f"cannot import a config named {name!r}: {problem}",
                hint="a config file name is ASCII letters, digits and `._+-`, ending in .txt; rename it",
            )
        if layout == "auto":
            detected, why = detect(dec.lines)
            if (
                detected is None
                and dec.lines
                and header_name(dec.lines[0]) == "train_params"
                and any(line.startswith("trainer:") for line in dec.lines)
            ):
                _fail(path, f"cannot tell this config's layout: {why}", hint=f"pass --layout ({', '.join(LAYOUTS)})")
            kinds[name] = detected or "raw"
        elif layout == "raw":
            kinds[name] = "raw"
        else:
            if layout not in LAYOUTS:
                _fail(path, f"unknown layout {layout!r}", hint=f"layouts: {', '.join(LAYOUTS)}, raw")
            kinds[name] = layout
        if name in {os.path.basename(d.path) for d in decoded}:
            _fail(path, f"two configs named {name} in one import; import each model's directory separately")
        decoded.append(dec)
    train = [(d, kinds[os.path.basename(d.path)]) for d in decoded if kinds[os.path.basename(d.path)] != "raw"]
    main_layout = Counter(k for _, k in train).most_common(1)[0][0] if train else "paddleocr"
    suites: dict = {}
    model_names = []
    for dec, kind in train:
        data = import_suite(dec, get_layout(kind), os.path.basename(dec.path))
        if kind != main_layout:
            data["layout"] = kind
        model_names.append(str(data["model_name"]))
        suites[os.path.basename(dec.path)] = data
    named = {}
    for file, data in suites.items():
        base = suite_name(file, model_names)
        name, n = base, 2
        while name in named:
            name, n = f"{base}_{n}", n + 1
        named[name] = data
    other = {}
    for dec in decoded:
        name = os.path.basename(dec.path)
        if kinds[name] == "raw":
            other[name] = _raw(dec)
    spec_model = model or _model_dir_name(paths, model_names)
    spec: dict = {"tipcgen": 1, "model": spec_model, "layout": main_layout}
    if len(named) > 1:
        common = _common(list(named.values()))
        common.pop("file", None)
        common.pop("layout", None)
        if common:
            spec["defaults"] = common
            named = {n: _minus(d, common) for n, d in named.items()}
    if named:
        spec["suites"] = named
    if other:
        spec["other_configs"] = other
    return ImportResult(spec, {os.path.basename(p): p for p in paths}, kinds)


def _raw(dec: Decoded) -> dict:
    """A non-train config, kept verbatim (blank lines and line ends included)."""
    physical = dec.text.split("\n")
    if dec.final_newline:
        physical.pop()
    if dec.bom or dec.crlf:
        _fail(dec.path, "a BOM or CRLF line ends in a non-train config cannot be kept; convert it first")
    out = {"lines": physical}
    if not dec.final_newline:
        out["final_newline"] = False
    RawConfig.model_validate(out)
    return out


def _model_dir_name(paths: list[str], model_names: list[str]) -> str:
    parent = os.path.basename(os.path.dirname(os.path.abspath(paths[0])))
    if is_name(parent or "") and len({os.path.dirname(os.path.abspath(p)) for p in paths}) == 1:
        return parent
    for name in model_names:
        if is_name(name):
            return name
    return "model"


# ---------------------------------------------------------------- lint -> allow, YAML, checks


def attach_allowances(result: ImportResult) -> dict:
    """Add each suite's error-level lint findings to its `allow` so the spec validates while
    staying byte-identical; return {suite name: [findings]} for the YAML comments."""
    from tipcgen.lint.rules import ERROR, lint_text

    spec = result.spec
    found: dict = {}
    defaults = spec.get("defaults", {})
    for name, overlay in spec.get("suites", {}).items():
        merged = _merge(defaults, overlay)
        layout = get_layout(overlay.get("layout", spec["layout"]))
        suite = Suite.model_validate(merged)
        findings = [
            f
            for f in lint_text(config_text(suite, layout), layout, overlay.get("file", suite.file))
            if f.severity == ERROR
        ]
        if findings:
            rules = sorted({f.rule for f in findings})
            overlay["allow"] = rules
            found[name] = findings
    return found


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def spec_yaml(result: ImportResult, findings: dict, schema_path: str = "../generated/spec.schema.json") -> str:
    """The imported spec as readable YAML: small mappings inline, defects commented."""
    import io

    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    def convert(node, depth=0):
        if isinstance(node, dict):
            m = CommentedMap()
            for k, v in node.items():
                m[k] = convert(v, depth + 1)
            if depth >= 2 and _small(node):
                m.fa.set_flow_style()
            return m
        if isinstance(node, list):
            seq = CommentedSeq(convert(v, depth + 1) for v in node)
            if all(not isinstance(v, (dict, list)) for v in node) and len(node) <= 8:
                seq.fa.set_flow_style()
            return seq
        return node

    doc = convert(result.spec)
    for name in findings:
        doc["suites"][name]["allow"].fa.set_block_style()
        if doc["suites"][name].fa.flow_style():
            doc["suites"][name].fa.set_block_style()
    for name, items in findings.items():
        suite = doc["suites"][name]
        for i, rule in enumerate(suite["allow"]):
            first = next(f for f in items if f.rule == rule)
            more = sum(1 for f in items if f.rule == rule) - 1
            note = f"{first.message}" + (f" (+{more} more)" if more else "")
            suite["allow"].yaml_add_eol_comment(f"kept from upstream: {note}", i)
    yaml = YAML()
    # legacy text says True/False; YAML 1.2 reads both spellings as booleans
    yaml.representer.add_representer(
        bool, lambda rep, data: rep.represent_scalar("tag:yaml.org,2002:bool", "True" if data else "False")
    )
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    buf = io.StringIO()
    yaml.dump(doc, buf)
    sources = ", ".join(sorted(result.sources))
    head = (
        f"# yaml-language-server: $schema={schema_path}\n"
        f"# Imported by tipcgen from {sources}.\n"
        "# `tipcgen build` reproduces those files byte for byte; trivia keeps what has no typed field.\n"
    )
    return head + buf.getvalue()


def _small(node: dict) -> bool:
    return len(node) <= 4 and all(
        not isinstance(v, (dict, list))
        or (isinstance(v, list) and len(v) <= 8 and all(not isinstance(x, (dict, list)) for x in v))
        for v in node.values()
    )


def verify_roundtrip(result: ImportResult, yaml_text: str, label: str) -> list[str]:
    """Build the imported spec from its YAML text; the names of inputs not reproduced exactly."""
    from tipcgen.emit.files import config_files
    from tipcgen.spec.load import load_spec_text

    spec = load_spec_text(yaml_text, label)
    files = {k: v.encode("utf-8") for k, v in config_files(spec).items()}
    bad = []
    for name, path in result.sources.items():
        with open(path, "rb") as fh:
            if files.get(f"test_tipc/configs/{spec.model}/{name}") != fh.read():
                bad.append(name)
    return bad


# ---------------------------------------------------------------- folders and reports


def config_groups(paths: list[str]) -> dict[str, list[str]]:
    """Config files by directory (one spec per model directory); directories are walked."""
    groups: dict = {}
    for path in paths:
        if os.path.isdir(path):
            for dirpath, dirs, names in os.walk(path):
                dirs.sort()
                for name in sorted(names):
                    if name.endswith(".txt"):
                        groups.setdefault(dirpath, []).append(os.path.join(dirpath, name))
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


def import_group(paths: list[str], layout: str = "auto", model: Optional[str] = None) -> GroupReport:
    """Import one model's configs, rebuild them from the YAML text, and report what round-trips."""
    directory = os.path.dirname(paths[0]) or "."
    try:
        result = import_configs(paths, layout, model)
        findings = attach_allowances(result)
        text_ = spec_yaml(result, findings)
        bad = verify_roundtrip(result, text_, f"{result.spec['model']}.yml")
    except SpecError as exc:
        first = exc.problems[0] if exc.problems else None
        reason = (first.message + (f" ({first.hint})" if first.hint else "")) if first else str(exc)
        return GroupReport(directory, len(paths), 0, {}, {os.path.basename(p): reason for p in paths})
    failures = {name: "rebuilt bytes differ" for name in bad}
    return GroupReport(
        directory, len(paths), len(paths) - len(bad), dict(result.layouts), failures, text_, result.spec["model"]
    )
