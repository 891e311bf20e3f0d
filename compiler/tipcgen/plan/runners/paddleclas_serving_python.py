"""PaddleClas's test_serving_infer_python.sh as a Plan: convert the inference model(s) for Paddle
Serving, fit the converted configs and the web service to each other (sed edits: no status line,
their failure ignored, as upstream), then for each device of `--use_gpu` start the Python web
service in the background, run each client against it and stop it.

Two line tables (dialects/chains/paddleclas_serving_python.py): a classifier's and PP-ShiTu's
(detector + feature extractor, run from deploy/). Logs and the status log
(`results_serving.log`) under `$(pwd)/test_tipc/output/<model_name>/<MODE>/`; every command sees
CUDA_VISIBLE_DEVICES=<GPUID> (the script's 3rd argument, default 0), as upstream exports it.
"""

from __future__ import annotations

import os
import re
from typing import Optional

from tipcgen.dialects.steps import refuses_modes_but
from tipcgen.errors import UsageError
from tipcgen.plan.builder import Builder
from tipcgen.plan.runner import COMMON_DEVIATIONS, EDITS_AS_DATA, Deviation
from tipcgen.script.shellwords import ifs_split, path_word, sed_quoted, set_param

MODE = "serving_infer"
MODES = (MODE,)
TEMPLATE = "runner_paddleclas_serving_python.sh.j2"
STATUS_FORMAT = "{verdict} with command - {model} - {command} - {log} ! "  # PaddleClas's status_check
GPU_ENTRIES_BY_LENGTH = False  # no gpu_list in this chain
CLASSIC = None

# The feed variable's name a converted model's serving_server_conf.prototxt holds (its 3rd
# line): read at run time, after the conversion wrote it (Step.fills).
FEED_VAR = "${feed_var_name}"
GPU_ID = re.compile(r"^[0-9]+$")

SERVER_OWN_STATUS = Deviation(
    "serving-server-own-status",
    "a server's status line says whether it is still up after its warm-up (or ended with 0); one "
    "that exits with an error during the warm-up is `Run failed`",
    "upstream's reports the exit status of putting `nohup ...` in the background, which is always 0: "
    "a server that dies at once is `Run successfully`",
    (r"^status: serve verdict upstream 'Run successfully' vs plan 'Run failed'",),
)
SERVER_ALWAYS_STOPPED = Deviation(
    "serving-server-always-stopped",
    "the server runs in a process group of its own (not under nohup); after its stop command, what is "
    "left of that group is stopped (SIGTERM, then "
    "SIGKILL after TIPC_KILL_GRACE seconds), also when the script is interrupted; the warm-up ends "
    "early when the server has ended, and the fixed pauses after each client and after the stop are "
    "dropped",
    "upstream relies on `paddle_serving_server.serve stop` alone: a server it misses keeps the port "
    "and breaks the next run; its fixed sleeps only slow the script",
    # its warm-up and pauses, recorded by the oracle's sleep shim (`sleep: upstream sleeps 10s 5s`);
    # the whole-tree oracle records the nohup wrapper too
    (r"^sleep: upstream sleeps [0-9]+s?( [0-9]+s?)*$", r"^nohup: upstream starts it under nohup$"),
)
SHITU_BY_CONTENT = Deviation(
    "serving-shitu-by-content",
    "a PP-ShiTu config is told by its keys (`cls_inference_model_url` on line 4), not by its model name",
    "upstream picks the PP-ShiTu branch when model_name holds `PPShiTu` (the C++ script: `ShiTu`) and "
    "reads the other table's lines otherwise; both agree on every corpus config",
)

DEVIATIONS = (
    *COMMON_DEVIATIONS,
    EDITS_AS_DATA,
    SERVER_OWN_STATUS,
    SERVER_ALWAYS_STOPPED,
    SHITU_BY_CONTENT,
    Deviation(
        "serving-any-gpu-id",
        "every GPU id of `--use_gpu` runs the GPU branch (config.yml's devices get that id)",
        "upstream's GPU branch tests `-eq 0`: any other id prints `Does not support hardware` and runs nothing",
    ),
    Deviation(
        "serving-gpu-log-names",
        "GPU runs log to python_server_gpu_<id>.log and python_client_gpu_<id>_<client>_batchsize_1.log",
        "upstream names them after use_trt and precision, which the script never sets "
        "(`python_server_gpu_usetrt__precision_.log`), and its skip tests on them and on _flag_quant "
        "never fire",
        (
            r"^logs: upstream \+\[.*usetrt__precision_",
            r"^status: (serve|infer) command text$",
            r"^status: trailer ' - \$LOG/python_(server|client)_gpu_",
        ),
    ),
    Deviation(
        "serving-mode-checked",
        "MODE (2nd argument, default serving_infer) must be serving_infer",
        "upstream takes any MODE as the name of the logs' folder, a missing one too (the logs then go "
        "straight into test_tipc/output/<model_name>/)",
        (refuses_modes_but("serving_infer", defaulted=True),),
    ),
    Deviation(
        "serving-refuses-cpp-config",
        "a C++ serving config (`web_service:null`) is refused with exit 2",
        "upstream starts `python null` as the web service",
    ),
)


def dir_name(path: str) -> str:
    """func_get_url_file_name: the last `/`-separated word of a path."""
    parts = ifs_split(path, "/")
    return parts[-1] if parts else ""


def client_stem(client: str) -> str:
    """`${pipeline%_client*}`: the client's name up to its last `_client`."""
    return client.rsplit("_client", 1)[0] if "_client" in client else client


def interpreter(python: str) -> tuple[Optional[str], str]:
    """(the first `python` item of the `|`-list, or None; the loop variable after the loop: that
    item, else the last one)."""
    items = ifs_split(python, "|")
    first = next((p for p in items if "python" in p), None)
    return first, first if first is not None else (items[-1] if items else "")


def rel(*parts: str) -> str:
    """A directory relative to the repo root, as `cd` leaves it (`.` for the root)."""
    return os.path.normpath(os.path.join(*parts))


def sed_alias(b: Builder, path: str, alias: str, cwd: Optional[str]) -> None:
    expr = f'/fetch_var/,/is_lod_tensor/s/alias_name: .*/alias_name: "{sed_quoted(alias)}"/'
    b.add("edit", f"sed -i '{expr}' {path_word(path)}", None, cwd=cwd, quiet=True)


def convert(b: Builder, python: str, roles: tuple, log: str, cwd: Optional[str]) -> None:
    v = b.v
    flags = " ".join(set_param(v.key(role), v.value_to_colon(role)) for role in roles)
    cmd = f"{python} {v.value_to_colon('serving.convert')} {flags}"
    b.add("export", cmd, log, shown=f"{cmd} > {log} 2>&1", status_path=log, cwd=cwd)


def serve(b: Builder, cmd: str, log: str, warmup: int, cwd: str, shown: Optional[str] = None) -> None:
    b.add("serve", cmd, log, shown=shown or f"nohup {cmd} > {log} 2>&1 &", status_path=log, cwd=cwd,
          service="start", warmup=warmup)  # fmt: skip


def stop(b: Builder, python: str, cwd: str) -> None:
    b.add("stop", f"{python} -m paddle_serving_server.serve stop", None, cwd=cwd, service="stop", quiet=True)


def client(b: Builder, cmd: str, log: str, trailing: str, cwd: str) -> None:
    b.add("infer", cmd, log, shown=f"{cmd} > {log} 2>&1{trailing}", status_path=log, cwd=cwd, output="tee")


def config_yml(b: Builder, device_type: int, devices: str, cwd: str) -> None:
    b.add("edit", f"sed -i '24s/device_type: .*/device_type: {device_type}/' config.yml", None, cwd=cwd, quiet=True)
    b.add("edit", f"sed -i '27s/devices: .*/devices: \"{devices}\"/' config.yml", None, cwd=cwd, quiet=True)


def feed_var_edit(b: Builder, web_service: str, prototxt: str, cwd: str) -> None:
    expr = f"/preprocess/,/input_imgs}}/s/{{.*: input_imgs}}/{{{FEED_VAR}: input_imgs}}/"
    b.add("edit", f"sed -i '{expr}' {path_word(web_service)}", None, cwd=cwd, quiet=True,
          fills=((FEED_VAR, prototxt, 2),))  # fmt: skip


def plan(b: Builder) -> None:
    v = b.v
    b.log_dir = f"{b.root or '.'}/test_tipc/output/{v.value_to_colon('model_name')}/{b.mode}"
    b.status_log = f"{b.log_dir}/{v.layout.dialect.status_log}"
    b.cvd = b.gpuid or "0"  # upstream: export CUDA_VISIBLE_DEVICES=${GPUID:-0}
    if v.value_to_colon("serving.web_service") == "null":
        raise UsageError(
            f"{b.source}: web_service:null is a C++ serving config: run it with test_tipc/test_serving_infer_cpp.sh"
        )
    client = v.value("serving.client")
    if "/" in client:
        raise UsageError(
            f"{b.source}: serving.client (`{v.key('serving.client')}:{client}`) holds a `/`, but its items name "
            f"log files in test_tipc/output/{v.value('model_name')}/"
        )
    if v.layout.index("serving.cls.model_dir") is not None:
        _plan_shitu(b)
    else:
        _plan_cls(b)


def _plan_cls(b: Builder) -> None:
    v, log_dir = b.v, b.log_dir
    first, python_ = interpreter(v.value_to_colon("python"))
    server_dir = v.value_to_colon("serving.server_dir")
    if first is not None:
        roles = ("serving.model_dir", "serving.model_filename", "serving.params_filename", "serving.server_dir",
                 "serving.client_dir")  # fmt: skip
        convert(b, first, roles, f"{log_dir}/python_trans_model.log", None)
    sed_alias(b, f"{server_dir}/serving_server_conf.prototxt", "prediction", None)
    sed_alias(b, f"{v.value_to_colon('serving.client_dir')}/serving_client_conf.prototxt", "prediction", None)
    here = rel(v.value_to_colon("serving.dir"))
    web_service = v.value_to_colon("serving.web_service")
    feed_var_edit(b, web_service, rel(f"{server_dir}/serving_server_conf.prototxt"), here)
    expr = f"21s/model_config: .*/model_config: {sed_quoted(dir_name(server_dir))}/"
    b.add("edit", f"sed -i '{expr}' config.yml", None, cwd=here, quiet=True)
    _devices(b, python_, python_, web_service, here, (5, 5), trailing_cpu=" ")


def _plan_shitu(b: Builder) -> None:
    v, log_dir = b.v, b.log_dir
    first, python_ = interpreter(v.value_to_colon("python"))
    python_interp = first or ""
    for part in ("cls", "det"):
        roles = (f"serving.{part}.model_dir", "serving.model_filename", "serving.params_filename",
                 f"serving.{part}.server_dir", f"serving.{part}.client_dir")  # fmt: skip
        convert(b, python_interp, roles, f"{log_dir}/python_trans_model_{part}.log", "deploy")
    server_dir = v.value_to_colon("serving.cls.server_dir")
    sed_alias(b, f"{server_dir}/serving_server_conf.prototxt", "features", "deploy")
    sed_alias(b, f"{v.value_to_colon('serving.cls.client_dir')}/serving_client_conf.prototxt", "features", "deploy")
    here = rel("deploy", v.value_to_colon("serving.dir"))
    web_service = v.value_to_colon("serving.web_service")
    feed_var_edit(b, web_service, rel("deploy", f"{server_dir}/serving_server_conf.prototxt"), here)
    _devices(b, v.value_to_colon("python"), python_, web_service, here, (5, 10), trailing_cpu="")


def _devices(b: Builder, python: str, python_: str, web_service: str, here: str, warmups: tuple,
             trailing_cpu: str) -> None:  # fmt: skip
    """The loop over `--use_gpu`: per device, the config.yml edits, the server, the clients, the stop."""
    v, log_dir = b.v, b.log_dir
    clients = ifs_split(v.value_to_colon("serving.client"), "|")
    for use_gpu in ifs_split(v.value_to_colon("serving.use_gpu"), "|"):
        if use_gpu == "null":
            config_yml(b, 0, "", here)
            serve(b, f"{python} {web_service}", f"{log_dir}/python_server_cpu.log", warmups[0], here)
            for pipeline in clients:
                log = f"{log_dir}/python_client_cpu_{client_stem(pipeline)}_usemkldnn_False_threads_1_batchsize_1.log"
                client(b, f"{python} {pipeline}", log, trailing_cpu, here)
            stop(b, python_, here)
        elif GPU_ID.match(use_gpu):
            config_yml(b, 1, use_gpu, here)
            serve(b, f"{python} {web_service}", f"{log_dir}/python_server_gpu_{use_gpu}.log", warmups[1], here)
            for pipeline in clients:
                log = f"{log_dir}/python_client_gpu_{use_gpu}_{client_stem(pipeline)}_batchsize_1.log"
                client(b, f"{python} {pipeline}", log, "", here)
            stop(b, python_, here)
