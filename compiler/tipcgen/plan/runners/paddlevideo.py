"""PaddleVideo's test_train_inference_python.sh (templates/runner_paddlevideo.sh.j2 generates it).

What sets it apart from the other OCR-family scripts, all reproduced:
- lite modes (not benchmark_train) append ` --max_iters=30` to the trainer; whole_train drops the
  epoch, batch size and both extra train arguments (line 13, and line 12 `train_infer_video_dir`, which it passes too);
- the trainer slot on line 20 is `amp_train` (exported with norm_export); a `to_static_train`
  line after the `to_static_train_benchmark_params` header adds its value to norm_train;
- launches are `python -B -m paddle.distributed.launch --devices="<ids>"`; the amp flags follow
  the trainer; pact/fpgm trainers lose the pretrained weights (a never-set variable);
- eval and export load `<save_log>/<model_name, PP- -> pp>_epoch_00001.pdparams`; eval gets the
  train extras in lite_train_lite_infer; CUDA_VISIBLE_DEVICES is exported only before inference
  (single GPU entries: once, when the entry starts);
- every command runs through `eval $cmd` with IFS='|': a `|` in it (a mode table passed as a
  value) splits words, the status line shows it as built;
- the train status line shows the redirect to `<LOG_PATH>/train.log` and names `<save_log>.log`;
  inference log names carry `_gpus_<gpu>` (empty in whole_infer); whole_infer exports into the
  model's directory and logs to `<LOG_PATH>_export_<n>.log` (next to the mode's folder);
- status lines end ` - <log> `.
The deliberate differences are DEVIATIONS below.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Optional

from tipcgen.lower.configview import ConfigView
from tipcgen.plan.builder import NO_RUN, Builder, TrainingRun, env_for, gpu_entry, launch_prefix
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation
from tipcgen.plan.runners.classic import shell_eq
from tipcgen.script.lines import script_lines, split_line
from tipcgen.script.shellwords import dirname, grep_w_lines, ifs_split, set_param, single_test, unquoted_test
from tipcgen.spec.modes import MODES as BASE_MODES

# benchmark_train: what test_tipc/benchmark_train.sh runs. klquant_whole_infer: upstream re-reads
# the config as `awk 'NR==1 NR==17{print}'` (no awk prints a line of it: `NR==1 NR==17` is one
# comparison chain, false or a syntax error), so every value is empty and whole_infer's branch
# has no model to run: nothing runs, nothing is written to the status log.
MODES = (*BASE_MODES, "klquant_whole_infer", "benchmark_train")

TEMPLATE = "runner_paddlevideo.sh.j2"
STATUS_FORMAT = "{verdict} with command - {model} - {command} - {log} "
GPU_ENTRIES_BY_LENGTH = False  # gpu_list entries read by structure (see plan/runner.py)
CLASSIC = None  # a script of its own, not the classic one

DEVIATIONS = (
    *COMMON_DEVIATIONS,
    Deviation(
        "train-log-per-run",
        "the trainer's output goes to `<save_log>.log` (the file its status line names) and to the "
        "terminal; no `<LOG_PATH>/train.log`",
        "upstream writes every run to one scratch `train.log`, overwritten by the next run, then "
        "appends it to `<save_log>.log`: the same text ends up in the same file",
        (r"^logs: upstream \+\[\$LOG/train\.log\]$",),
    ),
    Deviation(
        "train-status-from-trainer",
        "the train status line reports the trainer's exit code",
        "upstream reports the exit of `cat train.log >> <save_log>.log`: always `Run successfully`, "
        "even when the training crashed",
        (r"^status: train verdict upstream 'Run successfully' vs plan 'Run failed'",),
    ),
    Deviation(
        "whole-infer-export-status",
        "a whole_infer export's status line reports the export's exit code",
        "upstream reports the exit of the `echo` after it: always `Run successfully`, even when the export failed",
        (r"^status: export verdict upstream 'Run successfully' vs plan 'Run failed'",),
    ),
    Deviation(
        "gpu-entry-structure",
        "gpu_list entries are read by structure (`-1`, one id, ids, `ips;ids`, and tipcgen's `cpuxN`), "
        "then launched as upstream's string lengths decide (ids of 1-2 characters: no launcher; an ip "
        "list of 15 characters or less: one node)",
        "upstream mis-reads a `;` entry with one ip or of 15 characters or less (its ips become GPU "
        "ids, or its GPU is never exported) and has no CPU launch (`cpuxN` is tipcgen's)",
    ),
)

LITE_MAX_ITERS = " --max_iters=30"
# grep -w word characters around upstream's to_static header search.
TO_STATIC = "to_static_train_benchmark_params"

# The train command per launch shape: cpu/single, one node with several processes, several nodes
# (which puts the pretrained weights before the epochs). `{launch}` ends in a blank.
TRAIN_SHAPES = {
    "one": "{python} {run_train} {amp} {use_gpu}  {save} {epoch} {pretrain} {batch} {params1} {params2}",
    "multi": "{python} -B {launch}{run_train} {amp} {use_gpu} {save} {epoch} {pretrain} {batch} {params1} {params2}",
    "nodes": "{python} -B {launch}{run_train} {amp} {use_gpu} {save} {pretrain} {epoch} {batch} {params1} {params2}",
}
LAUNCH = {
    "one": "",
    "multi": '-m paddle.distributed.launch --devices="{gpu}" ',
    "nodes": '-m paddle.distributed.launch --ips={ips} --devices="{gpu}" ',
}


def _shape(kind: str, ips: str, gpu: str, nodes: int) -> tuple[str, int]:
    """(train shape, nodes) as upstream picks them, by length: ids of 1-2 characters train without
    a launcher (even on several nodes); an ip list of 15 characters or less is one node. tipcgen's
    `cpuxN` entries launch N processes on one node or on several."""
    if kind in ("cpu_procs", "cpu_nodes"):
        return ("multi" if kind == "cpu_procs" else "nodes"), nodes
    if kind == "multinode" and len(ips) <= 15:
        nodes = 1
    if len(gpu) <= 2:
        return "one", nodes
    return ("multi" if len(ips) <= 15 else "nodes"), nodes


def to_static_line(text: str) -> tuple[str, str]:
    """(key, value) of `lines[line_num]`, line_num being the physical line number `grep -n -w`
    gives for the to_static header, used as an index into the non-empty lines: the line after
    the header when no line above it is empty. No header: lines[0]; several: an arithmetic
    error, so both empty."""
    found = grep_w_lines(text, TO_STATIC)
    if len(found) > 1:
        return "", ""
    index = found[0] if found else 0
    physical = text.split("\n")
    lines = script_lines(text, len(physical) - (physical[-1] == ""))
    return split_line(lines[index] if index < len(lines) else "")


@dataclass(frozen=True)
class Video:
    """The variables upstream's script reads before its loops (named as there)."""

    python: str
    model_name: str
    real_model_name: str  # ${model_name/PP-/pp}: the weights' file name prefix
    log_path: str
    train_use_gpu_key: str
    train_use_gpu_values: list
    autocasts: list
    set_epoch: str
    save_model_key: str
    set_batchsize: str
    set_pretrain: str
    train_param_key1: str
    train_param_value1: str
    set_train_params1: str
    set_train_params2: str
    trainers: list
    eval_py: str
    eval_key1: str
    save_infer_key: str
    export_weight: str

    @classmethod
    def read(cls, v: ConfigView, mode: str, log_path: str) -> Video:
        whole_train = "whole_train" in mode
        model_name = v.value("model_name")
        key1, value1 = ("", "") if whole_train else (v.key("train.extra"), v.value("train.extra"))
        key2, value2 = ("", "") if whole_train else (v.key("train.infer_img_dir"), v.value("train.infer_img_dir"))
        batch_key, batch = ("", "") if whole_train else (v.key("train.batch_size"), v.value("train.batch_size"))
        return cls(
            python=v.value("python"),
            model_name=model_name,
            real_model_name=model_name.replace("PP-", "pp", 1),
            log_path=log_path,
            train_use_gpu_key=v.key("train.device"),
            train_use_gpu_values=ifs_split(v.value("train.device"), "|"),
            autocasts=ifs_split(v.value("train.autocast"), "|"),
            set_epoch="" if whole_train else set_param(v.key("train.epochs"), v.value("train.epochs")),
            save_model_key=v.key("train.save_dir"),
            set_batchsize=set_param(batch_key, batch),
            set_pretrain=set_param(v.key("train.pretrained"), v.value("train.pretrained")),
            train_param_key1=key1,
            train_param_value1=value1,
            set_train_params1=set_param(key1, value1),
            set_train_params2=set_param(key2, value2),
            trainers=ifs_split(v.value("train.run"), "|"),
            eval_py=v.value("eval.command"),
            eval_key1=v.key("eval.extra"),
            save_infer_key=v.key("export.save_dir"),
            export_weight=v.key("export.weights"),
        )


def step(
    b: Builder, kind: str, cmd: str, log: str, run: TrainingRun = NO_RUN, *, shown: Optional[str] = None, output="log"
) -> int:
    """Upstream's `eval $cmd` with IFS='|': the command's `|` split words before eval joins them
    with blanks, so each runs as a blank (even inside quotes). The status line shows the command
    as built (`shown`, default: with its redirect) and names the step's log."""
    if shown is None:
        shown = f"{cmd} > {log} 2>&1 "
    return b.add(kind, cmd.replace("|", " "), log, run, shown=shown, status_path=log, output=output)


def plan(b: Builder) -> None:
    if b.mode == "klquant_whole_infer":
        return  # upstream reads no line of the config in this mode (MODES above)
    if b.mode == "whole_infer":
        _whole_infer(b)
    else:
        _train_modes(b)


# --- the training modes -------------------------------------------------------------------------


def _train_modes(b: Builder) -> None:
    p = Video.read(b.v, b.mode, b.log_dir)
    for count, entry in enumerate(ifs_split(b.v.value("gpu_list"), "|")):
        kind, ips, gpu, nodes = gpu_entry(entry)
        env = env_for(kind, gpu, False)
        if kind == "single" and len(gpu) <= 1:
            b.apply_env(env)  # upstream exports a one-character GPU id once, when the entry starts
        shape, nodes = _shape(kind, ips, gpu, nodes)
        use_gpu = p.train_use_gpu_values[count] if count < len(p.train_use_gpu_values) else ""
        set_use_gpu = set_param(p.train_use_gpu_key, use_gpu)
        if kind in ("cpu_procs", "cpu_nodes"):
            launch = launch_prefix(kind, ips, gpu, "--devices", b.node_ip, b.start_port)
        else:
            launch = LAUNCH[shape].format(ips=ips, gpu=gpu)
        not_first = nodes > 1 and b.node_ip is not None and b.node_ip in ifs_split(ips, ",")[1:]
        for autocast in p.autocasts:
            amp = "--amp --amp_level 'O2'" if shell_eq(autocast, "fp16") else " "
            for trainer in p.trainers:
                stem = f"{trainer}_gpus_{gpu}_autocast_{autocast}_nodes_{nodes}"
                picked = _pick_trainer(b.v, b.text, trainer)
                if picked is None:
                    continue
                run_train, run_export, quant = picked
                if "whole_train" not in b.mode and b.mode != "benchmark_train":
                    run_train += LITE_MAX_ITERS
                pretrain = p.set_pretrain
                if _pact_or_fpgm(b.v, trainer) and nodes <= 1:
                    pretrain = ""  # upstream's load_norm_train_model, never set
                save_log = f"{b.log_dir}/{stem}"
                cmd = TRAIN_SHAPES[shape].format(
                    python=p.python, launch=launch, run_train=run_train, amp=amp, use_gpu=set_use_gpu,
                    save=set_param(p.save_model_key, save_log), epoch=p.set_epoch, pretrain=pretrain,
                    batch=p.set_batchsize, params1=p.set_train_params1, params2=p.set_train_params2,
                )  # fmt: skip
                if kind in ("cpu_procs", "cpu_nodes"):
                    b.apply_env(env)  # unset before the launch: it would look for GPUs
                shown = f"{cmd} > {b.log_dir}/train.log 2>&1"
                train = step(
                    b, "train", cmd, f"{save_log}.log", TrainingRun(None, nodes, stem), shown=shown, output="tee"
                )
                run = TrainingRun(train, nodes, stem, "not trainer 0" if not_first else None)
                _eval_export_infer(b, p, run, stem, set_use_gpu, run_export, quant, env, gpu)


def _pick_trainer(v: ConfigView, text: str, trainer: str) -> Optional[tuple[str, str, str]]:
    """(run_train, run_export, flag_quant) for a trainer name, in upstream's order of tests (each
    quoted or not as there); None when its train command is null."""
    t = ifs_split(trainer, "|")
    to_static_key, to_static_trainer = to_static_line(text)
    norm, norm_export = v.value("trainer.norm.train"), v.value("trainer.norm.export")
    if unquoted_test(trainer, "=", v.key("trainer.pact.train")):
        picked = v.value("trainer.pact.train"), v.value("trainer.pact.export"), "True"
    elif single_test([*t, "=", v.key("trainer.fpgm.train")]):
        picked = v.value("trainer.fpgm.train"), v.value("trainer.fpgm.export"), "False"
    elif single_test([*t, "=", v.key("trainer.distill.train")]):
        picked = v.value("trainer.distill.train"), v.value("trainer.distill.export"), "False"
    elif unquoted_test(trainer, "=", v.key("trainer.slot1.train")):  # amp_train: norm_export
        picked = v.value("trainer.slot1.train"), norm_export, "False"
    elif fnmatchcase(trainer, v.key("trainer.slot2.train")):  # [[ = ]]: a pattern
        picked = v.value("trainer.slot2.train"), v.value("trainer.slot2.export"), "False"
    elif single_test([*t, "=", to_static_key]):
        picked = f"{norm}  {to_static_trainer}", norm_export, "False"
    else:
        picked = norm, norm_export, "False"
    return None if unquoted_test(picked[0], "=", "null") else picked


def _pact_or_fpgm(v: ConfigView, trainer: str) -> bool:
    return unquoted_test(trainer, "=", v.key("trainer.pact.train")) or unquoted_test(
        trainer, "=", v.key("trainer.fpgm.train")
    )


def _eval_export_infer(
    b: Builder, p: Video, run: TrainingRun, stem: str, set_use_gpu: str, run_export: str, quant: str, env, gpu: str
) -> None:
    """After a train: eval and export its weights (with CUDA_VISIBLE_DEVICES as the train left
    it), then export the entry's GPU, infer, and unset it."""
    save_log = f"{b.log_dir}/{stem}"
    weights = f"{save_log}/{p.real_model_name}_epoch_00001.pdparams"
    if unquoted_test(p.eval_py, "!=", "null"):
        cmd = f"{p.python} {p.eval_py} {set_use_gpu} {set_param(p.eval_key1, weights)}"
        if "lite_infer" in b.mode and p.train_param_key1 != "null":
            cmd += f" {p.train_param_key1}={p.train_param_value1}"
        step(b, "eval", cmd, f"{b.log_dir}/{stem}_eval.log", run)
    if unquoted_test(run_export, "!=", "null"):
        cmd = f"{p.python} {run_export} {set_param(p.export_weight, weights)} {set_param(p.save_infer_key, save_log)}"
        step(b, "export", cmd, f"{b.log_dir}/{stem}_export.log", run)
        b.apply_env(env)
        inference(b, save_log, quant, gpu, run)
        b.cvd = None  # upstream unsets CUDA_VISIBLE_DEVICES after inference


# --- whole_infer --------------------------------------------------------------------------------


def _whole_infer(b: Builder) -> None:
    """Export each released model (when its export is not null) into its own directory, and infer
    from there. `gpu` is never set in this branch: the log names say `_gpus__`."""
    v = b.v
    if b.gpuid:
        b.cvd = b.gpuid
    models = ifs_split(v.value("whole_infer.models"), "|")
    # infer_run_exports[Count] and infer_quant_flag[Count]: past their ends, empty.
    exports = [*ifs_split(v.value("whole_infer.exports"), "|"), *[""] * len(models)]
    quants = [*ifs_split(v.value("whole_infer.quant"), "|"), *[""] * len(models)]
    for count, (model, export, quant) in enumerate(zip(models, exports, quants)):
        exported = unquoted_test(export, "!=", "null")
        model_dir = dirname(model) if exported else model
        if exported:
            cmd = " ".join(
                (
                    v.value("python"),
                    export,
                    set_param(v.key("export.weights"), model),
                    set_param(v.key("export.save_dir"), model_dir),
                )
            )
            step(b, "export", cmd, f"{b.log_dir}_export_{count}.log")
        inference(b, model_dir, quant, "")


# --- func_inference -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Infer:
    """func_inference's settings for one model."""

    prefix: str  # `${_python} ${_script} ${use_gpu_key}=`
    set_model_dir: str
    set_infer_params1: str
    set_infer_data: str
    set_benchmark: str
    quant: str
    logs: str  # `${_log_path}/python_infer_`
    gpu: str
    run: TrainingRun


def inference(b: Builder, model_dir: str, quant: str, gpu: str, run: TrainingRun = NO_RUN) -> None:
    """func_inference: for each inference.use_gpu value, the CPU or the GPU matrix."""
    v = b.v
    inf = Infer(
        prefix=f"{v.value('python')} {v.value('inference.script')} {v.key('inference.use_gpu')}=",
        set_model_dir=set_param(v.key("inference.model_dir"), f"{model_dir}/{v.value('inference.model_dir')}"),
        set_infer_params1=set_param(v.key("inference.extra"), f"{model_dir}/{v.value('inference.extra')}"),
        set_infer_data=set_param(v.key("inference.data"), v.value("inference.data")),
        set_benchmark=set_param(v.key("inference.benchmark"), v.value("inference.benchmark")),
        quant=quant,
        logs=f"{b.log_dir}/python_infer_",
        gpu=gpu,
        run=run,
    )
    for use_gpu in ifs_split(v.value("inference.use_gpu"), "|"):
        if shell_eq(use_gpu, "False") or shell_eq(use_gpu, "cpu"):
            _infer_cpu(b, inf, use_gpu)
        elif shell_eq(use_gpu, "True") or shell_eq(use_gpu, b.gpu_word):
            _infer_gpu(b, inf, use_gpu)


def _infer_cpu(b: Builder, inf: Infer, use_gpu: str) -> None:
    v = b.v
    mkldnn_key = v.key("inference.mkldnn")
    for mkldnn in ifs_split(v.value("inference.mkldnn"), "|"):
        if mkldnn == "False" and inf.quant == "True":
            continue
        for threads in ifs_split(v.value("inference.threads"), "|"):
            for bs in ifs_split(v.value("inference.batch_size"), "|"):
                for precision in ifs_split(v.value("inference.precision"), "|"):
                    if (mkldnn == "False" and precision == "fp16") or (inf.quant == "True" and precision != "int8"):
                        continue
                    log = (
                        f"{inf.logs}cpu_gpus_{inf.gpu}_usemkldnn_{mkldnn}_threads_{threads}"
                        f"_precision_{precision}_batchsize_{bs}.log"
                    )
                    cmd = (
                        f"{inf.prefix}{use_gpu} {mkldnn_key}={mkldnn} "
                        f"{set_param(v.key('inference.threads'), threads)} {inf.set_model_dir} "
                        f"{set_param(v.key('inference.batch_size'), bs)} {inf.set_infer_data} {inf.set_benchmark} "
                        f"{set_param(v.key('inference.precision'), precision)} {inf.set_infer_params1}"
                    )
                    step(b, "infer", cmd, log, inf.run)


def _gpu_skips(trt: str, precision: str, quant: str) -> bool:
    """Upstream's three `[[ ]]` skips (`=~ "int8"`: a substring)."""
    int8 = "int8" in precision
    return (
        (quant == "False" and int8)
        or (("fp16" in precision or int8) and trt == "False")
        or ((trt == "False" or int8) and quant == "True")
    )


def _infer_gpu(b: Builder, inf: Infer, use_gpu: str) -> None:
    v = b.v
    for trt in ifs_split(v.value("inference.tensorrt"), "|"):
        for precision in ifs_split(v.value("inference.precision"), "|"):
            if _gpu_skips(trt, precision, inf.quant):
                continue
            for bs in ifs_split(v.value("inference.batch_size"), "|"):
                log = f"{inf.logs}gpu_gpus_{inf.gpu}_usetrt_{trt}_precision_{precision}_batchsize_{bs}.log"
                cmd = (
                    f"{inf.prefix}{use_gpu} {set_param(v.key('inference.tensorrt'), trt)} "
                    f"{set_param(v.key('inference.precision'), precision)} {inf.set_model_dir} "
                    f"{set_param(v.key('inference.batch_size'), bs)} {inf.set_infer_data} {inf.set_benchmark} "
                    f"{inf.set_infer_params1}"
                )
                step(b, "infer", cmd, log, inf.run)


__all__ = ["CLASSIC", "DEVIATIONS", "GPU_ENTRIES_BY_LENGTH", "MODES", "STATUS_FORMAT", "TEMPLATE", "plan"]
