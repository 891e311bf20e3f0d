"""PaddleVideo's test_serving_infer_cpp.sh: its 14 lines, and what it runs (a table): the model
converted for Paddle Serving, both converted configs' fetch variable renamed `outputs` (sed, no
status line), then from the serving directory Paddle Serving's C++ server in the background (no
status line), after upstream's 20 s the client against it (the model's name without `PP-`'s dash,
the client config's path from the serving directory), and the server stopped. Logs in
./test_tipc/output/log/<model_name>/<MODE>/ (ours wherever a step runs from), status lines in
results_serving.log without a log; every command sees CUDA_VISIBLE_DEVICES=<GPUID> (its 3rd
argument) when one is given."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, Layout
from tipcgen.dialects.chains.paddledetection_serving_python import STOPPED
from tipcgen.dialects.chains.paddleseg_serving_python import NOT_MINE
from tipcgen.dialects.chains.paddlevideo_serving_python import CONVERT, EDITS, READS, ROWS, STATUS
from tipcgen.dialects.steps import ChainTable, Command, Deviation, Join, Key, Lit, Service, Sub, Val

# fmt: off
SERVER = (Val("python"), Lit("-m"), Lit("paddle_serving_server.serve"), Key("serving.cpp.model"),
          Val("serving.cpp.model"), Key("serving.cpp.port"), Val("serving.cpp.port"))
# upstream's ${model_name/PP-/PP}, and its client config's path from the serving directory
NAME = Sub("real_model_name", "model_name", (("PP-", "PP"),))
CONF = Sub("serving_client_conf_path", "serving.client_dir", (("deploy/cpp_serving/", ""), ("//", "")))
CLIENT = (Val("python"), Val("serving.cpp.client"), Lit("-n"), NAME, Lit("-c"),
          Join((CONF, Lit("serving_client_conf.prototxt"))), Key("serving.http.data"), Val("serving.http.data"))
CPP_LOGS = Deviation(
    "serving-cpp-logs-from-root",
    "the server's and the client's logs go to the log directory (test_tipc/output/log/<model>/<MODE>/) wherever "
    "they run from; the client's status line shows the client's command and exit status",
    "upstream runs them from serving_dir with its log directory relative to the repo root: both redirections "
    "name a directory that does not exist there, so neither the server nor the client runs, and its one status "
    "line shows the server's command with the failed redirection's status",
    (r"^steps: plan runs more \((serve|infer)\)$",
     r"^logs: plan \+\[\./test_tipc/output/log/<model>/\w+/cpp_client_infer_gpu_batchsize_N\.log "
     r"\./test_tipc/output/log/<model>/\w+/cpp_server_gpu\.log\]$",
     r"^status: infer command text$", r"^status: infer verdict upstream 'Run failed' vs plan 'Run successfully'$"),
)
PADDLEVIDEO_SERVING_CPP = Layout(
    "paddlevideo_serving_cpp",
    "PaddleVideo C++ serving config (14 lines, test_serving_infer_cpp.sh)",
    (*ROWS, F("serving.cpp.model", "--model"), F("serving.cpp.port", "--port"), F("serving.cpp.client", "cpp_client"),
     F("serving.http.data", "--input_file")),
    Dialect(
        family="chain",
        title=("C++ 服务化部署测试", "C++ serving test"),
        runners=("paddlevideo_serving_cpp",),
        values_to_colon=True,
        script="test_serving_infer_cpp.sh",
        status_log="results_serving.log",
        reads=(*READS, ("run_model_path_key", "key", "serving.cpp.model"),
               ("run_model_path_value", "value", "serving.cpp.model"), ("port_key", "key", "serving.cpp.port"),
               ("port_value", "value", "serving.cpp.port"), ("cpp_client_value", "value", "serving.cpp.client"),
               ("input_video_key", "key", "serving.http.data"), ("input_video_value", "value", "serving.http.data")),
        gpuid_arg=True,
        family_sections=True,
        command_roles=("serving.convert",),
        table=ChainTable("serving_infer_cpp", "{root}/test_tipc/output/log/{model_name}/{mode}", STATUS, (
            Command("export", CONVERT, "cpp_trans_model.log", "trans_log", shown="{cmd} > {log} 2>&1 ",
                    names_log=False, note="The model converted for Paddle Serving."),
            *EDITS,
            Service(
                Command("serve", SERVER, "cpp_server_gpu.log", "server_log_path", shown="{cmd} > {log} 2>&1 &",
                        cwd=Val("serving.dir"), names_log=False, quiet=True,
                        note="The C++ server, in the background, from the serving directory (no status line)."),
                (Command("infer", CLIENT, "cpp_client_infer_gpu_batchsize_1.log", "_save_log_path",
                         shown="{cmd} > {log} 2>&1 ", cwd=Val("serving.dir"), names_log=False,
                         note="The client, against it."),),
                warmup=20,
                note="The server stopped (upstream: `ps ux | grep -i paddle_serving_server | awk | xargs kill`).",
            ),
        ), deviations=(STOPPED, CPP_LOGS, NOT_MINE), gpuid_env=True,
           requires=(("serving.cpp.model", "--model"),)),
    ),
    read_lines=18,
    detect=lambda sig: (
        "serving_params with `trans_model:`, `cpp_client:` and `--input_file:` keys (PaddleVideo "
        "test_serving_infer_cpp.sh)"
        if "serving_params" in sig.headers and sig.key(3) == "trans_model" and sig.key(12) == "cpp_client"
        and sig.key(13) == "--input_file" else None
    ),
)
# fmt: on
