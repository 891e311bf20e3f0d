"""PaddleOCR's test_paddle2onnx.sh: its 17 lines, and what it runs (a table). Its lines come in
det/rec pairs (the model to convert and the ONNX file to write, for the detector and for the
recognizer), and the model's name picks which it reads: a whole system (ch_PP-OCRv2, ch_PP-OCRv3,
ch_ppocr_mobile_v2_0, ch_ppocr_server_v2_0) converts both and infers with both, a name containing
`det` the detector, one containing `rec` the recognizer, a table model (slanet, en_table_structure)
its det pair (a dev-version conversion). Then per use_gpu item (False/cpu, True/gpu) the ONNX
inference; logs in ./test_tipc/output/<model_name>/paddle2onnx/."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.base import F, H, Layout
from tipcgen.dialects.chains.paddle2onnx import P2O_DIALECT
from tipcgen.dialects.chains.ptq import DEVICE
from tipcgen.dialects.steps import ChainTable, Command, Deviation, Item, Lit, Loop, Param, Pick, Val, When

# fmt: off
SYSTEMS = ("ch_PP-OCRv2", "ch_PP-OCRv3", "ch_ppocr_mobile_v2_0", "ch_ppocr_server_v2_0")
TABLES = ("slanet", "en_table_structure")
# upstream's `if [ ${model_name} = ch_PP-OCRv2 ] || ...; elif [[ ${model_name} =~ "det" ]]; elif ...`
KIND = Pick("model_name", "model_kind", ((SYSTEMS, (), "system"), ((), ("det",), "det"), ((), ("rec",), "rec"),
                                         (TABLES, (), "table")),
            f"is none of {', '.join(SYSTEMS + TABLES)} and contains neither det nor rec")


def convert(pair: str, dev: str) -> tuple:
    """paddle2onnx of the det or the rec pair (its model dir and ONNX file under the script's own keys)."""
    return (Val("p2o.command"), Param(Lit("--model_dir"), "set_dirname", value=f"p2o.{pair}.model_dir"),
            Param("p2o.model_filename"), Param("p2o.params_filename"),
            Param(Lit("--save_file"), "set_save_model", value=f"p2o.{pair}.save_file"),
            Param("p2o.opset", "set_opset_version"), Param("p2o.checker", "set_enable_onnx_checker"),
            Lit(f"--enable_dev_version={dev}"))


def infer(*pairs: str) -> tuple:
    """The ONNX inference with the ONNX files of `pairs` (under the inference's det/rec keys)."""
    return (Val("python"), Val("p2o.infer.script"), Param("p2o.infer.use_gpu", "set_gpu", value=(Item("use_gpu"),)),
            Param("p2o.infer.data", "set_img_dir"),
            *(Param(f"p2o.infer.{pair}_model", f"set_{pair}_model_dir", value=f"p2o.{pair}.save_file")
              for pair in pairs),
            Lit("--use_onnx=True"))


def trans(pair: str, dev: str = "False") -> Command:
    return Command("export", convert(pair, dev), f"trans_model_{pair}.log", f"trans_{pair}_log",
                   shown="{cmd} > {log} 2>&1 ", note=f"paddle2onnx: the {pair} model to ONNX.")


def onnx_infer(*pairs: str) -> Command:
    return Command("infer", infer(*pairs), "paddle2onnx_infer_{device}.log", "_save_log_path",
                   shown="{cmd} > {log} 2>&1 ", note=f"The ONNX inference ({' and '.join(pairs)} model).")


PAIRS = (("p2o.model_filename", "model_filename"), ("p2o.params_filename", "params_filename"),
         ("p2o.opset", "opset_version"), ("p2o.checker", "enable_onnx_checker"), ("p2o.infer.data", "image_dir"))
# the det/rec lines' values only: the script sets them under keys of its own (--model_dir, --save_file)
VALUES = (("p2o.det.model_dir", "det_infer_model_dir"), ("p2o.det.save_file", "det_save_file"),
          ("p2o.rec.model_dir", "rec_infer_model_dir"), ("p2o.rec.save_file", "rec_save_file"))
READS = (  # what the script reads and uses, named as upstream's
    ("model_name", "value", "model_name"), ("python", "value", "python"), ("padlle2onnx_cmd", "value", "p2o.command"),
    *((f"{var}_value", "value", role) for role, var in VALUES),
    *((f"{var}_{kind}", kind, role) for role, var in PAIRS for kind in ("key", "value")),
    ("inference_py", "value", "p2o.infer.script"), ("use_gpu_key", "key", "p2o.infer.use_gpu"),
    ("use_gpu_list", "value", "p2o.infer.use_gpu"), ("det_model_key", "key", "p2o.infer.det_model"),
    ("rec_model_key", "key", "p2o.infer.rec_model"),
)
NO_KIND = Deviation(
    "model-name-of-no-kind-refused",
    "refuses a config whose model_name is none of the four OCR systems or the two table models and contains "
    "neither `det` nor `rec` before anything runs (exit 2)",
    "upstream converts nothing, then runs an empty command per use_gpu item and writes `Run successfully` "
    "status lines for it",
)
PADDLEOCR_PADDLE2ONNX = Layout(
    "paddleocr_paddle2onnx",
    "PaddleOCR paddle2onnx config (17 lines, test_paddle2onnx.sh)",
    (H("paddle2onnx_params"), F("model_name", "model_name"), F("python", "python"), F("p2o.command", "2onnx"),
     F("p2o.det.model_dir", "--det_model_dir"), F("p2o.model_filename", "--model_filename"),
     F("p2o.params_filename", "--params_filename"), F("p2o.det.save_file", "--det_save_file"),
     F("p2o.rec.model_dir", "--rec_model_dir"), F("p2o.rec.save_file", "--rec_save_file"),
     F("p2o.opset", "--opset_version"), F("p2o.checker", "--enable_onnx_checker"), F("p2o.infer.script", "inference"),
     F("p2o.infer.use_gpu", "--use_gpu"), F("p2o.infer.det_model", "--det_model_dir"),
     F("p2o.infer.rec_model", "--rec_model_dir"), F("p2o.infer.data", "--image_dir")),
    replace(
        P2O_DIALECT,
        runners=("paddleocr_paddle2onnx",),
        reads=READS,
        matrix_roles=("p2o.infer.use_gpu",),
        table=ChainTable("paddle2onnx_infer", "./test_tipc/output/{model_name}/paddle2onnx",
                         "{verdict} with command - {model} - {command} - {log} ", (  # its status_check
            KIND,
            When("model_kind", ("system", "det"), (trans("det"),), note="A system's or a detector's det pair."),
            When("model_kind", ("table",), (trans("det", "True"),),
                 note="A table model's det pair, converted with paddle2onnx's dev version."),
            When("model_kind", ("system", "rec"), (trans("rec"),), note="A system's or a recognizer's rec pair."),
            Loop("p2o.infer.use_gpu", "use_gpu", (
                When("model_kind", ("system",), (onnx_infer("det", "rec"),)),
                When("model_kind", ("det", "table"), (onnx_infer("det"),)),
                When("model_kind", ("rec",), (onnx_infer("rec"),)),
            ), note="Each use_gpu: False or cpu on the CPU, True or gpu on the GPU (upstream only echoes for another).",
                branch=DEVICE),
        ), deviations=(NO_KIND,)),
    ),
    read_lines=17,
    detect=lambda sig: (
        "paddle2onnx_params with `--det_model_dir:` and `--rec_save_file:` keys (PaddleOCR test_paddle2onnx.sh)"
        if "paddle2onnx_params" in sig.headers and sig.key(4) == "--det_model_dir" and sig.key(9) == "--rec_save_file"
        else None
    ),
)
# fmt: on
