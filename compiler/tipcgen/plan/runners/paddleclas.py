"""PaddleClas's runner: its test_tipc/test_train_inference_python.sh and common_func.sh.

What sets it apart from the PaddleOCR family script (runners/ocr.py): logs live under the absolute
`$(pwd)/test_tipc/output/...`; gpu_list entries are told apart by their length; the epoch count
comes from func_parser_params called without a mode (so the line's mode table is never matched
and the count is 2); the train command always passes the device, batch-size and AMP flags and
`-o Global.print_mem_info=True`; eval and export run with whatever CUDA_VISIBLE_DEVICES the entry
left (its env is applied before inference only); inference runs from `deploy/` with its own flag
order and `_gpus_<gpu>` log names; whole_infer runs only the kl_quant step and the inference of
its quantized model. Status lines end ` - <log> ! `.
"""

from __future__ import annotations

import os
import posixpath
from fnmatch import fnmatchcase
from typing import NamedTuple, Optional

from tipcgen.errors import UsageError
from tipcgen.lower.configview import ConfigView
from tipcgen.plan.builder import NO_RUN, Builder, TrainingRun
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation
from tipcgen.plan.runners.classic import shell_eq, shell_ne
from tipcgen.script.shellwords import ifs_split, set_param, single_test, unquoted_test
from tipcgen.spec.modes import MODES as BASE_MODES

# benchmark_train: what test_tipc/benchmark_train.sh runs. klquant_whole_infer (the repo's docs run
# the script in it): upstream tests only for whole_infer, so it runs the training branch under it.
MODES = (*BASE_MODES, "klquant_whole_infer", "benchmark_train")

TEMPLATE = "runner_paddleclas.sh.j2"
STATUS_FORMAT = "{verdict} with command - {model} - {command} - {log} ! "
GPU_ENTRIES_BY_LENGTH = True  # as upstream: 1 character, up to 15, longer (_entry; plan/runner.py)
CLASSIC = None  # a script of its own, not the classic one

PRINT_MEM = "-o Global.print_mem_info=True"
LOG_RANK = "-o Global.log_ranks=0,1,2,3,4,5,6,7"
# func_set_amp_params: the train flags of an autocast value (any other value: AMP off).
AMP = {
    "fp16": "-o AMP.use_amp=True -o AMP.scale_loss=128 -o AMP.use_dynamic_loss_scaling=True -o AMP.level=O2",
    "amp": "-o AMP.use_amp=True -o AMP.scale_loss=128 -o AMP.use_dynamic_loss_scaling=True -o AMP.level=O1",
}
AMP_OFF = "-o AMP.use_amp=False"
# Models whose amp/fp16 runs get fused attention flags (substrings of model_name), and models
# that save under RecModel/ instead of <model_name>/.
FUSED_MODELS = ("CLIP_vit_base_patch16_224", "SwinTransformer_base_patch4_window7_224_ampo2_ultra")
FUSED_FLAGS = " -o Arch.use_fused_attn=True -o Arch.use_fused_linear=True"
RECMODEL_MODELS = ("GeneralRecognition", "MetaBIN_ResNet50")

# The train command of each branch (chosen by the lengths of the entry's gpu and ips), blanks kept.
TRAIN = {
    "single": "{python} {run_train} {use_gpu} {save} {epoch} {pretrain} {amp} {batch} {extra} " + PRINT_MEM + " ",
    "multi": "{python} -m paddle.distributed.launch --devices={gpu} {run_train} {use_gpu} {save} {epoch} "
    "{pretrain} {amp} {batch} {extra} " + PRINT_MEM + " " + LOG_RANK,
    "multinode": "{python} -m paddle.distributed.launch --ips={ips} --devices={gpu} {run_train} {use_gpu} {save} "
    "{pretrain} {epoch} {amp} {batch} {extra} " + PRINT_MEM + " " + LOG_RANK,
}
# func_inference's commands and log names (the status line shows the command and its redirect).
INFER_CPU = (
    "{python} {script} {use_gpu_key}={use_gpu} {mkldnn_key}={mkldnn} {threads} {model} {batch} {data} "
    "{benchmark} {extra}",
    "python_infer_cpu_gpus_{gpu}_usemkldnn_{mkldnn}_threads_{threads_v}_precision_{precision}_batchsize_{bs}.log",
)
INFER_GPU = (
    "{python} {script} {use_gpu_key}={use_gpu} {trt} {precision_flag} {model} {batch} {data} {benchmark}",
    "python_infer_gpu_gpus_{gpu}_usetrt_{trt_v}_precision_{precision}_batchsize_{bs}.log",
)

# Upstream's `sleep 5` before and after each training and after each eval. Not restored: named.
NO_FIXED_SLEEPS = Deviation(
    "no-fixed-sleeps",
    "does not pause 5 s before and after each training and after each eval (upstream's `sleep 5`s)",
    "each step is a process the runner waits for: when the next step starts the previous one has "
    "exited and its log is written, so the pause waits on nothing the next step reads; it only adds "
    "15 s per trainer and gpu_list entry (the oracle records each `sleep` as a command, so a script "
    "that sleeps elsewhere or for longer is still a difference)",
    (r"^sleep: upstream sleeps 5$",),
)

DEVIATIONS = (
    *COMMON_DEVIATIONS,
    NO_FIXED_SLEEPS,
    Deviation(
        "train-status-from-trainer",
        "the train status line reports the trainer's exit code; the trainer's output goes to the terminal "
        "and to `<save_log>.log` (tee)",
        "upstream reports the exit code of `cat <save_log>/<model_name or RecModel>/train.log >> "
        "<save_log>.log`: a training that crashed after writing train.log passes, one that logs elsewhere "
        "fails",
        (r"^status: train verdict upstream 'Run failed' vs plan 'Run successfully'",),
    ),
)


def _value(v: ConfigView, role: str) -> str:
    return v.value_to_colon(role)


def _epochs(v: ConfigView, mode: str) -> str:
    """func_parser_params, called without its MODE argument: the value of the first item of the
    mode table whose mode is empty (none in practice), else 2; 1 on an npu or in benchmark_train."""
    value = ""
    for item in ifs_split(_value(v, "train.epochs"), "|"):
        parts = ifs_split(item, "=")
        if not parts or parts[0] == "":
            value = parts[1] if len(parts) > 1 else ""
            break
    if mode == "benchmark_train" or _value(v, "train.device") == "npu":
        return "1"
    return value or "2"


class Entry(NamedTuple):
    """One gpu_list entry as upstream reads it (by its length)."""

    gpu: str  # the ids (a multi-node entry's part after `;`)
    ips: str
    nodes: int
    env: Optional[tuple]  # what `eval ${env}` does before inference: ("set", id) or None
    now: bool  # the env is applied when the entry starts (one-character entries)
    branch: str  # the train command's shape (TRAIN)


def _entry(entry: str) -> Entry:
    gpu, ips, env, now = entry, "", None, False
    if entry == "-1":
        pass
    elif len(entry) <= 1:
        env, now = ("set", entry), True
    elif len(entry) <= 15:
        ids = ifs_split(entry, ",")
        env = ("set", ids[0] if ids else "")
    else:
        parts = ifs_split(entry, ";")
        ips = parts[0] if parts else ""
        gpu = parts[1] if len(parts) > 1 else ""
    nodes = 1 if len(ips) <= 15 else len(ifs_split(ips, ","))
    branch = "single" if len(gpu) <= 2 else "multi" if len(ips) <= 15 else "multinode"
    return Entry(gpu, ips, nodes, env, now, branch)


def _pick_trainer(v: ConfigView, trainer: str) -> tuple[str, str]:
    """(train command, export command) of a trainer name, tested as upstream does:
    `[ ${trainer} = ${pact_key} ]`, then quoted keys, then `[[ = ]]` (a pattern) for slot 2."""
    t = ifs_split(trainer, "|")
    if single_test([*t, "=", *ifs_split(v.key("trainer.pact.train"), "|")]):
        return _value(v, "trainer.pact.train"), _value(v, "trainer.pact.export")
    for slot in ("fpgm", "distill"):
        if single_test([*t, "=", v.key(f"trainer.{slot}.train")]):
            return _value(v, f"trainer.{slot}.train"), _value(v, f"trainer.{slot}.export")
    norm, norm_export = _value(v, "trainer.norm.train"), _value(v, "trainer.norm.export")
    if single_test([*t, "=", v.key("trainer.slot1.train")]):  # to_static: the norm trainer plus its flag
        return f"{norm}  {_value(v, 'trainer.slot1.train')}", norm_export
    if fnmatchcase(trainer, v.key("trainer.slot2.train")):
        return _value(v, "trainer.slot2.train"), _value(v, "trainer.slot2.export")
    return norm, norm_export


def plan(b: Builder) -> None:
    v = b.v
    b.log_dir = f"{b.root or '.'}/test_tipc/output/{_value(v, 'model_name')}/{b.mode}"
    b.status_log = f"{b.log_dir}/results_python.log"
    if b.mode == "whole_infer":
        _whole_infer(b)  # upstream ignores the GPUID argument
        return
    for entry in ifs_split(_value(v, "gpu_list"), "|"):
        e = _entry(entry)
        if e.now:
            b.apply_env(e.env)
        for autocast in ifs_split(_value(v, "train.autocast"), "|"):
            for trainer in ifs_split(_value(v, "train.run"), "|"):
                _run_trainer(b, e, autocast, trainer)


def _run_trainer(b: Builder, e: Entry, autocast: str, trainer: str) -> None:
    """The loop body for one trainer: train, eval, export, then inference from deploy/."""
    v = b.v
    run_train, run_export = _pick_trainer(v, trainer)
    if unquoted_test(run_train, "=", "null"):
        return  # upstream's `continue` skips the unset at the loop's end too
    python, model = _value(v, "python"), _value(v, "model_name")
    stem = f"{trainer}_gpus_{e.gpu}_autocast_{autocast}_nodes_{e.nodes}"
    save_log = f"{b.log_dir}/{stem}"
    use_gpu = set_param(v.key("train.device"), _value(v, "train.device"))
    cmd = TRAIN[e.branch].format(
        python=python, run_train=run_train, use_gpu=use_gpu, gpu=e.gpu, ips=e.ips,
        save=set_param(v.key("train.save_dir"), save_log),
        epoch=set_param(v.key("train.epochs"), _epochs(v, b.mode)),
        pretrain=set_param(v.key("train.pretrained"), _value(v, "train.pretrained")),
        amp=AMP.get(autocast, AMP_OFF),
        batch=set_param(v.key("train.batch_size"), _value(v, "train.batch_size")),
        extra=set_param(v.key("train.extra"), _value(v, "train.extra")),
    )  # fmt: skip
    if any(m in model for m in FUSED_MODELS) and autocast in ("amp", "fp16"):
        cmd += FUSED_FLAGS
    not_first = e.nodes > 1 and b.node_ip is not None and b.node_ip in ifs_split(e.ips, ",")[1:]
    train_log = f"{save_log}.log"  # upstream appends the trainer's train.log to it
    train = _add(b, "train", cmd, train_log, TrainingRun(None, e.nodes, stem), shown=cmd, output="tee")
    run = TrainingRun(train, e.nodes, stem, "not trainer 0" if not_first else None)
    rec = any(m in model for m in RECMODEL_MODELS)
    sub = "RecModel/" if rec else "" if "weights-without-model-folder" in b.runner_edits else f"{model}/"
    weights = f"{save_log}/{sub}{_value(v, 'train.model_file')}"
    if unquoted_test(_value(v, "eval.command"), "!=", "null"):
        eval_cmd = (
            f"{python} {_value(v, 'eval.command')} {set_param(v.key('train.pretrained'), weights)} {use_gpu} "
            f"{set_param(v.key('eval.extra'), _value(v, 'eval.extra'))}"
        )
        _add(b, "eval", eval_cmd, f"{b.log_dir}/{stem}_eval.log", run)
    if unquoted_test(run_export, "!=", "null"):
        # RecModel models: upstream sets the eval weights here instead, the export flag stays unset.
        weight = "" if rec else set_param(v.key("export.weights"), weights)
        export_cmd = f"{python} {run_export} {weight} {set_param(v.key('export.save_dir'), save_log)}"
        _add(b, "export", export_cmd, f"{b.log_dir}/{stem}_export.log", run)
        b.apply_env(e.env)
        _inference(b, save_log, e.gpu, "deploy", run)
    b.cvd = None  # eval "unset CUDA_VISIBLE_DEVICES"


def _add(
    b: Builder,
    kind: str,
    cmd: str,
    log: str,
    run: TrainingRun,
    *,
    shown: Optional[str] = None,
    output: str = "log",
    cwd: Optional[str] = None,
    bars: bool = True,
) -> int:
    """A step as upstream runs it: `eval $cmd`, with IFS='|' where `bars` (a `|` in the text then
    separates words), its status line showing the command (with its redirect, `> log 2>&1`) and
    naming the log."""
    if shown is None:
        shown = f"{cmd} > {log} 2>&1" + (" " if kind == "infer" else "")
    argv = cmd.replace("|", " ") if bars else cmd
    return b.add(kind, argv, log, run, shown=shown, status_path=log, output=output, cwd=cwd)


def _inference(b: Builder, model_dir: str, gpu: str, cwd: Optional[str], run: TrainingRun = NO_RUN) -> None:
    """func_inference: CPU (mkldnn x threads x batch size x precision, no filter) and GPU
    (TensorRT x precision x batch size, skipping precision True without TensorRT) runs. Its quant
    flag argument is never read: a quantized model runs the same matrix."""
    v = b.v
    common = dict(
        python=_value(v, "python"),
        script=_value(v, "inference.script"),
        use_gpu_key=v.key("inference.use_gpu"),
        model=set_param(v.key("inference.model_dir"), model_dir),
        data=set_param(v.key("inference.data"), _value(v, "inference.data")),
        benchmark=set_param(v.key("inference.benchmark"), _value(v, "inference.benchmark")),
        gpu=gpu,
    )
    lists = {r: ifs_split(_value(v, r), "|") for r in ("inference.batch_size", "inference.precision")}
    for use_gpu in ifs_split(_value(v, "inference.use_gpu"), "|"):
        for fields in _infer_points(v, use_gpu, lists, b.gpu_word):
            p = {**common, **fields, "use_gpu": use_gpu}
            p["batch"] = set_param(v.key("inference.batch_size"), p["bs"])
            template, log_name = INFER_CPU if "mkldnn" in p else INFER_GPU
            log = f"{b.log_dir}/{log_name.format(**p)}"
            _add(b, "infer", template.format(**p), log, run, cwd=cwd)


def _infer_points(v: ConfigView, use_gpu: str, lists: dict, gpu_word: str = "gpu") -> list[dict]:
    """The loop variables of each inference run of one inference.use_gpu value, in upstream's order
    (`gpu_word`: the word its GPU branch compares with, a device variant's)."""
    batches, precisions = lists["inference.batch_size"], lists["inference.precision"]
    out: list[dict] = []
    if shell_eq(use_gpu, "False") or shell_eq(use_gpu, "cpu"):
        for mkldnn in ifs_split(_value(v, "inference.mkldnn"), "|"):
            for threads in ifs_split(_value(v, "inference.threads"), "|"):
                for bs in batches:
                    for precision in precisions:
                        out.append(dict(
                            mkldnn_key=v.key("inference.mkldnn"), mkldnn=mkldnn, threads_v=threads,
                            threads=set_param(v.key("inference.threads"), threads), bs=bs, precision=precision,
                            extra=set_param(v.key("inference.extra"), _value(v, "inference.extra")),
                        ))  # fmt: skip
    elif shell_eq(use_gpu, "True") or shell_eq(use_gpu, gpu_word):
        for trt in ifs_split(_value(v, "inference.tensorrt"), "|"):
            for precision in precisions:
                if shell_eq(precision, "True") and shell_eq(trt, "False"):
                    continue
                for bs in batches:
                    out.append(dict(
                        trt_v=trt, trt=set_param(v.key("inference.tensorrt"), trt), precision=precision,
                        precision_flag=set_param(v.key("inference.precision"), precision), bs=bs,
                    ))  # fmt: skip
    # Any other value: upstream says it "does not support hardware other than CPU and GPU".
    return out


def quant_cwd(infer_dir: str) -> Optional[str]:
    """Where whole_infer's inference runs, relative to the repo root (None: the root): upstream
    does `cd <infer_model>/quant_post_static_model` then `cd ../../deploy`. A directory outside
    the checkout is not entered (a fresh checkout has none; upstream's cd then fails too)."""
    first = posixpath.normpath(f"{infer_dir}/quant_post_static_model")
    if first.startswith("/") or first == ".." or first.startswith("../"):
        return None
    return "deploy" if posixpath.normpath(f"{first}/../../deploy") == "deploy" else first


def check_quant_dir(infer_dir: str, root: str, source: str = "config") -> None:
    """Refuse an infer_model whose quant_post_static_model directory, inside the checkout as
    written, resolves outside it (a symbolic link on the way): the script makes its inference.*
    links there (the generated bash refuses the same, exit 2)."""
    first = posixpath.normpath(f"{infer_dir}/quant_post_static_model")
    if first.startswith("/") or first == ".." or first.startswith("../"):
        return  # never entered (quant_cwd)
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, first))
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise UsageError(
            f"{source}: infer_model `{infer_dir}`: {first} leads to {real}, outside the model repo "
            f"{real_root} (a symbolic link on the way); whole_infer would make its inference.* links there"
        )


def _whole_infer(b: Builder) -> None:
    """Only the kl_quant path: quantize the model, then infer the quantized one (logs `_gpus_0`)."""
    v = b.v
    kl_quant = _value(v, "trainer.slot1.export")
    if not (shell_ne(kl_quant, "null") and shell_ne(kl_quant, "False")):
        return
    if b.root is not None:
        check_quant_dir(_value(v, "whole_infer.models"), b.root, b.source)
    log = f"{b.log_dir}/export.log"
    _add(b, "export", f"{_value(v, 'python')} {kl_quant}", log, NO_RUN, bars=False)  # IFS is still a newline
    infer_dir = _value(v, "whole_infer.models")
    _inference(b, f"../{infer_dir}/quant_post_static_model", "0", quant_cwd(infer_dir))


__all__ = [
    "CLASSIC",
    "DEVIATIONS",
    "GPU_ENTRIES_BY_LENGTH",
    "MODES",
    "STATUS_FORMAT",
    "TEMPLATE",
    "check_quant_dir",
    "plan",
    "quant_cwd",
]
