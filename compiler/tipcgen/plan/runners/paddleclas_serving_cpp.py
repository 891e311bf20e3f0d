"""PaddleClas's test_serving_infer_cpp.sh as a Plan: convert the inference model(s) for Paddle
Serving, fit the converted client config and the client to each other (sed/cp edits: no status
line, their failure ignored, as upstream), then for each device of `--use_gpu` start the C++
serving server (`python -m paddle_serving_server.serve`) in the background, run the client
against it and stop it.

Two line tables, as the Python chain's (plan/runners/paddleclas_serving_python.py). The script
reads its config and GPUID (3rd argument); upstream ignores MODE and logs to
`$(pwd)/test_tipc/output/<model_name>/serving_infer/` (`results_cpp_serving.log`).
"""

from __future__ import annotations

from tipcgen.dialects.steps import refuses_modes_but
from tipcgen.errors import UsageError
from tipcgen.plan.builder import Builder
from tipcgen.plan.runner import COMMON_DEVIATIONS, EDITS_AS_DATA, Deviation
from tipcgen.plan.runners.paddleclas_serving_python import (
    FEED_VAR,
    SERVER_ALWAYS_STOPPED,
    SERVER_OWN_STATUS,
    SHITU_BY_CONTENT,
    client,
    convert,
    dir_name,
    interpreter,
    rel,
    sed_alias,
    serve,
    stop,
)
from tipcgen.script.shellwords import ifs_split, path_word, sed_quoted

MODE = "serving_infer"
MODES = (MODE,)
TEMPLATE = "runner_paddleclas_serving_cpp.sh.j2"
STATUS_FORMAT = "{verdict} with command - {model} - {command} - {log} ! "
GPU_ENTRIES_BY_LENGTH = False
CLASSIC = None

# The PP-ShiTu detector's converted configs upstream copies from deploy/paddleserving (fixed names).
DET_PREPROCESS = "picodet_PPLCNet_x2_5_mainbody_lite_v1.0"

# A Python serving config's file name (the TIPC convention dialects/chains' TWINS reads): the C++
# script refuses it, as the Python script refuses a `web_service:null` config.
PYTHON_NAMED = "_serving_python_"
TEMPLATE_VARS = {"python_named": PYTHON_NAMED}

DEVIATIONS = (
    *COMMON_DEVIATIONS,
    EDITS_AS_DATA,
    SERVER_OWN_STATUS,
    SERVER_ALWAYS_STOPPED,
    SHITU_BY_CONTENT,
    Deviation(
        "serving-cpp-refuses-python-config",
        f"a config named `*{PYTHON_NAMED}*` (TIPC's name for a Python serving config; the twins' tables"
        " are told apart by it too) is refused with exit 2, naming test_serving_infer_python.sh",
        "upstream serves the Python chain's config with the C++ server, by its line positions",
    ),
    Deviation(
        "serving-cpp-mode-checked",
        "MODE (2nd argument, default serving_infer) must be serving_infer, the folder the logs go to",
        "upstream ignores MODE and logs to serving_infer/ whatever it says",
        (refuses_modes_but("serving_infer", defaulted=True),),
    ),
    Deviation(
        "serving-cpp-shitu-gpu-server-log",
        "PP-ShiTu's GPU server writes its output to cpp_server_gpu.log, the log its status line names",
        "upstream starts it without nohup or redirect: its output goes to the terminal and the log the "
        "status line names is never written",
        (r"^logs: plan \+\[\$LOG/cpp_server_gpu\.log\]$",),
    ),
)


def plan(b: Builder) -> None:
    v = b.v
    if b.mode != MODE:  # pragma: no cover - plan_config refuses other modes first
        raise UsageError(f"test_serving_infer_cpp.sh logs to {MODE}/: MODE must be {MODE}")
    b.log_dir = f"{b.root or '.'}/test_tipc/output/{v.value_to_colon('model_name')}/{MODE}"
    b.status_log = f"{b.log_dir}/{v.layout.dialect.status_log}"
    b.cvd = b.gpuid or "0"  # upstream: export CUDA_VISIBLE_DEVICES=${GPUID:-0}
    if PYTHON_NAMED in b.source.rsplit("/", 1)[-1]:
        raise UsageError(
            f"{b.source}: its name says a Python serving config: run it with test_tipc/test_serving_infer_python.sh"
        )
    if v.layout.index("serving.cls.model_dir") is not None:
        _plan_shitu(b)
    else:
        _plan_cls(b)


def _plan_cls(b: Builder) -> None:
    v, log_dir = b.v, b.log_dir
    first, python_ = interpreter(v.value_to_colon("python"))
    server_dir, client_dir = v.value_to_colon("serving.server_dir"), v.value_to_colon("serving.client_dir")
    if first is not None:
        roles = ("serving.model_dir", "serving.model_filename", "serving.params_filename", "serving.server_dir",
                 "serving.client_dir")  # fmt: skip
        convert(b, first, roles, f"{log_dir}/cpp_trans_model.log", None)
    sed_alias(b, f"{server_dir}/serving_server_conf.prototxt", "prediction", None)
    sed_alias(b, f"{client_dir}/serving_client_conf.prototxt", "prediction", None)
    here = rel(v.value_to_colon("serving.dir"))
    conf = path_word(f"{dir_name(client_dir)}/serving_client_conf.prototxt")
    pipeline = path_word(v.value_to_colon("serving.client"))
    for expr in (
        "/feed_type/,/: .*/s/feed_type: .*/feed_type: 20/",
        "/shape: 3/,/shape: 3/s/shape: 3/shape: 1/",
        "/shape: 224/,/shape: 224/s/shape: 224//",
        "/shape: 224/,/shape: 224/s/shape: 224//",  # upstream runs it twice
    ):
        b.add("edit", f"sed -i '{expr}' {conf}", None, cwd=here, quiet=True)
    conf_re = r"serving_client_conf.prototxt"
    load = rf"/load_client_config/,/.prototxt/s/.\/.*\/{conf_re}/.\/{sed_quoted(dir_name(client_dir))}\/{conf_re}/"
    b.add("edit", f"sed -i '{load}' {pipeline}", None, cwd=here, quiet=True)
    b.add("edit", f"sed -i '/feed=/,/: image}}/s/feed={{.*: image}}/feed={{{FEED_VAR}: image}}/' {pipeline}", None,
          cwd=here, quiet=True, fills=((FEED_VAR, rel(f"{server_dir}/serving_server_conf.prototxt"), 2),))  # fmt: skip
    model = dir_name(server_dir)
    for use_gpu in ifs_split(v.value_to_colon("serving.use_gpu"), "|"):
        cmd = f"{python_} -m paddle_serving_server.serve --model {model} --op GeneralClasOp --port 9292"
        device = "cpu" if use_gpu == "null" else "gpu"
        if device == "gpu":
            cmd += f" --gpu_id={use_gpu}"
        serve(b, cmd, f"{log_dir}/cpp_server_{device}.log", 5 if device == "cpu" else 8, here)
        client(b, f"{python_} test_cpp_serving_client.py", f"{log_dir}/cpp_client_{device}.log", " ", here)
        stop(b, python_, here)


def _plan_shitu(b: Builder) -> None:
    v, log_dir = b.v, b.log_dir
    first, python_ = interpreter(v.value_to_colon("python"))
    python_interp = first or ""
    for part in ("cls", "det"):
        roles = (f"serving.{part}.model_dir", "serving.model_filename", "serving.params_filename",
                 f"serving.{part}.server_dir", f"serving.{part}.client_dir")  # fmt: skip
        convert(b, python_interp, roles, f"{log_dir}/cpp_trans_model_{part}.log", "deploy")
    values = {role: v.value_to_colon(f"serving.{role}") for role in
              ("cls.server_dir", "cls.client_dir", "det.server_dir", "det.client_dir")}  # fmt: skip
    preprocess = "./paddleserving/recognition/preprocess"
    for source, target in (
        (dir_name(values["cls.server_dir"]), values["cls.server_dir"]),
        (dir_name(values["cls.client_dir"]), values["cls.client_dir"]),
        (f"{DET_PREPROCESS}_client", values["det.client_dir"]),
        (f"{DET_PREPROCESS}_serving", values["det.server_dir"]),
    ):
        cmd = f"cp {preprocess}/{path_word(source)}/*.prototxt {path_word(target)}"
        b.add("edit", cmd, None, cwd="deploy", quiet=True, globs=True)
    here = rel("deploy", v.value_to_colon("serving.dir"))
    pipeline = v.value_to_colon("serving.client")
    models = f"../../{values['det.server_dir']} ../../{values['cls.server_dir']}"
    for use_gpu in ifs_split(v.value_to_colon("serving.use_gpu"), "|"):
        cmd = (f"{python_interp} -m paddle_serving_server.serve --model {models} "
               "--op GeneralPicodetOp GeneralFeatureExtractOp --port 9400")  # fmt: skip
        if use_gpu == "null":
            serve(b, cmd, f"{log_dir}/cpp_server_cpu.log", 5, here)
            device = "cpu"
        else:
            cmd += f" --gpu_id={use_gpu}"
            # upstream's status text (no nohup, no redirect); we write the log it names
            serve(b, cmd, f"{log_dir}/cpp_server_gpu.log", 5, here, shown=f"{cmd} &")
            device = "gpu"
        client(b, f"{python_interp} {pipeline}", f"{log_dir}/cpp_client_{device}.log", " ", here)
        stop(b, python_, here)
