"""PaddleDetection's test_serving_infer_python.sh: its 24 lines, and what it runs (a table): for
each item of its infer_mode list, export the trained weights with that item's export command (not
for `null`), then for each item of `--opt` (`cpu:<option>|gpu:<option>`: the key names the logs,
the value is the web service's option) start the Python web service in the background, run the
HTTP client against it and stop the service. Logs in ./test_tipc/output/<model_name>/<MODE>/;
every command sees CUDA_VISIBLE_DEVICES=<GPUID> (3rd argument, default 0) as upstream exports it.
Its func_parser_value keeps a value whole (no cut at a second colon)."""

from __future__ import annotations

from tipcgen.dialects.base import SEP, Dialect, F, H, Layout
from tipcgen.dialects.chains.paddledetection_paddle2onnx import UNDEFINED
from tipcgen.dialects.steps import (
    Case,
    ChainTable,
    Command,
    Deviation,
    Item,
    Lit,
    Loop,
    Param,
    Service,
    Val,
    refuses_modes_but,
)

# fmt: off
# PaddleDetection's export block (its paddle2onnx chain's lines 3-13): the export command an
# infer_mode item picks, and its parameters.
EXPORTS = (("norm", "serving.export.norm"), ("quant", "serving.export.quant"), ("fpgm", "serving.export.fpgm"),
           ("distill", "serving.export.distill"), ("kl_quant", "serving.export.kl_quant"))
EXPORT_ROWS = (
    F("serving.export.filename", lint_keys=("filename",)), SEP,
    F("serving.export.save_dir", "--output_dir"), F("serving.export.weights", "weights"),
    F("serving.export.norm", "norm_export"), F("serving.export.quant", "quant_export"),
    F("serving.export.fpgm", "fpgm_export"), F("serving.export.distill", "distill_export"),
    F("serving.export.extra", lint_keys=("export1",)), F("serving.export.param", lint_keys=("export2",)),
    F("serving.export.kl_quant", "kl_quant_export"), SEP,
    F("serving.infer_modes", "infer_mode"), F("serving.infer_quant", "infer_quant"),
)
EXPORT_READS = (
    ("model_name", "value", "model_name"), ("python", "value", "python"),
    ("filename_key", "key", "serving.export.filename"),
    ("save_export_key", "key", "serving.export.save_dir"), ("save_export_value", "value", "serving.export.save_dir"),
    ("export_weight_key", "key", "serving.export.weights"),
    ("export_weight_value", "value", "serving.export.weights"),
    ("norm_export", "value", "serving.export.norm"), ("pact_export", "value", "serving.export.quant"),
    ("fpgm_export", "value", "serving.export.fpgm"), ("distill_export", "value", "serving.export.distill"),
    ("kl_quant_export", "value", "serving.export.kl_quant"), ("infer_mode_list", "value", "serving.infer_modes"),
)
EXPORT = (Val("python"), Case("infer_mode", "run_export", EXPORTS, "Undefined infer_mode!"),
          Param("serving.export.weights", "set_export_weight"), Param("serving.export.filename", value="model_name"),
          Param("serving.export.save_dir", "set_save_export_dir"),
          Lit(""))  # its command ends in a blank (the status line shows it)
EXPORT_COMMAND = Command("export", EXPORT, "export.log", "export_log_path", shown="{cmd}", unless_null="infer_mode",
                         null_or_empty=True, note="The trained weights exported by the infer_mode's export command.")
DIR = (Val("serving.export.save_dir"), Lit("/"), Val("model_name"))  # where the export put the model

STOPPED = Deviation(
    "serving-stopped-by-process-group",
    "each web service runs in a process group of its own and is stopped after its client (SIGTERM, then "
    "SIGKILL after TIPC_KILL_GRACE seconds), also when a step fails or the script is interrupted; the "
    "warm-up ends early when the service has ended, and the pause after the stop is dropped",
    "upstream kills every process of the user whose command line holds the service's name or port "
    "(`ps ux | grep ... | awk | xargs kill -9`: another job's too), and sleeps its fixed pauses",
    # its warm-up and pauses, recorded by the oracle's sleep shim (`sleep: upstream sleeps 5s 2s`)
    (r"^sleep: upstream sleeps [0-9]+s?( [0-9]+s?)*$",),
)
START_STATUS = Deviation(
    "serving-start-status",
    "a web service's status line says whether it is still up after its warm-up (or ended with 0); one "
    "that exits with an error during the warm-up is `Run failed`",
    "upstream's reports the exit status of putting the service in the background (`... &`), which is "
    "always 0: a service that dies at once is `Run successfully`",
    (r"^status: serve verdict upstream 'Run successfully' vs plan 'Run failed'",),
)
MODE_CHECKED = Deviation(
    "serving-mode-argument",
    "MODE (2nd argument, default serving_infer) must be serving_infer: another exits 2 before anything "
    "runs, saying a GPU id goes third",
    "upstream ignores its 2nd argument (its docs pass a GPU id there, which selects nothing): MODE is "
    "always serving_infer",
    (refuses_modes_but("serving_infer", defaulted=True),),
)

ROWS = (
    H("serving_infer_python_params"), F("model_name", "model_name"), F("python", "python"), *EXPORT_ROWS,
    F("serving.web.script", "web_service"), F("serving.web.model_dir", "--model_dir"),
    F("serving.web.opt", "--opt"), F("serving.web.extra", lint_keys=("web_service_param1",)),
    F("serving.http.script", "http_client"), F("serving.http.data", "--image_file"),
    F("serving.http.extra", lint_keys=("http_client_param1",)),
)
READS = (  # what the script reads and uses, named as upstream's
    *EXPORT_READS,
    ("web_service_py", "value", "serving.web.script"), ("model_dir_key", "key", "serving.web.model_dir"),
    ("opt_key", "key", "serving.web.opt"), ("opt_use_gpu_list", "value", "serving.web.opt"),
    ("web_service_key1", "key", "serving.web.extra"), ("web_service_value1", "value", "serving.web.extra"),
    ("http_client_py", "value", "serving.http.script"),
    ("infer_image_key", "key", "serving.http.data"), ("infer_image_value", "value", "serving.http.data"),
    ("http_client_key1", "key", "serving.http.extra"), ("http_client_value1", "value", "serving.http.extra"),
)
WEB_SERVICE = (Val("python"), Val("serving.web.script"),
               Param("serving.web.model_dir", "set_export_model_dir", value=DIR),
               Param("serving.web.opt", "_set_opt", value=(Item("opt_value"),)),
               Param("serving.web.extra", "set_web_service_params1"))
CLIENT = (Val("python"), Val("serving.http.script"), Param("serving.http.data", "set_infer_image_file"),
          Param("serving.http.extra", "set_http_client_params1"))
PADDLEDETECTION_SERVING_PYTHON = Layout(
    "paddledetection_serving_python",
    "PaddleDetection Python serving config (24 lines, test_serving_infer_python.sh)",
    ROWS,
    Dialect(
        family="chain",
        title=("Python 服务化部署测试", "Python serving test"),
        runners=("paddledetection_serving_python",),
        script="test_serving_infer_python.sh",
        status_log="results_serving_python.log",
        reads=READS,
        gpuid_arg=True,
        log_name_roles=("serving.web.opt",),
        matrix_roles=("serving.infer_modes", "serving.web.opt"),
        command_roles=("serving.web.script", *(role for _item, role in EXPORTS)),
        table=ChainTable("serving_infer", "./test_tipc/output/{model_name}/{mode}",
                         "{verdict} with command - {model} - {command} - {log}  ", (  # its status_check
            Loop("serving.infer_modes", "infer_mode", (
                EXPORT_COMMAND,
                Loop("serving.web.opt", "opt", (
                    Service(
                        Command("serve", WEB_SERVICE, "python_server_{device_type}.log", "server_log_path",
                                shown="{cmd} > {log} 2>&1 &", note="The web service, in the background."),
                        (Command("infer", CLIENT, "python_client_{device_type}.log", "client_log_path",
                                 note="The HTTP client, against it."),),
                        warmup=5,
                        note="The web service stopped (upstream: `ps ux | grep web_service | awk | xargs kill -9`).",
                    ),
                ), note="Each --opt item: its key (the device type) names the logs, its value is the service's option.",
                     parts=("device_type", "opt_value")),
            ), note="Each infer_mode: its export (none for `null`), then the web service per --opt item."),
        ), deviations=(UNDEFINED, START_STATUS, STOPPED, MODE_CHECKED), gpuid_env=True, gpuid_default="0"),
    ),
    read_lines=24,
    detect=lambda sig: (
        "serving_infer_python_params with `norm_export:` and `web_service:` keys (PaddleDetection "
        "test_serving_infer_python.sh)"
        if "serving_infer_python_params" in sig.headers and sig.key(7) == "norm_export"
        and sig.key(17) == "web_service"
        else None
    ),
)
# fmt: on
