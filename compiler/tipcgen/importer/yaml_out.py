"""The imported spec as YAML text: small mappings inline, error-level defects commented.

A small writer of our own rather than ruamel's round-trip dumper: the data is plain (mappings,
lists, str/int/float/bool/None) and the shapes are ours, and ruamel's pure-Python emitter was
most of an import's time. Scalars are written plain only when the spec loader
(`spec.yamlcore.resolve`) reads them back as the same text; every import is checked by loading
its YAML and rebuilding the configs (`verify_roundtrip`), so a quoting mistake cannot go unseen.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional

from tipcgen.spec.yamlcore import STR, resolve

if TYPE_CHECKING:
    from tipcgen.importer.result import ImportResult

# What a plain scalar may not start with (YAML's indicators); `-`, `?` and `:` may when a
# non-blank follows.
_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")
# In flow style, flow indicators end a plain scalar, and so does `:` before one of them.
_FLOW_UNSAFE = re.compile(r"[,\[\]{}]|:(?=[,\[\]{}])")
# YAML 1.1 words other tools (editors, PyYAML) read as booleans: quoted for them, although the
# spec loader (YAML 1.2) reads them as text.
_YAML11_WORDS = {w.lower() for w in ("y", "n", "yes", "no", "on", "off")}
_PRINTABLE = re.compile(r"[^\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff\ufeff\ufffe\uffff]*")
_DOUBLE_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}


def spec_yaml(result: ImportResult, findings: dict, schema_path: str = "../generated/spec.schema.json") -> str:
    """The imported spec as readable YAML: small mappings inline, defects commented."""
    doc = result.spec
    comments: dict = {}
    places = [(None, doc.get("defaults"))] + [(n, s) for n, s in (doc.get("suites") or {}).items()]
    said: set = set()  # defaults' notes: a suite repeating one says nothing
    for name, node in places:
        if node is not None and node.get("allow"):
            notes = _allow_notes(node["allow"], findings.get(name) if name else None, findings)
            if name is None:
                said = {re.sub(r" \(in \d+ suite\(s\)\)$", "", n) for n in notes}
            elif all(n in said for n in notes):
                continue  # written inline, uncommented: `allow: [TIPC001]`
            comments[id(node["allow"])] = notes
    n = len(result.sources)
    head = (
        f"# yaml-language-server: $schema={schema_path}\n"
        f"# Imported by tipcgen from {n} config{'s' if n != 1 else ''}: each suite's `file` and each key of"
        " `other_configs`.\n"
        "# `tipcgen build` reproduces those files byte for byte; trivia keeps what has no typed field.\n"
    )
    out: list[str] = []
    _Writer(out, comments).mapping(doc, 0, 0)
    return head + "".join(out)


def _allow_notes(rules: list, own: Any, findings: dict) -> list[str]:
    """After each allowed rule, which upstream defect it keeps: the suite's own finding, or for
    `defaults` the first suite's and how many suites have it."""
    notes = []
    for rule in rules:
        if own is not None:
            items = [f for f in own if f.rule == rule]
            more = len(items) - 1
            note = (items[0].message + (f" (+{more} more)" if more else "")) if items else "(none here)"
        else:
            having = [name for name, items in findings.items() if any(f.rule == rule for f in items)]
            first = next((f for f in findings[having[0]] if f.rule == rule), None) if having else None
            note = f"{first.message} (in {len(having)} suite(s))" if first else "(none)"
        notes.append(f"kept from upstream: {note}")
    return notes


class _Writer:
    """Block style for the top two levels, flow style below them for small mappings and short
    lists of scalars (the shape `tipcgen import` has always written)."""

    def __init__(self, out: list[str], comments: dict):
        self.out = out
        self.comments = comments  # id(list) -> a comment per item (forces block style)

    def mapping(self, node: dict, indent: int, depth: int) -> None:
        pad = " " * indent
        for key, value in node.items():
            k = scalar(key, flow=False)
            if self._inline(value, depth + 1):
                text = self.flow(value) if isinstance(value, (dict, list)) else scalar(value, flow=False)
                self.out.append(f"{pad}{k}: {text}\n" if text else f"{pad}{k}:\n")
            elif isinstance(value, dict):
                self.out.append(f"{pad}{k}:\n")
                self.mapping(value, indent + 2, depth + 1)
            else:
                self.out.append(f"{pad}{k}:\n")
                self.sequence(value, indent + 2, depth + 1)

    def sequence(self, items: list, indent: int, depth: int) -> None:
        pad = " " * indent
        notes: Optional[list] = self.comments.get(id(items))
        for i, item in enumerate(items):
            note = f"  # {notes[i]}" if notes else ""
            if self._inline(item, depth + 1):
                text = self.flow(item) if isinstance(item, (dict, list)) else scalar(item, flow=False, empty="null")
                self.out.append(f"{pad}- {text}{note}\n")
            elif isinstance(item, dict):
                first = len(self.out)
                self.mapping(item, indent + 2, depth + 1)
                self.out[first] = f"{pad}- {self.out[first][indent + 2 :]}"
            else:
                self.out.append(f"{pad}-\n")
                self.sequence(item, indent + 2, depth + 1)

    def _inline(self, value: Any, depth: int) -> bool:
        if isinstance(value, dict):
            return not value or (depth >= 2 and _small(value))
        if isinstance(value, list):
            if id(value) in self.comments:
                return False
            return not value or (len(value) <= 8 and all(not isinstance(v, (dict, list)) for v in value))
        return True

    def flow(self, value: Any) -> str:
        if isinstance(value, dict):
            return "{" + ", ".join(f"{scalar(k, flow=True)}: {self.flow(v)}" for k, v in value.items()) + "}"
        if isinstance(value, list):
            return "[" + ", ".join(self.flow(v) for v in value) + "]"
        return scalar(value, flow=True, empty="null")


def _small(node: dict) -> bool:
    return len(node) <= 4 and all(
        not isinstance(v, (dict, list))
        or (isinstance(v, list) and len(v) <= 8 and all(not isinstance(x, (dict, list)) for x in v))
        for v in node.values()
    )


def scalar(value: Any, flow: bool, empty: str = "") -> str:
    """One scalar as YAML text that the spec loader reads back as the same value."""
    if value is None:
        return empty  # a block mapping's `key:` is null; in flow style `null` says it
    if isinstance(value, bool):
        return "True" if value else "False"  # legacy text says True/False; YAML 1.2 reads both
    if isinstance(value, (int, float)):
        return _number(value)
    text = str(value)
    if _plain_ok(text, flow):
        return text
    if _PRINTABLE.fullmatch(text) and "'" not in text:
        return "'" + text + "'"
    return '"' + "".join(_DOUBLE_ESCAPES.get(c) or (c if c.isprintable() else _hex(c)) for c in text) + '"'


def _number(value: Any) -> str:
    if isinstance(value, int):
        return str(value)
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    return text if resolve(text) != STR else text + ".0"


def _plain_ok(text: str, flow: bool) -> bool:
    if not text or text != text.strip(" ") or not text.isprintable():
        return False
    first = text[0]
    if first in _INDICATORS and not (first in "-?:" and len(text) > 1 and text[1] not in " ,[]{}"):
        return False
    if ": " in text or " #" in text or text.endswith(":") or (flow and _FLOW_UNSAFE.search(text)):
        return False
    return resolve(text) == STR and text.lower() not in _YAML11_WORDS


def _hex(c: str) -> str:
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
