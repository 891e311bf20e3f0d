"""Hostile spec text: every input is a clean located error (exit 2, `file:line:col: error: ...`,
no traceback) within 5 s, both through `load_spec` and through `tipcgen validate`."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import pytest

from helpers.cli import run_cli
from helpers.machine import bound
from tipcgen.check.spec import load_spec
from tipcgen.errors import SpecError
from tipcgen.inputs import MAX_FILE_BYTES
from tipcgen.spec.ir import SpecFile, Suite
from tipcgen.spec.load import MAX_SUITES, clean_loc
from tipcgen.spec.yamlpos import MAX_DEPTH, MAX_NODES, MAX_NUMBER_CHARS, load_yaml

# A hang guard, not a speed target: the < 5 s figure for every hostile input is measured by
# benchmarks/hostile_inputs.py (timed assertions in tests flake on a loaded machine).
SECONDS = 20.0

from test_load import VALID  # the same minimal valid spec  # noqa: E402

END = VALID.count("\n") + 1  # the line of anything appended to VALID
SUITE_KEY = "    file: train_infer_python.txt\n"  # insert before it: a key of the suite, on line 6


def _in_suite(line: str) -> str:
    return VALID.replace(SUITE_KEY, line + SUITE_KEY, 1)


def _laughs(levels: int = 9, width: int = 9) -> str:
    lines = ["a0: &a0 [lol]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return VALID + "\n".join(lines) + "\n"


# (id, spec text (str, or bytes written as is), line of the first problem, words in its message)
CASES = [
    # 1. capitalised keys (pydantic tags look like them) and keys that are not text
    ("capital_top_model", VALID.replace("model: demo", "Model: demo"), 2, "unknown key 'Model'"),
    ("capital_top_layout", VALID + "Layout: paddleocr\n", END, "unknown key 'Layout'"),
    ("capital_top_train", VALID + "Train: 1\n", END, "unknown key 'Train'"),
    ("capital_suite_train", VALID.replace("    train:\n", "    Train:\n"), 9, "unknown key 'Train'"),
    ("capital_suite_model", _in_suite("    Model: x\n"), 6, "unknown key 'Model'"),
    ("tag_like_key", _in_suite("    str: x\n"), 6, "unknown key 'str'"),
    ("colons", VALID + ": : :\n", END, "keys must be text"),
    ("null_key_top", VALID + "null: 1\n", END, "keys must be text"),
    ("null_key_suite", _in_suite("    null: 1\n"), 6, "keys must be text"),
    ("empty_key", VALID + ": v\n", END, "keys must be text"),
    ("int_key_top", VALID + "3: 1\n", END, "keys must be text"),
    ("int_key_suite", _in_suite("    3: 1\n"), 6, "keys must be text"),
    ("bool_key_top", VALID + "true: 1\n", END, "keys must be text"),
    ("bool_key_suite", _in_suite("    false: 1\n"), 6, "keys must be text"),
    ("float_key", VALID + "1.5: 1\n", END, "keys must be text"),
    ("date_key", VALID + "2001-01-01: 1\n", END, "keys must be text"),
    ("list_key", VALID + "? [a]\n: b\n", END, "keys must be text"),
    ("map_key", VALID + "? {a: 1}\n: b\n", END, "keys must be text"),
    ("alias_map_key", VALID + "x: &m {a: 1}\n*m : 2\n", END + 1, "keys must be text"),
    # 2. nesting
    ("deep_lists", VALID + "x: " + "[" * 1000 + "]" * 1000 + "\n", END, f"deeper than {MAX_DEPTH}"),
    ("deep_maps", VALID + "x: " + "{a: " * 1000 + "1" + "}" * 1000 + "\n", END, f"deeper than {MAX_DEPTH}"),
    ("deep_block", VALID + "".join(" " * i + f"k{i}:\n" for i in range(200)), END + MAX_DEPTH, "deeper"),
    ("open_brackets", "[" * 100_000, 1, f"deeper than {MAX_DEPTH}"),
    # 3. numbers Python will not convert
    ("long_int", VALID + "x: " + "9" * 5000 + "\n", END, f"at most {MAX_NUMBER_CHARS}"),
    (
        "long_int_field",
        VALID.replace("lite_train_lite_infer: 1}", "lite_train_lite_infer: " + "9" * 5000 + "}"),
        11,
        "characters",
    ),
    ("long_float", VALID + "x: 1." + "5" * 5000 + "\n", END, "characters"),
    ("yaml11_sexagesimal", "%YAML 1.1\n---\n" + VALID + "x: " + ":".join(["59"] * 2000) + "\n", END + 2, "characters"),
    # 4. text that cannot be written as UTF-8
    ("surrogate_value", VALID.replace("model_name: demo_rec", 'model_name: "demo\\ud800"'), 7, "not valid Unicode"),
    ("surrogate_key", VALID + '"\\udfff": 1\n', END, "not valid Unicode"),
    ("surrogate_u32", VALID.replace("model_name: demo_rec", 'model_name: "a\\U0000d800"'), 7, "not valid Unicode"),
    # 5. aliases
    ("billion_laughs", _laughs(), END + 5, "aliases expand"),  # a5 repeats 125,479 values
    (
        "laughs_wide",
        VALID + "a: &a [" + "1, " * 1000 + "1]\nb: [" + ", ".join(["*a"] * 100) + "]\n",
        END + 1,
        "aliases expand",
    ),
    ("recursive_alias", VALID + "x: &r [1, *r]\n", END, "recursive"),
    ("undefined_alias", VALID.replace("model: demo", "model: *nope"), 2, "no anchor"),
    # 8. everything else
    ("tab_indent", VALID.replace("  normal:", "\tnormal:"), 5, "YAML syntax error"),
    ("nul_byte", VALID + "x: a\x00b\n", END, "U+0000"),
    ("control_char", VALID + "x: a\x07b\n", END, "U+0007"),
    ("not_utf8", VALID.encode() + b"x: \xff\xfe\n", END, "not UTF-8"),
    ("utf16", VALID.encode("utf-16"), 1, "not UTF-8"),
    ("two_documents", VALID + "---\n" + VALID, END, "second one"),
    ("empty_documents", "---\n---\n", 2, "second one"),
    ("scalar_document", "just text\n", 1, "YAML mapping"),
    ("list_document", "- a\n- b\n", 1, "YAML mapping"),
    ("empty_file", "", 1, "YAML mapping"),
    ("comments_only", "# nothing\n", 1, "YAML mapping"),
    ("python_object", VALID + "x: !!python/object:os.system {}\n", END, "!!python/object:os.system"),
    ("python_name", VALID.replace("model: demo", "model: !!python/name:os.system ''"), 2, "not supported"),
    ("unknown_tag", VALID.replace("model: demo", "model: !foo demo"), 2, "!foo is not supported"),
    ("unknown_tag_in_suite", VALID.replace("model_name: demo_rec", "model_name: !foo demo_rec"), 7, "!foo"),
    (
        "tag_directive",
        "%TAG !e! tag:example.com,2000:\n---\n" + VALID.replace("model: demo", "model: !e!x demo"),
        4,
        "not supported",
    ),
    ("binary", VALID.replace("model: demo", "model: !!binary aGVsbG8="), 2, "!!binary"),
    ("set", VALID + "x: !!set {a, b}\n", END, "!!set"),
    ("omap", VALID + "x: !!omap [a: 1]\n", END, "!!omap"),
    ("str_tag_on_map", VALID.replace("model: demo", "model: !!str {a: 1}"), 2, "cannot tag a mapping"),
    ("bad_int_tag", VALID.replace("model: demo", "model: !!int demo"), 2, "cannot read 'demo'"),
    ("bad_bool_tag", VALID.replace("model: demo", "model: !!bool demo"), 2, "cannot read 'demo'"),
    ("bad_date", VALID.replace("model: demo", "model: 2001-02-30"), 2, "cannot read '2001-02-30'"),
    (
        "merge_key",
        "base: &b {file: train_infer_python.txt}\n" + VALID.replace(SUITE_KEY, "    <<: *b\n"),
        7,
        "merge keys",
    ),
    ("duplicate_key", VALID.replace("model: demo\n", "model: demo\nmodel: again\n"), 3, "duplicate key"),
    ("yaml_2", "%YAML 2.0\n---\n" + VALID, 1, "YAML syntax error"),
    ("unclosed_flow", VALID + "x: [a, {b: c\n", END + 1, "YAML syntax error"),
    ("unclosed_quote", VALID + 'x: "abc\n', END + 1, "YAML syntax error"),
    # very long keys
    ("long_unknown_key", VALID + "? " + "k" * 100_000 + "\n: 1\n", END, "unknown key"),
    ("long_implicit_key", VALID + "k" * 100_000 + ": 1\n", END, "YAML syntax error"),
    # bounds on the work a spec asks for
    ("too_many_values", VALID + "x: [" + "1," * MAX_NODES + "]\n", END, f"more than {MAX_NODES} values"),
    (
        "too_many_suites",
        VALID + "".join(f"  s{i}:\n    file: t{i}.txt\n" for i in range(MAX_SUITES)),
        4,
        f"at most {MAX_SUITES}",
    ),
    (
        "suites_times_defaults",
        "defaults:\n  sections:\n    s:\n"
        + "".join(f"      k{i}: v\n" for i in range(MAX_NODES // 100))
        + "tipcgen: 1\nmodel: demo\nlayout: paddleocr\nsuites:\n"
        + "".join(f"  s{i}:\n    file: t{i}.txt\n    topology: [0]\n" for i in range(120)),
        MAX_NODES // 100 + 7,
        "values to check",
    ),
]


def _write(tmp_path, name: str, text) -> str:
    path = tmp_path / f"{name}.yml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return str(path)


def _load_error(path: str) -> SpecError:
    start = time.monotonic()
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert time.monotonic() - start < bound(SECONDS), f"loading {path} took {time.monotonic() - start:.1f}s"
    return info.value


def _cli(*args: str, timeout: float = 10) -> subprocess.CompletedProcess:
    """`tipcgen validate ARGS`; one spec (plus interpreter start-up) within the time bound."""
    start = time.monotonic()
    result = run_cli("validate", *args, cwd=os.getcwd(), timeout=timeout)
    if len(args) == 1:
        assert time.monotonic() - start < bound(SECONDS + 1), f"tipcgen validate took {time.monotonic() - start:.1f}s"
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_hostile_spec_is_a_located_error(tmp_path, case):
    name, text, line, words = case
    path = _write(tmp_path, name, text)
    first = _load_error(path).problems[0]
    assert first.file == path
    assert words in first.message, first.render()
    assert first.line == line, first.render()
    assert first.col is not None or name in ("not_utf8", "utf16"), first.render()


def test_cli_reports_each_hostile_spec(tmp_path):
    """`tipcgen validate` on every case at once (one process keeps this fast): exit 2, each file's
    `path:LINE:` error, no traceback."""
    paths = {name: _write(tmp_path, name, text) for name, text, _, _ in CASES}
    result = _cli(*paths.values(), timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    for name, _, line, words in CASES:
        where = f"{paths[name]}:{line}:"
        assert any(out.startswith(where) and " error: " in out and words in out for out in lines), (name, where)


@pytest.mark.parametrize("name", ["capital_suite_train", "deep_lists", "billion_laughs"])
def test_cli_one_hostile_spec(tmp_path, name):
    _, text, line, words = next(c for c in CASES if c[0] == name)
    path = _write(tmp_path, name, text)
    result = _cli(path)
    assert result.returncode == 2, result.stdout + result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{path}:{line}:") and " error: " in first and words in first, result.stderr


def test_billion_laughs_stops_at_the_alias_that_crosses_the_bound(tmp_path):
    path = _write(tmp_path, "laughs", _laughs())
    first = _load_error(path).problems[0]
    assert END < first.line < END + 9  # on one of the a1..a8 lines
    assert f"more than {MAX_NODES} values" in first.message


# Inputs whose checks belong to the schema (other engineers' policy): only "no traceback, exit 0 or 2".
NO_TRACEBACK = [
    ("inf", VALID.replace("lite_train_lite_infer: 1}", "lite_train_lite_infer: .inf}")),
    ("nan", VALID.replace("lite_train_lite_infer: 1}", "lite_train_lite_infer: .nan}")),
    ("neg_inf_list", VALID.replace("values: [1]}", "values: [-.inf]}")),
    ("huge_number_field", VALID.replace("lite_train_lite_infer: 1}", "lite_train_lite_infer: 1e999}")),
    ("hex_number", VALID.replace("lite_train_lite_infer: 1}", "lite_train_lite_infer: 0x" + "f" * 990 + "}")),
    ("timestamp_value", VALID.replace("model: demo", "model: 2001-12-14")),
    ("nul_escape", VALID.replace("model_name: demo_rec", 'model_name: "demo\\0rec"')),
    ("long_line", VALID.replace("model: demo", "model: " + "d" * 500_000)),
    ("bom_inside", VALID.replace("layout:", "\ufefflayout:")),
    ("cr_only", VALID.replace("\n", "\r")),
    ("nel_breaks", VALID.replace("\n", "\x85")),
]


@pytest.mark.parametrize("case", NO_TRACEBACK, ids=[c[0] for c in NO_TRACEBACK])
def test_no_traceback(tmp_path, case):
    name, text = case
    path = _write(tmp_path, name, text)
    start = time.monotonic()
    try:
        load_spec(path)
    except SpecError as exc:
        assert all(p.file == path for p in exc.problems)
    assert time.monotonic() - start < bound(SECONDS)


def test_cli_no_traceback(tmp_path):
    paths = [_write(tmp_path, name, text) for name, text in NO_TRACEBACK]
    result = _cli(*paths, timeout=60)
    assert result.returncode in (0, 2), result.stderr
    for line in result.stderr.splitlines():
        assert any(line.startswith(f"{p}:") for p in paths) and " error: " in line, line


# Inputs that must keep working.
def _anchored() -> str:
    return VALID.replace(
        "      device: {key: Global.use_gpu, values: [True, True]}",
        "      device: &dev {key: Global.use_gpu, values: [&t True, *t]}",
    ).replace("    topology: [0, [0, 1]]", "    topology: &topo [0, [0, 1]]") + (
        "  other:\n"
        "    file: other.txt\n"
        "    model_name: demo_rec\n"
        "    topology: *topo\n"
        "    train:\n"
        "      device: *dev\n"
        "      epochs: {key: Global.epoch_num, by_mode: {lite_train_lite_infer: 1}}\n"
        "      batch_size: {key: Train.loader.batch_size_per_card, by_mode: {lite_train_lite_infer: 2}}\n"
        "    trainers:\n"
        "      norm: {train: tools/train.py -c a.yml -o, export: tools/export_model.py -c a.yml -o}\n"
        "    inference:\n"
        "      script: tools/infer/predict_rec.py\n"
        "      use_gpu: {key: --use_gpu, values: [False]}\n"
        "      batch_size: {key: --rec_batch_num, values: [1]}\n"
    )


KEEP_WORKING = [
    ("plain", VALID),
    ("bom", "\ufeff" + VALID),
    ("crlf", VALID.replace("\n", "\r\n")),
    ("no_final_newline", VALID.rstrip("\n")),
    ("explicit_document", "%YAML 1.2\n---\n" + VALID + "...\n"),
    ("core_tags", VALID.replace("model: demo", "model: !!str demo").replace("tipcgen: 1", "tipcgen: !!int 1")),
    ("anchors_and_aliases", _anchored()),
    ("comments", "# a spec\n" + VALID.replace("\n", "  # note\n")),
]


@pytest.mark.parametrize("case", KEEP_WORKING, ids=[c[0] for c in KEEP_WORKING])
def test_ordinary_yaml_still_loads(tmp_path, case):
    name, text = case
    spec = load_spec(_write(tmp_path, name, text))
    assert spec.model == "demo"
    assert spec.suites["normal"].topology[1].gpus == [0, 1]


def test_aliases_are_copies_with_positions(tmp_path):
    spec = load_spec(_write(tmp_path, "anchored", _anchored()))
    assert spec.suites["other"].topology == spec.suites["normal"].topology
    assert spec.suites["other"].train.device.values == [True, True]  # an anchored `true` stays a bool
    data, pos = load_yaml(_anchored(), "a.yml")
    assert data["suites"]["other"]["topology"] == [0, [0, 1]]
    assert data["suites"]["other"]["topology"] is not data["suites"]["normal"]["topology"]
    # the alias itself is where it is used; what it repeats is where it was written
    use = _anchored().split("\n").index("    topology: *topo") + 1
    assert pos.values[("suites", "other", "topology")] == (use, 15)
    assert pos.values[("suites", "other", "topology", 1)] == (8, 25)


def test_json_surrogate_pairs_are_joined():
    data, _ = load_yaml('a: "\\ud83d\\ude00"\n', "a.yml")
    assert data == {"a": "\U0001f600"}


def test_clean_loc_keeps_user_keys_that_look_like_tags():
    assert clean_loc(("train", "epochs", "by_mode", "lite_train_lite_infer", "bool")) == (
        "train",
        "epochs",
        "by_mode",
        "lite_train_lite_infer",
    )
    assert clean_loc(("sections", "str", "bool", "str")) == ("sections", "str", "bool")
    assert clean_loc(("Train",)) == ("Train",)
    assert clean_loc(("sections", "a", 3, "[key]")) == ("sections", "a", 3)
    assert clean_loc(("suites", "Model", "Download"), SpecFile) == ("suites", "Model", "Download")
    assert clean_loc(("prepare", "whole_infer", 0, "Download", "extract", "literal['tar','zip']"), SpecFile) == (
        "prepare",
        "whole_infer",
        0,
        "extract",
    )
    assert clean_loc(("topology", 0, "gpus"), Suite) == ("topology", 0, "gpus")


# 6. paths that are not regular files, and files over the size bound


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.yml"
    os.mkfifo(fifo)
    assert "named pipe" in _load_error(str(fifo)).problems[0].message
    result = _cli(str(fifo))
    assert result.returncode == 2 and f"{fifo}: error: " in result.stderr and "named pipe" in result.stderr


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_devices_are_refused(device):
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    assert "character device" in _load_error(device).problems[0].message
    result = _cli(device)
    assert result.returncode == 2 and f"{device}: error: " in result.stderr


def test_directory_is_refused(tmp_path):
    folder = tmp_path / "specs.yml"
    folder.mkdir()
    assert "directory" in _load_error(str(folder)).problems[0].message
    result = _cli(str(folder))  # the CLI reads a directory as the specs in it: there are none
    assert result.returncode == 2 and str(folder) in result.stderr


def test_huge_sparse_file_is_refused_unread(tmp_path):
    huge = tmp_path / "huge.yml"
    with open(huge, "wb") as fh:
        fh.truncate(8 << 30)  # 8 GiB of nothing: reading it would take minutes and all memory
    err = _load_error(str(huge)).problems[0]
    assert f"limit for a spec or config is {MAX_FILE_BYTES} bytes" in err.message
    result = _cli(str(huge))
    assert result.returncode == 2 and f"{huge}: error: file is {8 << 30} bytes" in result.stderr


def test_file_just_over_the_bound_is_refused(tmp_path):
    path = tmp_path / "big.yml"
    path.write_text(VALID + "#" * (MAX_FILE_BYTES - len(VALID)) + "\n")
    assert os.stat(path).st_size == MAX_FILE_BYTES + 1 and stat.S_ISREG(os.stat(path).st_mode)
    assert "limit" in _load_error(str(path)).problems[0].message


def test_missing_file(tmp_path):
    path = str(tmp_path / "nope.yml")
    assert "No such file" in _load_error(path).problems[0].message
    assert _cli(path).returncode == 2


# 7. anything under the bounds loads fast


def _timed_load(tmp_path, name: str, text: str):
    path = _write(tmp_path, name, text)
    assert os.stat(path).st_size <= MAX_FILE_BYTES
    start = time.monotonic()
    spec = load_spec(path)
    elapsed = time.monotonic() - start
    assert elapsed < bound(SECONDS), f"{name}: {elapsed:.1f}s"
    return spec


def test_comments_up_to_the_size_bound_load_fast(tmp_path):
    # ruamel's round-trip scanner is quadratic in a run of comment lines; the bound and the
    # linear scanner keep the largest accepted file well under the time bound
    room = MAX_FILE_BYTES - len(VALID) - 100
    _timed_load(tmp_path, "comments", VALID + "#\n" * (room // 2))
    _timed_load(tmp_path, "blank", VALID + "\n" * room)


def test_values_up_to_the_node_bound_load_fast(tmp_path):
    n = MAX_NODES - 200
    spec = _timed_load(tmp_path, "values", VALID + "other_configs:\n  x.txt:\n    lines: [" + "a," * n + "]\n")
    assert len(spec.other_configs["x.txt"].lines) == n


def test_large_plain_document_cli_under_bound(tmp_path):
    path = _write(tmp_path, "many", VALID + "".join(f"# comment {i}\n" for i in range(20_000)))
    result = _cli(path)
    assert result.returncode == 0, result.stderr


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
