"""The classic runner: the seed-era PaddleOCR script and the models tutorial script (runners
ocr, ocr_head and models run it, each with its own `OcrScript`), block by block as upstream's
test_train_inference_python.sh: the variables it reads up front (`TrainParams`), its loop over
gpu_list entries (`read_entry`), the loop body per trainer (`_run_trainer` and its command
builders) and `func_inference` (`inference_matrix`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tipcgen.dialects import Layout
from tipcgen.dialects.base import Dialect
from tipcgen.lower.configview import ConfigView
from tipcgen.plan.builder import AMP_FLAGS, NO_RUN, Builder, TrainingRun, env_for, gpu_entry, launch_prefix
from tipcgen.script.shellwords import ifs_split, mode_value, set_param, single_test, unquoted_test


def plan_classic(b: Builder) -> None:
    """The seed-era PaddleOCR script and the models tutorial script (plan/runners/ocr.py, models.py)."""
    log_dir = b.log_dir
    if b.mode == "whole_infer":
        if b.gpuid:
            b.cvd = b.gpuid
        (_whole_infer_ocr if b.v.layout.dialect.family == "ocr" else _whole_infer_models)(b, log_dir)
    else:
        _train_modes(b, log_dir, b.v.layout)


# --- the training modes -------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainParams:
    """The train/eval/export variables upstream's script reads before its loops (the `set_*`
    ones already through func_set_params, epochs and batch size through func_parser_params)."""

    ocr: bool  # the 51-line trainer-slot script; else the models tutorial script
    python: str
    device_key: str
    device_values: list[str]
    autocast_key: str
    autocasts: list[str]
    set_epoch: str
    save_key: str
    set_batch: str
    pretrain_key: str
    set_pretrain: str
    model_file: str
    infer_img_dir: str
    set_extra: str
    eval_py: str
    set_eval_extra: str
    save_infer_key: str
    export_weight: str
    inference_dir: str
    trainers: list[str]

    @classmethod
    def read(cls, v: ConfigView, mode: str, d: Dialect) -> TrainParams:
        ocr = d.family == "ocr"
        return cls(
            ocr=ocr,
            python=v.value("python"),
            device_key=v.key("train.device"),
            device_values=ifs_split(v.value("train.device"), "|"),
            autocast_key=v.key("train.autocast"),
            # models: no autocast line; str() spells a missing constant as the template does ("None").
            autocasts=ifs_split(v.value("train.autocast"), "|") if ocr else [str(d.autocast_constant)],
            set_epoch=set_param(v.key("train.epochs"), mode_value(v.value("train.epochs"), mode)),
            save_key=v.key("train.save_dir"),
            set_batch=set_param(v.key("train.batch_size"), mode_value(v.value("train.batch_size"), mode)),
            pretrain_key=v.key("train.pretrained"),
            set_pretrain=set_param(v.key("train.pretrained"), v.value("train.pretrained")),
            model_file=v.value("train.model_file"),
            infer_img_dir=v.value("train.infer_img_dir") if ocr else "",  # models: never defined upstream
            set_extra=set_param(v.key("train.extra"), v.value("train.extra")),
            eval_py=v.value("eval.command"),
            set_eval_extra=set_param(v.key("eval.extra"), v.value("eval.extra")),
            save_infer_key=v.key("export.save_dir"),
            export_weight=v.key("export.weights"),
            inference_dir=v.value("export.inference_dir"),
            trainers=ifs_split(v.value("train.run"), "|"),
        )


@dataclass(frozen=True)
class Entry:
    """One gpu_list entry, as the loop body uses it."""

    kind: str  # see gpu_entry
    ips: str
    gpu: str  # the ids (or `cpuxN`) part, as log names show it
    nodes: int
    env: Optional[tuple]  # what `eval ${env}` does before eval and inference (see env_for)
    launch: str  # the train command's launcher prefix
    use_gpu: str  # set_use_gpu: the train.device value at the entry's position (ocr)
    not_first: bool  # this node is not the first of a multi-node run


def read_entry(b: Builder, t: TrainParams, count: int, entry: str) -> Entry:
    """Upstream's per-entry set-up: parse the entry, pick its device flag, env and launcher."""
    d = b.v.layout.dialect
    kind, ips, gpu, nodes = gpu_entry(entry)
    # The device list is indexed by the entry's position; past its end the flag is dropped.
    use_gpu = set_param(t.device_key, t.device_values[count] if count < len(t.device_values) else "")
    # On a node other than the first only trainer 0's node has the model to eval/export/infer.
    not_first = nodes > 1 and b.node_ip is not None and b.node_ip in ifs_split(ips, ",")[1:]
    return Entry(
        kind,
        ips,
        gpu,
        nodes,
        env=env_for(kind, gpu, d.multinode_env_first_gpu),
        launch=launch_prefix(kind, ips, gpu, d.launch_device_flag, b.node_ip, b.start_port),
        use_gpu=use_gpu,
        not_first=not_first,
    )


def _train_modes(b: Builder, log_dir: str, layout: Layout) -> None:
    """The training modes: for each gpu_list entry, autocast and trainer: train, eval, export, infer."""
    t = TrainParams.read(b.v, b.mode, layout.dialect)
    for count, entry in enumerate(ifs_split(b.v.value("gpu_list"), "|")):
        e = read_entry(b, t, count, entry)
        for autocast in t.autocasts:
            for trainer in t.trainers:
                _run_trainer(b, t, e, log_dir, _run_autocast(layout.dialect, autocast, trainer), trainer)


def _run_autocast(dialect: Dialect, autocast: str, trainer: str) -> str:
    """The autocast a run is named with: the models script's `autocast=False` then
    `if [ ${trainer} = "amp_train" ]; then export autocast=True; fi` (IFS='|'), where the
    dialect names such a trainer; else the autocast being looped over."""
    if dialect.amp_trainer and unquoted_test(trainer, "=", dialect.amp_trainer):
        return "True"
    return autocast


def _run_trainer(b: Builder, t: TrainParams, e: Entry, log_dir: str, autocast: str, trainer: str) -> None:
    """The loop body for one trainer: train, then eval, export and inference of what it saved.
    The order is upstream's: each step records the CUDA_VISIBLE_DEVICES set before it."""
    run_train, run_export, quant = _pick_trainer(b.v, trainer, t.ocr)
    if unquoted_test(run_train, "=", "null"):
        return
    stem = f"{trainer}_gpus_{e.gpu}_autocast_{autocast}"
    save_log = _save_log(log_dir, stem, e.nodes, t.ocr)
    if e.kind in ("cpu_procs", "cpu_nodes"):
        b.apply_env(e.env)  # unset before the launch: the launcher would look for GPUs
    group = stem + (f"_nodes_{e.nodes}" if e.nodes > 1 else "")
    cmd = _train_command(t, e, run_train, autocast, save_log, b.script.train_autocast)
    train_log = b.script.train_log.format(save_log=save_log) if b.script.train_log else None
    train_idx = b.add(
        "train", cmd, train_log, TrainingRun(None, e.nodes, group), shown=cmd, output="tee" if train_log else "log"
    )
    run = TrainingRun(train_idx, e.nodes, group, "not trainer 0" if e.not_first else None)
    step_log = f"{log_dir}/{stem}_nodes_{e.nodes}"  # eval/export logs name the nodes even when 1
    if unquoted_test(t.eval_py, "!=", "null"):
        b.apply_env(e.env)
        b.add("eval", _eval_command(t, e, save_log), f"{step_log}_eval.log", run)
    if unquoted_test(run_export, "!=", "null"):
        b.add("export", _export_command(t, run_export, save_log), f"{step_log}_export.log", run)
        b.apply_env(e.env)
        gpu = e.gpu if b.script.infer_gpu is not None else None
        inference_matrix(
            b, t.python, _infer_model_dir(t, save_log), log_dir, t.infer_img_dir, quant, t.ocr, run, run_gpu=gpu
        )
        b.cvd = None  # the script unsets CUDA_VISIBLE_DEVICES after inference


def _pick_trainer(v: ConfigView, trainer: str, ocr: bool) -> tuple[str, str, str]:
    """(train command, export command, quant flag) for a trainer name."""
    if not ocr:
        return v.value("trainer.norm.train"), v.value("trainer.norm.export"), "False"
    t = ifs_split(trainer, "|")
    for slot, quant in (("pact", "True"), ("fpgm", "False"), ("distill", "False"), ("slot1", "False")):
        if single_test([*t, "=", *ifs_split(v.key(f"trainer.{slot}.train"), "|")]):
            return v.value(f"trainer.{slot}.train"), v.value(f"trainer.{slot}.export"), quant
    if trainer == v.key("trainer.slot2.train"):  # upstream: [[ ]] (no word splitting)
        return v.value("trainer.slot2.train"), v.value("trainer.slot2.export"), "False"
    return v.value("trainer.norm.train"), v.value("trainer.norm.export"), "False"


def _save_log(log_dir: str, stem: str, nodes: int, ocr: bool) -> str:
    """Where the trainer saves its model (upstream's save_log, a directory despite its name)."""
    if not ocr:
        return f"{log_dir}/{stem}_nodes_{nodes}.log"
    return f"{log_dir}/{stem}_nodes_{nodes}" if nodes > 1 else f"{log_dir}/{stem}"


def _train_command(
    t: TrainParams, e: Entry, run_train: str, autocast: str, save_log: str, with_autocast: bool = True
) -> str:
    """The train command as upstream assembles it per entry kind. Its blanks and argument order
    are kept: the status line shows the command text (`with_autocast` False: the autocast flag's
    place stays blank, as PaddleOCR's script today has it)."""
    python, launch, save = t.python, e.launch, set_param(t.save_key, save_log)
    if not t.ocr:
        return f"{python} {launch}{run_train} {save} {t.set_epoch} {t.set_pretrain} {t.set_batch}"
    amp = AMP_FLAGS if autocast == "amp" else " "
    set_autocast = set_param(t.autocast_key, autocast) if with_autocast else ""
    tail = f"{set_autocast} {t.set_batch} {t.set_extra} {amp}"
    if e.kind in ("cpu", "single"):
        return f"{python} {run_train} {e.use_gpu}  {save} {t.set_epoch} {t.set_pretrain} {tail} "
    if e.kind in ("multi", "cpu_procs"):
        return f"{python} {launch}{run_train} {e.use_gpu} {save} {t.set_epoch} {t.set_pretrain} {tail}"
    # multinode and cpu_nodes: upstream's multi-node branch puts the pretrained weights first.
    return f"{python} {launch}{run_train} {e.use_gpu} {save} {t.set_pretrain} {t.set_epoch} {tail}"


def _eval_command(t: TrainParams, e: Entry, save_log: str) -> str:
    """Evaluate the weights the trainer saved."""
    pretrain = set_param(t.pretrain_key, f"{save_log}/{t.model_file}")
    if t.ocr:
        return f"{t.python} {t.eval_py} {pretrain} {e.use_gpu} {t.set_eval_extra}"
    return f"{t.python} {t.eval_py} {pretrain}"


def _export_command(t: TrainParams, run_export: str, save_log: str) -> str:
    """Export the trained weights into the trainer's save directory."""
    weight = set_param(t.export_weight, f"{save_log}/{t.model_file}")
    return f"{t.python} {run_export} {weight} {set_param(t.save_infer_key, save_log)}"


def _infer_model_dir(t: TrainParams, save_log: str) -> str:
    """Where the exported model is: ocr configs may name a subdirectory (export.inference_dir)."""
    if t.ocr and t.inference_dir not in ("null", "##"):
        return f"{save_log}/{t.inference_dir}"
    return save_log


# --- func_inference -----------------------------------------------------------------------------


def shell_eq(a: str, b: str) -> bool:
    """`[ ${a} = "b" ]` where a holds no `|`: an empty `a` is a test error (false)."""
    return a != "" and a == b


def shell_ne(a: str, b: str) -> bool:
    return a != "" and a != b


@dataclass(frozen=True)
class InferParams:
    """func_inference's arguments for one model, and the inference lines its loops share."""

    python: str
    script: str  # inference_py
    use_gpu_key: str
    batch_key: str
    batches: list[str]
    precision_key: str
    precisions: list[str]
    set_model: str
    set_data: str
    set_benchmark: str
    set_save_log: str  # ocr: the save_log flag, always with an empty value (so a blank)
    set_extra: str  # ocr
    quant: str  # "True": a quantized model (pact trainer), only int8 runs on CPU
    log_dir: str
    run: TrainingRun
    gpus: str = ""  # in the log names after the device: `_gpus_<gpu>` (PaddleOCR today) or nothing

    @classmethod
    def read(
        cls,
        v: ConfigView,
        python: str,
        model_dir: str,
        log_dir: str,
        data: str,
        quant: str,
        run: TrainingRun,
        gpus: str = "",
    ) -> InferParams:
        return cls(
            python=python,
            script=v.value("inference.script"),
            use_gpu_key=v.key("inference.use_gpu"),
            batch_key=v.key("inference.batch_size"),
            batches=ifs_split(v.value("inference.batch_size"), "|"),
            precision_key=v.key("inference.precision"),
            precisions=ifs_split(v.value("inference.precision"), "|"),
            set_model=set_param(v.key("inference.model_dir"), model_dir),
            set_data=set_param(v.key("inference.data"), data),
            set_benchmark=set_param(v.key("inference.benchmark"), v.value("inference.benchmark")),
            set_save_log=set_param(v.key("inference.save_log"), ""),
            set_extra=set_param(v.key("inference.extra"), v.value("inference.extra")),
            quant=quant,
            log_dir=log_dir,
            run=run,
            gpus=gpus,
        )


def inference_matrix(
    b: Builder,
    python: str,
    model_dir: str,
    log_dir: str,
    data: str,
    quant: str,
    ocr: bool,
    run: TrainingRun = NO_RUN,
    run_gpu: Optional[str] = None,
) -> None:
    """func_inference: the inference matrix on one model, for each inference.use_gpu value
    (`run_gpu`: the GPUs its log names show, None: none)."""
    gpus = f"_gpus_{run_gpu}" if run_gpu is not None else ""
    inf = InferParams.read(b.v, python, model_dir, log_dir, data, quant, run, gpus)
    for use_gpu in ifs_split(b.v.value("inference.use_gpu"), "|"):
        cpu = shell_eq(use_gpu, "False") or shell_eq(use_gpu, "cpu")
        gpu = shell_eq(use_gpu, "True") or shell_eq(use_gpu, b.gpu_word)
        # Any other value: upstream says it "does not support hardware other than CPU and GPU".
        if not ocr:
            if cpu or gpu:
                _infer_per_batch(b, inf, use_gpu, "cpu" if cpu else "gpu")
        elif cpu:
            infer_cpu(b, inf, use_gpu)
        elif gpu:
            infer_gpu(b, inf, use_gpu)


def _infer_per_batch(b: Builder, inf: InferParams, use_gpu: str, device: str) -> None:
    """The models script: one run per batch size (the device flag is passed as is, even blank)."""
    for bs in inf.batches:
        log = f"{inf.log_dir}/python_infer_{device}_batchsize_{bs}.log"
        cmd = (
            f"{inf.python} {inf.script} {inf.use_gpu_key}={use_gpu} {inf.set_model} "
            f"{set_param(inf.batch_key, bs)} {inf.set_data} {inf.set_benchmark}"
        )
        b.add("infer", cmd, log, inf.run)


def _cpu_skips(mkldnn: str, precision: str, quant: str) -> bool:
    """The CPU combinations upstream skips: fp16 without mkldnn; a quantized model in other than int8."""
    return (shell_eq(mkldnn, "False") and shell_eq(precision, "fp16")) or (
        shell_eq(quant, "True") and shell_ne(precision, "int8")
    )


def infer_cpu(b: Builder, inf: InferParams, use_gpu: str) -> None:
    """The ocr CPU loops: mkldnn x threads x batch size x precision."""
    v = b.v
    for mkldnn in ifs_split(v.value("inference.mkldnn"), "|"):
        for threads in ifs_split(v.value("inference.threads"), "|"):
            for bs in inf.batches:
                for precision in inf.precisions:
                    if _cpu_skips(mkldnn, precision, inf.quant):
                        continue
                    log = (
                        f"{inf.log_dir}/python_infer_cpu{inf.gpus}_usemkldnn_{mkldnn}_threads_{threads}"
                        f"_precision_{precision}_batchsize_{bs}.log"
                    )
                    cmd = (
                        f"{inf.python} {inf.script} {inf.use_gpu_key}={use_gpu} "
                        f"{set_param(v.key('inference.mkldnn'), mkldnn)} "
                        f"{set_param(v.key('inference.threads'), threads)} {inf.set_model} "
                        f"{set_param(inf.batch_key, bs)} {inf.set_save_log} {inf.set_data} {inf.set_benchmark} "
                        f"{set_param(inf.precision_key, precision)} {inf.set_extra}"
                    )
                    b.add("infer", cmd, log, inf.run)


def _gpu_skips(trt: str, precision: str, quant: str) -> bool:
    """The GPU combinations upstream skips. Its `[[ ]]` tests (plain ==, substring match) and
    `[ ]` tests (word-split, empty is false) differ; each is kept as upstream wrote it."""
    if quant == "False" and "int8" in precision:
        return True  # int8 needs a quantized model
    if ("fp16" in precision or "int8" in precision) and shell_eq(trt, "False"):
        return True  # reduced precision needs TensorRT
    return (trt == "False" and "int8" in precision) and shell_eq(quant, "True")


def infer_gpu(b: Builder, inf: InferParams, use_gpu: str) -> None:
    """The ocr GPU loops: TensorRT x precision x batch size."""
    v = b.v
    for trt in ifs_split(v.value("inference.tensorrt"), "|"):
        for precision in inf.precisions:
            if _gpu_skips(trt, precision, inf.quant):
                continue
            for bs in inf.batches:
                log = f"{inf.log_dir}/python_infer_gpu{inf.gpus}_usetrt_{trt}_precision_{precision}_batchsize_{bs}.log"
                cmd = (
                    f"{inf.python} {inf.script} {inf.use_gpu_key}={use_gpu} "
                    f"{set_param(v.key('inference.tensorrt'), trt)} "
                    f"{set_param(inf.precision_key, precision)} {inf.set_model} {set_param(inf.batch_key, bs)} "
                    f"{inf.set_data} {inf.set_benchmark} {inf.set_extra} {inf.set_save_log}"
                )
                b.add("infer", cmd, log, inf.run)


# --- whole_infer --------------------------------------------------------------------------------


def _whole_infer_ocr(b: Builder, log_dir: str) -> None:
    """Export (when listed) and infer each model of whole_infer.models, with its quant flag."""
    v = b.v
    python = v.value("python")
    exports = ifs_split(v.value("whole_infer.exports"), "|")
    quants = ifs_split(v.value("whole_infer.quant"), "|")
    export_weight = v.key("export.weights")
    save_infer_key = v.key("export.save_dir")
    data = v.value("inference.data")
    for count, model in enumerate(ifs_split(v.value("whole_infer.models"), "|")):
        export = exports[count] if count < len(exports) else ""
        if unquoted_test(export, "!=", "null"):
            cmd = f"{python} {export} {set_param(export_weight, model)} {set_param(save_infer_key, model)}"
            b.add("export", cmd, b.script.whole_infer_export_log.format(log_dir=log_dir, count=count))
        quant = quants[count] if count < len(quants) else ""
        gpu = b.script.infer_gpu
        if gpu is not None and quant == "":
            # Today's script passes the quant flag unquoted before the GPU id: an empty flag drops
            # out, the id takes its place and the GPU id is empty.
            quant, gpu = gpu, ""
        inference_matrix(b, python, model, log_dir, data, quant, True, run_gpu=gpu)


def _whole_infer_models(b: Builder, log_dir: str) -> None:
    """Export (when set) and infer the one model of the models script."""
    v = b.v
    python = v.value("python")
    export = v.value("whole_infer.exports")
    save_infer_dir = v.value("export.save_dir")
    if unquoted_test(export, "!=", "null"):
        weight = set_param(v.key("export.weights"), v.value("whole_infer.models"))
        cmd = f"{python} {export} {weight} {set_param(v.key('export.save_dir'), save_infer_dir)}"
        b.add("export", cmd, f"{log_dir}/export_0.log")  # upstream: export_${Count}.log, Count=0
    inference_matrix(b, python, save_infer_dir, log_dir, v.value("inference.data"), "False", False)
