"""Property tests: the bash helpers in common_func.sh and their Python twins in shellwords.py agree.

The Plan (Python) and the generated bash must make the same decisions on any
config text; these helpers are where the two could drift.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tipcgen.dialects.paddleocr import PADDLEOCR
from tipcgen.emit.files import runner_script
from tipcgen.plan.builder import gpu_entry
from tipcgen.script.shellwords import ifs_split, mode_value, set_param, unquoted_test, words

DRIVER = r"""
source "$1"
declare -a out=()
v="" k="" i="" g="" n=""
while IFS= read -r -d '' fn && IFS= read -r -d '' a && IFS= read -r -d '' b && IFS= read -r -d '' c; do
    case $fn in
    words)
        if tipc_words out "$a"; then
            printf 'ok\0%s\0' "${#out[@]}"
            for x in "${out[@]}"; do printf '%s\0' "$x"; done
        else
            printf 'err\0'
        fi
        ;;
    split)
        tipc_split out "$b" "$a"
        printf '%s\0' "${#out[@]}"
        for x in "${out[@]}"; do printf '%s\0' "$x"; done
        ;;
    test) if tipc_test_unquoted "$a" "$b" "$c"; then printf 'T\0'; else printf 'F\0'; fi ;;
    mode) tipc_mode_value v "$a" "$b"; printf '%s\0' "$v" ;;
    set) tipc_set_param v "$a" "$b"; printf '%s\0' "$v" ;;
    entry) tipc_gpu_entry k i g n "$a"; printf '%s\0%s\0%s\0%s\0' "$k" "$i" "$g" "$n" ;;
    esac
done
"""


@pytest.fixture(scope="module")
def common_func(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cf") / "common_func.sh"
    path.write_text(runner_script(PADDLEOCR, "test")[1])
    return path


def run_bash(common_func: Path, calls: list[tuple[str, str, str, str]]) -> list[str]:
    data = b"".join(b"".join(part.encode() + b"\0" for part in call) for call in calls)
    proc = subprocess.run(
        ["bash", "-c", DRIVER, "driver", str(common_func)], input=data, capture_output=True, check=True, timeout=60
    )
    return proc.stdout.decode().split("\0")


class Reader:
    def __init__(self, items):
        self.items, self.i = items, 0

    def next(self) -> str:
        self.i += 1
        return self.items[self.i - 1]

    def array(self) -> list[str]:
        return [self.next() for _ in range(int(self.next()))]


# Config text: printable ASCII plus the characters the legacy format and shells care about.
TEXT = st.text(alphabet=st.sampled_from(list("abz019 .,;:=|-_/'\"\\!()[]{}*?$#\t")), max_size=40)
TOKENS = st.sampled_from(
    [
        "",
        "null",
        "True",
        "False",
        "int8",
        "fp16",
        "!",
        "(",
        ")",
        "-n",
        "-z",
        "=",
        "!=",
        "norm_train",
        "pact_train",
        " ",
        "a b",
        "|",
        "a|",
        "|b",
        "a||b",
    ]
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(st.lists(TEXT, min_size=1, max_size=25))
def test_words_agree_with_shlex(common_func, texts):
    got = Reader(run_bash(common_func, [("words", t, "", "") for t in texts]))
    for t in texts:
        status = got.next()
        want = words(t)
        if want is None:
            assert status == "err", t
        else:
            assert status == "ok", t
            assert got.array() == want, t


@SETTINGS
@given(st.lists(st.tuples(TEXT, st.sampled_from(["|", "=", ",", ";"])), min_size=1, max_size=25))
def test_split_agrees(common_func, cases):
    got = Reader(run_bash(common_func, [("split", t.replace("\t", " "), sep, "") for t, sep in cases]))
    for t, sep in cases:
        assert got.array() == ifs_split(t.replace("\t", " "), sep), (t, sep)


@SETTINGS
@given(st.lists(st.tuples(st.one_of(TOKENS, TEXT), st.sampled_from(["=", "!="]), TOKENS), min_size=1, max_size=25))
def test_unquoted_test_agrees(common_func, cases):
    got = Reader(run_bash(common_func, [("test", a, op, b) for a, op, b in cases]))
    for a, op, b in cases:
        assert (got.next() == "T") == unquoted_test(a, op, b), (a, op, b)


MODES = st.sampled_from(["lite_train_lite_infer", "whole_train_whole_infer", "lite_train_whole_infer"])
TABLE = st.lists(st.tuples(st.one_of(MODES, TEXT), st.one_of(TEXT, st.just(""))), max_size=4).map(
    lambda items: "|".join(f"{m}={v}" for m, v in items)
)


@SETTINGS
@given(st.lists(st.tuples(st.one_of(TABLE, TEXT), MODES), min_size=1, max_size=25))
def test_mode_value_agrees(common_func, cases):
    got = Reader(run_bash(common_func, [("mode", t, m, "") for t, m in cases]))
    for t, m in cases:
        assert got.next() == mode_value(t, m), (t, m)


@SETTINGS
@given(st.lists(st.tuples(st.one_of(TOKENS, TEXT), st.one_of(TOKENS, TEXT)), min_size=1, max_size=25))
def test_set_param_agrees(common_func, cases):
    got = Reader(run_bash(common_func, [("set", k, v, "") for k, v in cases]))
    for k, v in cases:
        assert got.next() == set_param(k, v), (k, v)


IP = st.sampled_from(["10.0.0.1", "192.168.0.2", "1.1.1.1", "", "x"])
GPUS = st.lists(st.sampled_from(["0", "1", "7", "10", ""]), max_size=4).map(",".join)
ENTRY = st.one_of(
    st.just("-1"),
    GPUS,
    TEXT,
    st.sampled_from(["cpux1", "cpux2", "cpux12", "cpux0", "cpux", "10.0.0.1,10.0.0.2;cpux2"]),
    st.tuples(st.lists(IP, max_size=3).map(",".join), GPUS).map(lambda t: f"{t[0]};{t[1]}"),
)


@SETTINGS
@given(st.lists(ENTRY.filter(lambda e: "|" not in e), min_size=1, max_size=25))
def test_gpu_entry_agrees(common_func, entries):
    got = Reader(run_bash(common_func, [("entry", e, "", "") for e in entries]))
    for e in entries:
        kind, ips, gpus, nodes = gpu_entry(e)
        assert [got.next() for _ in range(4)] == [kind, ips, gpus, str(nodes)], e


@settings(max_examples=2000, deadline=None)
@given(TEXT)
def test_python_words_equal_shlex(text):
    import shlex

    try:
        want = shlex.split(text, comments=False, posix=True)
    except ValueError:
        want = None
    assert words(text) == want


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab= \t\r\n\x0b\x0c\x1c\x1f\x85\xa0\u3000")), max_size=30))
def test_a_quote_free_command_splits_on_blanks_only_as_shlex_does(text):
    """words' fast path (str.split for ASCII without the other separators str.split knows) is the
    same split as shlex's on space, tab, CR and LF: never on a vertical tab, a form feed, an
    information separator or a non-ASCII space."""
    import shlex

    assert words(text) == shlex.split(text, comments=False, posix=True)
