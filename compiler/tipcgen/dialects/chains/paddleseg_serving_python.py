"""PaddleSeg's test_serving_infer_python.sh: its 16 lines, and what it runs (a table): convert the
inference model for Paddle Serving (`trans_model`), then, from the config's serving_dir, for each
item of the web service's device list (`null`: the CPU, any other: that GPU, set as the service's
option `<key>=<item>`) start the Python web service in the background, run the pipeline client
against it and stop the service. Logs and the status log (`results_python.log`) in
`$(pwd)/test_tipc/output/<model_name>/<MODE>/`; GPUID (3rd argument), when given, is every
command's CUDA_VISIBLE_DEVICES. The C++ chain (paddleseg_serving_cpp.py) shares its conversion."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, H, Layout
from tipcgen.dialects.chains.paddledetection_serving_python import START_STATUS, STOPPED
from tipcgen.dialects.steps import (
    Branch,
    ChainTable,
    Command,
    Deviation,
    First,
    Item,
    Join,
    Key,
    Lit,
    Loop,
    Param,
    Service,
    Val,
    When,
    refuses_modes_but,
)

# fmt: off
# The conversion's lines (both chains' lines 1-9: PaddleClas's serving roles) and the variables
# upstream names them by.
CONVERT_ROWS = (
    H("serving_params"), F("model_name", "model_name"), F("python", "python"),
    F("serving.convert", "trans_model"), F("serving.model_dir"), F("serving.model_filename"),
    F("serving.params_filename"), F("serving.server_dir"), F("serving.client_dir"), F("serving.dir", "serving_dir"),
)
CONVERT_READS = (
    ("model_name", "value", "model_name"), ("python_list", "value", "python"),
    ("trans_model_py", "value", "serving.convert"),
    ("infer_model_dir_key", "key", "serving.model_dir"), ("infer_model_dir_value", "value", "serving.model_dir"),
    ("model_filename_key", "key", "serving.model_filename"),
    ("model_filename_value", "value", "serving.model_filename"),
    ("params_filename_key", "key", "serving.params_filename"),
    ("params_filename_value", "value", "serving.params_filename"),
    ("serving_server_key", "key", "serving.server_dir"), ("serving_server_value", "value", "serving.server_dir"),
    ("serving_client_key", "key", "serving.client_dir"), ("serving_client_value", "value", "serving.client_dir"),
    ("serving_dir_value", "value", "serving.dir"),
)


PYTHON = First("python", "python")  # the interpreter: the first item of the python line's `|` list


def convert(log: str) -> Command:
    """The conversion for Paddle Serving (its status line names its log). Upstream evals every
    command of its chain with IFS `|` (`pipe_splits`)."""
    words = (PYTHON, Val("serving.convert"), Param("serving.model_dir", "set_dirname"),
             Param("serving.model_filename"), Param("serving.params_filename"),
             Param("serving.server_dir", "set_serving_server"), Param("serving.client_dir", "set_serving_client"))
    return Command("export", words, log, "trans_model_log_path", shown="{cmd} >{log} 2>&1", pipe_splits=True,
                   note="The inference model converted for Paddle Serving.")


# upstream's `if [ ${x} = "null" ]; then ...cpu...; else ...gpu...; fi`
DEVICE = Branch("device", ((("null",), "cpu"),), "", default="gpu")
NOT_MINE = Deviation(
    "serving-refuses-other-config",
    "a config of the family's other serving script (its Python and C++ serving configs share their "
    "first section; the keys of the lines that differ tell them apart) exits 2 before anything runs",
    "upstream reads any config by line position and runs the other script's values as its own "
    "(a C++ config's device list as the Python client's script)",
)
MODE_CHECKED = Deviation(
    "serving-mode-checked",
    "MODE (2nd argument, default serving_infer) must be serving_infer: another exits 2 before anything "
    "runs, saying a GPU id goes third",
    "upstream takes any MODE as the name of the logs' folder, a missing one too (the logs then go "
    "straight into test_tipc/output/<model_name>/)",
    (refuses_modes_but("serving_infer", defaulted=True),),
)

ROWS = (
    *CONVERT_ROWS, F("serving.web.script", "web_service"), F("serving.use_gpu"), F("serving.output_name"),
    F("serving.client", "pipline"), F("serving.image"), F("serving.input_name"),  # upstream's `pipline`
)
READS = (  # what the script reads and uses, named as upstream's
    *CONVERT_READS,
    ("web_service_key", "key", "serving.web.script"),  # ours: its configs are told by it (NOT_MINE)
    ("web_service_py", "value", "serving.web.script"),
    ("web_use_gpu_key", "key", "serving.use_gpu"), ("web_use_gpu_list", "value", "serving.use_gpu"),
    ("output_name_key", "key", "serving.output_name"), ("output_name_value", "value", "serving.output_name"),
    ("pipeline_py", "value", "serving.client"),
    ("image_dir_key", "key", "serving.image"), ("image_dir_value", "value", "serving.image"),
    ("input_name_key", "key", "serving.input_name"), ("input_name_value", "value", "serving.input_name"),
)
IN_DIR = "serving.dir"  # upstream's `cd ${serving_dir_value}` after the conversion


def _service(device: str, use_gpu: tuple, blanks: tuple) -> When:
    """The web service on `device` (its option `<key>=` the words `use_gpu`), the client against it;
    `blanks`: the extra blank upstream's CPU client command has."""
    web = (PYTHON, Val("serving.web.script"), Param("serving.input_name"), Param("serving.output_name"),
           Join((Key("serving.use_gpu"), Lit("="), *use_gpu)))
    client = (PYTHON, Val("serving.client"), Param("serving.image", "set_image_dir"), *blanks,
              Param("serving.input_name"))
    return When("device", (device,), (
        Service(
            Command("serve", web, "python_server_{device}.log", "web_service_log_path", shown="{cmd} >{log} 2>&1 &",
                    cwd=Val(IN_DIR), pipe_splits=True, note="The web service, in the background."),
            (Command("infer", client, "python_client_{device}_batchsize_1.log", "client_log_path",
                     shown="{cmd} > {log} 2>&1 ", cwd=Val(IN_DIR), pipe_splits=True,
                     note="The pipeline client, against it."),),
            warmup=5,
            note="The web service stopped (upstream: `ps ux | grep web_service | awk | xargs kill -9`).",
        ),
    ), note=f"The {device.upper()} run.")


PADDLESEG_SERVING_PYTHON = Layout(
    "paddleseg_serving_python",
    "PaddleSeg Python serving config (16 lines, test_serving_infer_python.sh)",
    ROWS,
    Dialect(
        family="chain",
        title=("Python 服务化部署测试", "Python serving test"),
        runners=("paddleseg_serving_python",),
        values_to_colon=True,
        script="test_serving_infer_python.sh",
        status_log="results_python.log",
        reads=READS,
        gpuid_arg=True,
        matrix_roles=("serving.use_gpu",),
        command_roles=("serving.convert", "serving.web.script"),
        table=ChainTable("serving_infer", "{root}/test_tipc/output/{model_name}/{mode}",
                         "{verdict} with command - {model} - {command} - {log}  ", (  # its status_check
            convert("python_trans_model.log"),
            Loop("serving.use_gpu", "use_gpu", (
                _service("cpu", (), (Lit(""),)),  # upstream's `${key}=""` in its "...": `<key>=`
                _service("gpu", (Item("use_gpu"),), ()),
            ), note="Each item of the web service's device list: `null` serves on the CPU (its option empty),\n"
                    "any other on the GPU (its option that item).", branch=DEVICE),
        ), deviations=(START_STATUS, STOPPED, MODE_CHECKED, NOT_MINE), gpuid_env=True,
           requires=(("serving.web.script", "web_service"),)),
    ),
    read_lines=18,
    detect=lambda sig: (
        "serving_params with `trans_model:`, `web_service:`, `--output_name:` and `--input_name:` keys (PaddleSeg "
        "test_serving_infer_python.sh)"
        if "serving_params" in sig.headers and sig.key(3) == "trans_model" and sig.key(10) == "web_service"
        and sig.key(12) == "--output_name" and sig.key(15) == "--input_name"
        else None
    ),
)
# fmt: on
