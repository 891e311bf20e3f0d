"""The models tutorials' test_serving_infer_python.sh: its 14 lines (PaddleVideo's first ten, then
its own), and what it runs (a table): the model converted for Paddle Serving, then from the
serving directory, for each item of its use_gpu line (`null`: the CPU, any other: the GPU, in the
logs' names), the web service, after upstream's 5 s the pipeline client against it, and the
service stopped. Logs in ./test_tipc/output/<model_name>/<MODE>/ (ours wherever a step runs
from), status lines `...!` in serving_infer_python.log; every command sees
CUDA_VISIBLE_DEVICES=<GPUID> (its 3rd argument) when one is given."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, Layout
from tipcgen.dialects.chains.paddledetection_serving_python import START_STATUS, STOPPED
from tipcgen.dialects.chains.paddleseg_serving_python import NOT_MINE
from tipcgen.dialects.chains.paddlevideo_serving_python import CONVERT, READS, ROWS
from tipcgen.dialects.steps import (
    Branch,
    ChainTable,
    Command,
    Deviation,
    Item,
    Join,
    Key,
    Lit,
    Loop,
    Param,
    Service,
    Val,
    When,
)

# fmt: off
STATUS = "{verdict} with command - {model} - {command}!  "  # its status_check
CLIENT = (Val("python"), Val("serving.client"), Param("serving.http.data", "set_image_dir"))
FOREGROUND = Deviation(
    "serving-foreground-server",
    "runs each server in the background from the serving directory, its log and status line in the log directory; "
    "the conversion's status line there too",
    "upstream runs its server in the foreground (the script waits for a server to end, which a serving one never "
    "does) from serving_dir with its log directory relative to the repo root: every redirection and status line "
    "after its `cd` names a directory that does not exist there, so no server or client runs and only the "
    "conversion's command is left",
    (r"^steps: plan runs more \((serve|infer)\)$", r"^logs: plan \+\[.*\]$", r"^status: number of lines$",
     r"^status: \w+ (command text|verdict upstream 'Run \w+' vs plan 'Run \w+')$",
     r"^status: results_python\.log elsewhere$"),
)


def service(word: str, device: tuple, log: str, warmup: int) -> When:
    """The server and client of one device word (upstream's branch of it)."""
    return When("device", (word,), (
        Service(
            Command("serve", (Val("python"), Val("serving.web.script"), *device), f"python_server_{log}.log",
                    "_save_log_path", shown="{cmd} > {log} 2>&1 ", cwd=Val("serving.dir"), names_log=False,
                    note=f"The web service on the {log.upper()}, in the background (upstream's waits for it)."),
            (Command("infer", CLIENT, f"python_client_{log}.log", "_save_infer_log_path", shown="{cmd} > {log} 2>&1 ",
                     cwd=Val("serving.dir"), names_log=False, note="The pipeline client, against it."),),
            warmup=warmup,
            note="The web service stopped (upstream: `ps ux | grep -E web_service | awk | xargs kill -9`).",
        ),
    ), note=f"The {log.upper()}'s web service and client.")


MODELS_SERVING_PYTHON = Layout(
    "models_serving_python",
    "models tutorial Python serving config (14 lines, test_serving_infer_python.sh)",
    (*ROWS, F("serving.web.script", "web_service"), F("serving.use_gpu"), F("serving.client", "pipline"),
     F("serving.http.data", "--image_dir")),
    Dialect(
        family="chain",
        title=("Python 服务化部署测试", "Python serving test"),
        runners=("models_serving_python",),
        values_to_colon=True,
        script="test_serving_infer_python.sh",
        status_log="serving_infer_python.log",
        reads=(*READS, ("web_service_key", "key", "serving.web.script"),
               ("web_service_py", "value", "serving.web.script"), ("web_use_gpu_key", "key", "serving.use_gpu"),
               ("web_use_gpu_list", "value", "serving.use_gpu"), ("pipeline_py", "value", "serving.client"),
               ("image_dir_key", "key", "serving.http.data"), ("image_dir_value", "value", "serving.http.data")),
        gpuid_arg=True,
        family_sections=True,
        command_roles=("serving.convert", "serving.web.script"),
        matrix_roles=("serving.use_gpu",),
        table=ChainTable("serving_infer", "{root}/test_tipc/output/{model_name}/{mode}", STATUS, (
            Command("export", CONVERT, "python_trans_model_{model_name}.log", "trans_log", shown="{cmd} > {log} 2>&1 ",
                    names_log=False, note="The model converted for Paddle Serving."),
            Loop("serving.use_gpu", "use_gpu", (
                service("cpu", (Join((Key("serving.use_gpu"), Lit("=''"))),), "cpu", 5),
                service("gpu", (Join((Key("serving.use_gpu"), Lit("="), Item("use_gpu"))),), "gpu", 5),
            ), note="Each use_gpu item: `null` on the CPU, any other on the GPU.",
                branch=Branch("device", ((("null",), "cpu"),), "", default="gpu")),
        ), deviations=(START_STATUS, STOPPED, FOREGROUND, NOT_MINE), gpuid_env=True,
           requires=(("serving.web.script", "web_service"),)),
    ),
    read_lines=18,
    detect=lambda sig: (
        "serving_params with `trans_model:`, `web_service:` and `pipline:` keys (the models tutorials' "
        "test_serving_infer_python.sh)"
        if "serving_params" in sig.headers and sig.key(3) == "trans_model" and sig.key(10) == "web_service"
        and sig.key(12) == "pipline" else None
    ),
)
# fmt: on
