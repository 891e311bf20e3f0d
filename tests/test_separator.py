"""A layout's key/value separator (issue 34): the TIPC configs' colon by default, or blanks for a
C++ binary's own `key  value` config (PaddleSeg's and the models tutorial's test_inference_cpp.sh
read theirs with `IFS=" "`). One parser (script/lines.split_line through the layout's separator)
and one printer (lower/text.py) read it; import, ConfigView and lint follow the layout."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import pytest

from tipcgen.dialects.base import TEXT, F, Layout
from tipcgen.dialects.chains import CHAIN_LAYOUTS
from tipcgen.importer import import_suite
from tipcgen.lint.checks import lint_text
from tipcgen.lower.configview import ConfigView
from tipcgen.lower.text import config_text
from tipcgen.script.decode import decode
from tipcgen.script.lines import split_line, split_lines
from tipcgen.spec.ir import Suite

# Free-key roles of the train suites' inference lines: enough typed fields for a toy table.
_FLAGS = (
    "use_gpu",
    "mkldnn",
    "threads",
    "batch_size",
    "tensorrt",
    "precision",
    "model_dir",
    "data",
    "save_log",
    "benchmark",
    "extra",
    "extra2",
)
_DIALECT = CHAIN_LAYOUTS["paddleseg_paddle2onnx"].dialect  # any chain's: the toy table runs nothing

# A toy C++ binary config of our own: comments, `key value` lines, some keys padded with two blanks.
TOY = "# load\nmodel_name toy\nuse_gpu  1\ngpu_mem  4000\n\n# paths\nmodel_path ./toy/model.pdmodel\nthreads 2\n"


def _layout(lines: list[str], blanks: dict, separator: str = " ") -> Layout:
    """A table for a C++ config's non-empty lines: `#` lines fixed text, model_name, then free-key flags."""
    rows = []
    flags = iter(_FLAGS)
    for line in lines:
        if line.startswith("#"):
            rows.append(TEXT(line))
            continue
        key = split_line(line, " ")[0]
        role = "model_name" if key == "model_name" else f"inference.{next(flags)}"
        rows.append(F(role, "model_name" if role == "model_name" else None, separator=blanks.get(key)))
    return Layout("toy_cpp", "toy C++ binary config", tuple(rows), _DIALECT, len(lines) + 2, separator=separator)


def _import(text: str, layout: Layout, name: str = "toy.txt") -> dict:
    return import_suite(decode(name, text.encode()), layout, name)


def _word(line: str, n: int) -> str:
    """What the scripts' func_parser_key_cpp (n=0) and func_parser_value_cpp (n=1) read."""
    words = line.split()
    return words[n] if len(words) > n else ""


def test_split_line_on_a_colon_is_unchanged_and_on_blanks_reads_key_and_rest():
    assert split_line("a:b:c") == ("a", "b:c") and split_line("no colon") == ("no colon", "")
    assert split_line("use_gpu  0", " ") == ("use_gpu", "0")
    assert split_line("model_name x y", " ") == ("model_name", "x y")
    assert split_line("alone", " ") == ("alone", "")


def test_a_blank_separated_config_imports_typed_and_lowers_back_byte_for_byte():
    layout = _layout(split_lines(TOY), {"use_gpu": "  ", "gpu_mem": "  "})
    data = _import(TOY, layout)
    assert "line_overrides" not in data["trivia"]
    assert data["model_name"] == "toy"
    assert data["inference"]["use_gpu"] == {"key": "use_gpu", "values": [1]}  # (a list flag's line)
    assert data["inference"]["threads"]["key"] == "model_path" and data["inference"]["batch_size"]["key"] == "threads"
    suite = Suite.model_validate(data)
    assert config_text(suite, layout) == TOY
    # a typed edit is written with the row's own blanks
    edited = suite.model_copy(update={"model_name": "other"})
    assert split_lines(config_text(edited, layout))[1] == "model_name other"


def test_a_line_padded_otherwise_than_its_row_is_kept_verbatim():
    layout = _layout(split_lines(TOY), {})  # every row one blank: the two padded lines differ
    data = _import(TOY, layout)
    assert data["trivia"]["line_overrides"] == {2: "use_gpu  1", 3: "gpu_mem  4000"}
    assert config_text(Suite.model_validate(data), layout) == TOY


def test_configview_reads_a_blank_separated_line_as_the_scripts_do():
    layout = _layout(split_lines(TOY), {"use_gpu": "  "})
    view = ConfigView.parse(TOY, layout)
    for role, line in (("model_name", "model_name toy"), ("inference.use_gpu", "use_gpu  1")):
        assert view.line(role) == line
        assert (view.key(role), view.value(role)) == (_word(line, 0), _word(line, 1))


def test_configview_reads_a_blank_separated_value_to_its_first_blank_as_the_scripts_do():
    text = TOY.replace("model_path ./toy/model.pdmodel", "model_path ./toy/a b")
    layout = _layout(split_lines(TOY), {"use_gpu": "  ", "gpu_mem": "  "})
    assert ConfigView.parse(text, layout).value("inference.threads") == "./toy/a"  # func_parser_value_cpp's
    data = _import(text, layout)  # import keeps the whole rest of the line
    assert data["inference"]["threads"] == {"key": "model_path", "values": ["./toy/a b"]}  # (a list flag)
    assert config_text(Suite.model_validate(data), layout) == text


def test_lint_reads_keys_on_the_layouts_separator():
    layout = _layout(split_lines(TOY), {"use_gpu": "  "})
    assert [f for f in lint_text(TOY, layout, "toy.txt") if f.rule == "TIPC005"] == []
    shifted = TOY.replace("model_name toy\n", "")
    assert [f.rule for f in lint_text(shifted, layout, "toy.txt") if f.rule == "TIPC005"] == ["TIPC005"]


def test_the_default_separator_is_the_colon():
    layout = CHAIN_LAYOUTS["paddleseg_paddle2onnx"]
    assert layout.separator == ":" and all(layout.row_separator(r) == ":" for r in layout.rows if r.kind == "field")


def _cpp_configs(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.txt") if p.read_text(errors="replace").startswith("# model load config"))


def _blank_runs(configs: list[Path]) -> dict[str, set]:
    runs: dict[str, set] = {}
    for config in configs:
        for line in split_lines(config.read_text()):
            if not line.startswith("#"):
                key = split_line(line, " ")[0]
                runs.setdefault(key, set()).add(line[len(key) : len(line) - len(line[len(key) :].lstrip(" "))])
    return runs


@pytest.mark.corpus
@pytest.mark.parametrize("repo", ["PaddleSeg", "models"])
def test_every_cpp_binary_config_imports_typed_byte_for_byte(corpus: Path, repo: str):
    configs = _cpp_configs(corpus / repo)
    if not configs:
        pytest.skip(f"no C++ binary configs (`# model load config`) under {corpus / repo}")
    runs = _blank_runs(configs)
    # one blank run per key across the repo's configs: a fixed table can hold them
    assert all(len(r) == 1 for r in runs.values()), runs
    blanks: dict[str, Optional[str]] = {key: next(iter(r)) for key, r in runs.items()}
    for config in configs:
        text = config.read_text()
        # the 14 lines the scripts read (`awk NR==1,NR==14`) typed; any further ones kept as they are
        layout = _layout(split_lines(text)[:14], {k: v for k, v in blanks.items() if v != " "})
        data = _import(text, layout, config.name)
        assert "line_overrides" not in data["trivia"], config
        assert config_text(Suite.model_validate(data), layout) == text, config
        view = ConfigView.parse(text, layout)
        for line in split_lines(text)[:14]:
            if line.startswith("model_name"):
                assert view.value("model_name") == _word(line, 1)
