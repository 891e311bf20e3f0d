"""PaddleOCR's test_serving_infer_cpp.sh: its 19 lines, and what it runs (a table). The det/rec lines
of its Python twin (dialects/chains/paddleocr_serving_python.py), both pairs converted for Paddle
Serving whatever the model's name (the det one without a status line, as upstream), the repo's client
config copied into the det client's directory; then, from the config's serving_dir, for each item of
`--gpu_id` (`null`: the CPU, any other: that GPU, given to the server as `<key> <item>`) Paddle
Serving's C++ server in the background (upstream writes a status line for the CPU's only), the C++
client against it, and Paddle Serving's own `stop` of the server. The server's `--model` and the
client's arguments are the last parts of the serving server's and client's directories. Logs and the
status log (`results_cpp_serving.log`) in `$(pwd)/test_tipc/output/<model_name>/<MODE>/cpp/`; GPUID
(3rd argument, default 0) is every command's CUDA_VISIBLE_DEVICES."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, Layout
from tipcgen.dialects.chains.paddledetection_serving_python import START_STATUS, STOPPED
from tipcgen.dialects.chains.paddleocr_serving_python import CONVERT_READS, CONVERT_ROWS, IN_DIR, PYTHON
from tipcgen.dialects.chains.paddleseg_serving_python import DEVICE, MODE_CHECKED, NOT_MINE
from tipcgen.dialects.steps import ChainTable, Command, Deviation, Item, Key, Last, Lit, Loop, Param, Service, Val, When

# fmt: off
ROWS = (
    *CONVERT_ROWS, F("serving.cpp.server", "web_service"), F("serving.cpp.op", "--op"), F("serving.cpp.port", "--port"),
    F("serving.cpp.gpu_id", "--gpu_id"), F("serving.cpp.client", "cpp_client"), F("serving.image"),
)
READS = (  # what the script reads and uses, named as upstream's
    *CONVERT_READS,
    ("web_service_py", "value", "serving.cpp.server"),
    ("op_key", "key", "serving.cpp.op"), ("op_value", "value", "serving.cpp.op"),
    ("port_key", "key", "serving.cpp.port"), ("port_value", "value", "serving.cpp.port"),
    ("gpu_key", "key", "serving.cpp.gpu_id"), ("gpu_value", "value", "serving.cpp.gpu_id"),
    ("cpp_client_key", "key", "serving.cpp.client"),  # ours: its configs are told by it (NOT_MINE)
    ("cpp_client_py", "value", "serving.cpp.client"),
)


def convert(pair: str, quiet: bool) -> Command:
    """The det or the rec model converted for Paddle Serving, under the script's own keys."""
    words = (PYTHON, Val("serving.convert"),
             Param(Lit("--dirname"), "set_dirname", value=f"serving.{pair}.model_dir"),
             Param("serving.model_filename"), Param("serving.params_filename"),
             Param(Lit("--serving_server"), "set_serving_server", value=f"serving.{pair}.server_dir"),
             Param(Lit("--serving_client"), "set_serving_client", value=f"serving.{pair}.client_dir"))
    said = " (upstream gives it no status line)" if quiet else ""
    return Command("export", words, f"cpp_trans_model_{pair}.log", f"trans_{pair}_log", shown="{cmd} > {log} 2>&1 ",
                   quiet=quiet, pipe_splits=True, note=f"The {pair} model converted for Paddle Serving{said}.")


STOP_SPLIT = Deviation(
    "serving-stop-words-split",
    "Paddle Serving's `stop` of its server gets the web_service line's words as words "
    "(`python3.7 -m paddle_serving_server.serve stop`)",
    "upstream runs it outside eval while IFS is `|`: the line's value stays one word "
    "(`-m paddle_serving_server.serve`), which the interpreter takes as a module name with a blank in it",
    (r"^stop argv: upstream \+\[-m [\w.]+\], plan \+\[-m [\w.]+\]$",),
)
LASTS = {f"{pair}_{end}": Last(f"serving.{pair}.{end}_dir", f"{pair}_{end}_value")
         for pair in ("det", "rec") for end in ("server", "client")}
SERVER = (PYTHON, Val("serving.cpp.server"), Lit("--model"), LASTS["det_server"], LASTS["rec_server"],
          *(w for role in ("serving.cpp.op", "serving.cpp.port") for w in (Key(role), Val(role))))
CLIENT = (PYTHON, Val("serving.cpp.client"), LASTS["det_client"], LASTS["rec_client"])


def _server(device: str, gpu: tuple) -> When:
    """The C++ server on `device` (`gpu`: the words naming its GPU; upstream checks the CPU's start
    only), the client against it, Paddle Serving's stop."""
    return When("device", (device,), (
        Service(
            Command("serve", (*SERVER, *gpu), f"cpp_server_{device}.log", "server_log_path",
                    shown="nohup {cmd} > {log} 2>&1 &", cwd=Val(IN_DIR), quiet=device != "cpu", pipe_splits=True,
                    note="The C++ server, in the background" + (" (no status line, as upstream)." if gpu else ".")),
            (Command("infer", CLIENT, f"cpp_client_{device}.log", "_save_log_path", shown="{cmd} > {log} 2>&1",
                     cwd=Val(IN_DIR), pipe_splits=True, note="The C++ client, against it."),
             Command("stop", (PYTHON, Val("serving.cpp.server"), Lit("stop")), "", "", shown="{cmd}", cwd=Val(IN_DIR),
                     quiet=True, pipe_splits=True, note="Paddle Serving's own stop of its server (no status line)."),),
            warmup=5,
            note="What is left of the server stopped (upstream: its `stop` only, then `sleep 5s` on the CPU).",
        ),
    ), note=f"The {device.upper()} run.")


PADDLEOCR_SERVING_CPP = Layout(
    "paddleocr_serving_cpp",
    "PaddleOCR C++ serving config (19 lines, test_serving_infer_cpp.sh)",
    ROWS,
    Dialect(
        family="chain",
        title=("C++ 服务化部署测试", "C++ serving test"),
        runners=("paddleocr_serving_cpp",),
        values_to_colon=True,
        script="test_serving_infer_cpp.sh",
        status_log="results_cpp_serving.log",
        reads=READS,
        gpuid_arg=True,
        matrix_roles=("serving.cpp.gpu_id",),
        command_roles=("serving.convert", "serving.cpp.server"),
        table=ChainTable("serving_infer", "{root}/test_tipc/output/{model_name}/{mode}/cpp",
                         "{verdict} with command - {model} - {command} - {log} ", (  # its status_check
            convert("det", True),
            Command("edit", (Lit("cp"), Lit("deploy/pdserving/serving_client_conf.prototxt"),
                             Val("serving.det.client_dir")), "", "", shown="{cmd}", quiet=True,
                    note="The repo's client config copied into the det client's directory (no status line)."),
            convert("rec", False),
            Loop("serving.cpp.gpu_id", "gpu_id", (
                _server("cpu", ()),
                _server("gpu", (Key("serving.cpp.gpu_id"), Item("gpu_id"))),
            ), note="Each --gpu_id item: `null` serves on the CPU, any other on that GPU.", branch=DEVICE),
        ), deviations=(START_STATUS, STOPPED, STOP_SPLIT, MODE_CHECKED, NOT_MINE), gpuid_env=True, gpuid_default="0",
           requires=(("serving.cpp.client", "cpp_client"),)),
    ),
    read_lines=19,
    detect=lambda sig: (
        "serving_params with `trans_model:`, `--det_dirname:`, `--op:` and `cpp_client:` keys (PaddleOCR "
        "test_serving_infer_cpp.sh)"
        if "serving_params" in sig.headers and sig.key(3) == "trans_model" and sig.key(4) == "--det_dirname"
        and sig.key(14) == "--op" and sig.key(17) == "cpp_client"
        else None
    ),
)
# fmt: on
