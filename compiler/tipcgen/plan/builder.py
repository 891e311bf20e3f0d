"""What every runner plans with: the `Builder` a runner adds its steps to, and the pieces of
upstream's scripts the runners share (gpu_list entries, CUDA_VISIBLE_DEVICES exports, launcher
prefixes). Pure Python, no I/O."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple, Optional

from tipcgen.lower.configview import ConfigView
from tipcgen.plan.steps import Step
from tipcgen.script.shellwords import argv_of, ifs_split

AMP_FLAGS = "Global.use_amp=True Global.scale_loss=1024.0 Global.use_dynamic_loss_scaling=True"

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


def env_for(kind: str, gpus: str, first_gpu_on_multinode: bool) -> Optional[tuple]:
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


def launch_prefix(
    kind: str, ips: str, gpus: str, device_flag: str, node_ip: Optional[str], start_port: Optional[str]
) -> str:
    """The `-m paddle.distributed.launch ...` the train command gets for a gpu_list entry's kind
    ('' for one process: cpu and single)."""
    if kind == "multi":
        return f"-m paddle.distributed.launch {device_flag}={gpus} "
    if kind == "multinode":
        return f"-m paddle.distributed.launch --ips={ips} {device_flag}={gpus} "
    if kind == "cpu_procs":
        return f"-m paddle.distributed.launch --nproc_per_node={gpus[4:]} "  # gpus is `cpuxN`
    if kind != "cpu_nodes":
        return ""
    launch = f"-m paddle.distributed.launch --ips={ips} --nproc_per_node={gpus[4:]} "
    # tipcgen's multi-node CPU extension: the launcher cannot guess this node's address or port.
    if node_ip:
        launch += f"--host={node_ip} "
    if start_port:
        launch += f"--start_port={start_port} "
    return launch


class TrainingRun(NamedTuple):
    """Where a step sits in its training run: the train step whose failure skips it, the run's
    node count and group, and why it is skipped even when the train succeeds."""

    depends_on: Optional[int] = None
    nodes: int = 1
    group: str = ""
    skip: Optional[str] = None


NO_RUN = TrainingRun()  # whole_infer: steps outside any training run


@dataclass(frozen=True)
class OcrScript:
    """Where the versions of PaddleOCR's script that plan_classic follows differ: a runner sets
    `b.script` before calling it. The default is the seed-era script (runners/ocr.py)."""

    train_autocast: bool = True  # the train command passes the autocast line's flag
    log_in_status: bool = False  # status lines name the step's log (status_check's 5th argument)
    # The train step's output also goes to this file ("{save_log}" filled in; None: the terminal only).
    train_log: Optional[str] = None
    # Inference logs name the run's GPUs (`python_infer_cpu_gpus_<gpu>_...`); whole_infer's are this.
    infer_gpu: Optional[str] = None
    whole_infer_export_log: str = "{log_dir}/_export_{count}.log"


SEED_ERA = OcrScript()


class Builder:
    """The steps so far, and the CUDA_VISIBLE_DEVICES the script's environment holds now.

    A runner module (plan/runners/) fills it: `add` a step, `apply_env` what the script exports,
    `preamble` lines written to the status log first; `log_dir`/`status_log` may be changed by a
    runner whose script logs elsewhere."""

    def __init__(
        self,
        view: ConfigView,
        mode: str,
        cvd: Optional[str],
        node_ip: Optional[str] = None,
        start_port: Optional[str] = None,
        gpuid: Optional[str] = None,
        root: Optional[str] = None,
    ):
        self.v = view
        self.mode = mode
        self.cvd = cvd
        self.node_ip = node_ip  # TIPC_NODE_IP (None: unset or empty)
        self.start_port = start_port  # FLAGS_START_PORT (None: unset or empty)
        self.gpuid = gpuid  # the script's 3rd argument (None: not given)
        self.root = root  # the repo root's absolute path, for runners whose scripts use $(pwd)
        self._text = ""  # the whole config text (`text`)
        self.source = "config"  # the config's name in error messages
        self.config = "config"  # the config file's path as the script is given it (a table's Config word)
        self.steps: list[Step] = []
        self.preamble: list[str] = []
        self.log_dir = f"./test_tipc/output/{view.value('model_name')}/{mode}"
        self.status_log = f"{self.log_dir}/results_python.log"
        self.script = SEED_ERA  # the OCR-family script version plan_classic follows
        # A device variant's (dialects/devices.py): the word the inference branch compares use_gpu
        # with, and the names of the other runner edits it makes
        self.gpu_word = "gpu"
        self.runner_edits: frozenset = frozenset()

    @property
    def text(self) -> str:
        """The whole config text (runners whose scripts read past the layout's lines): reading it
        counts as reading every line of the view (ConfigView.roles_read)."""
        self.v.mark_whole()
        return self._text

    @text.setter
    def text(self, value: str) -> None:
        self._text = value

    def add(
        self,
        kind: str,
        command: str,
        log: Optional[str],
        run: TrainingRun = NO_RUN,
        *,
        shown: Optional[str] = None,
        status_path: Optional[str] = None,
        cwd: Optional[str] = None,
        output: str = "log",
        files: tuple = (),
        writes_status: bool = True,
        service: str = "",
        warmup: int = 0,
        quiet: bool = False,
        fills: tuple = (),
        globs: bool = False,
    ) -> int:
        """Add a step running `command` (split as bash would); `shown` is the status line's
        command text (default: the command and its redirect, as the OCR family shows it)."""
        argv = argv_of(command)
        idx = len(self.steps)
        if status_path is None and self.script.log_in_status:
            status_path = log
        if shown is None:
            shown = command + (f" > {log} 2>&1 " if log else "")
        step = Step(
            idx, kind, shown, argv, log, self.cvd, *run,
            status_path=status_path, cwd=cwd, output=output, files=files, writes_status=writes_status,
            service=service, warmup=warmup, quiet=quiet, fills=fills, globs=globs,
        )  # fmt: skip
        self.steps.append(step)
        return idx

    def apply_env(self, env: Optional[tuple]) -> None:
        """Upstream's `eval ${env}` (see env_for)."""
        if env is not None:
            self.cvd = env[1] if env[0] == "set" else None
