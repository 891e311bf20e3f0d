"""What PaddleSeg's and the models tutorials' test_ptq_inference_python.sh share (near twins; not
PaddleClas's script of that name, paddleclas_ptq.py): the lines both read, the variables they name
them by, and what they run in whole_infer (a table): the quantization (PTQ) of a trained model,
then its inference for each use_gpu item (`False`/`cpu` on the CPU, `True`/`gpu` on the GPU; any
other item only echoes) and each batch size; logs in ./test_tipc/output/<model_name>/<MODE>/.

Both scripts read use_gpu_key and batch_size_key twice, from the ptq lines, then from the inference
lines: the later read wins, so the quantization's parameters take the inference lines' keys with
the ptq lines' values."""

from __future__ import annotations

from tipcgen.dialects.base import SEP, Dialect, F, H
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
    Val,
    refuses_modes_but,
)

# fmt: off
TOP = (H("ptq_params"), F("model_name", "model_name"), F("python", "python"))
# the lines between the ptq parameters and the inference's: the quantization's script
TRAINER = (SEP, F("ptq.trainer", "trainer"), F("ptq.script", "PTQ"), SEP, H("infer_params"),
           F("ptq.infer.script", "inference"))


def ptq_reads(data: str, *more: tuple) -> tuple:
    """What such a script reads and uses, named as upstream's: `data` the role it reads as its data
    directory, then `more` (the line its inference takes the model from)."""
    kv = (("ptq.model_path", "model_path"), ("ptq.output_dir", "output_dir"), (data, "data_dir"),
          ("ptq.batch_num", "batch_num"), ("ptq.infer.benchmark", "benchmark"))
    return (
        ("model_name", "value", "model_name"), ("python", "value", "python"),
        ("use_gpu_key", "key", "ptq.infer.use_gpu"), ("use_gpu_value", "value", "ptq.use_gpu"),
        ("batch_size_key", "key", "ptq.infer.batch_size"), ("batch_size_value", "value", "ptq.batch_size"),
        ("train_py", "value", "ptq.script"), ("inference_py", "value", "ptq.infer.script"),
        ("use_gpu_list", "value", "ptq.infer.use_gpu"), ("batch_size_list", "value", "ptq.infer.batch_size"),
        ("image_dir_key", "key", "ptq.infer.data"), ("infer_img_dir", "value", "ptq.infer.data"),
        *((f"{var}_{kind}", kind, role) for role, var in kv for kind in ("key", "value")),
        *more,
    )


def ptq_table(data: str, model: Param, status_format: str, names_log: bool, export_log: str, export_shown: str,
              image_key: str, deviations: tuple = ()) -> ChainTable:
    """The quantization, then the inference matrix; `data`: the role the quantization's data
    parameter is set from, `model`: the inference's model parameter; `image_key`: the key of the
    inference's image line (a config without it, a train config, is refused)."""
    export = (Val("python"), Val("ptq.script"), Param("ptq.infer.use_gpu", "set_use_gpu", value="ptq.use_gpu"),
              Param("ptq.model_path", "set_model_path"), Param("ptq.batch_num", "set_batch_num"),
              Param("ptq.infer.batch_size", "set_batch_size", value="ptq.batch_size"), Param(data, "set_data_dir"),
              Param("ptq.output_dir", "set_output_dir"))
    infer = (Val("python"), Val("ptq.infer.script"), Join((Key("ptq.infer.use_gpu"), Lit("="), Item("use_gpu"))), model,
             Param("ptq.infer.batch_size", "set_batchsize", value=(Item("batch_size"),)),
             Param("ptq.infer.data", "set_infer_data"), Param("ptq.infer.benchmark", "set_benchmark"))
    return ChainTable("whole_infer", "./test_tipc/output/{model_name}/{mode}", status_format, (
        Command("export", export, "export.log", export_log, shown=export_shown, names_log=names_log,
                note="The quantization (PTQ) of the trained model."),
        Loop("ptq.infer.use_gpu", "use_gpu", (
            Loop("ptq.infer.batch_size", "batch_size", (
                Command("infer", infer, "python_infer_{device}_batchsize_{batch_size}.log", "_save_log_path",
                        shown="{cmd} > {log} 2>&1 ", names_log=names_log, note="The quantized model's inference."),
            ), note="Each batch size."),
        ), note="Each use_gpu: False or cpu on the CPU, True or gpu on the GPU (upstream only echoes for another).",
            branch=DEVICE),
    ), (WHOLE_INFER_ONLY, other_config(f"inference image line is not `{image_key}:`"), *deviations),
        requires=(("ptq.infer.data", image_key),))


# The runner oracle compares what runs in the modes both take; the whole-tree oracle names the refusal.
WHOLE_INFER_ONLY = Deviation(
    "whole-infer-only",
    "MODE is required and must be whole_infer (none or another: exit 2 before anything runs)",
    "upstream takes MODE as its second argument and runs its steps only when it is whole_infer: another "
    "makes test_tipc/output/<model>/<MODE>/ and runs nothing (exit 0), none fails its `[` test and runs nothing",
    (refuses_modes_but("whole_infer"),),  # the whole-tree oracle's
)


def other_config(what: str) -> Deviation:
    """A PTQ table's refusal of another script's config (a train config), by the line it requires."""
    return Deviation(
        "ptq-refuses-other-config",
        f"a config whose {what} (a train config: another script's) exits 2 before anything runs, naming the line",
        "upstream reads any config by line position and runs another script's values as its own (a train "
        "config's lines as the quantization's script and parameters)",
    )


# upstream's `if [ ${use_gpu} = "False" ] || [ ${use_gpu} = "cpu" ]; then ... elif ... else echo ...`
DEVICE = Branch("device", ((("False", "cpu"), "cpu"), (("True", "gpu"), "gpu")),
                "Does not support hardware other than CPU and GPU Currently!")
# What such a script is, but its runner, reads and table (each family's module adds them).
PTQ_DIALECT = Dialect(
    family="chain",
    title=("离线量化（PTQ）推理测试", "Post-training quantization (PTQ) inference test"),
    values_to_colon=True,
    script="test_ptq_inference_python.sh",
    status_log="results_python.log",
    # upstream takes MODE (its log directory) and runs in whole_infer only (WHOLE_INFER_ONLY)
    mode_required=True,
    # the repo's prepare.sh serves its configs in the modes it serves train configs in (spec/modes.py
    # TRAIN_CONFIG_MODES), where it is in use for them
    prepare_modes=("benchmark_train", "klquant_whole_infer"),
    log_name_roles=("ptq.infer.batch_size",),
    matrix_roles=("ptq.infer.use_gpu", "ptq.infer.batch_size"),
)
# fmt: on
