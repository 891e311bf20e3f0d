"""The models tutorials' test_serving_infer_cpp.sh: its 16 lines (PaddleVideo's first ten, then
its own), and what it runs (a table): the model converted for Paddle Serving (its output not
redirected), the repo's client config copied over the converted one (no status line), then from
the serving directory, for each item of its `--gpu_id` line (`null`: the CPU, any other: the GPU,
in the logs' names and as the server's `--gpu_id`), Paddle Serving's C++ server, after upstream's
5 s the client against it, and the server stopped. Logs in ./test_tipc/output/<model_name>/<MODE>/
(ours wherever a step runs from), status lines `...!` in serving_infer_cpp.log; every command sees
CUDA_VISIBLE_DEVICES=<GPUID> (its 3rd argument) when one is given."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, Layout
from tipcgen.dialects.chains.models_serving_python import FOREGROUND, STATUS
from tipcgen.dialects.chains.paddledetection_serving_python import START_STATUS, STOPPED
from tipcgen.dialects.chains.paddleseg_serving_python import NOT_MINE
from tipcgen.dialects.chains.paddlevideo_serving_python import CONVERT, READS, ROWS
from tipcgen.dialects.steps import Branch, ChainTable, Command, Item, Key, Lit, Loop, Service, Val, When

# fmt: off
SERVER = (Val("python"), Lit("-m"), Lit("paddle_serving_server.serve"), Key("serving.cpp.model"),
          Val("serving.cpp.model"), Key("serving.cpp.op"), Val("serving.cpp.op"), Key("serving.cpp.port"),
          Val("serving.cpp.port"))


def service(word: str, server: tuple) -> When:
    """The server and client of one device word (upstream's branch of it)."""
    return When("device", (word,), (
        Service(
            Command("serve", server, f"cpp_server_{word}.log", "_save_log_path", shown="{cmd} > {log} 2>&1 ",
                    cwd=Val("serving.dir"), names_log=False,
                    note=f"The C++ server on the {word.upper()}, in the background (upstream's waits for it)."),
            (Command("infer", (Val("python"), Val("serving.cpp.client")), f"cpp_client_{word}.log",
                     "_save_infer_log_path", shown="{cmd} > {log} 2>&1 ", cwd=Val("serving.dir"), names_log=False,
                     note="The client, against it."),),
            warmup=5,
            note="The server stopped (upstream: `ps ux | grep -i <port> | awk | xargs kill -9`).",
        ),
    ), note=f"The {word.upper()}'s server and client.")


MODELS_SERVING_CPP = Layout(
    "models_serving_cpp",
    "models tutorial C++ serving config (16 lines, test_serving_infer_cpp.sh)",
    (*ROWS, F("serving.cpp.model", "--model"), F("serving.cpp.op", "--op"), F("serving.cpp.port", "--port"),
     F("serving.cpp.gpu_ids", "--gpu_id"), F("serving.cpp.client", "cpp_client"), F("serving.cpp.proto", "proto_path")),
    Dialect(
        family="chain",
        title=("C++ 服务化部署测试", "C++ serving test"),
        runners=("models_serving_cpp",),
        values_to_colon=True,
        script="test_serving_infer_cpp.sh",
        status_log="serving_infer_cpp.log",
        reads=(*READS, ("run_model_path_key", "key", "serving.cpp.model"),
               ("run_model_path_value", "value", "serving.cpp.model"), ("op_key", "key", "serving.cpp.op"),
               ("op_value", "value", "serving.cpp.op"), ("port_key", "key", "serving.cpp.port"),
               ("port_value", "value", "serving.cpp.port"), ("gpu_key", "key", "serving.cpp.gpu_ids"),
               ("gpu_value", "value", "serving.cpp.gpu_ids"), ("cpp_client_value", "value", "serving.cpp.client"),
               ("proto_path", "value", "serving.cpp.proto")),
        gpuid_arg=True,
        family_sections=True,
        command_roles=("serving.convert",),
        matrix_roles=("serving.cpp.gpu_ids",),
        table=ChainTable("serving_infer", "{root}/test_tipc/output/{model_name}/{mode}", STATUS, (
            Command("export", CONVERT, "", "", shown="{cmd}", names_log=False,
                    note="The model converted for Paddle Serving (its output not redirected, as upstream's)."),
            Command("edit", (Lit("cp"), Val("serving.cpp.proto"), Val("serving.client_dir")), "", "", shown="{cmd}",
                    names_log=False, quiet=True, note="The repo's client config over the converted one."),
            Loop("serving.cpp.gpu_ids", "gpu_id", (
                service("cpu", SERVER),
                service("gpu", (*SERVER, Key("serving.cpp.gpu_ids"), Item("gpu_id"))),
            ), note="Each --gpu_id item: `null` on the CPU, any other on the GPU.",
                branch=Branch("device", ((("null",), "cpu"),), "", default="gpu")),
        ), deviations=(START_STATUS, STOPPED, FOREGROUND, NOT_MINE), gpuid_env=True,
           requires=(("serving.cpp.model", "--model"),)),
    ),
    read_lines=18,
    detect=lambda sig: (
        "serving_params with `trans_model:`, `--op:` and `proto_path:` keys (the models tutorials' "
        "test_serving_infer_cpp.sh)"
        if "serving_params" in sig.headers and sig.key(3) == "trans_model" and sig.key(11) == "--op"
        and sig.key(15) == "proto_path" else None
    ),
)
# fmt: on
