"""PaddleOCR's test_serving_infer_python.sh: its 23 lines, and what it runs (a table). Its lines come
in det/rec pairs (the inference model, the serving server's and client's directories, for the detector
and for the recognizer), and the model's name picks which it reads: a whole system (ch_PP-OCRv2,
ch_PP-OCRv3, ch_ppocr_mobile_v2_0, ch_ppocr_server_v2_0) converts both for Paddle Serving and serves
both, a name containing `det` the detector, one containing `rec` the recognizer. Then, from the
config's serving_dir, per item of the web service's device list (`null`: the CPU per use_mkldnn x
thread_num item, `gpu`: the GPU per use_trt x precision item, fp16/int8 only with TensorRT) the Python
web service starts in the background, each pipeline client runs against it and it is stopped. Its
model config option is the last part of the serving server's directory. Logs and the status log
(`results_python_serving.log`) in `$(pwd)/test_tipc/output/<model_name>/<MODE>/python/`; GPUID (3rd
argument, default 0) is every command's CUDA_VISIBLE_DEVICES."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, H, Layout
from tipcgen.dialects.chains.paddledetection_serving_python import START_STATUS, STOPPED
from tipcgen.dialects.chains.paddleseg_serving_python import MODE_CHECKED, NOT_MINE
from tipcgen.dialects.steps import (
    Branch,
    ChainTable,
    Command,
    Deviation,
    First,
    Item,
    Join,
    Key,
    Last,
    Lit,
    Loop,
    Param,
    Pick,
    Service,
    Skip,
    Val,
    When,
)

# fmt: off
SYSTEMS = ("ch_PP-OCRv2", "ch_PP-OCRv3", "ch_ppocr_mobile_v2_0", "ch_ppocr_server_v2_0")
# upstream's `if [ ${model_name} = ch_PP-OCRv2 ] || ...; elif [[ ${model_name} =~ "det" ]]; elif ...`
KIND = Pick("model_name", "model_kind", ((SYSTEMS, (), "system"), ((), ("det",), "det"), ((), ("rec",), "rec")),
            f"is none of {', '.join(SYSTEMS)} and contains neither det nor rec")
NO_KIND = Deviation(
    "serving-model-name-of-no-kind-refused",
    "refuses a config whose model_name is none of the four OCR systems and contains neither `det` nor "
    "`rec` before anything runs (exit 2)",
    "upstream converts nothing and starts no web service, then runs the pipeline clients against none "
    "and writes status lines for them",
)
PYTHON = First("python", "python")  # the interpreter: the first item of the python line's `|` list

# the conversion's and the service's det/rec lines: (their roles' part, upstream's variables' part)
PAIRS = (("det", "det"), ("rec", "rec"))
CONVERT_ROWS = (
    H("serving_params"), F("model_name", "model_name"), F("python", "python"),
    F("serving.convert", "trans_model"), F("serving.det.model_dir"), F("serving.model_filename"),
    F("serving.params_filename"), F("serving.det.server_dir"), F("serving.det.client_dir"),
    F("serving.rec.model_dir"), F("serving.rec.server_dir"), F("serving.rec.client_dir"),
    F("serving.dir", "serving_dir"),
)
CONVERT_READS = (
    ("model_name", "value", "model_name"), ("python_list", "value", "python"),
    ("trans_model_py", "value", "serving.convert"),
    ("model_filename_key", "key", "serving.model_filename"),
    ("model_filename_value", "value", "serving.model_filename"),
    ("params_filename_key", "key", "serving.params_filename"),
    ("params_filename_value", "value", "serving.params_filename"),
    *((f"{pair}_{what}_value", "value", f"serving.{pair}.{role}") for pair, _ in PAIRS
      for what, role in (("infer_model_dir", "model_dir"), ("serving_server", "server_dir"),
                         ("serving_client", "client_dir"))),
    ("serving_dir_value", "value", "serving.dir"),
)


def convert(pair: str) -> Command:
    """The det or the rec model converted for Paddle Serving, under the script's own keys (upstream runs
    it with no status line: `quiet`; IFS `|` while it evals it: `pipe_splits`)."""
    words = (PYTHON, Val("serving.convert"),
             Param(Lit("--dirname"), "set_dirname", value=f"serving.{pair}.model_dir"),
             Param("serving.model_filename"), Param("serving.params_filename"),
             Param(Lit("--serving_server"), "set_serving_server", value=f"serving.{pair}.server_dir"),
             Param(Lit("--serving_client"), "set_serving_client", value=f"serving.{pair}.client_dir"))
    return Command("export", words, f"python_trans_model_{pair}.log", f"trans_{pair}_log",
                   shown="{cmd} > {log} 2>&1 ", quiet=True, pipe_splits=True,
                   note=f"The {pair} model converted for Paddle Serving (upstream gives it no status line).")


def model_configs(pairs: tuple) -> tuple:
    """The web service's model config options of `pairs`: the last part of each serving server's path."""
    return tuple(Param(f"serving.{pair}.service_model", f"set_{pair}_model_config",
                       value=(Last(f"serving.{pair}.server_dir", f"{pair}_server_value"),)) for pair in pairs)


IN_DIR = "serving.dir"  # upstream's `cd ${serving_dir_value}` after the conversions
KINDS = (("system", ("det", "rec")), ("det", ("det",)), ("rec", ("rec",)))


def services(device: str, options: tuple, log: str, client_gap: tuple) -> tuple:
    """Per model kind, the web service on `device` (its `options`) and the pipeline clients against it."""
    client = (PYTHON, Item("pipeline"), Param("serving.image", "set_image_dir"))
    out = []
    for kind, pairs in KINDS:
        web = (PYTHON, Val("serving.web.script"), *options, *model_configs(pairs))
        out.append(When("model_kind", (kind,), (Service(
            Command("serve", web, f"python_server_{device}_{log}.log", "server_log_path",
                    shown="nohup {cmd} > {log} 2>&1 &", cwd=Val(IN_DIR), pipe_splits=True,
                    note="The web service, in the background."),
            (Loop("serving.client", "pipeline", (
                Command("infer", client, f"python_client_{device}_{{pipeline_name}}_{log}_batchsize_1.log",
                        "_save_log_path", shown="{cmd}" + client_gap[0] + "> {log} 2>&1" + client_gap[1],
                        cwd=Val(IN_DIR), pipe_splits=True, note="A pipeline client, against it."),
            ), note="Each pipeline client.", cut=("pipeline_name", "_client")),),
            warmup=2,
            note="The web service stopped (upstream: `ps ux | grep web_service | awk | xargs kill -9`).",
        ),), note=f"A {kind} model's web service." if kind != "system" else "A system's web service (det and rec)."))
    return tuple(out)


CPU = services("cpu", (Join((Key("serving.use_gpu"), Lit("="))),
                       Join((Key("serving.use_mkldnn"), Lit("="), Item("use_mkldnn"))),
                       Param("serving.threads", "set_cpu_threads", value=(Item("threads"),))),
               "usemkldnn_{use_mkldnn}_threads_{threads}", (" ", " "))
GPU = services("gpu", (Param("serving.use_trt", "set_tensorrt", value=(Item("use_trt"),)),
                       Param("serving.precision", "set_precision", value=(Item("precision"),))),
               "usetrt_{use_trt}_precision_{precision}", ("", ""))
# upstream's `if [ ${use_gpu} = "null" ]; then ...cpu...; elif [ ${use_gpu} = "gpu" ]; then ...; else echo`
DEVICE = Branch("device", ((("null",), "cpu"), (("gpu",), "gpu")),
                "Does not support hardware other than CPU and GPU Currently!")

ROWS = (
    *CONVERT_ROWS, F("serving.web.script", "web_service"), F("serving.use_gpu"), F("serving.use_mkldnn"),
    F("serving.threads"), F("serving.use_trt"), F("serving.precision"), F("serving.det.service_model"),
    F("serving.rec.service_model"), F("serving.client", "pipline"), F("serving.image"),  # upstream's `pipline`
)
READS = (  # what the script reads and uses, named as upstream's
    *CONVERT_READS,
    ("web_service_py", "value", "serving.web.script"),
    ("web_use_gpu_key", "key", "serving.use_gpu"), ("web_use_gpu_list", "value", "serving.use_gpu"),
    ("web_use_mkldnn_key", "key", "serving.use_mkldnn"), ("web_use_mkldnn_list", "value", "serving.use_mkldnn"),
    ("web_cpu_threads_key", "key", "serving.threads"), ("web_cpu_threads_list", "value", "serving.threads"),
    ("web_use_trt_key", "key", "serving.use_trt"), ("web_use_trt_list", "value", "serving.use_trt"),
    ("web_precision_key", "key", "serving.precision"), ("web_precision_list", "value", "serving.precision"),
    ("det_server_key", "key", "serving.det.service_model"), ("rec_server_key", "key", "serving.rec.service_model"),
    ("pipeline_key", "key", "serving.client"),  # ours: its configs are told by it (NOT_MINE)
    ("pipeline_py", "value", "serving.client"),
    ("image_dir_key", "key", "serving.image"), ("image_dir_value", "value", "serving.image"),
)

PADDLEOCR_SERVING_PYTHON = Layout(
    "paddleocr_serving_python",
    "PaddleOCR Python serving config (23 lines, test_serving_infer_python.sh)",
    ROWS,
    Dialect(
        family="chain",
        title=("Python 服务化部署测试", "Python serving test"),
        runners=("paddleocr_serving_python",),
        values_to_colon=True,
        script="test_serving_infer_python.sh",
        status_log="results_python_serving.log",
        reads=READS,
        gpuid_arg=True,
        matrix_roles=("serving.use_gpu", "serving.use_mkldnn", "serving.threads", "serving.use_trt",
                      "serving.precision", "serving.client"),
        command_roles=("serving.convert", "serving.web.script"),
        table=ChainTable("serving_infer", "{root}/test_tipc/output/{model_name}/{mode}/python",
                         "{verdict} with command - {model} - {command} - {log} ", (  # its status_check
            KIND,
            When("model_kind", ("system", "det"), (convert("det"),), note="A system's or a detector's det pair."),
            When("model_kind", ("system", "rec"), (convert("rec"),), note="A system's or a recognizer's rec pair."),
            Loop("serving.use_gpu", "use_gpu", (
                When("device", ("cpu",), (
                    Loop("serving.use_mkldnn", "use_mkldnn", (
                        Loop("serving.threads", "threads", CPU, note="Each thread_num."),
                    ), note="Each use_mkldnn."),
                ), note="The CPU runs."),
                When("device", ("gpu",), (
                    Loop("serving.use_trt", "use_trt", (
                        Loop("serving.precision", "precision", (
                            Skip((("precision", "*fp16*", True), ("use_trt", "False", True))),
                            Skip((("precision", "*int8*", True), ("use_trt", "False", True))),
                            *GPU,
                        ), note="Each precision: fp16 and int8 only with TensorRT."),
                    ), note="Each use_trt."),
                ), note="The GPU runs."),
            ), note="Each item of the web service's device list: `null` serves on the CPU, `gpu` on the GPU\n"
                    "(upstream only echoes for another).", branch=DEVICE),
        ), deviations=(START_STATUS, STOPPED, MODE_CHECKED, NOT_MINE, NO_KIND), gpuid_env=True,
           gpuid_default="0", requires=(("serving.client", "pipline"),)),
    ),
    read_lines=23,
    detect=lambda sig: (
        "serving_params with `trans_model:`, `--det_dirname:`, `web_service:` and `pipline:` keys (PaddleOCR "
        "test_serving_infer_python.sh)"
        if "serving_params" in sig.headers and sig.key(3) == "trans_model" and sig.key(4) == "--det_dirname"
        and sig.key(13) == "web_service" and sig.key(21) == "pipline"
        else None
    ),
)
# fmt: on
