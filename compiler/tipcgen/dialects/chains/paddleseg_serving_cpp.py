"""PaddleSeg's test_serving_infer_cpp.sh: its 17 lines, and what it runs (a table): the conversion
of its Python twin (dialects/chains/paddleseg_serving_python.py), then, from the config's
serving_dir, the repo's modify_serving_client_conf.py (no status line: upstream does not check
it), and for each item of `--gpu_id` (`null`: the CPU, any other: that GPU, given to the server as
`<key> <item>`) Paddle Serving's C++ server (`-m paddle_serving_server.serve`) in the background,
the client against it and the server stopped. Logs and the status log (`results_cpp.log`) in
`$(pwd)/test_tipc/output/<model_name>/<MODE>/`; GPUID (3rd argument), when given, is every
command's CUDA_VISIBLE_DEVICES. Upstream unsets https_proxy and http_proxy before its servers: so
does the generated script."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, Layout
from tipcgen.dialects.chains.paddledetection_serving_python import START_STATUS, STOPPED
from tipcgen.dialects.chains.paddleseg_serving_python import (
    CONVERT_READS,
    CONVERT_ROWS,
    DEVICE,
    IN_DIR,
    MODE_CHECKED,
    NOT_MINE,
    PYTHON,
    convert,
)
from tipcgen.dialects.steps import ChainTable, Command, Item, Key, Lit, Loop, Param, Service, Unset, Val, When

# fmt: off
ROWS = (
    *CONVERT_ROWS, F("serving.cpp.model", "--model"), F("serving.cpp.op", "--op"), F("serving.cpp.port", "--port"),
    F("serving.cpp.gpu_id", "--gpu_id"), F("serving.cpp.client", "cpp_client"), F("serving.input_name"),
    F("serving.output_name"),
)
READS = (  # what the script reads and uses, named as upstream's
    *CONVERT_READS,
    ("run_model_path_key", "key", "serving.cpp.model"), ("run_model_path_value", "value", "serving.cpp.model"),
    ("op_key", "key", "serving.cpp.op"), ("op_value", "value", "serving.cpp.op"),
    ("port_key", "key", "serving.cpp.port"), ("port_value", "value", "serving.cpp.port"),
    ("gpu_key", "key", "serving.cpp.gpu_id"), ("gpu_value", "value", "serving.cpp.gpu_id"),
    ("cpp_client_value", "value", "serving.cpp.client"),
    ("input_name_key", "key", "serving.input_name"), ("input_name_value", "value", "serving.input_name"),
    ("output_name_key", "key", "serving.output_name"), ("output_name_value", "value", "serving.output_name"),
)
# the server's options as words, `<key> <value>` (upstream does not use func_set_params for them)
SERVER = (PYTHON, Lit("-m paddle_serving_server.serve"),
          *(w for role in ("serving.cpp.model", "serving.cpp.op", "serving.cpp.port") for w in (Key(role), Val(role))))
CLIENT = (PYTHON, Val("serving.cpp.client"), Param("serving.input_name"), Param("serving.output_name"))


def _server(device: str, gpu: tuple) -> When:
    """The C++ server on `device` (`gpu`: the words naming its GPU), the client against it; upstream's
    CPU server's status line names no log."""
    return When("device", (device,), (
        Service(
            Command("serve", (*SERVER, *gpu), "cpp_server_{device}.log", "cpp_server_log_path",
                    shown="{cmd} >{log} 2>&1 & ", cwd=Val(IN_DIR), names_log=device != "cpu", pipe_splits=True,
                    note="The C++ server, in the background."),
            (Command("infer", CLIENT, "cpp_client_{device}_batchsize_1.log", "clinet_log_path",  # upstream's
                     shown="{cmd} > {log} 2>&1 ", cwd=Val(IN_DIR), pipe_splits=True, note="The client, against it."),),
            warmup=5,
            note="The server stopped (upstream: `ps ux | grep -i <port> | awk | xargs kill -9`, then `sleep 5s`).",
        ),
    ), note=f"The {device.upper()} run.")


PADDLESEG_SERVING_CPP = Layout(
    "paddleseg_serving_cpp",
    "PaddleSeg C++ serving config (17 lines, test_serving_infer_cpp.sh)",
    ROWS,
    Dialect(
        family="chain",
        title=("C++ 服务化部署测试", "C++ serving test"),
        runners=("paddleseg_serving_cpp",),
        values_to_colon=True,
        script="test_serving_infer_cpp.sh",
        status_log="results_cpp.log",
        reads=READS,
        gpuid_arg=True,
        matrix_roles=("serving.cpp.gpu_id",),
        command_roles=("serving.convert",),
        table=ChainTable("serving_infer", "{root}/test_tipc/output/{model_name}/{mode}",
                         "{verdict} with command - {model} - {command} - {log}  ", (  # its status_check
            convert("cpp_trans_model.log"),
            Command("edit", (PYTHON, Lit("modify_serving_client_conf.py")), "", "modify_log_path",
                    shown="{cmd}", cwd=Val(IN_DIR), quiet=True,
                    note="The converted client's config fitted to the C++ client (feed type and shape);\n"
                         "no status line, its failure ignored (as upstream)."),
            Unset(("https_proxy", "http_proxy")),
            Loop("serving.cpp.gpu_id", "gpu_id", (
                _server("cpu", ()),
                _server("gpu", (Key("serving.cpp.gpu_id"), Item("gpu_id"))),
            ), note="Each --gpu_id item: `null` serves on the CPU, any other on that GPU.", branch=DEVICE),
        ), deviations=(START_STATUS, STOPPED, MODE_CHECKED, NOT_MINE), gpuid_env=True,
           requires=(("serving.cpp.op", "--op"),)),
    ),
    read_lines=18,
    detect=lambda sig: (
        "serving_params with `trans_model:`, `--op:`, `--input_name:` and `--output_name:` keys (PaddleSeg "
        "test_serving_infer_cpp.sh)"
        if "serving_params" in sig.headers and sig.key(3) == "trans_model" and sig.key(11) == "--op"
        and sig.key(15) == "--input_name" and sig.key(16) == "--output_name"
        else None
    ),
)
# fmt: on
