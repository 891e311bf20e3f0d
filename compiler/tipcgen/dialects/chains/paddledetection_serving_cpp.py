"""PaddleDetection's test_serving_infer_cpp.sh: its 26 lines, and what it runs (a table): for each
item of its infer_mode list, the export of its Python twin (dialects/chains/
paddledetection_serving_python.py), then for each item of `--gpu_ids` (`null`: the CPU, any other:
the GPU, in the logs' names) Paddle Serving's C++ server (`-m paddle_serving_server.serve`) in the
background, the client against it and the server stopped. Logs in
./test_tipc/output/<model_name>/<MODE>/. Unlike the Python script it reads no GPUID and exports no
CUDA_VISIBLE_DEVICES (its closing `unset` follows the last command)."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, H, Layout
from tipcgen.dialects.chains.paddledetection_paddle2onnx import UNDEFINED
from tipcgen.dialects.chains.paddledetection_serving_python import (
    DIR,
    EXPORT_COMMAND,
    EXPORT_READS,
    EXPORT_ROWS,
    EXPORTS,
    MODE_CHECKED,
    START_STATUS,
    STOPPED,
)
from tipcgen.dialects.steps import Branch, ChainTable, Command, Item, Lit, Loop, Param, Service, Val

# fmt: off
ROWS = (
    H("serving_infer_cpp_params"), F("model_name", "model_name"), F("python", "python"), *EXPORT_ROWS,
    F("serving.cpp.model", "--model"), F("serving.cpp.op", "--op"), F("serving.cpp.port", "--port"),
    F("serving.cpp.gpu_ids", "--gpu_ids"), F("serving.web.extra", lint_keys=("web_service_param1",)),
    F("serving.http.script", "http_client"), F("serving.cpp.client_dir", "--serving_client"),
    F("serving.http.data", "--image_file"), F("serving.http.extra", lint_keys=("http_client_param1",)),
)
READS = (  # what the script reads and uses, named as upstream's
    *EXPORT_READS,
    ("model_key", "key", "serving.cpp.model"), ("op_key", "key", "serving.cpp.op"),
    ("op_value", "value", "serving.cpp.op"), ("port_key", "key", "serving.cpp.port"),
    ("port_value", "value", "serving.cpp.port"), ("gpu_ids_key", "key", "serving.cpp.gpu_ids"),
    ("gpu_ids_value", "value", "serving.cpp.gpu_ids"),
    ("web_service_key1", "key", "serving.web.extra"), ("web_service_value1", "value", "serving.web.extra"),
    ("http_client_py", "value", "serving.http.script"), ("serving_client_key", "key", "serving.cpp.client_dir"),
    ("infer_image_key", "key", "serving.http.data"), ("infer_image_value", "value", "serving.http.data"),
    ("http_client_key1", "key", "serving.http.extra"), ("http_client_value1", "value", "serving.http.extra"),
)
SERVER = (Val("python"), Lit("-m paddle_serving_server.serve"),
          Param("serving.cpp.model", "set_server_model_dir", value=(*DIR, Lit("/serving_server"))),
          Param("serving.cpp.op"), Param("serving.cpp.port"),
          Param("serving.cpp.gpu_ids", "set_gpu_ids", value=(Item("gpu_ids"),)),
          Param("serving.web.extra", "set_web_service_params1"))
CLIENT = (Val("python"), Val("serving.http.script"),
          Param("serving.cpp.client_dir", "set_client_model_dir", value=(*DIR, Lit("/serving_client"))),
          Param("serving.http.data", "set_infer_image_file"), Param("serving.http.extra", "set_http_client_params1"))
PADDLEDETECTION_SERVING_CPP = Layout(
    "paddledetection_serving_cpp",
    "PaddleDetection C++ serving config (26 lines, test_serving_infer_cpp.sh)",
    ROWS,
    Dialect(
        family="chain",
        title=("C++ 服务化部署测试", "C++ serving test"),
        runners=("paddledetection_serving_cpp",),
        script="test_serving_infer_cpp.sh",
        status_log="results_serving_cpp.log",
        reads=READS,
        matrix_roles=("serving.infer_modes", "serving.cpp.gpu_ids"),
        command_roles=tuple(role for _item, role in EXPORTS),
        table=ChainTable("serving_infer", "./test_tipc/output/{model_name}/{mode}",
                         "{verdict} with command - {model} - {command} - {log}  ", (  # its status_check
            Loop("serving.infer_modes", "infer_mode", (
                EXPORT_COMMAND,
                Loop("serving.cpp.gpu_ids", "gpu_ids", (
                    Service(
                        Command("serve", SERVER, "cpp_server_{device}.log", "server_log_path",
                                shown="{cmd} > {log} 2>&1 &", note="The C++ server, in the background."),
                        (Command("infer", CLIENT, "cpp_client_{device}.log", "client_log_path",
                                 note="The client, against it."),),
                        warmup=5,
                        note="The server stopped (upstream: `ps ux | grep -i <port> | awk | xargs kill -9`).",
                    ),
                ), note="Each --gpu_ids item: `null` serves on the CPU, any other on the GPU (the logs' names).",
                     branch=Branch("device", ((("null",), "cpu"),), "", default="gpu")),
            ), note="Each infer_mode: its export (none for `null`), then the server per --gpu_ids item."),
        ), deviations=(UNDEFINED, START_STATUS, STOPPED, MODE_CHECKED)),
    ),
    read_lines=26,
    detect=lambda sig: (
        "serving_infer_cpp_params with `norm_export:` and `--model:` keys (PaddleDetection "
        "test_serving_infer_cpp.sh)"
        if "serving_infer_cpp_params" in sig.headers and sig.key(7) == "norm_export" and sig.key(17) == "--model"
        else None
    ),
)
# fmt: on
