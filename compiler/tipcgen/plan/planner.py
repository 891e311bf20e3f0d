"""The Plan: the ordered steps a config implies for a mode. Pure Python, no I/O.

This is the single source of behaviour: the executor runs it, the docs print
its status lines, and the generated bash is tested against it. It follows the
upstream scripts' semantics line by line (see docs/legacy-format.md), except
where we deliberately differ (documented in README and the generated docs):
gpu_list entries are parsed by structure, not string length.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Optional

from tipcgen.dialects import Layout
from tipcgen.errors import UsageError
from tipcgen.legacy.configview import ConfigView
from tipcgen.legacy.shellwords import ifs_split, mode_value, set_param, single_test, unquoted_test, words
from tipcgen.spec.modes import MODES

AMP_FLAGS = "Global.use_amp=True Global.scale_loss=1024.0 Global.use_dynamic_loss_scaling=True"

# What the runner refuses before it runs anything (the generated bash refuses the same configs,
# with the same checks in common_func.sh: tipc_check_bytes, tipc_check_log_names, tipc_check_matrix).
# Bytes no command can hold: bash drops a NUL, exec() refuses it; other controls are garbage.
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# The real suites multiply to at most a few hundred; this keeps planning under a second or two.
MAX_MATRIX = 4096


@dataclass(frozen=True)
class Step:
    index: int
    kind: str  # train | eval | export | infer
    command: str  # the upstream command text, as the status line shows it
    argv: Optional[tuple]  # None: the command's quotes do not balance, it cannot run
    log: Optional[str]  # where stdout+stderr go (None: the terminal)
    cuda_visible_devices: Optional[str]  # None: unset
    # The train step whose failure skips this one (eval/export/infer of the same run). Upstream
    # runs them into a second failure; a failed export does not skip inference (as upstream).
    depends_on: Optional[int] = None
    nodes: int = 1
    group: str = ""  # e.g. "norm_train_gpus_0,1_autocast_fp32"
    # Why this step is skipped even when its train succeeds: on a node other than the first of a
    # multi-node run only trainer 0 saved the model ("not trainer 0").
    skip: Optional[str] = None

    def status_line(self, model_name: str, ok: bool, skipped: Optional[str] = None) -> str:
        """The line results_python.log gets; `skipped` is the reason a step did not run."""
        verdict = f"Run skipped ({skipped})" if skipped else "Run successfully" if ok else "Run failed"
        return f"{verdict} with command - {model_name} - {self.command}!  "


def skip_reason(step: Step, failed: set) -> Optional[str]:
    """Why `step` is not run, given the indices of the steps that failed so far (None: run it)."""
    if step.depends_on is not None and step.depends_on in failed:
        return "train failed"
    return step.skip


@dataclass(frozen=True)
class Plan:
    layout: str
    mode: str
    model_name: str
    log_dir: str
    status_log: str
    steps: tuple

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False)


CPU_PROCS = re.compile(r"^cpux([1-9][0-9]?)$")


def gpu_entry(entry: str) -> tuple[str, str, str, int]:
    """Parse one gpu_list entry by structure -> (kind, ips, gpus, nodes).

    kind: "cpu" (-1), "single" (one id), "multi" (ids on one node),
    "multinode" (`ip1,ip2;ids` with two or more IPs), and tipcgen's CPU extension:
    "cpu_procs" (`cpuxN`: N CPU processes) and "cpu_nodes" (`ip1,ip2;cpuxN`).
    """
    if entry == "-1":
        return "cpu", "", entry, 1
    if ";" in entry:
        parts = ifs_split(entry, ";")
        ips = parts[0] if parts else ""
        gpus = parts[1] if len(parts) > 1 else ""
        nodes = len(ifs_split(ips, ","))
        if nodes >= 2:
            return ("cpu_nodes" if CPU_PROCS.match(gpus) else "multinode"), ips, gpus, nodes
        entry = gpus
    if CPU_PROCS.match(entry):
        return "cpu_procs", "", entry, 1
    ids = ifs_split(entry, ",")
    return ("multi" if len(ids) > 1 else "single"), "", entry, 1


def _env_for(kind: str, gpus: str, first_gpu_on_multinode: bool) -> Optional[tuple]:
    """What the script exports before eval/inference: None = nothing, ("set", id), ("unset",)."""
    if kind == "cpu":
        return None
    if kind in ("cpu_procs", "cpu_nodes"):
        return ("unset",)  # a set CUDA_VISIBLE_DEVICES makes the launcher look for GPUs
    if kind == "single":
        return ("set", gpus)
    first = ifs_split(gpus, ",")
    first_id = first[0] if first else ""
    if kind == "multi":
        return ("set", first_id)
    return ("set", first_id) if first_gpu_on_multinode else None


class _Builder:
    def __init__(self, view: ConfigView, mode: str, cvd: Optional[str]):
        self.v = view
        self.mode = mode
        self.cvd = cvd
        self.steps: list[Step] = []

    def add(self, kind, command, log, depends_on=None, nodes=1, group="", skip=None) -> int:
        argv = words(command)
        idx = len(self.steps)
        self.steps.append(
            Step(
                idx,
                kind,
                command + (f" > {log} 2>&1 " if log else ""),
                tuple(argv) if argv is not None else None,
                log,
                self.cvd,
                depends_on,
                nodes,
                group,
                skip,
            )
        )
        return idx

    def apply_env(self, env):
        if env is not None:
            self.cvd = env[1] if env[0] == "set" else None


def check_bytes(text: str, source: str = "config") -> None:
    """Refuse a config holding a NUL or a control character other than tab, CR and LF."""
    m = CONTROL.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        what = "a NUL byte" if m.group() == "\x00" else f"control character {m.group()!r}"
        raise UsageError(f"{source}: line {line}: {what}: refusing this config (no command can hold it)")


def check_view(view: ConfigView, source: str = "config") -> None:
    """Refuse a config whose log files would land outside test_tipc/output/<model_name>/, or
    whose lists multiply into more than MAX_MATRIX combinations."""
    dialect = view.layout.dialect
    model_name = view.value("model_name")
    if "/" in model_name or model_name in (".", ".."):
        raise UsageError(
            f"{source}: model_name {model_name!r} would put logs outside test_tipc/output/ "
            "(it must be one plain name, without `/`)"
        )
    for role in dialect.log_name_roles:
        value = view.value(role)
        if "/" in value:
            shown = value if len(value) <= 60 else value[:57] + "..."
            raise UsageError(
                f"{source}: {role} (`{view.key(role)}:{shown}`) holds a `/`, but its items "
                f"name log files in test_tipc/output/{model_name}/"
            )
    size = 1
    for role in dialect.matrix_roles:
        size *= max(1, len(ifs_split(view.value(role), "|")))
        if size > MAX_MATRIX:
            raise UsageError(
                f"{source}: its lists ({', '.join(dialect.matrix_roles)}) multiply to more "
                f"than {MAX_MATRIX} combinations; refusing a matrix that large"
            )


def plan_config(
    text: str,
    layout: Layout,
    mode: str,
    gpuid: Optional[str] = None,
    cuda_visible_devices: Optional[str] = None,
    node_ip: Optional[str] = None,
    start_port: Optional[str] = None,
    source: str = "config",
) -> Plan:
    """Plan the steps of `test_train_inference_python.sh CONFIG MODE [GPUID]`.

    The rest is the caller's environment: CUDA_VISIBLE_DEVICES (None: unset), TIPC_NODE_IP
    (this node's address in a multi-node gpu_list) and FLAGS_START_PORT. `source` names the
    config in error messages.
    """
    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}; modes are {', '.join(MODES)}")
    check_bytes(text, source)
    view = ConfigView.parse(text, layout)
    check_view(view, source)
    model_name = view.value("model_name")
    log_dir = f"./test_tipc/output/{model_name}/{mode}"
    b = _Builder(view, mode, cuda_visible_devices)
    b.node_ip, b.start_port = node_ip or None, start_port or None
    family = layout.dialect.family
    if mode == "whole_infer":
        if gpuid:
            b.cvd = gpuid
        (_whole_infer_ocr if family == "ocr" else _whole_infer_models)(b, log_dir)
    else:
        _train_modes(b, log_dir, layout)
    return Plan(layout.name, mode, model_name, log_dir, f"{log_dir}/results_python.log", tuple(b.steps))


def _train_modes(b: _Builder, log_dir: str, layout: Layout) -> None:
    v, mode = b.v, b.mode
    d = layout.dialect
    ocr = d.family == "ocr"
    python = v.value("python")
    device_key = v.key("train.device")
    device_values = ifs_split(v.value("train.device"), "|")
    autocast_key = v.key("train.autocast")
    autocasts = ifs_split(v.value("train.autocast"), "|") if ocr else [d.autocast_constant]
    epoch = set_param(v.key("train.epochs"), mode_value(v.value("train.epochs"), mode))
    save_key = v.key("train.save_dir")
    batch = set_param(v.key("train.batch_size"), mode_value(v.value("train.batch_size"), mode))
    pretrain_key = v.key("train.pretrained")
    pretrain = set_param(pretrain_key, v.value("train.pretrained"))
    model_file = v.value("train.model_file")
    infer_img_dir = v.value("train.infer_img_dir") if ocr else ""  # models: never defined upstream
    extra = set_param(v.key("train.extra"), v.value("train.extra"))
    eval_py = v.value("eval.command")
    eval_extra = set_param(v.key("eval.extra"), v.value("eval.extra"))
    save_infer_key = v.key("export.save_dir")
    export_weight = v.key("export.weights")
    inference_dir = v.value("export.inference_dir")

    for count, entry in enumerate(ifs_split(v.value("gpu_list"), "|")):
        use_gpu = set_param(device_key, device_values[count] if count < len(device_values) else "")
        kind, ips, gpu, nodes = gpu_entry(entry)
        env = _env_for(kind, gpu, d.multinode_env_first_gpu)
        # On a node other than the first only trainer 0's node has the model to eval/export/infer.
        node_list = ifs_split(ips, ",")
        not_first = nodes > 1 and b.node_ip is not None and b.node_ip in node_list[1:]
        for autocast in autocasts:
            amp = AMP_FLAGS if (ocr and autocast == "amp") else " "
            for trainer in ifs_split(v.value("train.run"), "|"):
                run_train, run_export, quant = _pick_trainer(v, trainer, ocr)
                if unquoted_test(run_train, "=", "null"):
                    continue
                set_autocast = set_param(autocast_key, autocast)
                stem = f"{trainer}_gpus_{gpu}_autocast_{autocast}"
                if ocr:
                    save_log = f"{log_dir}/{stem}_nodes_{nodes}" if nodes > 1 else f"{log_dir}/{stem}"
                else:
                    save_log = f"{log_dir}/{stem}_nodes_{nodes}.log"
                save = set_param(save_key, save_log)
                launch = ""
                if kind == "multi":
                    launch = f"-m paddle.distributed.launch {d.launch_device_flag}={gpu} "
                elif kind == "multinode":
                    launch = f"-m paddle.distributed.launch --ips={ips} {d.launch_device_flag}={gpu} "
                elif kind == "cpu_procs":
                    launch = f"-m paddle.distributed.launch --nproc_per_node={gpu[4:]} "
                elif kind == "cpu_nodes":
                    launch = f"-m paddle.distributed.launch --ips={ips} --nproc_per_node={gpu[4:]} "
                    if b.node_ip:
                        launch += f"--host={b.node_ip} "
                    if b.start_port:
                        launch += f"--start_port={b.start_port} "
                if kind in ("cpu_procs", "cpu_nodes"):
                    b.apply_env(env)
                if ocr:
                    if kind in ("cpu", "single"):
                        cmd = f"{python} {run_train} {use_gpu}  {save} {epoch} {pretrain} {set_autocast} {batch} {extra} {amp} "
                    elif kind in ("multi", "cpu_procs"):
                        cmd = f"{python} {launch}{run_train} {use_gpu} {save} {epoch} {pretrain} {set_autocast} {batch} {extra} {amp}"
                    else:
                        cmd = f"{python} {launch}{run_train} {use_gpu} {save} {pretrain} {epoch} {set_autocast} {batch} {extra} {amp}"
                else:
                    cmd = f"{python} {launch}{run_train} {save} {epoch} {pretrain} {batch}"
                group = stem + (f"_nodes_{nodes}" if nodes > 1 else "")
                train_idx = b.add("train", cmd, None, None, nodes, group)
                skip = "not trainer 0" if not_first else None

                eval_pretrain = set_param(pretrain_key, f"{save_log}/{model_file}")
                if unquoted_test(eval_py, "!=", "null"):
                    b.apply_env(env)
                    eval_log = f"{log_dir}/{stem}_nodes_{nodes}_eval.log"
                    if ocr:
                        eval_cmd = f"{python} {eval_py} {eval_pretrain} {use_gpu} {eval_extra}"
                    else:
                        eval_cmd = f"{python} {eval_py} {eval_pretrain}"
                    b.add("eval", eval_cmd, eval_log, train_idx, nodes, group, skip)
                if unquoted_test(run_export, "!=", "null"):
                    export_log = f"{log_dir}/{stem}_nodes_{nodes}_export.log"
                    weight = set_param(export_weight, f"{save_log}/{model_file}")
                    save_infer = set_param(save_infer_key, save_log)
                    b.add(
                        "export",
                        f"{python} {run_export} {weight} {save_infer}",
                        export_log,
                        train_idx,
                        nodes,
                        group,
                        skip,
                    )
                    b.apply_env(env)
                    model_dir = save_log
                    if ocr and inference_dir not in ("null", "##"):
                        model_dir = f"{save_log}/{inference_dir}"
                    _inference(b, python, model_dir, log_dir, infer_img_dir, quant, ocr, train_idx, nodes, group, skip)
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


def _eq(a: str, b: str) -> bool:
    """`[ ${a} = "b" ]` where a holds no `|`: an empty `a` is a test error (false)."""
    return a != "" and a == b


def _ne(a: str, b: str) -> bool:
    return a != "" and a != b


def _inference(
    b: _Builder,
    python: str,
    model_dir: str,
    log_dir: str,
    data: str,
    quant: str,
    ocr: bool,
    depends_on: Optional[int],
    nodes: int = 1,
    group: str = "",
    skip: Optional[str] = None,
) -> None:
    v = b.v
    script = v.value("inference.script")
    use_gpu_key = v.key("inference.use_gpu")
    batch_key = v.key("inference.batch_size")
    set_data = set_param(v.key("inference.data"), data)
    bench = set_param(v.key("inference.benchmark"), v.value("inference.benchmark"))
    set_model = set_param(v.key("inference.model_dir"), model_dir)
    batches = ifs_split(v.value("inference.batch_size"), "|")
    for use_gpu in ifs_split(v.value("inference.use_gpu"), "|"):
        cpu = _eq(use_gpu, "False") or _eq(use_gpu, "cpu")
        gpu = _eq(use_gpu, "True") or _eq(use_gpu, "gpu")
        if not ocr:
            if not (cpu or gpu):
                continue
            dev = "cpu" if cpu else "gpu"
            for bs in batches:
                log = f"{log_dir}/python_infer_{dev}_batchsize_{bs}.log"
                cmd = f"{python} {script} {use_gpu_key}={use_gpu} {set_model} {set_param(batch_key, bs)} {set_data} {bench}"
                b.add("infer", cmd, log, depends_on, nodes, group, skip)
            continue
        precisions = ifs_split(v.value("inference.precision"), "|")
        precision_key = v.key("inference.precision")
        save_log = set_param(v.key("inference.save_log"), "")
        extra = set_param(v.key("inference.extra"), v.value("inference.extra"))
        if cpu:
            for mkldnn in ifs_split(v.value("inference.mkldnn"), "|"):
                for threads in ifs_split(v.value("inference.threads"), "|"):
                    for bs in batches:
                        for precision in precisions:
                            if _eq(mkldnn, "False") and _eq(precision, "fp16"):
                                continue
                            if _eq(quant, "True") and _ne(precision, "int8"):
                                continue
                            log = (
                                f"{log_dir}/python_infer_cpu_usemkldnn_{mkldnn}_threads_{threads}"
                                f"_precision_{precision}_batchsize_{bs}.log"
                            )
                            cmd = (
                                f"{python} {script} {use_gpu_key}={use_gpu} "
                                f"{set_param(v.key('inference.mkldnn'), mkldnn)} "
                                f"{set_param(v.key('inference.threads'), threads)} {set_model} "
                                f"{set_param(batch_key, bs)} {save_log} {set_data} {bench} "
                                f"{set_param(precision_key, precision)} {extra}"
                            )
                            b.add("infer", cmd, log, depends_on, nodes, group, skip)
        elif gpu:
            for trt in ifs_split(v.value("inference.tensorrt"), "|"):
                for precision in precisions:
                    if quant == "False" and "int8" in precision:
                        continue
                    if ("fp16" in precision or "int8" in precision) and _eq(trt, "False"):
                        continue
                    if (trt == "False" and "int8" in precision) and _eq(quant, "True"):
                        continue
                    for bs in batches:
                        log = f"{log_dir}/python_infer_gpu_usetrt_{trt}_precision_{precision}_batchsize_{bs}.log"
                        cmd = (
                            f"{python} {script} {use_gpu_key}={use_gpu} "
                            f"{set_param(v.key('inference.tensorrt'), trt)} "
                            f"{set_param(precision_key, precision)} {set_model} {set_param(batch_key, bs)} "
                            f"{set_data} {bench} {extra} {save_log}"
                        )
                        b.add("infer", cmd, log, depends_on, nodes, group, skip)


def _whole_infer_ocr(b: _Builder, log_dir: str) -> None:
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
            b.add("export", cmd, f"{log_dir}/_export_{count}.log")
        quant = quants[count] if count < len(quants) else ""
        _inference(b, python, model, log_dir, data, quant, True, None)


def _whole_infer_models(b: _Builder, log_dir: str) -> None:
    v = b.v
    python = v.value("python")
    export = v.value("whole_infer.exports")
    save_infer_dir = v.value("export.save_dir")
    if unquoted_test(export, "!=", "null"):
        weight = set_param(v.key("export.weights"), v.value("whole_infer.models"))
        cmd = f"{python} {export} {weight} {set_param(v.key('export.save_dir'), save_infer_dir)}"
        b.add("export", cmd, f"{log_dir}/_export_0.log")
    _inference(b, python, save_infer_dir, log_dir, v.value("inference.data"), "False", False, None)
