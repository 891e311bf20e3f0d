"""Load YAML into plain Python data plus the source position of every node.

Positions let validation errors point at `file:line:col` even after specs are
merged; ruamel keeps them on its round-trip containers, so we read them once
here and nothing downstream needs ruamel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from .errors import Problem, SpecError

Path = tuple  # tuple[str | int, ...]


@dataclass
class Positions:
    """1-based (line, col) of keys and values, by path from the document root."""

    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)
    values: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: Path, prefer_key: bool = False) -> tuple[int, int] | None:
        """Position of `path`, or of its nearest located ancestor."""
        p = tuple(path)
        while True:
            first, second = (self.keys, self.values) if prefer_key else (self.values, self.keys)
            if p in first:
                return first[p]
            if p in second:
                return second[p]
            if not p:
                return None
            p = p[:-1]


def _plain(node: Any, path: Path, pos: Positions) -> Any:
    if isinstance(node, CommentedMap):
        out = {}
        for k, v in node.items():
            kp = path + (k,)
            try:
                kl, kc = node.lc.key(k)
                pos.keys[kp] = (kl + 1, kc + 1)
                vl, vc = node.lc.value(k)
                pos.values[kp] = (vl + 1, vc + 1)
            except (KeyError, TypeError, AttributeError):
                pass
            out[str(k) if not isinstance(k, (int, bool)) else k] = _plain(v, kp, pos)
        return out
    if isinstance(node, CommentedSeq):
        out_list = []
        for i, v in enumerate(node):
            ip = path + (i,)
            try:
                il, ic = node.lc.item(i)
                pos.values[ip] = (il + 1, ic + 1)
            except (KeyError, TypeError, AttributeError):
                pass
            out_list.append(_plain(v, ip, pos))
        return out_list
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def load_yaml(text: str, filename: str) -> tuple[Any, Positions]:
    """Parse YAML text; raise SpecError (with position) on syntax errors or duplicate keys."""
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        doc = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        what = (exc.problem or exc.context or "invalid YAML").strip()
        if "duplicate key" in str(exc):
            what = "duplicate key " + what.split("duplicate key", 1)[-1].strip()
        raise SpecError([Problem(filename, line, col, None, f"YAML syntax error: {what}")]) from None
    except YAMLError as exc:  # errors without a mark
        raise SpecError([Problem(filename, None, None, None, f"YAML error: {exc}")]) from None
    pos = Positions()
    return _plain(doc, (), pos), pos
