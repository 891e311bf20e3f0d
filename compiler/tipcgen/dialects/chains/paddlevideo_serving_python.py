"""PaddleVideo's test_serving_infer_python.sh: its 13 lines, and what it runs (a table): the model
converted for Paddle Serving (no status line), both converted configs' fetch variable renamed
`outputs` (sed, no status line), then from the serving directory the web service in the background,
after upstream's 30 s the pipeline client against it, and the service stopped. Logs in
./test_tipc/output/log/<model_name>/<MODE>/ (ours wherever a step runs from: `serving-logs-from-root`),
status lines in results_serving.log without a log (its status_check gets four arguments); every
command sees CUDA_VISIBLE_DEVICES=<GPUID> (its 3rd argument) when one is given."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, H, Layout
from tipcgen.dialects.chains.paddledetection_serving_python import START_STATUS, STOPPED
from tipcgen.dialects.chains.paddleseg_serving_python import NOT_MINE
from tipcgen.dialects.steps import ChainTable, Command, Deviation, Join, Lit, Param, Service, Val

# fmt: off
# the lines both PaddleVideo serving scripts read first: the conversion's
ROWS = (H("serving_params"), F("model_name", "model_name"), F("python", "python"), F("serving.convert", "trans_model"),
        F("serving.model_dir", lint_keys=("--dirname",)), F("serving.model_filename", lint_keys=("--model_filename",)),
        F("serving.params_filename", lint_keys=("--params_filename",)),
        F("serving.server_dir", lint_keys=("--serving_server",)),
        F("serving.client_dir", lint_keys=("--serving_client",)), F("serving.dir", "serving_dir"))
CONVERTED = (("serving.model_dir", "infer_model_dir"), ("serving.model_filename", "model_filename"),
             ("serving.params_filename", "params_filename"), ("serving.server_dir", "serving_server"),
             ("serving.client_dir", "serving_client"))
READS = (  # what both scripts read first and use, named as upstream's
    ("model_name", "value", "model_name"), ("python_list", "value", "python"),
    ("trans_model_py", "value", "serving.convert"),
    *((f"{var}_{kind}", kind, role) for role, var in CONVERTED for kind in ("key", "value")),
    ("serving_dir_value", "value", "serving.dir"),
)
CONVERT = (Val("python"), Val("serving.convert"), Param("serving.model_dir", "set_dirname"),
           Param("serving.model_filename", "set_model_filename"),
           Param("serving.params_filename", "set_params_filename"),
           Param("serving.server_dir", "set_serving_server"), Param("serving.client_dir", "set_serving_client"))
# upstream's sed of a converted config: its fetch variable's alias `outputs`
ALIAS = Lit("'/fetch_var/,/is_lod_tensor/s/alias_name: .*/alias_name: \"outputs\"/'")
EDITS = tuple(
    Command("edit", (Lit("sed"), Lit("-i"), ALIAS,
                     Join((Val(f"serving.{side}_dir"), Lit(f"/serving_{side}_conf.prototxt")))), "", "",
            shown="{cmd}", names_log=False, quiet=True,
            note=f"The {side}'s converted config, its fetch variable renamed.")
    for side in ("server", "client")
)
LOGS_FROM_ROOT = Deviation(
    "serving-logs-from-root",
    "the server's and the client's logs and status lines go to the log directory "
    "(test_tipc/output/log/<model>/<MODE>/) wherever they run from; their status lines name the logs from the "
    "repo root",
    "upstream runs them from serving_dir with its log directory relative to the repo root: the server's "
    "redirection and its status line name a directory that does not exist there, so the server never starts "
    "and its status line is lost; the client's log is `../../`-prefixed, right only for a serving_dir two levels "
    "deep",
    (r"^steps: plan runs more \(serve\)$",
     r"^logs: plan \+\[\./test_tipc/output/log/<model>/\w+/\w+_server_gpu\.log\]$",
     r"^status: serve command text$", r"^status: number of lines$",
     r"^status: serve verdict upstream 'Run failed' vs plan 'Run successfully'$"),
)
STATUS = "{verdict} with command - {model} - {command} - {log} "  # its status_check, given no log
PADDLEVIDEO_SERVING_PYTHON = Layout(
    "paddlevideo_serving_python",
    "PaddleVideo Python serving config (13 lines, test_serving_infer_python.sh)",
    (*ROWS, F("serving.web.script", "web_service"), F("serving.client", "pipline"),
     F("serving.http.data", "--input_file")),
    Dialect(
        family="chain",
        title=("Python 服务化部署测试", "Python serving test"),
        runners=("paddlevideo_serving_python",),
        values_to_colon=True,
        script="test_serving_infer_python.sh",
        status_log="results_serving.log",
        reads=(*READS, ("web_service_key", "key", "serving.web.script"),
               ("web_service_py", "value", "serving.web.script"), ("pipeline_py", "value", "serving.client"),
               ("video_dir_key", "key", "serving.http.data"), ("video_dir_value", "value", "serving.http.data")),
        gpuid_arg=True,
        family_sections=True,
        command_roles=("serving.convert", "serving.web.script"),
        table=ChainTable("serving_infer_python", "{root}/test_tipc/output/log/{model_name}/{mode}", STATUS, (
            Command("export", CONVERT, "python_trans_model.log", "trans_log", names_log=False, quiet=True,
                    note="The model converted for Paddle Serving (upstream writes no status line for it)."),
            *EDITS,
            Service(
                Command("serve", (Val("python"), Val("serving.web.script")), "python_server_gpu.log",
                        "server_log_path", shown="{cmd} > {log} 2>&1 &", cwd=Val("serving.dir"), names_log=False,
                        note="The web service, in the background, from the serving directory."),
                (Command("infer", (Val("python"), Val("serving.client"), Param("serving.http.data", "set_video_dir")),
                         "python_server_infer_gpu_batchsize_1.log", "_save_log_path", shown="{cmd} > {log} 2>&1 ",
                         cwd=Val("serving.dir"), names_log=False, note="The pipeline client, against it."),),
                warmup=30,
                note="The web service stopped (upstream: `ps ux | grep -E 'web_service|pipeline' | awk | xargs kill`).",
            ),
        ), deviations=(START_STATUS, STOPPED, LOGS_FROM_ROOT, NOT_MINE), gpuid_env=True,
           requires=(("serving.web.script", "web_service"),)),
    ),
    read_lines=18,
    detect=lambda sig: (
        "serving_params with `trans_model:`, `web_service:` and `--input_file:` keys (PaddleVideo "
        "test_serving_infer_python.sh)"
        if "serving_params" in sig.headers and sig.key(3) == "trans_model" and sig.key(10) == "web_service"
        and sig.key(12) == "--input_file" else None
    ),
)
# fmt: on
