"""The pieces a dialect is made of: line tables (Row, Layout), runner semantics (Dialect) and the
signature of a config that detection rules look at.

A layout is data, not code: emitting (lower/text.py), reading configs the way the upstream
scripts do (lower/configview.py), the Plan and the generated bash all read the same table, so
they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Optional

from tipcgen.dialects.steps import ChainTable

BAR = "=" * 27


def header(name: str, trailing: str = "", right: int = 27) -> str:
    return f"{BAR}{name}{'=' * right}{trailing}"


@dataclass(frozen=True)
class Row:
    """One line of the core layout.

    kind "header": a section header (name + default bytes);
    kind "sep": a line of fixed text (the `##` separator, a C++ config's `# comment` line: TEXT);
    kind "field": a `key:value` line whose key is `key` when fixed by the layout, or comes from the
    spec when `key` is None; between them the layout's separator, or the row's own `separator`
    (a C++ binary's config pads some keys with more blanks than others).
    """

    kind: str
    role: Optional[str] = None  # field rows: what the line means
    key: Optional[str] = None  # fixed key text, if the layout fixes it
    text: Optional[str] = None  # header/sep: default bytes
    name: Optional[str] = None  # header: section name
    # Keys lint also accepts on this line (field rows), or expects by convention when the
    # layout does not fix the key (e.g. PaddleSeg's `--model_name` on line 51).
    lint_keys: tuple = ()
    separator: Optional[str] = None  # field rows: this line's separator, when not the layout's


def H(name: str, trailing: str = "", right: int = 27) -> Row:
    return Row("header", text=header(name, trailing, right), name=name)


SEP = Row("sep", text="##")


def F(role: str, key: Optional[str] = None, lint_keys: tuple = (), separator: Optional[str] = None) -> Row:
    return Row("field", role=role, key=key, lint_keys=lint_keys, separator=separator)


def TEXT(text: str) -> Row:
    """A line of fixed text (a C++ config's `# model load config` comment)."""
    return Row("sep", text=text)


@dataclass(frozen=True)
class Signature:
    """What detection rules look at: a config's non-empty lines, their keys and section headers."""

    lines: tuple
    keys: tuple
    headers: frozenset
    trainer: Optional[int]  # index of the `trainer:` line among the first 30, if any
    # The config's file name, when the caller knows it: PaddleClas tells a chain's configs that
    # have a train's lines apart by their name only (dialects/chains/paddleclas_ptq.py).
    name: str = ""

    def key(self, index: int) -> str:
        return self.keys[index] if index < len(self.keys) else ""


@dataclass(frozen=True)
class Dialect:
    """How the test script of a layout family turns config lines into steps.

    These are the behaviours that differ between upstream script families; the
    Plan (plan.py) and the bash template both read them.
    """

    family: str  # "ocr": 51-line trainer-slot script; "models": tutorial script
    # The runners (plan/runners/<name>.py + its template) a suite of this dialect can target;
    # the first is the default (a spec's `runner:` or `--runner` picks another).
    runners: tuple = ("ocr",)
    launch_device_flag: str = "--gpus"
    # models family: no autocast line; the log names carry this constant instead.
    autocast_constant: Optional[str] = None
    # models family: GPU ids exported for eval/inference of a multi-node run.
    multinode_env_first_gpu: bool = False
    # models family: a run of this trainer is named `autocast_True` (only the names change).
    amp_trainer: Optional[str] = None
    # The generated bash's variables: (shell variable, "key"|"value", role), named as upstream's.
    reads: tuple = ()
    # Lists whose items become part of log file names (a `/` in one would leave test_tipc/output/).
    log_name_roles: tuple = ()
    # Lists the runner nests loops over: the product of their lengths bounds a mode's steps.
    matrix_roles: tuple = ()
    # A chain's roles whose value is a command fragment (`-m paddle_serving_client.convert`,
    # `clas_system config.txt demo.jpg`): typed as words (spec/policy.py ChainCommand); every other
    # chain role is one word of data (ChainWord).
    command_roles: tuple = ()
    # The train device line's value goes whole to every gpu_list entry (PaddleDetection), not one
    # value per entry: lint does not ask for a value per entry (TIPC011).
    device_whole: bool = False
    # Upstream's func_parser_value keeps a value only up to its next colon (PaddleClas's scripts):
    # the Plan reads values with ConfigView.value_to_colon, the bash cuts them after reading.
    values_to_colon: bool = False
    # The script this dialect's runner is (another chain's: its own name) and the status log it writes.
    script: str = "test_train_inference_python.sh"
    status_log: str = "results_python.log"
    # Another chain's docs page title, (zh, en) (default: its script's name).
    title: tuple = ()
    # Another chain's script that also takes a GPUID after its optional MODE (CONFIG [MODE] [GPUID]).
    gpuid_arg: bool = False
    # Files the build emits beside the chain's script: (name under test_tipc/, template).
    extra_files: tuple = ()
    # Another chain's script that, like the train runner, takes MODE as its second argument
    # (False: it takes the config alone and MODE defaults to the runner's only one).
    mode_required: bool = False
    # The prepare.sh modes whose configs give model_name as a `key value` line (a C++ config:
    # PaddleSeg's prepare.sh reads it with func_parser_value_cpp in cpp_infer): the generated
    # prepare.sh reads the name as its second word there (tipc_word), and so do the specs' checks.
    prepare_word_modes: tuple = ()
    # Modes besides its script's own in which the repo's prepare.sh, where it is in use for them,
    # prepares this chain's configs too (its script is one the train-config modes serve: PaddleSeg's
    # PTQ configs in `klquant_whole_infer`), traced by import as a verbatim config's are.
    prepare_modes: tuple = ()
    # Another chain's script that refuses the configs no script of its own repo family reads by
    # that name, though another family's does (PaddleDetection's PTQ script: a train config, which
    # PaddleClas's script of that name reads); False: any family's script of its name counts.
    family_sections: bool = False
    # Another chain's script whose second argument is no MODE (its MODE is fixed) but this, which it
    # reads and does not use, then a GPUID (PaddleDetection's C++ script: the Paddle Inference
    # library's link its build downloads): (its name in the usage, what the script says of it).
    second_arg: tuple = ()
    # A chain of fixed commands: its steps as data (dialects/steps.py), run by plan/runners/table.py
    # under the runner name `runners[0]` (no runner module, no template of its own).
    table: Optional[ChainTable] = None


@dataclass(frozen=True)
class Layout:
    name: str
    description: str
    rows: tuple[Row, ...]
    dialect: Dialect
    # Lines the upstream script reads (awk NR==1,NR==N).
    read_lines: int
    # Header of trailing sections (name -> default bytes).
    section_headers: dict = field(default_factory=dict)
    # Detection: a rule over a config's Signature returning why it matches (None: it does not).
    # A `generic` layout is the family's plain form: it yields to a layout whose own rule matches.
    detect: Optional[Callable[[Signature], Optional[str]]] = field(default=None, compare=False)
    generic: bool = False
    # Rows at the end a config may leave out (PaddleClas's C++ table: PP-ShiTu's last line only).
    optional_rows: int = 0
    # Between a line's key and value: the TIPC configs' colon, or blanks (" ": a C++ binary's own
    # `key value` config, read by a script's `IFS=" "` word split; script/lines.split_line).
    separator: str = ":"

    def index(self, role: str) -> Optional[int]:
        """Line index (0-based, as the scripts' `lines[i]`) of a role, or None."""
        return self._indices.get(role)

    @cached_property
    def _indices(self) -> dict:
        return {row.role: i for i, row in enumerate(self.rows) if row.role is not None}

    @property
    def roles(self) -> list[str]:
        return list(self._roles)

    @cached_property
    def _roles(self) -> tuple[str, ...]:
        return tuple(r.role for r in self.rows if r.kind == "field" and r.role is not None)

    def section_header(self, name: str) -> str:
        if name in self.section_headers:
            return self.section_headers[name]
        return header(name, right=26 if name in _BENCHMARK_SECTIONS else 27)

    def row_separator(self, row: Row) -> str:
        """The separator a field row's line is written with (its own, else the layout's)."""
        return row.separator if row.separator is not None else self.separator

    def row_for_role(self, role: str) -> Optional[Row]:
        i = self.index(role)
        return None if i is None else self.rows[i]


# Trailing benchmark sections upstream writes with 26 `=` on the right.
_BENCHMARK_SECTIONS = {"infer_benchmark_params", "train_benchmark_params", "disable_train_benchmark"}


def variant(
    base: Layout,
    name: str,
    description: str,
    dialect: Dialect,
    changes: dict,
    detect: Callable[[Signature], Optional[str]],
    read_lines: Optional[int] = None,
) -> Layout:
    """A layout that differs from `base` on a few rows (index -> Row; index == len appends)."""
    rows = list(base.rows)
    for index, row in sorted(changes.items()):
        if index == len(rows):
            rows.append(row)
        else:
            rows[index] = row
    return Layout(
        name, description, tuple(rows), dialect, read_lines or base.read_lines, detect=detect, separator=base.separator
    )


# The bash variables both script families read (see Dialect.reads).
COMMON_READS = (
    ("model_name", "value", "model_name"),
    ("python", "value", "python"),
    ("gpu_list", "value", "gpu_list"),
    ("epoch_key", "key", "train.epochs"),
    ("epoch_value", "value", "train.epochs"),
    ("save_model_key", "key", "train.save_dir"),
    ("train_batch_key", "key", "train.batch_size"),
    ("train_batch_table", "value", "train.batch_size"),
    ("pretrain_model_key", "key", "train.pretrained"),
    ("pretrain_model_value", "value", "train.pretrained"),
    ("train_model_name", "value", "train.model_file"),
    ("trainer_list", "value", "train.run"),
    ("norm_trainer", "value", "trainer.norm.train"),
    ("eval_py", "value", "eval.command"),
    ("save_infer_key", "key", "export.save_dir"),
    ("export_weight", "key", "export.weights"),
    ("norm_export", "value", "trainer.norm.export"),
    ("inference_py", "value", "inference.script"),
    ("use_gpu_key", "key", "inference.use_gpu"),
    ("use_gpu_list", "value", "inference.use_gpu"),
    ("batch_size_key", "key", "inference.batch_size"),
    ("batch_size_list", "value", "inference.batch_size"),
    ("infer_model_key", "key", "inference.model_dir"),
    ("image_dir_key", "key", "inference.data"),
    ("infer_img_dir", "value", "inference.data"),
    ("benchmark_key", "key", "inference.benchmark"),
    ("benchmark_value", "value", "inference.benchmark"),
)
