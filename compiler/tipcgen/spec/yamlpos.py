"""Load YAML into plain Python data plus the source position of every node.

Positions let validation errors point at `file:line:col` even after specs are
merged. We read a parser's event stream and build dicts, lists and scalars ourselves,
without recursion, recording where each key and value starts; nothing downstream needs
the parser.

Two parsers give the events: libyaml (C, through PyYAML's `CParser`; benchmarks/loader.py measures
it against ruamel) when PyYAML has it, else ruamel's safe pure-Python parser, the one specs always
had. Scalars are read by YAML 1.2 rules either way (yamlcore.py for libyaml's events, ruamel's
resolver for its own), so `yes`, `on` or `010` mean what they always meant. Where the two part
ways, ruamel decides, as it always did (tests/test_load_fast.py holds both to the same data,
positions and errors):

- whatever libyaml refuses (a syntax error, a control character, a JSON-style `"\\ud83d\\ude00"`
  escape pair that ruamel joins) and a date with a time of day (ruamel's constructor reads it);
- a `%YAML 1.1` document (ruamel then reads 1.1 scalars), a document that is not a mapping;
- text libyaml reads otherwise (see `_RUAMEL_DECIDES` and `_PARTS_WAYS`): NEL, LS, PS, tabs,
  `...` document end markers, anchor names followed by `:`, a comment right after `|`.

Positions are the same but for two, where libyaml's are better: an empty value (`key:` and
nothing) is right after its colon, not where the next token starts (often the next key's line); a
node with a tag before its anchor (`!!str &a x`) starts at the tag.

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

import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn

import tipcgen.spec.yamlcore as yamlcore
from tipcgen.errors import Problem, SpecError
from tipcgen.spec.yamlcore import BOOL as _BOOL
from tipcgen.spec.yamlcore import CORE as _CORE
from tipcgen.spec.yamlcore import FLOAT as _FLOAT
from tipcgen.spec.yamlcore import INT as _INT
from tipcgen.spec.yamlcore import MERGE as _MERGE
from tipcgen.spec.yamlcore import NULL as _NULL
from tipcgen.spec.yamlcore import STR as _STR
from tipcgen.spec.yamlcore import TIMESTAMP as _TIMESTAMP

try:  # PyYAML built with libyaml (its wheels bundle it); without it, specs load through ruamel
    import yaml as _pyyaml
    from yaml.cyaml import CParser as _CParser
except ImportError:  # pragma: no cover - depends on how PyYAML was installed
    _CParser = None

Path = tuple  # tuple[str | int, ...]

# Bounds on what a spec may be (a real spec is a few KB: the largest spec `tipcgen import` makes
# from the 827 upstream configs is 124 KB with under 9,000 values). Chosen so that anything
# accepted loads and validates in well under 5 s on a 2-core machine (see tests/test_load_hardening.py).
MAX_TEXT = 1 << 20  # characters (and bytes, for files): 1 MiB
MAX_DEPTH = 64  # nested lists/mappings
MAX_NODES = 50_000  # values, counting each alias as the size of what it repeats
MAX_NUMBER_CHARS = 1000  # characters of a number (Python converts at most 4300 digits)

_MAP, _SEQ = _CORE + "map", _CORE + "seq"
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
    __slots__ = ("anchor", "count0", "has_key", "is_list", "key", "key_lc", "path", "recs0", "value", "where")

    where: str
    value: Any
    is_list: bool
    path: Path
    anchor: str | None
    recs0: int  # len(_Builder.recs) when the collection started: its records follow
    count0: int  # _Builder.count when it started: its size is what was counted since
    has_key: bool  # a mapping's key was read, its value is next
    key: Any
    key_lc: tuple[int, int]  # the (line, col) of that key

    def __init__(self, where: str, value: Any, path: Path, anchor: str | None, recs0: int, count0: int):
        self.where = where  # how the collection attaches to its parent (see _Builder._place)
        self.value = value
        self.is_list = isinstance(value, list)
        self.path = path
        self.anchor = anchor
        self.recs0 = recs0
        self.count0 = count0
        self.has_key = False
        self.key = None
        self.key_lc = (0, 0)


_KEY_KINDS = {type(None): "null", bool: "true/false", float: "a number", list: "a list", dict: "a mapping"}


class _Builder:
    """Plain data and positions from a stream of parser events, iteratively.

    Events come as calls (`document`, `scalar`, `start`, `end`, `alias`) with the parser's event,
    whose anchor, value, implicit and start_mark both parsers spell alike; `tag` is the event's
    explicit tag as text, None when it has none or only `!`. `resolve` and `construct` read scalars
    by the parser's YAML 1.2 rules."""

    def __init__(
        self, resolve: Callable[[Any], str], construct: Callable[[str, Any], Any], text_is_valid: bool = False
    ):
        self.resolve = resolve  # event -> tag of an untagged scalar
        self.construct = construct  # (tag, event) -> value of a scalar that is not text
        # the parser's text is valid Unicode (libyaml refuses surrogate escapes); else it is checked
        self.text_is_valid = text_is_valid
        self.pos = Positions()
        self.keys, self.values = self.pos.keys, self.pos.values
        # positions recorded inside anchored collections, in order (an alias repeats them)
        self.recs: list[tuple[bool, Path, tuple[int, int]]] = []
        self.recording = 0  # anchored collections open
        self.anchors: dict[str, tuple[Any, int, Path | None, list]] = {}  # name -> value, size, path, records
        self.open_anchors: set[str] = set()
        self.stack: list[_Frame] = []
        self.count = 0
        self.aliased = False
        self.documents = 0
        self.root: Any = None

    # positions and bounds

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
        """Where the node starting at `mark` goes: ('root'|'item'|'value', its path) or ('key', None);
        records the positions of an item or of a key and its value."""
        if not self.stack:
            return "root", ()
        top = self.stack[-1]
        lc = (mark.line + 1, mark.column + 1)
        if top.is_list:
            path = (*top.path, len(top.value))
            self.values[path] = lc
            if self.recording:
                self.recs.append((False, path, lc))
            return "item", path
        if not top.has_key:
            return "key", None
        path = (*top.path, top.key)
        self.keys[path] = top.key_lc
        self.values[path] = lc
        if self.recording:
            self.recs += ((True, path, top.key_lc), (False, path, lc))
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
            if type(value) is not str and (isinstance(value, bool) or not isinstance(value, (str, int))):
                what = _KEY_KINDS.get(type(value), "a date" if hasattr(value, "year") else "not text")
                raise _Bad(mark, f"keys must be text, but this key is {what} (quote it to use it as text)")
            if value in top.value:
                raise _Bad(mark, f"duplicate key {value!r}: it is already set in this mapping")
            top.has_key, top.key, top.key_lc = True, value, (mark.line + 1, mark.column + 1)

    # events

    def document(self, ev: Any) -> None:
        self.documents += 1
        if self.documents > 1:
            raise _Bad(ev.start_mark, "a spec is one YAML document, but a second one starts here")

    def scalar(self, tag: str | None, ev: Any) -> None:
        mark = ev.start_mark
        explicit = tag is not None
        if tag is None:
            tag = self.resolve(ev)
        elif tag not in _SCALAR_TAGS:
            raise _Bad(mark, _unsupported(tag, "a single value"))
        if tag != _STR:
            self._check(tag, ev.value, mark)
        where, path = self._place(mark)
        self.count += 1
        if self.count > MAX_NODES:
            self._tick(0, mark)
        value = ev.value if tag == _STR and self.text_is_valid else self._value(tag, ev, explicit)
        if ev.anchor is not None:
            self.anchors[ev.anchor] = (value, 1, path, [])
        self._attach(where, value, mark)

    def _value(self, tag: str, ev: Any, explicit: bool) -> Any:
        if tag != _STR:
            return self._construct(tag, ev, explicit)
        value = _valid_text(ev.value)
        if value is None:
            raise _Bad(
                ev.start_mark,
                f"text {_short(ev.value)} is not valid Unicode (a lone surrogate such as "
                "\\ud800 cannot be written as UTF-8)",
            )
        return value

    @staticmethod
    def _check(tag: str, text: str, mark: Any) -> None:
        """Refuse a scalar that is not text before it is read."""
        if tag == _MERGE:
            raise _Bad(
                mark,
                "merge keys (<<) are not supported; write the keys out (suites already merge "
                "over `defaults`), or repeat a whole value with an alias (*name)",
            )
        if tag not in _SCALAR_TAGS and tag != _TIMESTAMP:
            raise _Bad(mark, f"cannot read {_short(text)} (YAML resolves it to {_show_tag(tag)}); quote it")
        if tag in (_INT, _FLOAT) and len(text) > MAX_NUMBER_CHARS:
            raise _Bad(mark, f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS}); quote it if it is text")

    def _construct(self, tag: str, ev: Any, explicit: bool) -> Any:
        try:
            return self.construct(tag, ev)
        except yamlcore.NeedsTimestamp:
            raise
        except Exception as exc:  # constructors raise ValueError, KeyError, IndexError, ConstructorError...
            detail = getattr(exc, "problem", None) or (str(exc) if isinstance(exc, ValueError) else "")
            fix = f"drop the {_show_tag(tag)} tag to keep it as text" if explicit else "quote it to keep it as text"
            raise _Bad(
                ev.start_mark,
                f"cannot read {_short(ev.value)} as {_KINDS[tag]}{' (' + detail + ')' if detail else ''}; {fix}",
            ) from None

    def start(self, is_map: bool, tag: str | None, ev: Any) -> None:
        mark = ev.start_mark
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
            self.recording += 1
        self.stack.append(_Frame(where, {} if is_map else [], path, ev.anchor, len(self.recs), self.count))

    def end(self, ev: Any) -> None:
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
            self.recording -= 1
            if not self.recording:
                self.recs.clear()
        self._attach(frame.where, frame.value, ev.start_mark)

    def alias(self, ev: Any) -> None:
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
                    at = path + p[cut:]
                    (self.keys if is_key else self.values)[at] = lc
                    if self.recording:
                        self.recs.append((is_key, at, lc))
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


def _fail(filename: str, line: int | None, col: int | None, message: str) -> NoReturn:
    hint = "indent with spaces: YAML does not allow tabs there" if "'\\t'" in message else None
    raise SpecError([Problem(filename, line, col, None, message, hint)])


def load_yaml(text: str, filename: str, *, libyaml: bool = True) -> tuple[Any, Positions]:
    """Parse YAML text into plain data; raise SpecError (with position) on anything a spec cannot be.

    Through libyaml when PyYAML has it (and `libyaml` is true), else (or where ruamel decides)
    through ruamel's pure-Python parser: the same data and errors either way, the same positions
    but for the two the module's docstring names."""
    if len(text) > MAX_TEXT:
        _fail(
            filename,
            None,
            None,
            f"the text is {len(text)} characters; a spec is at most {MAX_TEXT} ({MAX_TEXT >> 20} MiB)",
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        _fail(
            filename,
            *_line_col(text, exc.start),
            "the text is not valid Unicode (a lone surrogate cannot be written as UTF-8)",
        )
    if libyaml and HAVE_LIBYAML:
        loaded = load_with_libyaml(text, filename)
        if loaded is not None:
            return loaded
    return load_with_ruamel(text, filename)


HAVE_LIBYAML = _CParser is not None and bool(getattr(_pyyaml, "__with_libyaml__", False))


# Text where libyaml and ruamel part ways, left to ruamel: NEL, LS and PS are line breaks to libyaml
# (YAML 1.1), text to ruamel (1.2); ruamel refuses a tab inside or after a plain scalar that libyaml
# reads; ruamel reads an anchor or alias name on past `?:%@` and backquote (`*a:` names `a:`) where
# libyaml ends it; libyaml takes a comment right after a block scalar's header (`|#`) that ruamel
# refuses; ruamel starts a second document at a second document end marker (`...`). The anchor and
# block scalar cases are searched for only when the text has anchors, aliases or block scalars.
_RUAMEL_DECIDES = ("\x85", "\u2028", "\u2029", "\t", "\n...")
_PARTS_WAYS = (re.compile(r"[&*][0-9A-Za-z_-]+[?:%@`]"), re.compile(r"[|>][-+0-9]*#"))
_BLOCK_STYLES = ("|", ">")


def _libyaml_resolve(ev: Any) -> str:
    # a scalar tagged only `!` is resolved as if plain (as ruamel does, even when it is empty)
    return yamlcore.resolve(ev.value) if ev.implicit[0] or ev.tag == "!" else _STR


def _libyaml_construct(tag: str, ev: Any) -> Any:
    return yamlcore.CONSTRUCT[tag](ev.value)


def _libyaml_tag(tag: str | None) -> str | None:
    return None if tag is None or tag == "!" else tag


def _feed_libyaml(parser: Any, builder: _Builder) -> tuple[bool, bool]:
    """Feed libyaml's events to `builder`: (read to the end, saw an anchor, alias or block scalar)."""
    events = _pyyaml.events
    end_evs = (events.MappingEndEvent, events.SequenceEndEvent)
    node_evs = (events.ScalarEvent, events.MappingStartEvent, events.SequenceStartEvent, events.AliasEvent)
    scalar_ev, map_ev, alias_ev = events.ScalarEvent, events.MappingStartEvent, events.AliasEvent
    scalar, start, end = builder.scalar, builder.start, builder.end
    odd = False
    while True:
        ev = parser.get_event()
        kind = type(ev)
        if kind in end_evs:
            end(ev)
        elif kind is scalar_ev:
            odd = odd or ev.anchor is not None or ev.style in _BLOCK_STYLES
            tag = ev.tag
            scalar(None if tag is None or tag == "!" else tag, ev)
        elif kind in node_evs:
            odd = True if kind is alias_ev or ev.anchor is not None else odd
            if kind is alias_ev:
                builder.alias(ev)
            else:
                start(kind is map_ev, _libyaml_tag(ev.tag), ev)
        elif kind is events.DocumentStartEvent:
            if ev.version not in (None, (1, 2)):
                return False, odd  # `%YAML 1.1`: ruamel reads it by 1.1 rules
            builder.document(ev)
        elif kind is events.StreamEndEvent or ev is None:
            return ev is not None, odd


def load_with_libyaml(text: str, filename: str) -> tuple[Any, Positions] | None:
    """`load_yaml` through libyaml's event stream, or None where ruamel decides: on libyaml's errors
    (so a syntax error gets the message it always got) and on text where the two parsers part ways
    (see the module's docstring). What the spec's own bounds and rules refuse is a SpecError here."""
    if _CParser is None or text.startswith("...") or any(c in text for c in _RUAMEL_DECIDES):
        return None
    builder = _Builder(_libyaml_resolve, _libyaml_construct, text_is_valid=True)
    parser = _CParser(text)
    try:
        done, odd = _feed_libyaml(parser, builder)
    except _Bad as exc:
        if any(p.search(text) for p in _PARTS_WAYS):
            return None
        _fail(filename, exc.mark.line + 1, exc.mark.column + 1, exc.message)
    except Exception:  # a libyaml error, a timestamp: ruamel's answer is the one specs always had
        return None
    finally:
        parser.dispose()
    if not done or not isinstance(builder.root, dict) or (odd and any(p.search(text) for p in _PARTS_WAYS)):
        return None  # (a spec is a mapping: other documents are refused, by ruamel's reading)
    return builder.root, builder.pos


def _ruamel_tag(ctag: Any) -> str | None:
    return None if ctag is None or str(ctag) == "!" else str(ctag)


def _feed_ruamel(builder: _Builder, ev: Any, events: Any) -> None:
    if isinstance(ev, events.ScalarEvent):
        builder.scalar(_ruamel_tag(ev.ctag), ev)
    elif isinstance(ev, (events.MappingStartEvent, events.SequenceStartEvent)):
        builder.start(isinstance(ev, events.MappingStartEvent), _ruamel_tag(ev.ctag), ev)
    elif isinstance(ev, (events.MappingEndEvent, events.SequenceEndEvent)):
        builder.end(ev)
    elif isinstance(ev, events.AliasEvent):
        builder.alias(ev)
    elif isinstance(ev, events.DocumentStartEvent):
        builder.document(ev)


def load_with_ruamel(text: str, filename: str) -> tuple[Any, Positions]:
    """`load_yaml` through ruamel's safe pure-Python parser (the reference the libyaml path matches)."""
    from ruamel.yaml import YAML, events
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.reader import ReaderError

    yaml = YAML(typ="safe", pure=True)
    resolver, constructor = yaml.resolver, yaml.constructor

    def construct(tag: str, ev: Any) -> Any:
        node = ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, style=ev.style)
        return constructor.yaml_constructors[tag](constructor, node)

    builder = _Builder(lambda ev: str(resolver.resolve(ScalarNode, ev.value, ev.implicit)), construct)
    last = None
    line: int | None
    col: int | None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for ev in yaml.parse(text):
                last = ev.start_mark
                _feed_ruamel(builder, ev, events)
    except _Bad as exc:
        _fail(filename, exc.mark.line + 1, exc.mark.column + 1, exc.message)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        what = (exc.problem or exc.context or "invalid YAML").strip()
        _fail(filename, line, col, f"YAML syntax error: {what}")
    except ReaderError as exc:
        line, col = _line_col(text, exc.position) if isinstance(exc.position, int) else (None, None)
        char = exc.character
        shown = f"U+{char:04X}" if isinstance(char, int) else repr(char)
        _fail(
            filename,
            line,
            col,
            f"YAML does not allow the character {shown} (control characters other than tab and "
            "newline are not allowed; write them as escapes in a double-quoted string)",
        )
    except YAMLError as exc:  # errors without a mark
        _fail(filename, None, None, f"YAML error: {str(exc).strip()}")
    except (RecursionError, ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        # ruamel's parser failing on text it should have refused: still the user's text, still located
        line, col = (last.line + 1, last.column + 1) if last is not None else (None, None)
        _fail(filename, line, col, f"cannot parse this YAML ({type(exc).__name__}: {exc})")
    return builder.root, builder.pos
