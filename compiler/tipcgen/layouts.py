"""Layout tables: which field sits on which line of a legacy config.

A layout is data, not code: emitting (lower.py), reading configs the way the
upstream scripts do (configview.py) and the generated bash (its line indices)
all read the same table, so they cannot drift apart. A new layout is a new
table here plus golden files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Optional

BAR = "=" * 27


def header(name: str, trailing: str = "", right: int = 27) -> str:
    return f"{BAR}{name}{'=' * right}{trailing}"


@dataclass(frozen=True)
class Row:
    """One line of the core layout.

    kind "header": a section header (name + default bytes);
    kind "sep": the `##` separator; kind "field": a `key:value` line whose key is
    `key` when fixed by the layout, or comes from the spec when `key` is None.
    """

    kind: str
    role: Optional[str] = None  # field rows: what the line means
    key: Optional[str] = None  # fixed key text, if the layout fixes it
    text: Optional[str] = None  # header/sep: default bytes
    name: Optional[str] = None  # header: section name
    # Keys lint also accepts on this line (field rows), or expects by convention when the
    # layout does not fix the key (e.g. PaddleSeg's `--model_name` on line 51).
    lint_keys: tuple = ()


def H(name: str, trailing: str = "", right: int = 27) -> Row:
    return Row("header", text=header(name, trailing, right), name=name)


SEP = Row("sep", text="##")


def F(role: str, key: Optional[str] = None, lint_keys: tuple = ()) -> Row:
    return Row("field", role=role, key=key, lint_keys=lint_keys)


@dataclass(frozen=True)
class Dialect:
    """How the test script of a layout family turns config lines into steps.

    These are the behaviours that differ between upstream script families; the
    Plan (plan.py) and the bash template both read them.
    """

    family: str  # "ocr": 51-line trainer-slot script; "models": tutorial script
    launch_device_flag: str = "--gpus"
    # models family: no autocast line; the log names carry this constant instead.
    autocast_constant: Optional[str] = None
    # models family: GPU ids exported for eval/inference of a multi-node run.
    multinode_env_first_gpu: bool = False


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

    def index(self, role: str) -> Optional[int]:
        """Line index (0-based, as the scripts' `lines[i]`) of a role, or None."""
        return self._indices.get(role)

    @cached_property
    def _indices(self) -> dict:
        return {row.role: i for i, row in enumerate(self.rows) if row.role is not None}

    @property
    def roles(self) -> list[str]:
        return [r.role for r in self.rows if r.kind == "field"]

    def section_header(self, name: str) -> str:
        if name in self.section_headers:
            return self.section_headers[name]
        return header(name, right=26 if name in _BENCHMARK_SECTIONS else 27)

    def row_for_role(self, role: str) -> Optional[Row]:
        i = self.index(role)
        return None if i is None else self.rows[i]


# Trailing benchmark sections upstream writes with 26 `=` on the right.
_BENCHMARK_SECTIONS = {"infer_benchmark_params", "train_benchmark_params", "disable_train_benchmark"}


# PaddleOCR's train-type layout (test_train_inference_python.sh reads lines 1-51).
PADDLEOCR = Layout(
    name="paddleocr",
    description="PaddleOCR train-type config (51 lines)",
    rows=(
        H("train_params"),
        F("model_name", "model_name"),
        F("python", "python"),
        F("gpu_list", "gpu_list"),
        F("train.device"),
        F("train.autocast"),
        F("train.epochs"),
        F("train.save_dir"),
        F("train.batch_size"),
        F("train.pretrained"),
        F("train.model_file", "train_model_name"),
        F("train.infer_img_dir", "train_infer_img_dir"),
        F("train.extra"),
        SEP,
        F("train.run", "trainer"),
        F("trainer.norm.train"),
        F("trainer.pact.train"),
        F("trainer.fpgm.train"),
        F("trainer.distill.train"),
        F("trainer.slot1.train"),
        F("trainer.slot2.train"),
        SEP,
        H("eval_params", trailing=" "),
        F("eval.command", "eval"),
        F("eval.extra"),
        SEP,
        H("infer_params"),
        F("export.save_dir"),
        F("export.weights"),
        F("trainer.norm.export"),
        F("trainer.pact.export"),
        F("trainer.fpgm.export"),
        F("trainer.distill.export"),
        F("trainer.slot1.export"),
        F("trainer.slot2.export"),
        F("export.inference_dir", "inference_dir"),
        F("whole_infer.models", "infer_model"),
        F("whole_infer.exports", "infer_export"),
        F("whole_infer.quant", "infer_quant"),
        F("inference.script", "inference"),
        F("inference.use_gpu"),
        F("inference.mkldnn"),
        F("inference.threads"),
        F("inference.batch_size"),
        F("inference.tensorrt"),
        F("inference.precision"),
        F("inference.model_dir"),
        F("inference.data"),
        F("inference.save_log"),
        F("inference.benchmark"),
        F("inference.extra"),
    ),
    dialect=Dialect(family="ocr"),
    read_lines=51,
)


def _variant(base: Layout, name: str, description: str, dialect: Dialect, changes: dict,
             read_lines: Optional[int] = None) -> Layout:
    """A layout that differs from `base` on a few rows (index -> Row; None drops... never)."""
    rows = list(base.rows)
    for index, row in sorted(changes.items()):
        if index == len(rows):
            rows.append(row)
        else:
            rows[index] = row
    return Layout(name, description, tuple(rows), dialect, read_lines or base.read_lines)


# PaddleClas: slot 19 is `to_static_train`, line 33 `kl_quant`, line 35 the pretrained model URL,
# and its infer_params header has 26 `=` on the right.
PADDLECLAS = _variant(PADDLEOCR, "paddleclas", "PaddleClas train-type config (51 lines)",
                      Dialect(family="ocr", launch_device_flag="--devices"), {
                          26: H("infer_params", right=26),
                          35: F("export.model_url", "pretrained_model_url",
                                ("inference_dir", "inference_model_url")),
                      })

# PaddleSeg: export_params header at 26, infer_params header at 35 (no inference_dir line), and a
# second extra inference flag at 51.
PADDLESEG = _variant(PADDLEOCR, "paddleseg", "PaddleSeg train-type config (52 lines)",
                     Dialect(family="ocr", launch_device_flag="--devices"), {
                         22: H("eval_params"),
                         26: H("export_params"),
                         35: H("infer_params"),
                         50: F("inference.extra", lint_keys=("--save_dir",)),
                         51: F("inference.extra2", lint_keys=("--model_name",)),
                     }, read_lines=52)

# PaddleVideo: line 11 names the video dir used for inference after training.
PADDLEVIDEO = _variant(PADDLEOCR, "paddlevideo", "PaddleVideo train-type config (51 lines)",
                       Dialect(family="ocr", launch_device_flag="--devices"), {
                           11: F("train.infer_img_dir", "train_infer_video_dir"),
                           22: H("eval_params"),
                       })

# The `models` repo tutorial layout (train_infer_python.txt / train_fleet_infer_python.txt, 32 lines).
MODELS = Layout(
    name="models",
    description="PaddlePaddle/models tutorial train-type config (32 lines)",
    rows=(
        H("train_params"),
        F("model_name", "model_name"),
        F("python", "python"),
        F("gpu_list", "gpu_list"),
        F("train.device"),
        F("train.epochs"),
        F("train.save_dir"),
        F("train.batch_size"),
        F("train.pretrained"),
        F("train.model_file", "train_model_name"),
        F("train.data"),
        SEP,
        F("train.run", "trainer"),
        F("trainer.norm.train"),
        SEP,
        H("eval_params"),
        F("eval.command", "eval"),
        SEP,
        H("infer_params"),
        F("export.save_dir"),
        F("export.weights"),
        F("trainer.norm.export"),
        SEP,
        F("whole_infer.models", "train_model"),
        F("whole_infer.exports", "infer_export"),
        SEP,
        F("inference.script", "inference"),
        F("inference.use_gpu"),
        F("inference.batch_size"),
        F("inference.model_dir"),
        F("inference.data"),
        F("inference.benchmark"),
    ),
    dialect=Dialect(family="models", autocast_constant="False", multinode_env_first_gpu=True),
    read_lines=32,
)

LAYOUTS = {layout.name: layout for layout in (PADDLEOCR, PADDLECLAS, PADDLESEG, PADDLEVIDEO, MODELS)}


def get_layout(name: str) -> Layout:
    return LAYOUTS[name]
