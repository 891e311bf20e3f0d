"""PaddleDetection's test_paddle2onnx.sh: its 30 lines, and what it runs (a table): for each item of
its infer_mode list, export the trained weights with that item's export command (not for `null`),
convert the exported model to ONNX and infer it; logs in ./test_tipc/output/<model_name>/<MODE>/.
Its func_parser_value keeps a value whole (no cut at a second colon)."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.base import SEP, F, H, Layout
from tipcgen.dialects.chains.paddle2onnx import P2O_DIALECT
from tipcgen.dialects.steps import Case, ChainTable, Command, Deviation, Lit, Loop, Param, Val

# fmt: off
EXPORTS = (("norm", "p2o.export.norm"), ("quant", "p2o.export.quant"), ("fpgm", "p2o.export.fpgm"),
           ("distill", "p2o.export.distill"), ("kl_quant", "p2o.export.kl_quant"))
EXPORT = (Val("python"), Case("infer_mode", "run_export", EXPORTS, "Undefined infer_mode!"),
          Param("p2o.export.weights", "set_export_weight"), Param("p2o.export.filename", value="model_name"),
          Param("p2o.export.param", "set_export_param"), Param("p2o.export.save_dir", "set_save_export_dir"),
          Lit(""))  # its command ends in a blank (the status line shows it)
DIR = (Val("p2o.export.save_dir"), Lit("/"), Val("model_name"))  # where the export put the model
ONNX = (*DIR, Lit("/"), Val("p2o.save_file"))
CONVERT = (Val("p2o.command"), Param("p2o.model_dir", "set_dirname", value=DIR), Param("p2o.model_filename"),
           Param("p2o.params_filename"), Param("p2o.save_file", "set_save_model", value=ONNX),
           Param("p2o.opset", "set_opset_version"), Param("p2o.checker_flag", "set_enable_onnx_checker"),
           Param("p2o.extra", "set_paddle2onnx_params1"))
INFER = (Val("python"), Val("p2o.infer.script"),
         Param("p2o.infer.cfg", "set_infer_cfg", value=(*DIR, Lit("/infer_cfg.yml"))),
         Param("p2o.infer.model", "set_onnx_file", value=ONNX), Param("p2o.infer.data", "set_infer_image_file"),
         Param("p2o.infer.extra", "set_infer_param1"))
KV = (("p2o.export.save_dir", "save_export"), ("p2o.export.weights", "export_weight"),
      ("p2o.export.param", "export_param"), ("p2o.model_filename", "model_filename"),
      ("p2o.params_filename", "params_filename"), ("p2o.save_file", "save_file"), ("p2o.opset", "opset_version"),
      ("p2o.checker_flag", "enable_onnx_checker"), ("p2o.extra", "paddle2onnx_params1"),
      ("p2o.infer.data", "infer_image"), ("p2o.infer.extra", "infer_param1"))
READS = (  # what the script reads and uses, named as upstream's
    ("model_name", "value", "model_name"), ("python", "value", "python"),
    ("filename_key", "key", "p2o.export.filename"),
    *((f"{var}_{kind}", kind, role) for role, var in KV for kind in ("key", "value")),
    ("norm_export", "value", "p2o.export.norm"), ("pact_export", "value", "p2o.export.quant"),
    ("fpgm_export", "value", "p2o.export.fpgm"), ("distill_export", "value", "p2o.export.distill"),
    ("kl_quant_export", "value", "p2o.export.kl_quant"), ("infer_mode_list", "value", "p2o.infer_modes"),
    ("padlle2onnx_cmd", "value", "p2o.command"), ("model_dir_key", "key", "p2o.model_dir"),
    ("inference_py", "value", "p2o.infer.script"), ("infer_cfg_key", "key", "p2o.infer.cfg"),
    ("onnx_file_key", "key", "p2o.infer.model"),
)
UNDEFINED = Deviation(
    "undefined-infer-mode-refused",
    "refuses a config whose infer_mode list has an item other than norm, quant, fpgm, distill, kl_quant "
    "(or null) before anything runs",
    "upstream runs the items before it, then prints `Undefined infer_mode!` and exits 1 halfway",
)
PADDLEDETECTION_PADDLE2ONNX = Layout(
    "paddledetection_paddle2onnx",
    "PaddleDetection paddle2onnx config (30 lines, test_paddle2onnx.sh)",
    (H("paddle2onnx_params"), F("model_name", "model_name"), F("python", "python"),
     F("p2o.export.filename", lint_keys=("filename",)), SEP,
     F("p2o.export.save_dir", "--output_dir"), F("p2o.export.weights", "weights"),
     F("p2o.export.norm", "norm_export"), F("p2o.export.quant", "quant_export"), F("p2o.export.fpgm", "fpgm_export"),
     F("p2o.export.distill", "distill_export"), F("p2o.export.extra", lint_keys=("export1",)),
     F("p2o.export.param", lint_keys=("export_param",)), F("p2o.export.kl_quant", "kl_quant_export"), SEP,
     F("p2o.infer_modes", "infer_mode"), F("p2o.infer_quant", "infer_quant"), F("p2o.command", "cmd"),
     F("p2o.model_dir", "--model_dir"), F("p2o.model_filename", "--model_filename"),
     F("p2o.params_filename", "--params_filename"), F("p2o.save_file", "--save_file"),
     F("p2o.opset", "--opset_version"), F("p2o.checker_flag", lint_keys=("--enable_onnx_checker",)),
     F("p2o.extra", lint_keys=("paddle2onnx_param1",)), F("p2o.infer.script", "infer_py"),
     F("p2o.infer.cfg", "--infer_cfg"), F("p2o.infer.model", "--onnx_file"), F("p2o.infer.data", "--image_file"),
     F("p2o.infer.extra", lint_keys=("infer_param1",))),
    replace(
        P2O_DIALECT,
        runners=("paddledetection_paddle2onnx",),
        values_to_colon=False,
        reads=READS,
        matrix_roles=("p2o.infer_modes",),
        command_roles=("p2o.command", *(role for _item, role in EXPORTS)),
        table=ChainTable("paddle2onnx_infer", "./test_tipc/output/{model_name}/{mode}",
                         "{verdict} with command - {model} - {command} - {log}  ", (  # its status_check
            Loop("p2o.infer_modes", "infer_mode", (
                Command("export", EXPORT, "export.log", "export_log_path", shown="{cmd}", unless_null="infer_mode",
                        null_or_empty=True, note="The trained weights exported by the infer_mode's export command."),
                Command("export", CONVERT, "trans_model.log", "trans_log_path", shown="{cmd}",
                        note="paddle2onnx: the exported model to ONNX."),
                Command("infer", INFER, "paddle2onnx_infer_cpu.log", "_save_log_path", shown="{cmd}",
                        note="The ONNX model's inference."),
            ), note="Each infer_mode: its export (none for `null`), the conversion, the inference."),
        ), deviations=(UNDEFINED,)),
    ),
    read_lines=30,
    detect=lambda sig: (
        "paddle2onnx_params with `norm_export:` and `infer_mode:` keys (PaddleDetection test_paddle2onnx.sh)"
        if "paddle2onnx_params" in sig.headers and sig.key(7) == "norm_export" and sig.key(15) == "infer_mode"
        else None
    ),
)
# fmt: on
