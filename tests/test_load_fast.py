"""Specs load through libyaml (PyYAML's C parser) with what ruamel's pure-Python loader gave them:
the same data and types, the same positions (better ones where noted), the same errors.

The two paths compared are `load_yaml(text, name, libyaml=False)` (ruamel's parser, the loader
specs always had) and `load_yaml(text, name)` (libyaml, falling back to ruamel where the two part
ways: see tipcgen/spec/yamlpos.py)."""

from __future__ import annotations

import datetime
import math
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from test_load import CASES as MALFORMED
from test_load import VALID
from test_load import _text as malformed_text
from test_load_limits import CASES as HOSTILE
from test_load_limits import KEEP_WORKING, NO_TRACEBACK, _anchored
from tipcgen.check.spec import load_spec_text
from tipcgen.errors import SpecError
from tipcgen.spec import yamlcore, yamlpos
from tipcgen.spec.yamlpos import load_with_libyaml, load_yaml

REPO = Path(__file__).resolve().parents[1]
BUNDLED = sorted((REPO / "specs").glob("*.yml"))

needs_libyaml = pytest.mark.skipif(not yamlpos.HAVE_LIBYAML, reason="PyYAML is installed without libyaml")


def _outcome(text: str, libyaml: bool):
    try:
        data, pos = load_yaml(text, "spec.yml", libyaml=libyaml)
    except SpecError as exc:
        return "error", [(p.line, p.col, p.message) for p in exc.problems], None
    return "ok", data, pos


def _same_value(a, b) -> bool:
    """Equal with the same types all the way down (True is not 1, 1.0 is not 1), NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def _at(data, path):
    for part in path:
        data = data[part]
    return data


def _better(text: str, value, ruamel_at, libyaml_at) -> bool:
    """Where libyaml's position may differ from ruamel's, and is the better one:
    - an empty value (`key:` with nothing after it): libyaml puts it right after the `:` (or the
      item's `-`), on the line of its key; ruamel at whatever comes next, often the next key's line;
    - a node with a tag before its anchor (`!!str &a x`): libyaml at the tag, where the node starts;
      ruamel at the anchor."""
    line = text.splitlines()[libyaml_at[0] - 1]
    before = line[: libyaml_at[1] - 1].rstrip()
    empty = value is None and before.endswith((":", "-", "?")) and libyaml_at < ruamel_at
    return empty or line[libyaml_at[1] - 1 : libyaml_at[1]] == "!"


def assert_same(text: str) -> str:
    """Both paths agree on `text` (positions as `_better` allows); returns 'ok' or 'error'."""
    ruamel = _outcome(text, libyaml=False)
    fast = _outcome(text, libyaml=True)
    assert ruamel[0] == fast[0], (ruamel[:2], fast[:2])
    if ruamel[0] == "error":
        assert fast[1] == ruamel[1]
        return "error"
    assert _same_value(fast[1], ruamel[1])
    rpos, fpos = ruamel[2], fast[2]
    assert fpos.keys == rpos.keys
    assert fpos.values.keys() == rpos.values.keys()
    for path, at in rpos.values.items():
        if fpos.values[path] != at:
            assert _better(text, _at(ruamel[1], path), at, fpos.values[path]), (path, at, fpos.values[path])
    return "ok"


def _cases():
    yield from ((f"hostile:{name}", text) for name, text, *_ in HOSTILE if isinstance(text, str))
    yield from ((f"no_traceback:{name}", text) for name, text in NO_TRACEBACK)
    yield from ((f"keep_working:{name}", text) for name, text in KEEP_WORKING)
    yield from ((f"malformed:{case[0]}", malformed_text(case)) for case in MALFORMED)


# ruamel takes seconds on these (its pure-Python parser on 100 KB of values or 1000 open brackets)
SLOW = {"hostile:too_many_values", "hostile:deep_lists", "hostile:deep_maps", "hostile:open_brackets"}
CASE_TEXTS = [pytest.param(c, id=c[0], marks=[pytest.mark.slow] if c[0] in SLOW else []) for c in _cases()]


@needs_libyaml
@pytest.mark.parametrize("spec", BUNDLED, ids=[p.name for p in BUNDLED])
def test_bundled_specs_load_alike_and_through_libyaml(spec):
    text = spec.read_text(encoding="utf-8")
    assert assert_same(text) == "ok"
    assert load_with_libyaml(text, str(spec)) is not None, "a bundled spec fell back to ruamel"


@pytest.mark.parametrize("case", CASE_TEXTS)
def test_hostile_and_malformed_specs_load_alike(case):
    """Every hostile (tests/test_load_limits.py) and malformed (tests/test_load.py) spec text: the
    same data or the same located errors, message for message."""
    assert_same(case[1])


def test_aliases_keep_their_positions_through_libyaml():
    data, pos = load_yaml(_anchored(), "a.yml")
    use = _anchored().split("\n").index("    topology: *topo") + 1
    assert pos.values[("suites", "other", "topology")] == (use, 15)
    assert pos.values[("suites", "other", "topology", 1)] == (8, 25)
    assert data["suites"]["other"]["topology"] is not data["suites"]["normal"]["topology"]


# YAML 1.2, as ruamel reads it, whichever parser: (plain text, value) with the value's type
SCALARS = [
    ("yes", "yes"),
    ("no", "no"),
    ("on", "on"),
    ("off", "off"),
    ("y", "y"),
    ("Yes", "Yes"),
    ("true", True),
    ("True", True),
    ("FALSE", False),
    ("tRue", "tRue"),
    ("010", 10),
    ("0o10", 8),
    ("0x10", 16),
    ("0b11", 3),
    ("1_000", 1000),
    ("-0x_1", -1),
    ("+1", 1),
    ("0", 0),
    ("-0", 0),
    ("1:20", "1:20"),
    ("1:20.5", "1:20.5"),
    (".inf", math.inf),
    ("-.Inf", -math.inf),
    ("+.INF", math.inf),
    (".nan", math.nan),
    ("1e3", 1000.0),
    ("1.", 1.0),
    (".5", 0.5),
    ("1_0.5", 10.5),
    (".5e3", ".5e3"),
    (".5e+3", 500.0),
    ("0x", "0x"),
    ("0xG", "0xG"),
    ("~", None),
    ("null", None),
    ("Null", None),
    ("NULL", None),
    ("nul", "nul"),
    ("", None),
    ("2001-01-02", datetime.date(2001, 1, 2)),
    ("2001-1-2", "2001-1-2"),
    ("2001-01-02 10:20:30", datetime.datetime(2001, 1, 2, 10, 20, 30)),
    ('"010"', "010"),
    ("'yes'", "yes"),
    ('"true"', "true"),
    ("!!bool yes", True),
    ("!!bool off", False),
    ("!!int 010", 10),
    ("!!float 1", 1.0),
    ("!!str 1", "1"),
    ("!!null x", None),
    ("! 12", 12),
    ('! "12"', 12),
    ("!", None),
    ("|\n  010\n", "010\n"),
    ("tools/train.py -c a.yml", "tools/train.py -c a.yml"),
]


@pytest.mark.parametrize("plain, expected", SCALARS, ids=[s[0] or "empty" for s in SCALARS])
def test_scalars_mean_what_they_meant(plain, expected):
    text = f"k: {plain}\n"
    for libyaml in (True, False):
        data, _ = load_yaml(text, "s.yml", libyaml=libyaml)
        assert _same_value(data["k"], expected), (libyaml, data["k"], expected)


@pytest.mark.parametrize(
    "plain, words",
    [
        ("-_", "cannot read '-_' as an integer"),
        ("0b_", "cannot read '0b_' as an integer (invalid literal for int() with base 2: '')"),
        ("2001-02-30", "cannot read '2001-02-30' as a date (day is out of range for month)"),
        ("!!int demo", "cannot read 'demo' as an integer (invalid literal"),
        ("!!bool maybe", "cannot read 'maybe' as true/false; drop the !!bool tag"),
        ("!!float ''", "cannot read '' as a number"),
        ("=", "YAML resolves it to !!value"),
    ],
)
def test_scalars_refused_alike(plain, words):
    assert assert_same(f"k: {plain}\n") == "error"
    with pytest.raises(SpecError) as info:
        load_yaml(f"k: {plain}\n", "s.yml")
    assert words in info.value.problems[0].message and info.value.problems[0].line == 1


def _ruamel_scalar():
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import ScalarNode

    yaml = YAML(typ="safe", pure=True)
    resolver, constructor = yaml.resolver, yaml.constructor

    def read(text: str, tag: str | None = None):
        tag = tag or str(resolver.resolve(ScalarNode, text, (True, False)))
        if tag in (yamlcore.STR, yamlcore.MERGE, yamlcore.VALUE):
            return tag, text
        node = ScalarNode(tag, text, None, None)
        return tag, constructor.yaml_constructors[tag](constructor, node)

    return read


RUAMEL = _ruamel_scalar()


def _ours(text: str, tag: str | None = None):
    tag = tag or yamlcore.resolve(text)
    if tag in (yamlcore.STR, yamlcore.MERGE, yamlcore.VALUE):
        return tag, text
    return tag, yamlcore.CONSTRUCT[tag](text)


def _both(text: str, tag: str | None = None):
    outcomes = []
    for read in (RUAMEL, _ours):
        try:
            outcomes.append(read(text, tag))
        except yamlcore.NeedsTimestamp:
            outcomes.append("timestamp")
        except Exception as exc:  # the builder words its message from the exception's type and text
            outcomes.append((type(exc), str(exc) if isinstance(exc, ValueError) else ""))
    return outcomes


NUMBERISH = st.text(alphabet="0123456789+-._:eExob abcfinINFtrueTRUEnulNUL~<=T Z", max_size=14)


def _assert_alike(text, ruamel, ours):
    if isinstance(ruamel, tuple) and isinstance(ruamel[0], str):  # (tag, value)
        assert ruamel[0] == ours[0] and _same_value(ruamel[1], ours[1]), (text, ruamel, ours)
    else:  # (exception type, message)
        assert ruamel == ours, (text, ruamel, ours)


@given(NUMBERISH)
def test_plain_scalars_resolve_as_ruamel_resolves_them(text):
    ruamel, ours = _both(text)
    if ours == "timestamp":  # a date with a time: libyaml's path hands it to ruamel
        assert ruamel[0] == yamlcore.TIMESTAMP and isinstance(ruamel[1], datetime.datetime)
    else:
        _assert_alike(text, ruamel, ours)


@given(NUMBERISH, st.sampled_from([yamlcore.INT, yamlcore.FLOAT, yamlcore.BOOL, yamlcore.NULL]))
def test_tagged_scalars_read_as_ruamel_reads_them(text, tag):
    _assert_alike(text, *_both(text, tag))


# Text libyaml reads otherwise than ruamel, or refuses: ruamel decides, as it always did.
RUAMEL_DECIDES = [
    ("surrogate_pair", 'a: "\\ud83d\\ude00"\n'),
    ("yaml_1_1", "%YAML 1.1\n---\na: yes\nb: 010\n"),
    ("tab_in_plain", "a: x\ty\n"),
    ("nel", "a: 1\x85b: 2\n"),
    ("line_separator", "a: 1\u2028b: 2\n"),
    ("alias_with_colon", "x: &a: 1\ny: *a:\n"),
    ("comment_after_block_header", "a: |#c\n  x\n"),
    ("second_document_end", "a: 1\n...\n...\n"),
    ("timestamp", "a: 2001-12-14t21:59:43.10-05:00\n"),
    ("empty_key", "a: 1\n: v\n"),
    ("syntax_error", "a: [1, 2\n"),
    ("list_document", "- a\n"),
]


@needs_libyaml
@pytest.mark.parametrize("case", RUAMEL_DECIDES, ids=[c[0] for c in RUAMEL_DECIDES])
def test_where_the_parsers_part_ways_ruamel_decides(case):
    text = case[1]
    assert load_with_libyaml(text, "x.yml") is None
    assert_same(text)


@needs_libyaml
def test_what_the_loader_refuses_is_refused_on_the_libyaml_path_alike():
    """The bounds and rules of the builder apply to libyaml's events without a second parse."""
    for text in ("a: 1\na: 2\n", "a: !!binary aGk=\n", "a: [" + "[" * 70 + "\n", "x: &r [1, *r]\n"):
        with pytest.raises(SpecError) as info:
            load_with_libyaml(text, "x.yml")
        assert info.value.problems[0].line == (2 if text.startswith("a: 1") else 1)
        assert_same(text)


def test_yaml_1_1_documents_keep_their_rules():
    data, _ = load_yaml("%YAML 1.1\n---\na: yes\nb: 010\nc: 1:20\n", "x.yml")
    assert data == {"a": True, "b": 8, "c": 80}


def test_without_libyaml_specs_load_through_ruamel(monkeypatch):
    monkeypatch.setattr(yamlpos, "HAVE_LIBYAML", False)

    def refuse(*_args):
        raise AssertionError("libyaml used")

    monkeypatch.setattr(yamlpos, "load_with_libyaml", refuse)
    spec = load_spec_text(VALID, "v.yml")
    assert spec.model == "demo" and spec.suites["normal"].topology[1].gpus == [0, 1]


@needs_libyaml
def test_an_empty_value_is_located_on_its_own_line():
    """Better than before: ruamel put an empty value where the next token starts (the next line),
    libyaml right after its key's colon."""
    text = VALID.replace("model: demo\n", "model:\n")
    for libyaml, line in ((True, 2), (False, 3)):
        data, pos = load_yaml(text, "v.yml", libyaml=libyaml)
        assert data["model"] is None and pos.values[("model",)][0] == line
    with pytest.raises(SpecError) as info:
        load_spec_text(text, "v.yml")
    assert info.value.problems[0].line == 2 and info.value.problems[0].field == "model"


@needs_libyaml
@pytest.mark.corpus
def test_imported_corpus_specs_load_alike_and_through_libyaml(corpus, tmp_path):
    out = tmp_path / "specs"
    result = subprocess.run(
        ["tipcgen", "import", str(corpus / "PaddleClas"), "--out", str(out)], capture_output=True, text=True
    )
    specs = sorted(out.glob("*.yml"))
    assert len(specs) >= 60, result.stdout[-2000:] + result.stderr[-2000:]
    for spec in specs:
        text = spec.read_text(encoding="utf-8")
        assert assert_same(text) == "ok", spec
        assert load_with_libyaml(text, str(spec)) is not None, f"{spec} fell back to ruamel"
