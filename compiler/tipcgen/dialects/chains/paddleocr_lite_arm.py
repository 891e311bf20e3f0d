"""PaddleOCR's test_lite_arm_cpp.sh: its 13 lines, and what it runs (a table). The script runs on the
ARM device itself, from the folder prepare_lite_cpp.sh packs (test_lite/: the script, common_func.sh,
the config, the `ocr_db_crnn` demo, its Paddle-Lite library, the `*_opt.nb` models, the test images):
it puts that folder first on LD_LIBRARY_PATH, then its inference line's word picks what it runs
(`det`, `rec` or `system`, by substring, as upstream's if/elif; anything else is refused). For each
model of the det list (a system's det, rec and cls models at the same positions), each image folder,
each number of threads and each batch size (a system's det x rec batch sizes) it runs the demo on
`<model>_opt.nb`, in INT8 when the (det) model's name contains `slim`, else FP32; logs and status
lines (naming no log) in ./output/, whatever the MODE."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, H, Layout
from tipcgen.dialects.steps import (
    Branch,
    ChainTable,
    Command,
    Deviation,
    Item,
    Join,
    Lit,
    Loop,
    PathFirst,
    Pick,
    Val,
    When,
)

# fmt: off
KIND = Pick("lite.inference_cmd", "kind", (((), ("det",), "det"), ((), ("rec",), "rec"), ((), ("system",), "system")),
            "contains none of det, rec, system")
# upstream's `if [[ $model =~ "slim" ]]; then precision="INT8"; else precision="FP32"; fi`
PRECISION = Branch("precision", ((("*slim*",), "INT8"),), "", default="FP32")
SHOWN = "{cmd} > {log} 2>&1"  # its status line shows the redirection


def nb(var: str) -> Join:
    """A model of a list as the demo takes it: `<model>_opt.nb` (paddle_lite_opt's output)."""
    return Join((Item(var), Lit("_opt.nb")))


def _run(models: tuple, batch_sizes: tuple, tail: tuple, note: str) -> Loop:
    """Each threads x batch size(s) of one model (or model triple) and image folder: the demo."""
    names = "_".join(f"{{{m}}}_opt.nb" for m in models)
    sizes = "_".join(f"{kind}_batchsize_{{{var}}}" for kind, _role, var in batch_sizes)
    # the demo gets the first batch size only (a system's rec batch size names its log alone)
    head = (Val("lite.inference_cmd"), *(nb(m) for m in models), Val("lite.runtime_device"), Item("precision"),
            Item("threads"), Item(batch_sizes[0][2]))
    # upstream's command has two blanks before the image folder (an empty word here)
    words = (*head, Lit(""), Item("img_dir"), *tail, Val("lite.benchmark"))
    log = f"lite_{names}_runtime_device_{{lite.runtime_device}}_precision_{{precision}}_{sizes}_threads_{{threads}}.log"
    body: tuple = (Command("infer", words, log, "_save_log_path", shown=SHOWN, names_log=False, note=note),)
    for kind, role, var in reversed(batch_sizes):
        body = (Loop(role, var, body, note=f"Each {kind} batch size."),)
    return Loop("lite.threads", "threads", body, note="Each number of CPU threads.")


def _images(run: Loop) -> Loop:
    return Loop("lite.image_dir", "img_dir", (run,), note="Each image folder.")


DET = (("det", "lite.det_batch_size", "det_batchsize"),)
REC = (("rec", "lite.rec_batch_size", "rec_batchsize"),)
TABLE = ChainTable("lite_infer", "./output", "{verdict} with command -  - {command} -  ", (  # status_check, 3 args
    PathFirst("LD_LIBRARY_PATH"),
    KIND,
    When("kind", ("det",), (
        Loop("lite.det_models", "det_model", (
            _images(_run(("det_model",), DET, (Val("lite.config"),), "The detector.")),
        ), note="Each det model (INT8 when its name contains slim).", branch=PRECISION),
    ), note="A detector (the inference line contains det)."),
    When("kind", ("rec",), (
        Loop("lite.rec_models", "rec_model", (
            _images(_run(("rec_model", "cls_model"), REC, (Val("lite.config"), Val("lite.rec_dict")),
                         "The recognizer and the direction classifier.")),
        ), note="Each rec model, with the cls model at its position (INT8 when its name contains slim).",
            branch=PRECISION, paired=(("lite.cls_models", "cls_model"),)),
    ), note="A recognizer (the inference line contains rec, not det)."),
    When("kind", ("system",), (
        Loop("lite.det_models", "det_model", (
            _images(_run(("det_model", "rec_model", "cls_model"), DET + REC, (Val("lite.config"), Val("lite.rec_dict")),
                         "The OCR system: detector, recognizer, direction classifier.")),
        ), note="Each det model, with the rec and cls models at its position (INT8 when the det model's\n"
                "name contains slim).",
            branch=PRECISION, paired=(("lite.rec_models", "rec_model"), ("lite.cls_models", "cls_model"))),
    ), note="A whole system (the inference line contains system)."),
), deviations=(
    Deviation(
        "lite-model-positions",
        "runs each model of the det list (rec list for a recognizer), with the other lists' models at its "
        "position (none past their end)",
        "upstream runs positions 0 and 1 whatever the lists' lengths (`for i in {0..1}`): a list of one model "
        "also runs `_opt.nb`, a third model is never run (every corpus config lists two)",
    ),
    Deviation(
        "lite-rec-branch",
        "a recognizer config runs each rec model with the cls model at its position, in INT8 when the rec model's "
        "name contains slim, the config then the dictionary after the image folder (as a system's run), its log "
        "named by both models",
        "upstream's rec branch passes `${rec_model}_opt.nb`, a variable it never sets (every run gets `_opt.nb`), "
        "tests the det model's name for slim (unset there: always FP32), passes the dictionary before the config "
        "and names its log by `${cls_model}`, also unset (no corpus config is a recognizer's)",
    ),
    Deviation(
        "lite-kind-refused",
        "refuses a config whose inference line contains none of det, rec, system before anything runs (exit 2)",
        "upstream prints `inference_cmd is wrong, please check.` and exits 1",
    ),
))
LISTS = ("lite.det_models", "lite.rec_models", "lite.cls_models", "lite.threads", "lite.det_batch_size",
         "lite.rec_batch_size")
PADDLEOCR_LITE_ARM = Layout(
    "paddleocr_lite_arm",
    "PaddleOCR Paddle-Lite ARM config (13 lines, test_lite_arm_cpp.sh)",
    (H("lite_params"), F("lite.inference_cmd", "inference"), F("lite.runtime_device", "runtime_device"),
     F("lite.det_models", "det_infer_model"), F("lite.rec_models", lint_keys=("rec_infer_model", "null")),
     F("lite.cls_models", lint_keys=("cls_infer_model", "null")), F("lite.threads", "--cpu_threads"),
     F("lite.det_batch_size", "--det_batch_size"), F("lite.rec_batch_size", lint_keys=("--rec_batch_size", "null")),
     F("lite.image_dir", "--image_dir"), F("lite.config", "--config_dir"),
     F("lite.rec_dict", lint_keys=("--rec_dict_dir", "null")), F("lite.benchmark", "--benchmark")),
    Dialect(
        family="chain",
        title=("Paddle-Lite ARM 预测测试", "Paddle-Lite ARM inference test"),
        runners=("paddleocr_lite_arm",),
        values_to_colon=True,
        script="test_lite_arm_cpp.sh",
        status_log="results.log",
        reads=(  # what the script reads and uses, named as upstream's
            ("model_name", "value", "model_name"),  # no line: empty (the logs' checks read it)
            ("inference_cmd", "value", "lite.inference_cmd"), ("runtime_device", "value", "lite.runtime_device"),
            ("det_model_list", "value", "lite.det_models"), ("rec_model_list", "value", "lite.rec_models"),
            ("cls_model_list", "value", "lite.cls_models"), ("cpu_threads_list", "value", "lite.threads"),
            ("det_batch_size_list", "value", "lite.det_batch_size"),
            ("rec_batch_size_list", "value", "lite.rec_batch_size"),
            ("infer_img_dir_list", "value", "lite.image_dir"), ("config_dir", "value", "lite.config"),
            ("rec_dict_dir", "value", "lite.rec_dict"), ("benchmark_value", "value", "lite.benchmark"),
        ),
        log_name_roles=("lite.runtime_device", *LISTS),
        matrix_roles=(*LISTS, "lite.image_dir"),
        command_roles=("lite.inference_cmd",),
        table=TABLE,
    ),
    read_lines=13,
    detect=lambda sig: (
        "lite_params with `inference:` and `det_infer_model:` keys (PaddleOCR test_lite_arm_cpp.sh)"
        if "lite_params" in sig.headers and sig.key(1) == "inference" and sig.key(3) == "det_infer_model"
        else None
    ),
)
# fmt: on
