"""Spec: one character policy (compiler/tipcgen/spec/policy.py) on every spec field.

Specs arrive in pull requests. Every string a spec gives that reaches a config line, a command,
a path or a generated file goes through one of policy.py's validators; the first test walks the
pydantic models so a new field cannot forget it. The bulk runs through `load_spec_text` (one
spec per payload holds one suite per field, so a few dozen loads cover thousands of cases);
a representative subset runs `tipcgen validate` in a real process.
"""

from __future__ import annotations

import json
import re
import types
from typing import Annotated, Any, Literal, Optional, Union, get_args, get_origin

import pytest
from pydantic import AfterValidator, BaseModel, ValidationError
from typer.testing import CliRunner

from conftest import SPECS
from helpers.cli import run_argv
from tipcgen.check.lint_paths import lint_config
from tipcgen.check.spec import load_spec, load_spec_text
from tipcgen.cli import app
from tipcgen.emit.files import config_files
from tipcgen.errors import SpecError
from tipcgen.importer import import_group
from tipcgen.spec.ir import Spec, SpecFile, Suite
from tipcgen.spec.policy import SHELL_META

runner = CliRunner()

# ---------------------------------------------------------------- walking the models

# str leaves that are not policy-typed, each checked another way (the tests below try them).
EXEMPT = {
    ("SpecFile", ("prepare", "{key}")): "a mode: SpecFile._prepare_modes checks it against MODES",
    ("SpecFile", ("defaults", "{key}")): "merged, then validated as a Suite (unknown keys are errors)",
    ("SpecFile", ("defaults", "{}")): "merged, then validated as a Suite",
    ("SpecFile", ("presets", "{}", "{key}")): "merged, then validated as a Suite (unknown keys are errors)",
    ("SpecFile", ("presets", "{}", "{}")): "merged, then validated as a Suite",
    ("SpecFile", ("suites", "{}", "{key}")): "merged, then validated as a Suite (unknown keys are errors)",
    ("SpecFile", ("suites", "{}", "{}")): "merged, then validated as a Suite",
    ("Suite", ("topology", "[]", "ips", "[]")): "Target._ips: an IPv4 address (ipaddress), control chars refused",
    ("Suite", ("train", "epochs", "by_mode", "{key}")): "a mode: ModeFlag._modes checks it against MODES",
    ("Suite", ("train", "batch_size", "by_mode", "{key}")): "a mode: ModeFlag._modes checks it against MODES",
    ("Suite", ("limits", "multinode_factor")): "a number: Limits' _factor wants a finite 1..1000",
    ("SpecFile", ("bench", "run_modes", "[]", "ips", "[]")): "RunMode._ips: an IPv4 address (ipaddress)",
    ("SpecFile", ("bench", "timeout")): "a number: pydantic bounds it (0 < timeout <= 7 days)",
    ("SpecFile", ("convergence", "metric")): "Convergence._metric: control characters refused, a log name",
    ("SpecFile", ("convergence", "target")): "a number: Convergence._finite refuses inf and nan",
    ("SpecFile", ("convergence", "tolerance")): "a number: Convergence._finite refuses inf and nan",
    ("Spec", ("bench", "run_modes", "[]", "ips", "[]")): "RunMode._ips: an IPv4 address (ipaddress)",
    ("Spec", ("bench", "timeout")): "a number: pydantic bounds it (0 < timeout <= 7 days)",
    ("Spec", ("convergence", "metric")): "Convergence._metric: control characters refused, a log name",
    ("Spec", ("convergence", "target")): "a number: Convergence._finite refuses inf and nan",
    ("Spec", ("convergence", "tolerance")): "a number: Convergence._finite refuses inf and nan",
    ("Spec", ("source",)): "the spec's path, given by the caller, not by the spec",
    ("Spec", ("layout",)): "copied from SpecFile.layout, a Literal",
}


def _mark(metadata) -> str | None:
    for m in metadata:
        if isinstance(m, AfterValidator) and getattr(m.func, "__tipc_policy__", False):
            return m.func.__name__
    return None


def _walk(model, path=()):
    for name, field in model.model_fields.items():
        yield from _walk_type(field.annotation, path + (name,), _mark(field.metadata), model)


def _walk_type(tp, path, mark, owner):
    origin = get_origin(tp)
    if origin is Annotated:
        base, *meta = get_args(tp)
        yield from _walk_type(base, path, _mark(meta) or mark, owner)
    elif origin in (Union, types.UnionType):
        for arg in get_args(tp):
            yield from _walk_type(arg, path, mark, owner)
    elif origin is Literal:
        return
    elif origin is list:
        yield from _walk_type(get_args(tp)[0], path + ("[]",), None, owner)
    elif origin is dict:
        key, value = get_args(tp)
        yield from _walk_type(key, path + ("{key}",), None, owner)
        yield from _walk_type(value, path + ("{}",), None, owner)
    elif isinstance(tp, type) and issubclass(tp, BaseModel):
        yield from _walk(tp, path)
    elif tp in (str, float, Any):
        yield path, tp, mark, owner.__name__


def _leaves(model) -> dict:
    """{path: (policy validator name, owner model)} of every str/float/Any leaf."""
    out = {}
    for path, _tp, mark, owner in _walk(model):
        out.setdefault(path, (mark, owner))
    return out


SUITE_LEAVES = _leaves(Suite)
TOP_LEAVES = _leaves(SpecFile)


def test_every_string_field_goes_through_the_policy():
    missing = []
    for model in (SpecFile, Suite, Spec):
        for path, (mark, _owner) in _leaves(model).items():
            exempt = (model.__name__, path) in EXEMPT or ("Suite", path[2:]) in EXEMPT and path[:1] == ("suites",)
            if mark is None and not exempt:
                missing.append((model.__name__, path))
    assert not missing, f"fields without a policy type (use one of policy.py's): {missing}"
    for model, path in EXEMPT:
        assert path in _leaves({"SpecFile": SpecFile, "Suite": Suite, "Spec": Spec}[model]), (model, path)


# The fields the issue names, and what they must use.
NAMED = {
    ("train", "device", "key"): "check_config_key",
    ("train", "model_file"): "check_scalar",
    ("train", "infer_img_dir"): "check_scalar",
    ("trainers", "norm", "name"): "check_config_key",
    ("trainers", "pact", "export_name"): "check_config_key",
    ("export", "inference_dir"): "check_scalar",
    ("export", "model_url"): "check_scalar",
    ("whole_infer", "[]", "model"): "check_scalar",
    ("whole_infer", "[]", "export"): "check_scalar",
    ("train", "save_dir", "key"): "check_config_key",
    ("inference", "extra2", "key"): "check_config_key",
    ("sections", "{}", "{}"): "check_section_scalar",
    ("python",): "check_interpreter",
    ("file",): "check_config_file_name",
    ("doc",): "check_doc_file_name",
    ("model_name",): "check_name",
}


@pytest.mark.parametrize("path", sorted(NAMED), ids=".".join)
def test_named_fields_use_the_policy(path):
    assert SUITE_LEAVES[path][0] == NAMED[path]


def test_docs_and_top_level_fields_use_the_policy():
    assert TOP_LEAVES[("model",)][0] == "check_name"
    assert TOP_LEAVES[("docs", "algorithm")][0] == "check_doc_text"
    assert TOP_LEAVES[("other_configs", "{key}")][0] == "check_raw_file_name"
    assert TOP_LEAVES[("other_configs", "{}", "lines", "[]")][0] == "check_verbatim_line"
    assert TOP_LEAVES[("suites", "{key}")][0] == "check_suite_name"


# ---------------------------------------------------------------- payloads

CONTROL = {
    "NUL": "\x00",
    "TAB": "\t",
    "LF": "\n",
    "CR": "\r",
    "VT": "\x0b",
    "FF": "\x0c",
    "ESC": "\x1b",
    "FS": "\x1c",
    "US": "\x1f",
    "DEL": "\x7f",
    "NEL": "\x85",
    "CSI": "\x9b",
    "SHY": "\xad",
    "ZWSP": "\u200b",
    "RLO": "\u202e",
    "WJ": "\u2060",
    "BOM": "\ufeff",
    "LS": "\u2028",
    "PS": "\u2029",
}
META_CHARS = ";&|<>`$\\"  # what the issue asks to refuse; restated, not imported
META = {f"meta{ord(c):02x}": c for c in META_CHARS}
PAYLOADS = {**META, **CONTROL}

ALL = set(META_CHARS) | {":"}
# What each policy validator refuses besides control characters (restated here, not imported).
REFUSES = {
    "check_config_text": set(META_CHARS),
    "check_scalar": set(META_CHARS),
    "check_config_key": ALL,
    "check_interpreter": ALL,
    "check_section_scalar": set("&<>`$\\"),
    # a chain's value or key is one word of `[A-Za-z0-9._+/=,:@%-]` (tests/test_values_as_data.py
    # tries the rest: spaces, quotes, globs, a leading `-`)
    "check_chain_word": set(META_CHARS),
    "check_chain_command": set(META_CHARS),
    "check_chain_key": ALL,
    "check_verbatim_line": set(),
    "check_plain_text": set(),
    "check_doc_text": set("|<>"),
    "check_config_file_name": ALL,
    "check_raw_file_name": ALL,
    "check_doc_file_name": ALL,
    "check_name": ALL,
    "check_suite_name": ALL,
    "check_section_name": ALL,
    "_trainer_run": ALL,
    "_rule_id": ALL,
    None: ALL,
}
GOOD = {
    "check_config_file_name": "ab.txt",
    "check_raw_file_name": "ab.txt",
    "check_doc_file_name": "ab.md",
    "_rule_id": "TIPC001",
}
# Value of a dict whose key is the field under test.
DICT_VALUE = {
    ("sections",): {},
    ("sections", "{}"): "v",
    ("trivia", "headers"): "h",
    ("trivia", "section_keys"): [],
    **{("limits", kind): 60 for kind in ("train", "eval", "export", "infer", "stall")},
}
# Key of a dict whose value is the field under test (when any key will not do).
DICT_KEY = {
    ("trivia", "line_overrides"): "0",
    ("train", "epochs", "by_mode"): "lite_train_lite_infer",
    ("train", "batch_size", "by_mode"): "lite_train_lite_infer",
}
SKIP = {
    ("topology", "[]", "ips", "[]"),
    ("train", "epochs", "by_mode", "{key}"),
    ("train", "batch_size", "by_mode", "{key}"),
    ("trivia", "section_keys", "{}", "[]"),  # a listed key must be one of its section's
    *(("limits", kind, "{key}") for kind in ("train", "eval", "export", "infer", "stall")),  # modes
    ("limits", "multinode_factor"),  # a number (Limits._factor): no text to carry a payload
}  # exempt: tried by test_exempt_fields_refuse_too


def test_the_policy_refuses_the_issues_metacharacters():
    assert set(SHELL_META) == set(META_CHARS)


def _bad(mark, ch):
    good = GOOD.get(mark, "ab")
    return good[:1] + ch + good[1:]


def _fragment(path, value):
    def rec(i):
        if i == len(path):
            return value
        part = path[i]
        if part == "[]":
            return [rec(i + 1)]
        if part == "{key}":
            return {value: DICT_VALUE[path[:i]]}
        if part == "{}":
            return {DICT_KEY.get(path[:i], "k"): rec(i + 1)}
        return {part: rec(i + 1)}

    return rec(0)


def _merge(base, over):
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


# A suite's `prepare` holds the steps of the spec's `prepare` (the same models, their own
# validators: tried in test_prepare.py and test_hostile_downloads.py), not suite text fields.
def _chain_representatives(paths) -> list:
    """The other chains' sections (spec/chain_fields.py) are made by one function from their line
    tables, each leaf one of four types: one leaf per (section, type, policy) stands for the rest."""
    from tipcgen.spec.chain_fields import chain_roles

    chains = {role.split(".")[0] for role in chain_roles()}
    seen, out = set(), []
    for p in paths:
        if p[0] in chains:
            key = (p[0], p[-1] in ("key", "value", "values", "[]"), SUITE_LEAVES[p])
            if key in seen:
                continue
            seen.add(key)
        out.append(p)
    return out


FIELD_PATHS = _chain_representatives(sorted(p for p in SUITE_LEAVES if p not in SKIP and p[0] != "prepare"))


def _chain_layout_of(path) -> Optional[str]:
    """The chain layout with a line for a chain field (a train suite would refuse the field)."""
    from tipcgen.dialects.chains import CHAIN_LAYOUTS

    dotted = ".".join(path)
    for name, layout in CHAIN_LAYOUTS.items():
        if any(role == dotted or role.startswith(dotted + ".") for role in layout.roles):
            return name
    return None


def _suite(i, path, value):
    chain = None if path[0] in ("model_name", "python") else _chain_layout_of(path)
    base = {"file": f"s{i}.txt", "layout": chain} if chain else {"file": f"s{i}.txt", "topology": [0]}
    return _merge(base, _fragment(path, value))


def _load(spec: dict) -> list:
    """Problems of a spec given as data (JSON is YAML; indent puts each key on its own line)."""
    try:
        load_spec_text(json.dumps(spec, indent=1), "p.yml")
    except SpecError as exc:
        return exc.problems
    return []


_CACHE: dict = {}


def _suite_problems(payload: str) -> dict:
    """One spec per payload: suite s<i> sets field FIELD_PATHS[i] to a value holding the payload."""
    if payload not in _CACHE:
        ch = PAYLOADS[payload]
        suites = {f"s{i}": _suite(i, path, _bad(SUITE_LEAVES[path][0], ch)) for i, path in enumerate(FIELD_PATHS)}
        names = list(suites)
        problems = []
        for start in range(0, len(names), 80):  # a spec reports at most 100 problems (MAX_PROBLEMS)
            chunk = {n: suites[n] for n in names[start : start + 80]}
            problems += _load({"tipcgen": 1, "model": "demo", "layout": "paddleocr", "suites": chunk})
        by_suite: dict = {}
        for p in problems:
            m = re.match(r"suites\.(s\d+)\b", p.field or "")
            by_suite.setdefault(m.group(1) if m else None, []).append(p)
        _CACHE[payload] = by_suite
    return _CACHE[payload]


def _expect_refused(mark, ch) -> bool:
    return ch in CONTROL.values() or ch in REFUSES[mark]


@pytest.mark.parametrize("payload", sorted(PAYLOADS))
@pytest.mark.parametrize("path", FIELD_PATHS, ids=[".".join(p) for p in FIELD_PATHS])
def test_suite_field_refuses_payload(path, payload):
    i = FIELD_PATHS.index(path)
    mark = SUITE_LEAVES[path][0]
    ch = PAYLOADS[payload]
    problems = _suite_problems(payload).get(f"s{i}", [])
    if not _expect_refused(mark, ch):
        assert not problems, [p.render() for p in problems]
        return
    assert problems, f"{'.'.join(path)} accepted {ch!r}"
    p = problems[0]
    assert p.line is not None and p.col is not None, p.render()
    assert p.field.startswith(f"suites.s{i}.{path[0]}"), p.render()
    if ch in CONTROL.values():
        assert f"U+{ord(ch):04X}" in p.message, p.render()
        assert "control characters" in p.message
    elif mark in ("check_config_text", "check_scalar", "check_config_key", "check_interpreter"):
        assert repr(ch) in p.message and "metacharacters (; & | < > ` $ \\)" in p.message, p.render()


@pytest.mark.parametrize("path", FIELD_PATHS, ids=[".".join(p) for p in FIELD_PATHS])
def test_suite_field_accepts_a_plain_value(path):
    mark = SUITE_LEAVES[path][0]
    value = 1 if "by_mode" in path else GOOD.get(mark, "ab")  # mode tables hold counts only
    Suite.model_validate(_merge({"model_name": "m"}, _suite(0, path, value)))


def test_exempt_fields_refuse_too():
    base = {"file": "a.txt", "topology": [0]}
    for bad in ("10.0.0.1;x", "10.0.0.1\x0b", "10.0.0.1 "):
        with pytest.raises(ValidationError):
            Suite.model_validate(dict(base, topology=[{"ips": [bad, "10.0.0.2"], "gpus": [0]}]))
    with pytest.raises(ValidationError, match="U\\+000B"):
        Suite.model_validate(dict(base, train={"epochs": {"key": "e", "by_mode": {"lite\x0b": 1}}}))
    with pytest.raises(ValidationError, match="unknown mode"):
        SpecFile.model_validate({"model": "m", "layout": "paddleocr", "suites": {"n": {}}, "prepare": {"lite;x": []}})
    with pytest.raises(ValidationError, match="U\\+000B"):
        Suite.model_validate(dict(base, trivia={"section_keys": {"train_benchmark_params": ["a\x0b"]}}))


# Prepare steps: the generated prepare.sh shell-quotes every value, so the policy there refuses
# control characters only (url, sha256, names and paths have their own stricter checks).
STEP_BASE = {
    "Download": {"url": "https://x.org/a.tar", "to": "d"},
    "Extract": {"extract": "a.tar", "to": "d"},
    "Link": {"link": "l", "target": "t"},
    "Remove": {"remove": ["r"]},
    "Pip": {"pip": ["p"]},
    "Run": {"run": "r"},
}
STEP_GOOD = {"url": "https://x.org/a.tar", "sha256": "0" * 64, "mirror": "https://x.org", "extract": "a.tar"}


PREPARE_LEAVES = sorted(
    {(path[3:], owner, mark) for path, _tp, mark, owner in _walk(SpecFile) if path[:2] == ("prepare", "{}")}
)


def test_prepare_fields_use_the_policy():
    assert len(PREPARE_LEAVES) == 16
    assert {mark for _, _, mark in PREPARE_LEAVES} == {"check_plain_text"}


def _steps(ch):
    steps = []
    for tail, owner, _mark in PREPARE_LEAVES:
        good = STEP_GOOD.get(tail[0], "ab")
        value = good[:1] + ch + good[1:]
        step = dict(STEP_BASE[owner])
        if tail[0] == "rename":
            step.update(extract=True, rename={value: "n"} if tail[1] == "{key}" else {"o": value})
        elif tail[-1] == "[]":
            step[tail[0]] = [value]
        else:
            step[tail[0]] = value
        steps.append((tail, step))
    return steps


@pytest.mark.parametrize("payload", sorted(CONTROL))
def test_top_level_fields_refuse_control_characters(payload):
    ch = CONTROL[payload]
    steps = _steps(ch)
    spec = {
        "tipcgen": 1,
        "model": _bad("check_name", ch),
        "layout": "paddleocr",
        "docs": {"algorithm": _bad("check_doc_text", ch)},
        "prepare": {"lite_train_lite_infer": [s for _, s in steps]},
        "suites": {_bad("check_suite_name", ch): {"file": "a.txt", "topology": [0]}},
        "other_configs": {_bad("check_raw_file_name", ch): {"lines": ["ok"]}, "b.txt": {"lines": ["x" + ch]}},
    }
    fields = {p.field for p in _load(spec)}
    wanted = {"model", "docs.algorithm", "other_configs.b.txt.lines[0]"}
    wanted |= {f"prepare.lite_train_lite_infer[{i}]" for i in range(len(steps))}
    for want in wanted:
        assert any(f == want or f.startswith(want + ".") for f in fields), (want, fields)
    assert any(f.startswith("suites.a") for f in fields) and any(f.startswith("other_configs.a") for f in fields)


def test_plain_values_pass_at_the_top_level():
    steps = [s for _, s in _steps("")]
    spec = SpecFile.model_validate(
        {
            "model": "m",
            "layout": "paddleocr",
            "docs": {"algorithm": "PP-OCRv3 (rec); x"},
            "prepare": {"lite_train_lite_infer": steps},
            "suites": {"n": {}},
        }
    )
    assert len(spec.prepare["lite_train_lite_infer"]) == len(steps) == 16


def test_doc_text_refuses_table_and_html_characters():
    for ch in "|<>":
        with pytest.raises(ValidationError, match="Markdown"):
            SpecFile.model_validate(
                {"model": "m", "layout": "paddleocr", "docs": {"algorithm": f"a{ch}b"}, "suites": {"n": {}}}
            )


def test_accepted_characters_in_config_text():
    """Quotes, spaces, `=`, `,`, `#`, `*`, `~`, `(`, non-ASCII letters: no command is run by them
    (no `$`, backtick, `;`, `&`, `|`, redirection or newline), and upstream values use quotes."""
    suite = Suite.model_validate(
        {
            "file": "a.txt",
            "model_name": "m",
            "topology": [0],
            "inference": {
                "extra": {"key": "--rec_image_shape", "value": '"3,48,320"'},
                "extra2": {"key": "-o Global.x", "value": "a=b, c#d *.jpg ~/x (y) 中文 'q'"},
            },
        }
    )
    assert suite.inference.extra.value == '"3,48,320"'


def test_section_values_keep_benchmark_separators():
    suite = Suite.model_validate(
        {
            "file": "a.txt",
            "model_name": "m",
            "topology": [0],
            "sections": {"train_benchmark_params": {"flags": "FLAGS_a=1;FLAGS_b=2", "fp_items": "fp32|fp16"}},
        }
    )
    assert suite.sections["train_benchmark_params"]["fp_items"] == "fp32|fp16"
    with pytest.raises(ValidationError, match="benchmark scripts"):
        Suite.model_validate(
            {"file": "a.txt", "model_name": "m", "topology": [0], "sections": {"s": {"flags": "FLAGS_a=$(id)"}}}
        )


def test_python_is_one_interpreter_word():
    base = {"file": "a.txt", "model_name": "m", "topology": [0]}
    for good in ("python3.7", "python", "/usr/bin/python3", "./venv/bin/python"):
        Suite.model_validate(dict(base, python=good))
    for bad in ("", "rm -rf ~ #", "-c", "LD_PRELOAD=x python", "python3 -u"):
        with pytest.raises(ValidationError):
            Suite.model_validate(dict(base, python=bad))


# ---------------------------------------------------------------- path-bearing fields

ESCAPES = {
    "empty": "",
    "dotdot": "..",
    "parent": "../x",
    "absolute": "/etc/x",
    "slash": "a/b",
    "backslash": "a\\b",
    "hidden": ".x",
    "option": "-x",
    "inner_dotdot": "a..b",
    "space": "a b",
    "cyrillic_a": "tr\u0430in",
    "fullwidth": "\uff54rain",
    "zero_width": "a\u200bb",
    "long": "x" * 201,
    "newline_end": "ab\n",
    "dollar": "a$b",
    "semicolon": "a;b",
}
SUFFIX = {"file": ".txt", "doc": ".md", "other_configs": ".txt", "model": "", "model_name": "", "suite": "", "run": ""}


def _path_problems(which: str, name: str) -> list:
    suite = {"file": "a.txt", "topology": [0]}
    spec = {"tipcgen": 1, "model": "demo", "layout": "paddleocr", "suites": {"n": suite}}
    if which in ("file", "doc", "model_name"):
        suite[which] = name
    elif which == "run":
        suite["train"] = {"run": [name]}
        suite["allow"] = ["TIPC010"]
    elif which == "model":
        spec["model"] = name
    elif which == "suite":
        spec["suites"] = {name: suite}
    else:
        spec["other_configs"] = {name: {"lines": ["x"]}}
    return _load(spec)


@pytest.mark.parametrize("escape", sorted(ESCAPES))
@pytest.mark.parametrize("which", sorted(SUFFIX))
def test_path_fields_refuse_escapes(which, escape):
    name = ESCAPES[escape]
    if name and escape not in ("newline_end",):
        name += SUFFIX[which]
    if which == "suite" and escape in ("option", "inner_dotdot"):
        name = "x" + name  # suite names are [A-Za-z0-9_][A-Za-z0-9_-]*: these two are fine there
        if escape == "option":
            return
    problems = _path_problems(which, name)
    assert problems, f"{which} accepted {name!r}"
    assert problems[0].line is not None, problems[0].render()


@pytest.mark.parametrize("which", sorted(SUFFIX))
def test_path_fields_accept_plain_names(which):
    assert _path_problems(which, "ab_1.0+x-y" + SUFFIX[which] if which != "suite" else "ab_1-x") == []


def test_wrong_extensions():
    assert _path_problems("file", "a.md")[0].message.count("`*.txt`")
    assert "`*.md`" in _path_problems("doc", "a.txt")[0].message
    assert _path_problems("other_configs", "a.yml")


# ---------------------------------------------------------------- across suites

DUP = """\
tipcgen: 1
model: demo
layout: paddleocr
defaults:
  topology: [0]
suites:
  normal:
    file: train_infer_python.txt
  amp:
    file: train_infer_python.txt
  other:
    file: other.txt
    doc: same.md
  another:
    file: another.txt
    doc: same.md
other_configs:
  other.txt: {lines: [a]}
"""


def test_two_suites_one_file_and_other_configs_collisions_fail_validation():
    with pytest.raises(SpecError) as exc:
        load_spec_text(DUP, "dup.yml")
    text = str(exc.value)
    assert "dup.yml:10:11: error: field `suites.amp.file`: suites 'normal' and 'amp' both write" in text
    assert "field `suites.another.doc`: suites 'other' and 'another' would both write docs/same.md" in text
    assert "dup.yml:18:3: error: field `other_configs.other.txt`: suite 'other' already writes" in text


def test_a_file_inherited_from_defaults_by_two_suites_is_a_duplicate():
    text = (
        "tipcgen: 1\nmodel: d\nlayout: paddleocr\ndefaults:\n  file: a.txt\n  topology: [0]\n"
        "suites:\n  x: {}\n  y: {}\n"
    )
    with pytest.raises(SpecError, match="suites 'x' and 'y' both write configs/d/a.txt"):
        load_spec_text(text, "d.yml")


# ---------------------------------------------------------------- numbers

NUM_BASE = {"file": "a.txt", "model_name": "m", "topology": [0]}


def _epochs(value, key="epochs", mode="lite_train_lite_infer"):
    return {"train": {key: {"key": "e", "by_mode": {mode: value}}}}


NUMBERS = {
    "gpu_10e30": ({"topology": [10**30]}, "device ordinal"),
    "gpu_1024": ({"topology": [[0, 1024]]}, "device ordinal"),
    "epochs_negative": ({"train": {"epochs": {"key": "e", "by_mode": {"lite_train_lite_infer": -5}}}}, "whole number"),
    "epochs_zero": ({"train": {"epochs": {"key": "e", "by_mode": {"lite_train_lite_infer": 0}}}}, "whole number"),
    "epochs_text": ({"train": {"epochs": {"key": "e", "by_mode": {"lite_train_lite_infer": "three"}}}}, "whole number"),
    "epochs_inf": (_epochs(float("inf")), "not a finite"),
    "epochs_nan": (_epochs(float("nan"), "batch_size", "whole_train_whole_infer"), "finite"),
    "epochs_float": ({"train": {"epochs": {"key": "e", "by_mode": {"lite_train_lite_infer": 1.5}}}}, "whole number"),
    "epochs_bool": ({"train": {"epochs": {"key": "e", "by_mode": {"lite_train_lite_infer": True}}}}, "whole number"),
    "epochs_huge": (_epochs(10**12), "whole number"),
    "flag_inf": ({"train": {"extra": {"key": "x", "value": float("-inf")}}}, "finite"),
    "list_nan": ({"inference": {"precision": {"key": "p", "values": [float("nan")]}}}, "finite"),
    "scalar_inf": ({"train": {"model_file": float("inf")}}, "finite"),
    "threads_negative": ({"inference": {"threads": {"key": "t", "values": [-1]}}}, "whole number"),
    "threads_1e308": ({"inference": {"threads": {"key": "t", "values": [1e308]}}}, "whole number"),
    "batch_zero": ({"inference": {"batch_size": {"key": "b", "values": [0]}}}, "whole number"),
    "override_negative": ({"trivia": {"line_overrides": {-5: "x"}}}, "not a layout line"),
    "override_huge": ({"trivia": {"line_overrides": {10**12: "x"}}}, "not a layout line"),
    "core_lines_huge": ({"trivia": {"core_lines": 10**12}}, "core_lines"),
    "blank_negative": ({"trivia": {"blank_lines": [-1]}}, "not a line number"),
    "blank_twice": ({"trivia": {"blank_lines": [3, 3]}}, "listed twice"),
    "cpus_100": ({"topology": [{"cpus": 100}]}, "less than or equal"),
}


@pytest.mark.parametrize("case", sorted(NUMBERS))
def test_nonsense_numbers_are_refused(case):
    change, words = NUMBERS[case]
    with pytest.raises(ValidationError, match=re.escape(words)):
        Suite.model_validate(_merge(NUM_BASE, change))


def test_sensible_numbers_pass():
    Suite.model_validate(
        _merge(
            NUM_BASE,
            {
                "topology": [1023, [0, 7]],
                "train": {
                    "epochs": {"key": "e", "by_mode": {"lite_train_lite_infer": 1, "whole_train_whole_infer": 500}}
                },
                "inference": {
                    "threads": {"key": "t", "values": [1, 6, "null"]},
                    "precision": {"key": "p", "values": [0.5]},
                },
            },
        )
    )


def test_trivia_past_the_layout_fails_validation():
    text = (
        "tipcgen: 1\nmodel: d\nlayout: paddleocr\nsuites:\n  n:\n    file: a.txt\n    topology: [0]\n"
        "    trivia:\n      line_overrides: {60: x}\n      core_lines: 70\n      blank_lines: [900]\n"
    )
    with pytest.raises(SpecError) as exc:
        load_spec_text(text, "t.yml")
    fields = [p.field for p in exc.value.problems]
    assert fields == ["suites.n.trivia.line_overrides.60", "suites.n.trivia.core_lines", "suites.n.trivia.blank_lines"]


# ---------------------------------------------------------------- semantic: run typo, yes

SEM = """\
tipcgen: 1
model: demo
layout: paddleocr
suites:
  normal:
    file: train_infer_python.txt
    topology: [0]
    train:
      device: {key: Global.use_gpu, values: [True]}
      run: [norm_trian]
    trainers:
      norm: {train: tools/train.py -c a.yml -o}
    inference:
      use_gpu: {key: --use_gpu, values: [yes]}
"""


def test_run_typo_and_yaml11_boolean_fail_validation_with_suggestions():
    with pytest.raises(SpecError) as exc:
        load_spec_text(SEM, "sem.yml")
    lines = str(exc.value).splitlines()
    assert lines[0].startswith("sem.yml:10:12: error: field `suites.normal.train.run`: TIPC010: trainer 'norm_trian'")
    assert "did you mean 'norm_train'?" in lines[0]
    assert lines[1].startswith("sem.yml:14:16: error: field `suites.normal.inference.use_gpu`: TIPC001: 'yes'")
    assert "write True; YAML 1.2 reads an unquoted yes as the text 'yes'" in lines[1]
    allowed = SEM.replace("    topology: [0]\n", "    topology: [0]\n    allow: [TIPC010, TIPC001]\n")
    assert load_spec_text(allowed, "sem.yml").suites["normal"].train.run == ["norm_trian"]


def test_yes_in_a_free_text_flag_is_kept():
    text = SEM.replace("values: [yes]", "values: [True]").replace("run: [norm_trian]", "run: [norm_train]")
    text = text.replace("    inference:\n", "    inference:\n      extra: {key: --answer, value: yes}\n")
    assert load_spec_text(text, "s.yml").suites["normal"].inference.extra.value == "yes"


def test_trivia_carrying_shell_metacharacters_needs_an_allow():
    text = SEM.replace("values: [yes]", "values: [True]").replace("run: [norm_trian]", "run: [norm_train]")
    # the override is the line's only source (a typed train command there would be shadowed)
    text = text.replace("norm: {train: tools/train.py -c a.yml -o}", "norm: {train: null}")
    text += "    trivia:\n      line_overrides: {15: 'norm_train:tools/train.py; touch /tmp/pwned'}\n"
    with pytest.raises(SpecError, match="TIPC021"):
        load_spec_text(text, "s.yml")
    text = text.replace("    topology: [0]\n", "    topology: [0]\n    allow: [TIPC021]\n")
    assert load_spec_text(text, "s.yml")


# ---------------------------------------------------------------- through the real CLI

CLI_SPEC = """\
tipcgen: 1
model: demo
layout: paddleocr
suites:
  normal:
    file: train_infer_python.txt
    topology: [0]
    train:
      model_file: "$(touch /tmp/pwned)"
      device: {key: "Global.use_gpu\\v", values: [True]}
    export:
      model_url: "`id`"
    trainers:
      norm: {name: "norm_train;x", train: tools/train.py}
  other:
    file: ../../etc/x.txt
    doc: "../x.md"
    topology: [1000000000000000000000000000000]
"""


def _validate(tmp_path, text):
    spec = tmp_path / "s.yml"
    spec.write_text(text)
    proc = run_argv(["validate", str(spec)], capture_output=True, text=True, timeout=60)
    assert "Traceback" not in proc.stderr + proc.stdout
    return proc, str(spec)


def test_validate_cli_reports_each_field(tmp_path):
    proc, spec = _validate(tmp_path, CLI_SPEC)
    assert proc.returncode == 2
    pattern = re.compile(rf"^{re.escape(spec)}:(\d+):(\d+): error: field `([^`]*)`")
    got = [pattern.match(line) for line in proc.stderr.splitlines()]
    assert all(got), proc.stderr
    assert [(int(m.group(1)), m.group(3)) for m in got] == [
        (9, "suites.normal.train.model_file"),
        (10, "suites.normal.train.device.key"),
        (12, "suites.normal.export.model_url"),
        (14, "suites.normal.trainers.norm.name"),
        (16, "suites.other.file"),
        (17, "suites.other.doc"),
        (18, "suites.other.topology[0].gpus"),
    ], proc.stderr
    assert "U+000B (LINE TABULATION)" in proc.stderr


def test_validate_cli_across_suites_and_semantics(tmp_path):
    proc, spec = _validate(tmp_path, DUP)
    assert proc.returncode == 2 and f"{spec}:10:11: error: field `suites.amp.file`" in proc.stderr
    proc, spec = _validate(tmp_path, SEM)
    assert proc.returncode == 2 and "did you mean 'norm_train'?" in proc.stderr


# ---------------------------------------------------------------- lint: configs it was silent on


@pytest.fixture(scope="module")
def ocr_config():
    spec = load_spec(str(SPECS / "ch_PP-OCRv3_rec.yml"))
    return config_files(spec)["test_tipc/configs/ch_PP-OCRv3_rec/train_infer_python.txt"]


def _rules(tmp_path, text, layout="auto"):
    path = tmp_path / "train_infer_python.txt"
    path.write_text(text, newline="")
    return {f.rule: f for f in lint_config(str(path), layout)}


def test_lint_fresh_config_is_clean(tmp_path, ocr_config):
    assert not {r for r, f in _rules(tmp_path, ocr_config).items() if f.severity == "error"}


def test_lint_truncated_config_without_trainer_line(tmp_path, ocr_config):
    rules = _rules(tmp_path, "\n".join(ocr_config.splitlines()[:10]) + "\n")
    assert rules["TIPC006"].severity == "error" and "10 lines" in rules["TIPC006"].message


def test_lint_all_null_config(tmp_path, ocr_config):
    lines = ocr_config.splitlines()
    rules = _rules(tmp_path, lines[0] + "\n" + "null:null\n" * 50)
    assert "TIPC019" in rules and "TIPC018" in rules
    assert "TIPC019" in _rules(tmp_path, "null:null\n" * 51)


@pytest.mark.parametrize(
    "value,words",
    [
        ("999.1.1.1,a.b;0,1", "'999.1.1.1' is not an IPv4 address"),
        ("10.0.0.1,10.0.0.2;0,a", "'a' is not a GPU id"),
        ("0|", "an empty entry"),
        ("0,0", "listed twice"),
        ("5000", "device ordinal"),
        ("cpux0", "1 to 99"),
        ("0|-1,1", "-1 means CPU"),
    ],
)
def test_lint_bad_gpu_list(tmp_path, ocr_config, value, words):
    rules = _rules(tmp_path, ocr_config.replace("gpu_list:0|0,1", f"gpu_list:{value}"))
    assert words in rules["TIPC020"].message and rules["TIPC020"].line == 4


def test_lint_good_gpu_lists(tmp_path, ocr_config):
    for value in ("-1", "0", "0|0,1", "192.168.0.1,192.168.0.2;0,1", "cpux2", "10.0.0.1,10.0.0.2;cpux1", "1023"):
        assert "TIPC020" not in _rules(tmp_path, ocr_config.replace("gpu_list:0|0,1", f"gpu_list:{value}"))


def test_lint_metacharacters_and_control_characters(tmp_path, ocr_config):
    line = next(x for x in ocr_config.splitlines() if x.startswith("train_model_name:"))
    rules = _rules(tmp_path, ocr_config.replace(line, "train_model_name:$(touch /tmp/pwned)"))
    assert rules["TIPC021"].line == 11
    rules = _rules(tmp_path, ocr_config.replace(line, "train_model_name:a\x1bb"))
    assert "U+001B (ESCAPE)" in rules["TIPC022"].message


# ---------------------------------------------------------------- import keeps refused values verbatim


def test_import_keeps_refused_values_as_trivia_and_round_trips(tmp_path, ocr_config):
    src = tmp_path / "m"
    src.mkdir()
    text = ocr_config.replace("norm_train:", "norm;train:", 1)
    for old, new in (
        ("train_model_name:latest", "train_model_name:`x`"),
        ("gpu_list:0|0,1", "gpu_list:0|5000"),
        ("lite_train_lite_infer=3|", "lite_train_lite_infer=three|"),
    ):
        text = text.replace(old, new)
    text += "===========================train_benchmark_params==========================\nflags:A=$(id)\n"
    (src / "train_infer_python.txt").write_bytes(text.encode())
    report = import_group([str(src / "train_infer_python.txt")])
    assert report.exact == 1, report.failures
    assert "TIPC021" in report.yaml and "line_overrides" in report.yaml and "tail:" in report.yaml
    for kept in ("norm;train:", "train_model_name:`x`", "lite_train_lite_infer=three", "gpu_list:0|5000"):
        assert kept in report.yaml, kept


def test_import_refuses_control_characters_cleanly(tmp_path, ocr_config):
    src = tmp_path / "m"
    src.mkdir()
    (src / "train_infer_python.txt").write_bytes(ocr_config.replace("latest", "la\x0btest").encode())
    result = runner.invoke(app, ["import", str(src), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "U+000B" in result.output and "Traceback" not in result.output
    (src / "train_infer_python.txt").write_bytes(ocr_config.encode())
    (src / "train_infer_python.txt").rename(src / "tr\u0430in.txt")
    result = runner.invoke(app, ["import", str(src / "tr\u0430in.txt"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "U+0430" in result.output
