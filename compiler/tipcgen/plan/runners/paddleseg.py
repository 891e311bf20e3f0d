"""PaddleSeg's runner (upstream test_tipc/test_train_inference_python.sh + common_func.sh).

What sets it apart from the OCR family's script (plan_classic):
- a `------------------------ <MODE> ------------------------` line opens results_python.log;
- gpu_list entries are told apart by their length (read_entry_by_length); a one-character entry
  exports CUDA_VISIBLE_DEVICES before its first train; eval and export run in whatever the
  environment holds then (the script re-exports only before inference, and unsets after it), so
  later trainers of the same entry train without it;
- train, eval and export output goes to the terminal and a log (`tee`), every status line ends
  ` - <its log>  ` (whole_infer's export has no log: ` -   `);
- after a train, `<save_dir>/<train_model_name>` is tested: absent, the model file becomes
  `iter_<iters>/model.pdparams` for that run and every later one;
- pact/fpgm trainers start from the weights of the last norm trainer (`load_norm_train_model`);
- a trainer named as the line after `to_static_train_benchmark_params` runs norm_train plus it;
- inference reads `<model dir>/deploy.yaml`, keeps only fp32 (int8 for a quantized model) on CPU,
  names its logs `python_infer_{cpu,gpu}_gpu_<gpu>_...` and replaces the first extra flag's value by
  a per-run `..._results` path (CPU only); whole_infer exports into the weights' directory;
- benchmark_train (what test_tipc/benchmark_train.sh runs): a `Global.auto_cast` autocast key
  becomes `--precision`, fp16 trains with `--amp_level=O2`, and the `log_iters`/`repeats` of the
  config's last line (`key:value;key:value`) are appended to every train command.
"""

from __future__ import annotations

import os
from dataclasses import replace
from fnmatch import fnmatchcase

from tipcgen.plan.builder import AMP_FLAGS, NO_RUN, Builder, TrainingRun
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation
from tipcgen.plan.runners.classic import Entry, TrainParams, read_entry, shell_eq
from tipcgen.script.lines import script_lines, split_line
from tipcgen.script.shellwords import (
    dirname,
    extra_args,
    grep_w_lines,
    ifs_split,
    mode_value,
    set_param,
    single_test,
    unquoted_test,
)
from tipcgen.spec.modes import MODES as BASE_MODES

# klquant_whole_infer: upstream takes it in whole_infer's branch (the same steps, its own log dir).
MODES = (*BASE_MODES, "klquant_whole_infer", "benchmark_train")
TEMPLATE = "runner_paddleseg.sh.j2"
# common_func.sh's status_check: `... - ${run_command} - ${log_path}  ` (two blanks).
STATUS_FORMAT = "{verdict} with command - {model} - {command} - {log}  "
GPU_ENTRIES_BY_LENGTH = True  # as upstream: `${#gpu} -le 15` (read_entry_by_length; plan/runner.py)
CLASSIC = None  # a script of its own, not the classic one

# The script reads `inference_dir` from lines[35], which PaddleSeg's layout gives its infer_params
# header: its value is empty, so inference runs on `<save_dir>/` (`<save_dir>//deploy.yaml`).
INFERENCE_DIR_LINE = 35
TO_STATIC_HEADER = "to_static_train_benchmark_params"

# The train command per gpu_list entry kind: the fields after `python [launch]run_train`.
# Multi-node runs put the pretrained weights before the iterations, as upstream does.
TRAIN_FIELDS = {
    "single": ("use_gpu", "", "save", "epoch", "pretrain", "autocast", "batch", "extra", "amp"),
    "multi": ("use_gpu", "save", "epoch", "pretrain", "autocast", "batch", "extra", "amp"),
    "multinode": ("use_gpu", "save", "pretrain", "epoch", "autocast", "batch", "extra", "amp"),
}
TRAIN_SHAPE = {"single": "single", "multi": "multi", "cpu_procs": "multi"}

DEVIATIONS = (
    *COMMON_DEVIATIONS,
    Deviation(
        "model-file-tested-when-planned",
        "`tipcgen plan`/`run` test for `<save_dir>/<train_model_name>` when the plan is made (in the "
        "repo root; without one: absent), the generated bash after each train, as upstream",
        "a plan is made before any step runs; a training that writes the file (--do_eval writes "
        "best_model/) is seen by the bash at once and by a plan made after it",
    ),
    Deviation(
        "cpu-launch-entries",
        "tipcgen's `cpuxN` and `ips;cpuxN` gpu_list entries launch N CPU processes (CUDA_VISIBLE_DEVICES "
        "unset); every other entry is read by its length, as upstream",
        "upstream has no CPU launch: it would pass `--devices=cpuxN` to the GPU launcher",
    ),
    Deviation(
        "to-static-first-header",
        "with several `to_static_train_benchmark_params` lines, the line after the first names the to_static trainer",
        "upstream's `${lines[line_num]}` gets two line numbers: an arithmetic error ends the script "
        "before its first step",
    ),
    Deviation(
        "no-workerlog-append",
        "a launched train's log holds what the launcher printed",
        "upstream then appends ./log/workerlog.0 (worker 0's log, or a stale one of an earlier launch) "
        "to it; a plan step has no second output to append, and the bash does what the plan does",
    ),
    Deviation(
        "no-amp-level-env",
        "an `amp_level` variable of the caller's environment is ignored",
        "upstream appends `--amp_level <it>` to every train command when it is set: an accident of "
        "an unset script variable, invisible in the config",
    ),
)


def plan(b: Builder) -> None:
    b.preamble.append(f"------------------------ {b.mode} ------------------------")
    if b.mode in ("whole_infer", "klquant_whole_infer"):
        _whole_infer(b)
    else:
        _train_modes(b)


# --- whole_infer --------------------------------------------------------------------------------


def _whole_infer(b: Builder) -> None:
    """Export each listed model into its own directory (no log), then infer it with GPU `0` in
    the log names."""
    v = b.v
    if b.gpuid:
        b.cvd = b.gpuid
    python = v.value("python")
    exports = ifs_split(v.value("whole_infer.exports"), "|")
    quants = ifs_split(v.value("whole_infer.quant"), "|")
    for count, model in enumerate(ifs_split(v.value("whole_infer.models"), "|")):
        export = exports[count] if count < len(exports) else ""
        model_dir = model
        if unquoted_test(export, "!=", "null"):
            model_dir = dirname(model)
            cmd = (
                f"{python} {export} {set_param(v.key('export.weights'), model)} "
                f"{set_param(v.key('export.save_dir'), model_dir)}"
            )
            b.add("export", cmd, None, shown=cmd, status_path="")
        quant = quants[count] if count < len(quants) else ""
        # `func_inference ... ${is_quant} ${gpu}` unquoted: an empty flag lets the GPU `0` take its place.
        inference(b, model_dir, v.value("inference.data"), quant or "0", "0", NO_RUN)


# --- func_inference -----------------------------------------------------------------------------


def inference(b: Builder, model_dir: str, data: str, quant: str, gpu: str, run: TrainingRun) -> None:
    """func_inference on `<model_dir>/deploy.yaml`; `gpu` is the one its log names show."""
    v = b.v
    common = {
        "model": set_param(v.key("inference.model_dir"), f"{model_dir}/deploy.yaml"),
        "data": set_param(v.key("inference.data"), data),
        "bench": set_param(v.key("inference.benchmark"), v.value("inference.benchmark")),
        "extra2": set_param(v.key("inference.extra2"), v.value("inference.extra2")),
        "head": f"{v.value('python')} {v.value('inference.script')} {v.key('inference.use_gpu')}",
    }
    for use_gpu in ifs_split(v.value("inference.use_gpu"), "|"):
        if shell_eq(use_gpu, "False") or shell_eq(use_gpu, "cpu"):
            _infer_cpu(b, common, use_gpu, quant, gpu, run)
        elif shell_eq(use_gpu, "True") or shell_eq(use_gpu, b.gpu_word):
            _infer_gpu(b, common, use_gpu, quant, gpu, run)
        # Anything else: upstream only says it "does not support" that hardware.


def _cpu_skips(mkldnn: str, precision: str, quant: str) -> bool:
    """fp16 without mkldnn; a quantized model in other than int8; a float model in other than fp32."""
    return (
        (unquoted_test(mkldnn, "=", "False") and unquoted_test(precision, "=", "fp16"))
        or (unquoted_test(quant, "=", "True") and unquoted_test(precision, "!=", "int8"))
        or (unquoted_test(quant, "=", "False") and unquoted_test(precision, "!=", "fp32"))
    )


def _infer_cpu(b: Builder, c: dict, use_gpu: str, quant: str, gpu: str, run: TrainingRun) -> None:
    v, log_dir = b.v, b.log_dir
    for mkldnn in ifs_split(v.value("inference.mkldnn"), "|"):
        if unquoted_test(mkldnn, "=", "False") and unquoted_test(quant, "=", "True"):
            continue
        for threads in ifs_split(v.value("inference.threads"), "|"):
            for bs in ifs_split(v.value("inference.batch_size"), "|"):
                for precision in ifs_split(v.value("inference.precision"), "|"):
                    if _cpu_skips(mkldnn, precision, quant):
                        continue
                    run_name = f"usemkldnn_{mkldnn}_threads_{threads}_precision_{precision}_batchsize_{bs}"
                    log = f"{log_dir}/python_infer_cpu_gpu_{gpu}_{run_name}.log"
                    extra1 = set_param(v.key("inference.extra"), f"{log_dir}/python_infer_cpu_{run_name}_results")
                    cmd = (
                        f"{c['head']}={use_gpu} {v.key('inference.mkldnn')}={mkldnn} "
                        f"{set_param(v.key('inference.threads'), threads)} {c['model']} "
                        f"{set_param(v.key('inference.batch_size'), bs)} {c['data']} {c['bench']} "
                        f"{set_param(v.key('inference.precision'), precision)} {extra1} {c['extra2']}"
                    )
                    b.add("infer", cmd, log, run, status_path=log)


def _gpu_skips(trt: str, precision: str, quant: str) -> bool:
    """Its `[[ ]]` tests (no word splitting, `=~ "x"` a substring test) and `[ ]` tests
    (word-split, empty is false) are kept as upstream wrote them."""
    if quant == "False" and "int8" in precision:
        return True
    if ("fp16" in precision or "int8" in precision) and unquoted_test(trt, "=", "False"):
        return True
    return (trt == "False" or "int8" in precision) and unquoted_test(quant, "=", "True")


def _infer_gpu(b: Builder, c: dict, use_gpu: str, quant: str, gpu: str, run: TrainingRun) -> None:
    v, log_dir = b.v, b.log_dir
    for trt in ifs_split(v.value("inference.tensorrt"), "|"):
        for precision in ifs_split(v.value("inference.precision"), "|"):
            if _gpu_skips(trt, precision, quant):
                continue
            for bs in ifs_split(v.value("inference.batch_size"), "|"):
                log = f"{log_dir}/python_infer_gpu_gpu_{gpu}_usetrt_{trt}_precision_{precision}_batchsize_{bs}.log"
                cmd = (
                    f"{c['head']}={use_gpu} {set_param(v.key('inference.tensorrt'), trt)} "
                    f"{set_param(v.key('inference.precision'), precision)} {c['model']} "
                    f"{set_param(v.key('inference.batch_size'), bs)} {c['data']} {c['bench']} {c['extra2']}"
                )
                b.add("infer", cmd, log, run, status_path=log)


# --- the training modes -------------------------------------------------------------------------


def to_static(text: str) -> tuple[str, str]:
    """(key, value) of `lines[N]`, N the file line number of the first line naming
    to_static_train_benchmark_params (none: lines[0]); lines are all non-empty lines."""
    number = next(iter(grep_w_lines(text, TO_STATIC_HEADER)), 0)
    lines = script_lines(text, len(text) + 1)
    return split_line(lines[number]) if number < len(lines) else ("", "")


def pick_trainer(b: Builder, trainer: str) -> tuple[str, str, str]:
    """(train command, export command, quant flag): upstream's if-chain over the trainer slots,
    with its quoting (pact and slot1 unquoted on both sides, slot2 a [[ ]] glob pattern)."""
    v = b.v
    t = ifs_split(trainer, "|")
    key = v.key

    def value(role: str) -> str:
        return v.value(role)

    if unquoted_test(trainer, "=", key("trainer.pact.train")):
        return value("trainer.pact.train"), value("trainer.pact.export"), "True"
    for slot in ("fpgm", "distill"):
        if single_test([*t, "=", key(f"trainer.{slot}.train")]):
            return value(f"trainer.{slot}.train"), value(f"trainer.{slot}.export"), "False"
    if unquoted_test(trainer, "=", key("trainer.slot1.train")):
        return value("trainer.slot1.train"), value("trainer.slot1.export"), "False"
    if fnmatchcase(trainer, key("trainer.slot2.train")):
        return value("trainer.slot2.train"), value("trainer.slot2.export"), "False"
    static_key, static_value = to_static(b.text)
    if single_test([*t, "=", static_key]):
        return f"{value('trainer.norm.train')} {static_value}", value("trainer.norm.export"), "False"
    return value("trainer.norm.train"), value("trainer.norm.export"), "False"


class _State:
    """The script's variables that outlive one trainer: the model file name (the fallback sticks)
    and the pretrain flag of the last norm training."""

    def __init__(self, model_file: str):
        self.model_file = model_file
        self.load_norm = ""


def read_entry_by_length(b: Builder, t: TrainParams, count: int, entry: str) -> tuple[Entry, bool]:
    """Upstream's per-entry branches, by length -> (entry, whether its GPU is exported at once).
    `-1`: nothing exported; 1 character: exported at once; up to 15: its first id, before
    inference; longer: `ips;ids`, nothing exported. Then, per trainer: an ip list of 15 characters
    or less is one node; ids of 2 characters or less train without a launcher. tipcgen's `cpuxN`
    entries (read_entry) launch N CPU processes."""
    e = read_entry(b, t, count, entry)
    if e.kind in ("cpu_procs", "cpu_nodes"):
        return e, False
    ips, gpu, env = "", entry, None
    if entry != "-1" and len(entry) <= 15:
        ids = ifs_split(entry, ",")
        env = ("set", entry if len(entry) <= 1 else ids[0] if ids else "")
    elif entry != "-1":
        parts = ifs_split(entry, ";")
        ips, gpu = [*parts, "", ""][:2]
    nodes = len(ifs_split(ips, ",")) if len(ips) > 15 else 1
    if len(gpu) <= 2:
        kind, launch = "single", ""
    elif len(ips) <= 15:
        kind, launch = "multi", f"-m paddle.distributed.launch --devices={gpu} "
    else:
        kind, launch = "multinode", f"-m paddle.distributed.launch --ips={ips} --devices={gpu} "
    not_first = nodes > 1 and b.node_ip is not None and b.node_ip in ifs_split(ips, ",")[1:]
    return Entry(kind, ips, gpu, nodes, env, launch, e.use_gpu, not_first), entry != "-1" and len(entry) <= 1


def _train_modes(b: Builder) -> None:
    t = TrainParams.read(b.v, b.mode, b.v.layout.dialect)
    if b.mode == "benchmark_train" and t.autocast_key == "Global.auto_cast":
        t = replace(t, autocast_key="--precision")
    state = _State(t.model_file)
    for count, entry in enumerate(ifs_split(b.v.value("gpu_list"), "|")):
        e, export_now = read_entry_by_length(b, t, count, entry)
        if export_now:
            b.apply_env(e.env)  # the entry's first train sees it
        for autocast in t.autocasts:
            for trainer in t.trainers:
                _run_trainer(b, t, e, state, autocast, trainer)


def _bench_fp16(b: Builder, autocast: str) -> bool:
    return autocast == "fp16" and b.mode == "benchmark_train"


def _train_command(t: TrainParams, e: Entry, run_train: str, fields: dict) -> str:
    shape = TRAIN_SHAPE.get(e.kind, "multinode")
    return f"{t.python} {e.launch}{run_train} " + " ".join(fields[f] for f in TRAIN_FIELDS[shape])


def _run_trainer(b: Builder, t: TrainParams, e: Entry, state: _State, autocast: str, trainer: str) -> None:
    v, log_dir = b.v, b.log_dir
    run_train, run_export, quant = pick_trainer(b, trainer)
    if unquoted_test(run_train, "=", "null"):
        return
    stem = f"{trainer}_gpus_{e.gpu}_autocast_{autocast}"
    # Upstream names the nodes in save_log when the ip list is longer than 15 characters (one
    # long host name: `_nodes_1`); tipcgen's CPU launches when they span several nodes.
    multinode = e.nodes > 1 if e.kind in ("cpu_procs", "cpu_nodes") else len(e.ips) > 15
    save_log = f"{log_dir}/{stem}" + (f"_nodes_{e.nodes}" if multinode else "")
    step_log = f"{log_dir}/{stem}_nodes_{e.nodes}"
    set_pretrain = t.set_pretrain
    if e.nodes <= 1 and any(unquoted_test(trainer, "=", v.key(f"trainer.{s}.train")) for s in ("pact", "fpgm")):
        set_pretrain = state.load_norm  # pact/fpgm start from the last norm training
    fields = {
        "": "",
        "use_gpu": e.use_gpu,
        "save": set_param(t.save_key, save_log),
        "epoch": t.set_epoch,
        "pretrain": set_pretrain,
        "autocast": set_param(t.autocast_key, autocast),
        "batch": t.set_batch,
        "extra": t.set_extra,
        "amp": AMP_FLAGS if autocast == "amp" else "--amp_level=O2" if _bench_fp16(b, autocast) else " ",
    }
    if e.kind in ("cpu_procs", "cpu_nodes"):
        b.apply_env(e.env)  # tipcgen's CPU launches: a set CUDA_VISIBLE_DEVICES makes the launcher look for GPUs
    group = stem + (f"_nodes_{e.nodes}" if multinode else "")
    cmd = _train_command(t, e, run_train, fields)
    if b.mode == "benchmark_train":
        extra = extra_args(script_lines(b.text, len(b.text) + 1))
        for key in ("log_iters", "repeats"):
            if extra.get(key):
                cmd += f" --{key} {extra[key]}"
    log = f"{step_log}.log"
    train_idx = b.add("train", cmd, log, TrainingRun(None, e.nodes, group), shown=cmd, status_path=log, output="tee")
    run = TrainingRun(train_idx, e.nodes, group, "not trainer 0" if e.not_first else None)
    if not (b.root and os.path.isfile(os.path.join(b.root, save_log, state.model_file))):
        state.model_file = f"iter_{mode_value(v.value('train.epochs'), b.mode)}/model.pdparams"
    weights = f"{save_log}/{state.model_file}"
    set_eval_pretrain = set_param(t.pretrain_key, weights)
    if e.nodes <= 1 and unquoted_test(trainer, "=", v.key("trainer.norm.train")):
        state.load_norm = set_eval_pretrain
    if unquoted_test(t.eval_py, "!=", "null"):
        log = f"{step_log}_eval.log"
        cmd = f"{t.python} {t.eval_py} {set_eval_pretrain} {e.use_gpu} {t.set_eval_extra}"
        b.add("eval", cmd, log, run, shown=cmd, status_path=log, output="tee")
    if unquoted_test(run_export, "!=", "null"):
        log = f"{step_log}_export.log"
        cmd = f"{t.python} {run_export} {set_param(t.export_weight, weights)} {set_param(t.save_infer_key, save_log)}"
        b.add("export", cmd, log, run, shown=cmd, status_path=log, output="tee")
        b.apply_env(e.env)
        inference_dir = split_line(v.lines[INFERENCE_DIR_LINE])[1] if len(v.lines) > INFERENCE_DIR_LINE else ""
        model_dir = save_log if inference_dir in ("null", "##") else f"{save_log}/{inference_dir}"
        inference(b, model_dir, t.infer_img_dir, quant, e.gpu, run)
        b.cvd = None  # `eval "unset CUDA_VISIBLE_DEVICES"`


__all__ = ["CLASSIC", "DEVIATIONS", "GPU_ENTRIES_BY_LENGTH", "MODES", "STATUS_FORMAT", "TEMPLATE", "plan"]
