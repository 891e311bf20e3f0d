"""Load YAML into plain Python data plus the source position of every node.

Positions let validation errors point at `file:line:col` even after specs are
merged. We read ruamel's event stream (its safe, non-round-trip parser) and build
dicts, lists and scalars ourselves, without recursion, recording where each key and
value starts; nothing downstream needs ruamel.

Building from events is also where hostile text is stopped, each with a located
`SpecError`, before anything costly happens:

- nesting deeper than MAX_DEPTH (ruamel's composer and everything after recurse);
- more than MAX_NODES values, counting every alias as the size of what it repeats
  ("billion laughs" is refused at the alias that crosses the bound);
- keys that are not text (null, true, 1.5, a date, a list or mapping as a key; integer
  keys pass here, for `trivia.line_overrides`, and the schema decides elsewhere);
- explicit tags other than YAML's plain ones (`!!python/object`, `!!binary`, `!foo`...),
  merge keys (`<<`), a second document, an alias to a value that contains it;
- numbers written with more than MAX_NUMBER_CHARS characters (Python refuses to
  convert long digit strings), values YAML cannot construct (`2001-02-30`);
- text that is not valid Unicode (a lone surrogate from a `"\\ud800"` escape cannot be
  written as UTF-8), characters YAML does not allow (NUL...), and text longer than
  MAX_TEXT characters.

An alias gives a copy of what its anchor names: the alias's own position is where it is
used, the values inside keep the positions where they were written. JSON-style surrogate
pairs (`"\\ud83d\\ude00"`) are joined into the character they encode.

ruamel's round-trip scanner is quadratic in runs of comment lines; the safe scanner we
use is linear, so the size bound alone keeps comment-heavy specs fast.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, NoReturn

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.reader import ReaderError

from tipcgen.errors import Problem, SpecError

Path = tuple  # tuple[str | int, ...]

# Bounds on what a spec may be (a real spec is a few KB: the largest spec `tipcgen import` makes
# from the 827 upstream configs is 124 KB with under 9,000 values). Chosen so that anything
# accepted loads and validates in well under 5 s on a 2-core machine (see tests/test_load_hardening.py).
MAX_TEXT = 1 << 20  # characters (and bytes, for files): 1 MiB
MAX_DEPTH = 64  # nested lists/mappings
MAX_NODES = 50_000  # values, counting each alias as the size of what it repeats
MAX_NUMBER_CHARS = 1000  # characters of a number (Python converts at most 4300 digits)

_CORE = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (_CORE + t for t in ("str", "int", "float", "bool", "null"))
_TIMESTAMP, _MERGE, _MAP, _SEQ = (_CORE + t for t in ("timestamp", "merge", "map", "seq"))
_SCALAR_TAGS = {_STR, _INT, _FLOAT, _BOOL, _NULL}
_KINDS = {
    _INT: "an integer",
    _FLOAT: "a number",
    _BOOL: "true/false",
    _NULL: "null",
    _TIMESTAMP: "a date",
    _STR: "text",
}


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


class _Bad(Exception):
    """A problem at a ruamel mark (0-based line/column)."""

    def __init__(self, mark: Any, message: str):
        super().__init__(message)
        self.mark = mark
        self.message = message


def _show_tag(tag: str) -> str:
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag


def _unsupported(tag: str, what: str) -> str:
    if tag in _SCALAR_TAGS | {_MAP, _SEQ}:
        return f"YAML tag {_show_tag(tag)} cannot tag {what}"
    return (
        f"YAML tag {_show_tag(tag)} is not supported (a spec holds text, numbers, true/false, null, "
        "lists and mappings, with no tags or YAML's own !!str, !!int, !!float, !!bool, !!null, !!map, !!seq)"
    )


def _short(value: str, n: int = 40) -> str:
    return repr(value if len(value) <= n else value[:n] + "...")


def _valid_text(value: str) -> str | None:
    """`value` if it can be written as UTF-8; JSON-style surrogate pairs ("\\ud83d\\ude00") joined
    into the character they encode; None when a lone surrogate remains."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        pass
    try:
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeError:
        return None


class _Frame:
    __slots__ = ("anchor", "count0", "has_key", "key", "key_mark", "path", "recs0", "value", "where")

    where: str
    value: Any
    path: Path
    anchor: str | None
    recs0: int  # len(_Builder.recs) when the collection started: its records follow
    count0: int  # _Builder.count when it started: its size is what was counted since
    has_key: bool  # a mapping's key was read, its value is next
    key: Any
    key_mark: Any  # the ruamel mark of that key

    def __init__(self, where: str, value: Any, path: Path, anchor: str | None, recs0: int, count0: int):
        self.where = where  # how the collection attaches to its parent (see _Builder._place)
        self.value = value
        self.path = path
        self.anchor = anchor
        self.recs0 = recs0
        self.count0 = count0
        self.has_key = False
        self.key = None
        self.key_mark = None


class _Builder:
    """Plain data and positions from a stream of parser events, iteratively."""

    def __init__(self, yaml: YAML):
        self.yaml = yaml
        self.resolver = yaml.resolver
        self.constructor = yaml.constructor
        self.pos = Positions()
        self.recs: list[tuple[bool, Path, tuple[int, int]]] = []  # every position recorded, in order
        self.anchors: dict[str, tuple[Any, int, Path | None, list]] = {}  # name -> value, size, path, records
        self.open_anchors: set[str] = set()
        self.stack: list[_Frame] = []
        self.count = 0
        self.aliased = False
        self.documents = 0
        self.root: Any = None

    # positions and bounds

    def _rec(self, is_key: bool, path: Path, lc: tuple[int, int]) -> None:
        self.recs.append((is_key, path, lc))
        (self.pos.keys if is_key else self.pos.values)[path] = lc

    def _tick(self, n: int, mark: Any) -> None:
        self.count += n
        if self.count > MAX_NODES:
            if self.aliased:
                raise _Bad(
                    mark,
                    f"aliases expand the spec to more than {MAX_NODES} values (a spec is at most "
                    f"{MAX_NODES}, counting each alias as the size of what it repeats)",
                )
            raise _Bad(mark, f"the spec has more than {MAX_NODES} values (the limit for a spec)")

    def _place(self, mark: Any) -> tuple[str, Path | None]:
        """Where the node starting at `mark` goes: ('root'|'item'|'value', its path) or ('key', None)."""
        if not self.stack:
            return "root", ()
        top = self.stack[-1]
        lc = (mark.line + 1, mark.column + 1)
        if isinstance(top.value, list):
            path = (*top.path, len(top.value))
            self._rec(False, path, lc)
            return "item", path
        if not top.has_key:
            return "key", None
        path = (*top.path, top.key)
        km = top.key_mark
        self._rec(True, path, (km.line + 1, km.column + 1))
        self._rec(False, path, lc)
        return "value", path

    def _attach(self, where: str, value: Any, mark: Any) -> None:
        if where == "root":
            self.root = value
            return
        top = self.stack[-1]
        if where == "item":
            top.value.append(value)
        elif where == "value":
            top.value[top.key] = value
            top.has_key = False
        else:  # a key
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                what = {
                    type(None): "null",
                    bool: "true/false",
                    float: "a number",
                    list: "a list",
                    dict: "a mapping",
                }.get(type(value), "a date" if hasattr(value, "year") else "not text")
                raise _Bad(mark, f"keys must be text, but this key is {what} (quote it to use it as text)")
            if value in top.value:
                raise _Bad(mark, f"duplicate key {value!r}: it is already set in this mapping")
            top.has_key, top.key, top.key_mark = True, value, mark

    # events

    def feed(self, ev: Any) -> None:
        if isinstance(ev, ScalarEvent):
            self._scalar(ev)
        elif isinstance(ev, (MappingStartEvent, SequenceStartEvent)):
            self._start(ev)
        elif isinstance(ev, (MappingEndEvent, SequenceEndEvent)):
            self._end(ev)
        elif isinstance(ev, AliasEvent):
            self._alias(ev)
        elif isinstance(ev, DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise _Bad(ev.start_mark, "a spec is one YAML document, but a second one starts here")

    def _scalar(self, ev: ScalarEvent) -> None:
        mark = ev.start_mark
        tag = None if ev.ctag is None or str(ev.ctag) == "!" else str(ev.ctag)
        explicit = tag is not None
        if tag is not None and tag not in _SCALAR_TAGS:
            raise _Bad(mark, _unsupported(tag, "a single value"))
        if tag is None:
            tag = str(self.resolver.resolve(ScalarNode, ev.value, ev.implicit))
        if tag == _MERGE:
            raise _Bad(
                mark,
                "merge keys (<<) are not supported; write the keys out (suites already merge "
                "over `defaults`), or repeat a whole value with an alias (*name)",
            )
        if tag not in _SCALAR_TAGS and tag != _TIMESTAMP:
            raise _Bad(mark, f"cannot read {_short(ev.value)} (YAML resolves it to {_show_tag(tag)}); quote it")
        if tag in (_INT, _FLOAT) and len(ev.value) > MAX_NUMBER_CHARS:
            raise _Bad(
                mark, f"a number of {len(ev.value)} characters (at most {MAX_NUMBER_CHARS}); quote it if it is text"
            )
        where, path = self._place(mark)
        self._tick(1, mark)
        if tag == _STR:
            value = _valid_text(ev.value)
            if value is None:
                raise _Bad(
                    mark,
                    f"text {_short(ev.value)} is not valid Unicode (a lone surrogate such as "
                    "\\ud800 cannot be written as UTF-8)",
                )
        else:
            node = ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, style=ev.style)
            try:
                value = self.constructor.yaml_constructors[tag](self.constructor, node)
            except Exception as exc:  # ruamel's constructors raise ValueError, KeyError, ConstructorError...
                detail = getattr(exc, "problem", None) or (str(exc) if isinstance(exc, ValueError) else "")
                fix = f"drop the {_show_tag(tag)} tag to keep it as text" if explicit else "quote it to keep it as text"
                raise _Bad(
                    mark,
                    f"cannot read {_short(ev.value)} as {_KINDS[tag]}{' (' + detail + ')' if detail else ''}; {fix}",
                ) from None
        if ev.anchor is not None:
            self.anchors[ev.anchor] = (value, 1, path, [])
        self._attach(where, value, mark)

    def _start(self, ev: Any) -> None:
        mark = ev.start_mark
        is_map = isinstance(ev, MappingStartEvent)
        tag = None if ev.ctag is None or str(ev.ctag) == "!" else str(ev.ctag)
        if tag is not None and tag != (_MAP if is_map else _SEQ):
            raise _Bad(mark, _unsupported(tag, "a mapping" if is_map else "a list"))
        if len(self.stack) >= MAX_DEPTH:
            raise _Bad(mark, f"nesting deeper than {MAX_DEPTH} levels of lists and mappings")
        where, path = self._place(mark)
        if where == "key" or path is None:
            raise _Bad(mark, f"keys must be text, but this key is {'a mapping' if is_map else 'a list'}")
        self._tick(1, mark)
        if ev.anchor is not None:
            self.open_anchors.add(ev.anchor)
        self.stack.append(_Frame(where, {} if is_map else [], path, ev.anchor, len(self.recs), self.count))

    def _end(self, ev: Any) -> None:
        frame = self.stack.pop()
        if frame.has_key:  # cannot happen with a well-formed event stream
            raise _Bad(ev.start_mark, "a key without a value")
        if frame.anchor is not None:
            self.open_anchors.discard(frame.anchor)
            self.anchors[frame.anchor] = (
                frame.value,
                self.count - frame.count0 + 1,
                frame.path,
                self.recs[frame.recs0 :],
            )
        self._attach(frame.where, frame.value, ev.start_mark)

    def _alias(self, ev: AliasEvent) -> None:
        mark = ev.start_mark
        name = ev.anchor
        if name not in self.anchors:
            if name in self.open_anchors:
                raise _Bad(mark, f"alias *{name} is used inside the value it names (a recursive structure)")
            raise _Bad(mark, f"alias *{name} names no anchor (&{name}) before it")
        value, size, src, recs = self.anchors[name]
        where, path = self._place(mark)
        self.aliased = True
        self._tick(size, mark)
        if isinstance(value, (dict, list)):
            value = _copy(value)
            if path is not None and src is not None:
                cut = len(src)
                for is_key, p, lc in recs:
                    self._rec(is_key, path + p[cut:], lc)
        self._attach(where, value, mark)


def _copy(value: Any) -> Any:
    """A deep copy of lists and dicts (depth is bounded by MAX_DEPTH)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _line_col(text: str, index: int) -> tuple[int, int]:
    index = max(0, min(index, len(text)))
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def load_yaml(text: str, filename: str) -> tuple[Any, Positions]:
    """Parse YAML text into plain data; raise SpecError (with position) on anything a spec cannot be."""

    def fail(at_line: int | None, at_col: int | None, message: str) -> NoReturn:
        raise SpecError([Problem(filename, at_line, at_col, None, message)])

    if len(text) > MAX_TEXT:
        fail(None, None, f"the text is {len(text)} characters; a spec is at most {MAX_TEXT} ({MAX_TEXT >> 20} MiB)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        fail(*_line_col(text, exc.start), "the text is not valid Unicode (a lone surrogate cannot be written as UTF-8)")

    yaml = YAML(typ="safe", pure=True)
    builder = _Builder(yaml)
    last = None
    line: int | None
    col: int | None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for ev in yaml.parse(text):
                last = ev.start_mark
                builder.feed(ev)
    except _Bad as exc:
        fail(exc.mark.line + 1, exc.mark.column + 1, exc.message)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        what = (exc.problem or exc.context or "invalid YAML").strip()
        fail(line, col, f"YAML syntax error: {what}")
    except ReaderError as exc:
        line, col = _line_col(text, exc.position) if isinstance(exc.position, int) else (None, None)
        char = exc.character
        shown = f"U+{char:04X}" if isinstance(char, int) else repr(char)
        fail(
            line,
            col,
            f"YAML does not allow the character {shown} (control characters other than tab and "
            "newline are not allowed; write them as escapes in a double-quoted string)",
        )
    except YAMLError as exc:  # errors without a mark
        fail(None, None, f"YAML error: {str(exc).strip()}")
    except (RecursionError, ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        # ruamel's parser failing on text it should have refused: still the user's text, still located
        line, col = (last.line + 1, last.column + 1) if last is not None else (None, None)
        fail(line, col, f"cannot parse this YAML ({type(exc).__name__}: {exc})")
    return builder.root, builder.pos
