"""The recording harness: run a repo's REAL `test_train_inference_python.sh` (a model repo's
test_tipc/, or ../shared/upstream/<repo>/ in the tests) on a config with a recording interpreter,
and compare what it ran with our Plan for the same config and mode. `tipcgen migrate` and the
upstream-differential tests both use it.

    run = run_upstream(upstream / "PaddleOCR/seed-era", config, "lite_train_lite_infer")
    diff = compare(config, "PaddleOCR/seed-era", "lite_train_lite_infer", upstream=upstream)
    assert diff.identical, diff.describe()

How a run is staged (a scratch model repo, nothing of the real repo is needed):

- `<scratch>/repo/test_tipc/` is a copy of the upstream folder; the config goes to
  `test_tipc/configs/<its directory name>/`; the script runs from `<scratch>/repo` as
  `bash test_tipc/test_train_inference_python.sh test_tipc/configs/<dir>/<file> MODE [GPUID]`.
- `<scratch>/bin/` is first on PATH: the recording interpreter under the config's `python:` name and
  under python/python3/python3.7/python3.10 (scripts call them too). It appends its cwd, its own
  name, its argv and CUDA_VISIBLE_DEVICES to a record file (the format of tests/conftest.py's
  RECORDER, plus argv[0]) and exits 0, or `fail_code` when an argument contains `fail`.
- Shims keep a run fast and offline: `sleep ARG` is recorded as a command and returns at once;
  `nvidia-smi`, `wget`, `curl`, `pip`, `pip3` and `git` fail at once; `timeout DURATION CMD...`
  (PaddleDetection) runs CMD directly, and every command recorded under it is recorded with its
  wrapper (`timeout 5m python3.7 tools/train.py ...`): a wait and a time cap are behaviour, so
  neither is hidden (compare() takes the sleeps out into one named difference, `sleep: ...`).
  A chain script that builds first (BUILD_TOOLS: PaddleClas's test_inference_cpp.sh) gets
  recorders for its build tools instead, a `make` that leaves the demos (BUILT) in `build/`, a
  fixed `find` answer for the CUDA libraries, and the directories its download and clone would make.
- What a checkout would hold is created: `deploy/` (PaddleClas runs inference from there) and, for
  PaddleClas's whole_infer (its train script's and test_ptq_inference_python.sh's),
  `<infer_model>/quant_post_static_model/` (its kl_quant step's output; `quant_made=False`: a
  quantization that failed before making it).
  Nothing else: files a real training would write (train.log, model files) do not exist, so the
  scripts' branches that test for them take their "absent" side (see KNOWN_ENVIRONMENT).
- The run is in the sandbox (tipcgen.sandbox: only the scratch directory writable, no network, a
  cleared environment) and bounded by `timeout` seconds, after which every process it started is
  killed.

What is collected (UpstreamRun): the recorded commands (argv with argv[0], CUDA_VISIBLE_DEVICES,
cwd relative to the repo root), the files created under test_tipc/output/ (the logs), the lines
of every results_python.log found (where each script writes it: `${LOG_PATH}/results_python.log`,
an absolute path for PaddleClas), other files the run left in the repo, stdout/stderr tails.

What is normalised before comparing (and reported in Diff.notes, never hidden): the absolute
scratch root in argv, status lines and log paths (PaddleClas builds `$(pwd)/test_tipc/output`) is
compared as `.`. Everything else counts as a difference.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Optional

from tipcgen.fsio import write_atomic, write_new, write_text
from tipcgen.inputs import read_bytes
from tipcgen.migrate.shims import shim
from tipcgen.sandbox import DEFAULT_TIMEOUT, SYSTEM_PATH, read_left, sandboxed_run
from tipcgen.script.lines import config_python

# Upstream folder (relative to ../shared/upstream) -> our dialect for it (None: no dialect yet).
REPOS: dict[str, Optional[str]] = {
    "PaddleOCR/seed-era": "paddleocr",
    "PaddleOCR/head": "paddleocr",
    "PaddleClas": "paddleclas",
    "PaddleSeg": "paddleseg",
    "PaddleVideo": "paddlevideo",
    "PaddleDetection": "paddledetection",
    "models": "models",
}

# Upstream folder -> the runner of its dialect that follows it (absent: the dialect's default).
RUNNERS: dict[str, str] = {"PaddleOCR/head": "ocr_head"}


def family_of(layout: str, runner: Optional[str]) -> str:
    """The upstream folder (REPOS) whose script a layout's runner follows: what the harness stages
    for it and names its environment-dependent branches after."""
    from tipcgen.dialects import get_layout

    runner = runner or get_layout(layout).dialect.runners[0]
    for repo, lay in REPOS.items():
        if lay == layout and RUNNERS.get(repo, get_layout(layout).dialect.runners[0]) == runner:
            return repo
    return layout


MODES = ("lite_train_lite_infer", "lite_train_whole_infer", "whole_train_whole_infer", "whole_infer")

# Branches of upstream scripts that depend on files a real training writes; with a recording
# interpreter they take their "file absent" side. Differences they cause are environment, not
# dialect, but they are reported as differences all the same.
KNOWN_ENVIRONMENT = {
    "PaddleOCR/head": "train status = exit of `cat <save_log>/train.log >> <save_log>.log` (absent here: Run failed)",
    "PaddleClas": "train status = exit of `cat <save_log>/<model>/train.log` (absent here: Run failed)",
    "PaddleSeg": "train_model_name falls back to iter_<epochs>/model.pdparams when the model file is absent",
    "PaddleVideo": "train status = exit of `cat train.log >> <save_log>.log` (always 0)",
}

PYTHONS = ("python", "python3", "python3.7", "python3.10")
# Programs other chains' scripts run besides the interpreter, recorded the same way.
TOOLS = ("paddle2onnx",)
# Programs a chain's script builds before its steps (by its name), recorded; compare() reports
# them as one `build:` difference (the Plan builds nothing: no-demo-build) and compares the rest.
BUILD_TOOLS: dict[str, tuple] = {
    "test_inference_cpp.sh": ("cmake", "make", "wget", "tar", "git", "apt-get", "bootstrap"),
}
# What those builds make (PaddleClas's C++ demos, PaddleDetection's `main`, PaddleVideo's `ppvideo`,
# PaddleOCR's `ppocr`):
# the `make` shim writes these recorders into a `build/` directory it runs in, and a step's
# `./deploy/cpp/build/clas_system` is compared by name.
BUILT = ("clas_system", "pp_shitu", "main", "ppvideo", "ppocr")
# Programs a chain's script runs without a status line (the serving chains' sed/cp edits of the
# converted configs), recorded too when that script runs: the Plan's quiet steps are held to them.
CHAIN_TOOLS: dict[str, tuple] = {
    "test_serving_infer_python.sh": ("sed", "cp"),
    "test_serving_infer_cpp.sh": ("sed", "cp"),
    "test_lite_arm_cpu_cpp.sh": ("adb", "sed"),  # a Lite script's device commands and config.txt edits
}
SLEEP_AFTER_BACKGROUND = shim("sleep_after_background.sh")
CHAIN_SHIMS: dict[str, dict] = {
    "test_serving_infer_python.sh": {"sleep": SLEEP_AFTER_BACKGROUND},
    "test_serving_infer_cpp.sh": {"sleep": SLEEP_AFTER_BACKGROUND},
    # each run in the background, then its log printed: `cat` waits for the run's recorder
    "test_pipeline_infer_python.sh": {"cat": shim("cat_after_background.sh")},
}

# The recorder of tests/conftest.py, plus its own name (argv[0]), the wrappers it runs under
# (TIPC_WRAP: `\x1ftimeout\x1f5m`, set by the timeout shim) and a chosen failure code.
RECORDER = shim("recorder.sh")
if "tipc_r+=${TIPC_WRAP:-}\n" not in RECORDER:
    raise RuntimeError("templates/shims/recorder.sh must add TIPC_WRAP on a line of its own (_RECORD_ONLY drops it)")


def nested_recorder(recorder: str) -> str:
    """A recorder standing in for a nested runner script (`bash test_tipc/X.sh CONFIG ...`): the
    text of its config argument, read when it runs, is recorded (and failed on) as one more
    argument, so two runs on one rewritten file tell apart."""
    head = recorder[: recorder.index("\n") + 1]  # the shebang
    prefix = 'if [[ -f ${1:-} ]]; then\n    tipc_text=$(cat -- "$1"; printf x)\n    set -- "$@" "${tipc_text%x}"\nfi\n'
    return head + prefix + recorder[len(head) :]


# The recorder without the failure part and the wrappers: a shim that records itself and succeeds
# (`sleep 5`: a wait wherever it runs; a cap is recorded on the commands it caps).
_RECORD_ONLY = RECORDER.split("if [[ -n ${TIPC_RECORD_FAIL", 1)[0].replace("tipc_r+=${TIPC_WRAP:-}\n", "")
_RECORD_ONLY += "exit 0\n"

SHIMS = {
    # recorded (a wait is behaviour: PaddleClas sleeps 5 s around each training), not slept
    "sleep": _RECORD_ONLY,
    **dict.fromkeys(("nvidia-smi", "wget", "curl", "pip", "pip3", "git"), shim("refuse.sh")),
    "timeout": shim("timeout_wrap.sh"),
}


def corpus_name(repo: str) -> str:
    """The corpus folder of an upstream folder (PaddleOCR/seed-era -> PaddleOCR)."""
    return repo.split("/")[0]


# ---- running upstream


@dataclass(frozen=True)
class Command:
    argv: tuple  # argv[0] is the name the interpreter was called by
    cuda_visible_devices: Optional[str]  # None: unset
    cwd: str  # relative to the repo root ("." or "deploy"), or absolute when outside it


@dataclass
class UpstreamRun:
    repo: str
    config: str
    mode: str
    gpuid: Optional[str]
    fail: Optional[str]
    root: str  # the scratch repo root the script ran in (removed after the run unless keep=True)
    returncode: Optional[int]  # None: timed out
    elapsed: float
    commands: list = field(default_factory=list)  # [Command]
    logs: list = field(default_factory=list)  # files created under test_tipc/output/, "./test_tipc/..."
    status_logs: list = field(default_factory=list)  # where results_python.log files were written
    status_lines: list = field(default_factory=list)  # their lines, in order (colour codes kept)
    stray: list = field(default_factory=list)  # other files the run created in the repo
    stdout: str = ""
    stderr: str = ""
    config_arg: str = ""  # the config argument the script was given (its `${FILENAME}`)

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def kl_quant_dir(text: str) -> Optional[str]:
    """Where a config's kl_quant step writes its model (PaddleClas: `<infer_model>/quant_post_static_model`,
    which the train runner's whole_infer `cd`s into and back out of to deploy/), or None when the
    config has no kl_quant command: a scratch run finds it made, as after a real kl_quant step."""
    values = dict(line.split(":", 1) for line in text.split("\n") if ":" in line)
    command, model = values.get("kl_quant", "").strip(), values.get("infer_model", "").strip()
    if command in ("", "null", "False") or not model:
        return None
    return f"{model.rstrip('/')}/quant_post_static_model"


def write_exe(path: Path, text: str) -> None:
    write_text(str(path), text, mode=0o755)


# `make` for BUILD_TOOLS: record, and in a `build/` directory leave the demos it would link.
_MAKE = RECORDER.replace(
    "exit 0\n",
    "if [[ ${PWD##*/} == build ]]; then\n"
    "    for name in " + " ".join(BUILT) + '; do cp -- "$(dirname -- "$0")/.demo" "$PWD/$name"; done\n'
    "fi\nexit 0\n",
)
_FIND = shim("find_cuda.sh")
# `tar` for PaddleOCR's C++ build: record, and leave the directory an `X.tar.gz` archive is named for.
_TAR = RECORDER.replace(
    "exit 0\n",
    'for arg in "$@"; do\n    if [[ $arg == *.tar.gz ]]; then mkdir -p -- "${arg%.tar.gz}"; fi\ndone\nexit 0\n',
)


@dataclass(frozen=True)
class BuildStage:
    """What a chain script finds of a checkout before it runs, as the downloads, clones and builds
    before the run would have left it (relative to the repo root)."""

    dirs: tuple = ()  # directories it `cd`s to
    exes: tuple = ()  # recorders at these paths (CMake's bootstrap; a demo built before the run)
    shims: tuple = ()  # (program, body): recorders that also leave what the real one would
    # (path, target): symbolic links (a device's folder holds the script's helpers beside it)
    links: tuple = ()


# Every family's test_inference_cpp.sh finds the base; a family's entry adds to it.
CPP_BASE = BuildStage(
    dirs=("deploy/cpp", "deploy/cpp_infer", "deploy/cpp_shitu/faiss", "deploy/cpp_shitu/cmake-3.22.0"),
    exes=("deploy/cpp_shitu/cmake-3.22.0/bootstrap",),  # PaddleClas's shitu demo builds its own CMake
)
CPP_STAGES: dict[str, BuildStage] = {
    # its OpenCV build cds into what `tar -xf` left, then back `../..`
    "PaddleOCR": BuildStage(shims=(("tar", _TAR),)),
    # demos the script runs without building them
    "PaddleSeg": BuildStage(exes=("test_tipc/cpp/build/seg_system",)),
    "models": BuildStage(exes=("deploy/inference_cpp/build/clas_system",)),
}
# A script run on a device from one folder (Paddle-Lite's: prepare packs the script, common_func.sh,
# the config and the demo together, and the script sources `./common_func.sh`, runs `./ocr_db_crnn`).
DEVICE_STAGES: dict[str, BuildStage] = {
    "test_lite_arm_cpp.sh": BuildStage(exes=("ocr_db_crnn",), links=(("common_func.sh", "test_tipc/common_func.sh"),)),
}
_PREBUILT_NAMES = (
    *(p.rsplit("/", 1)[1] for stage in CPP_STAGES.values() for p in stage.exes if "/build/" in p),
    *(p for stage in DEVICE_STAGES.values() for p in stage.exes),  # a device folder's demo (`./ocr_db_crnn`)
)


def _stage_build(bin_dir: Path, root: Path, script: str, repo: str = "") -> None:
    """Recorders for the tools a chain's script builds with, and what its family's BuildStage
    says the download, the clone and the build would leave."""
    for name in BUILD_TOOLS.get(script, ()):
        write_exe(bin_dir / name, _MAKE if name == "make" else RECORDER)
    device = DEVICE_STAGES.get(script)
    if device is not None:
        for rel in device.exes:
            write_exe(root / rel, RECORDER)
        for rel, target in device.links:
            (root / rel).symlink_to(target)
    if script != "test_inference_cpp.sh":
        return
    write_exe(bin_dir / ".demo", RECORDER)
    write_exe(bin_dir / "find", _FIND)
    own = CPP_STAGES.get(corpus_name(repo), BuildStage())
    for stage in (CPP_BASE, own):
        for rel in stage.dirs:
            (root / rel).mkdir(parents=True, exist_ok=True)
        for rel in stage.exes:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            write_exe(root / rel, RECORDER)
        for name, body in stage.shims:
            write_exe(bin_dir / name, body)


def _stage(
    scratch: Path,
    repo_dir: Path,
    config: Path,
    repo: str,
    mode: str,
    script: str = "test_train_inference_python.sh",
    tools: tuple = (),
    dirs: tuple = (),
    shims: Optional[dict] = None,
    quant_made: bool = True,
) -> tuple[Path, str]:
    """Lay out bin/ and repo/ (with `dirs`, relative to it); `tools`: more programs to record ->
    (repo root, the config argument of the script)."""
    data = read_bytes(str(config), what="a config")
    text = data.decode("utf-8", "replace")
    python = config_python(text)
    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    names = set(PYTHONS) | set(TOOLS) | set(tools)
    if python and "/" not in python:
        names.add(python)
    bodies = {**dict.fromkeys(sorted(names), RECORDER), **SHIMS, **(shims or {})}
    for name, body in bodies.items():  # a fresh bin/: created, not replaced (fsio.write_new)
        write_new(str(bin_dir / name), body.encode(), 0o755)
    root = scratch / "repo"
    # the scripts and what they source; not a real repo's outputs or configs
    shutil.copytree(
        repo_dir, root / "test_tipc", symlinks=True, ignore=shutil.ignore_patterns("output", "configs", "specs")
    )  # links copied as links: tipcgen reads nothing through them
    owner_writable(root / "test_tipc")
    conf_dir = root / "test_tipc" / "configs" / config.parent.name
    conf_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(str(conf_dir / config.name), data)
    (root / "deploy").mkdir()
    _stage_build(bin_dir, root, script, repo)
    for d in dirs:  # where a chain's script `cd`s (the serving chains' serving_dir)
        where = (root / d).resolve()
        if where.is_relative_to(root.resolve()):
            where.mkdir(parents=True, exist_ok=True)
    if corpus_name(repo) == "PaddleDetection":  # its script `cd`s here (and back) for DINO's op
        (root / "ppdet" / "modeling" / "transformers" / "ext_op").mkdir(parents=True)
    made = kl_quant_dir(text) if mode == "whole_infer" and quant_made else None
    if made is not None:
        quant = (root / made).resolve()
        if quant.is_relative_to(root.resolve()):
            quant.mkdir(parents=True, exist_ok=True)
    return root, f"test_tipc/configs/{config.parent.name}/{config.name}"


def owner_writable(top: Path) -> None:
    """The copy writable by its owner, as a checkout is: copytree keeps the modes of a read-only
    source, and the sandbox's root has no capability to write past them."""
    for path in [top, *top.rglob("*")]:
        if not path.is_symlink():
            mode = path.stat().st_mode
            path.chmod(mode | stat.S_IWUSR | stat.S_IRUSR | (stat.S_IXUSR if path.is_dir() else 0))


def snapshot(root: Path) -> set:
    return {p for p in root.rglob("*") if not p.is_dir()}


def records(path: Path, root: Path) -> list:
    if not path.exists():
        return []
    out = []
    for rec in read_left(path).decode("utf-8", "replace").split("\x1e"):
        if not rec:
            continue
        flag, cvd, cwd, *argv = rec.split("\x1f")
        rel = os.path.relpath(cwd, root)
        out.append(Command(tuple(argv), cvd if flag == "set" else None, cwd if rel.startswith("..") else rel))
    return out


def run_upstream(
    repo_dir,
    config,
    mode: str,
    gpuid: Optional[str] = None,
    fail: Optional[str] = None,
    *,
    fail_code: int = 1,
    cuda: Optional[str] = None,
    timeout: float = DEFAULT_TIMEOUT,
    keep: bool = False,
    scratch: Optional[Path] = None,
    repo: Optional[str] = None,
    script: str = "test_train_inference_python.sh",
    status_name: str = "results_python.log",
    nested: tuple = (),
    tools: tuple = (),
    checkout: Optional[dict] = None,
    log_dirs: tuple = ("test_tipc/output",),
    dirs: tuple = (),
    quant_made: bool = True,
) -> UpstreamRun:
    """Run the upstream script of `repo_dir` (e.g. ../shared/upstream/PaddleClas) on `config`.

    `fail`: the recorder exits `fail_code` when one of its arguments contains this text;
    `cuda`: CUDA_VISIBLE_DEVICES the script starts with (None: unset); `keep`: leave the scratch
    directory (UpstreamRun.root's parent) for inspection; `repo`: the family it belongs to (e.g.
    "PaddleClas"; default: repo_dir's name, as ../shared/upstream names them); `script` and
    `status_name`: another chain's script and the status log it writes (its layout's Dialect);
    `nested`: scripts of test_tipc/ that script runs with `bash` (dy2static: the train runner),
    replaced by a recorder that also records the config it is given (`nested_recorder`);
    `tools`: more programs recorded like the interpreter (Lite: adb, sed); `checkout`: files of a
    model repo's checkout the script reads ({path: text}, e.g. deploy/lite/config.txt);
    `log_dirs`: where the script writes its logs (relative to the repo root);
    `dirs`: directories (relative to the repo root) a checkout has and the script `cd`s to.
    `quant_made`: PaddleClas's whole_infer finds the directory its kl_quant step writes (False: the
    quantization failed before making it).
    """
    repo_dir, config = Path(repo_dir).resolve(), Path(config)
    if repo is None:
        repo = f"PaddleOCR/{repo_dir.name}" if repo_dir.parent.name == "PaddleOCR" else repo_dir.name
    made = scratch is None
    scratch = Path(tempfile.mkdtemp(prefix="tipc-upstream-")) if scratch is None else Path(scratch)
    try:
        root, config_arg = _stage(
            scratch,
            repo_dir,
            config,
            repo,
            mode,
            script,
            CHAIN_TOOLS.get(script, ()),
            dirs,
            CHAIN_SHIMS.get(script),
            quant_made,
        )
        for name in nested:
            write_exe(root / "test_tipc" / name, nested_recorder(RECORDER))
        for name in tools:
            write_exe(scratch / "bin" / name, RECORDER)
        for rel, text in (checkout or {}).items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            write_text(str(root / rel), text)
        record = scratch / "record.bin"
        # The sandbox clears the environment: the recorders first on the system's PATH, and only
        # what the run sets (the caller's variables, CUDA_VISIBLE_DEVICES included, do not reach it).
        env = {"PATH": f"{scratch / 'bin'}{os.pathsep}{SYSTEM_PATH}", "TIPC_RECORD": str(record)}
        env["TIPC_RECORD_CODE"] = str(fail_code)
        if fail:
            env["TIPC_RECORD_FAIL"] = fail
        if cuda is not None:
            env["CUDA_VISIBLE_DEVICES"] = cuda
        before = snapshot(root)
        args = ["bash", f"test_tipc/{script}", config_arg, mode] + ([gpuid] if gpuid else [])
        ran = sandboxed_run(args, scratch=scratch, cwd=root, env=env, timeout=timeout)
        run = UpstreamRun(
            repo, str(config), mode, gpuid, fail, str(root), ran.returncode, ran.elapsed,
            stdout=ran.tail("stdout"), stderr=ran.tail("stderr"),
        )  # fmt: skip
        run.commands = records(record, root)
        run.config_arg = config_arg
        created = sorted(snapshot(root) - before)
        outputs = [root / d for d in log_dirs]
        for path in created:
            rel = "./" + path.relative_to(root).as_posix()
            if path.name == status_name:
                run.status_logs.append(rel)
                run.status_lines.extend(read_left(path).decode("utf-8", "replace").splitlines())
            elif any(path.is_relative_to(output) for output in outputs):
                run.logs.append(rel)
            else:
                run.stray.append(rel)
        return run
    finally:
        if made and not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def chain_run_options(chain: str) -> dict:
    """run_upstream's options for a chain layout's script: the script and status log its dialect
    names, and what its runner asks the harness for (ORACLE_NESTED, ORACLE_TOOLS, ORACLE_CHECKOUT,
    ORACLE_LOG_DIRS; none: the train runners' defaults)."""
    from tipcgen.dialects import get_layout
    from tipcgen.plan.planner import runner_for

    layout = get_layout(chain)
    module = runner_for(layout)
    return {
        "script": layout.dialect.script,
        "status_name": layout.dialect.status_log,
        "nested": getattr(module, "ORACLE_NESTED", ()),
        "tools": getattr(module, "ORACLE_TOOLS", ()),
        "checkout": getattr(module, "ORACLE_CHECKOUT", None),
        "log_dirs": getattr(module, "ORACLE_LOG_DIRS", ("test_tipc/output",)),
    }


# ---- comparing with our Plan


@dataclass(frozen=True)
class Difference:
    aspect: str  # "plan" | "commands" | "logs" | "status" | "upstream"
    category: str  # a pattern shared by similar differences (what the benchmark tallies)
    detail: str  # what exactly differs, readable
    # The single differences the category is made of (e.g. each argv element only one side has,
    # as "upstream +ELEMENT" / "plan +ELEMENT"), for tallies finer than the category.
    items: tuple = ()


@dataclass
class Diff:
    repo: str
    config: str
    mode: str
    gpuid: Optional[str]
    layout: Optional[str]
    upstream: UpstreamRun
    plan: object = None  # tipcgen Plan (None: no dialect for the repo, or the plan refused)
    differences: list = field(default_factory=list)  # [Difference], commands first
    notes: list = field(default_factory=list)  # normalisations applied
    runner: Optional[str] = None  # the runner the plan followed (None: the dialect's default)
    device: Optional[str] = None  # a device wrapper's run (npu, xpu): its deviations count too

    @property
    def identical(self) -> bool:
        return self.plan is not None and not self.differences

    def aspect(self, name: str) -> list:
        return [d for d in self.differences if d.aspect == name]

    @property
    def commands_identical(self) -> bool:
        return self.plan is not None and not self.aspect("commands") and not self.aspect("plan")

    def _deviations(self) -> tuple:
        from tipcgen.dialects import get_layout
        from tipcgen.plan.planner import runner_for

        module = runner_for(get_layout(str(self.layout)), self.runner)
        if self.device is None:
            return tuple(module.DEVIATIONS)
        from tipcgen.dialects.devices import DEVICE_DEVIATIONS

        return (*module.DEVIATIONS, *DEVICE_DEVIATIONS)

    def unexplained(self) -> list:
        """The differences no deliberate deviation of the plan's runner explains (see
        tipcgen.plan.runner.Deviation); empty: the run is faithful."""
        if self.plan is None or self.layout is None:
            return list(self.differences)
        patterns = [re.compile(p) for dev in self._deviations() for p in dev.categories]
        return [d for d in self.differences if not any(p.search(d.category) for p in patterns)]

    def explained_by(self) -> list:
        """Names of the deviations that explain some difference of this run."""
        if self.plan is None or self.layout is None:
            return []
        return [
            dev.name
            for dev in self._deviations()
            if any(re.search(p, d.category) for p in dev.categories for d in self.differences)
        ]

    def deviation_of(self, difference: Difference) -> str:
        """The name of the runner's deviation that explains `difference` ("" when none does)."""
        if self.plan is None or self.layout is None:
            return ""
        return next(
            (dev.name for dev in self._deviations() if any(re.search(p, difference.category) for p in dev.categories)),
            "",
        )

    @property
    def faithful(self) -> bool:
        return self.plan is not None and not self.unexplained()

    @property
    def first(self) -> Optional[Difference]:
        return self.differences[0] if self.differences else None

    def describe(self) -> str:
        head = f"{self.repo} {Path(self.config).name} {self.mode}" + (f" {self.gpuid}" if self.gpuid else "")
        if not self.differences:
            return f"{head}: identical" + (f" ({'; '.join(self.notes)})" if self.notes else "")
        lines = [f"{head}: {len(self.differences)} difference(s); first: {self.differences[0].detail}"]
        lines += [f"  [{d.aspect}] {d.detail}" for d in self.differences[1:]]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


class _Norm:
    """Normalisation of upstream text (scratch root -> .) and the shapes categories are made of."""

    def __init__(self, root: str, model_name: str, mode: str):
        self.root = root
        self.model = model_name
        self.mode = mode
        self.hits: Counter = Counter()

    def text(self, s: str, where: str) -> str:
        if self.root and self.root in s:
            self.hits[where] += 1
            s = s.replace(self.root, ".")
        return s

    def shape(self, token: str, limit: int = 70) -> str:
        """A token with the run-specific parts replaced: log dir, run names, model name, numbers."""
        s = token
        if self.model:
            s = s.replace(f"./test_tipc/output/{self.model}/{self.mode}", "$LOG")
            s = s.replace(f"test_tipc/output/{self.model}/{self.mode}", "$LOG")
        # <trainer>_gpus_<ids>_autocast_<value>[_nodes_<n>]: the autocast value and the suffix stay
        s = re.sub(r"(?<=[/=])[A-Za-z0-9_.+-]+?_gpus_[0-9,;.-]*_autocast_", "<run>_autocast_", s)
        if s.rsplit("/", 1)[-1].startswith("python_infer_"):  # log names: keep their structure
            s = re.sub(r"(usemkldnn|usetrt|precision|mode)_[A-Za-z0-9]+", r"\1_*", s)
        if self.model and len(self.model) > 2:
            s = s.replace(self.model, "<model>")
        s = re.sub(r"(?<=[=_ ])\d+(?:[.,]\d+)*(?=$|[_ ./])", "N", s)
        s = re.sub(r"^\d+(?:[.,]\d+)*$", "N", s)
        if len(s) > limit:
            s = s[: limit - 3] + "..."
        return s


def _expected(plan, fail: Optional[str]) -> tuple[list, list, list]:
    """What running the Plan gives: ([(step, ok)] run (ok None: skipped), [status line], [log path])."""
    from tipcgen.plan.steps import skip_reason

    ran: list = []
    lines: list = []
    logs: list = []
    failed: set = set()
    for step in plan.steps:
        if step.service == "stop" and not step.argv:
            continue  # a service stopped by the runner's own process handling: no command to compare
        reason = skip_reason(step, failed)
        if reason:
            # Upstream runs what we skip (a deliberate difference: its status line says so); its
            # command and log are still compared, so the skip is the only difference it makes.
            lines.append(plan.status_line(step, False, skipped=reason))
            ran.append((step, None))
            if step.log:
                logs.append(step.log)
            continue
        # as the recorder (a nested runner's also fails on the config it is given)
        seen = step.argv[1:] if step.argv else ()
        if step.argv and step.argv[0] == "bash":
            seen = recorded_argv(step.argv, step.files)[1:]
        ok = bool(step.argv) and not (fail and any(fail in a for a in seen))
        ran.append((step, ok))
        if step.quiet:  # no status line, and its failure fails nothing (a service's stop, an edit)
            if step.log:  # what it writes still (a serving chain's unchecked conversion)
                logs.append(step.log)
            continue
        if not ok:
            failed.add(step.index)
        if step.log:
            logs.append(step.log)
        logs.extend(path for path, _text in step.files)
        if step.writes_status_line:
            lines.append(plan.status_line(step, ok))
    return ran, lines, logs


# Key prefixes of config lines (`-o Global.epochs`): as elements of their own they say nothing
# about which option differs, so they are listed only when nothing else differs.
_PREFIXES = ("-o", "-c", "-p")


def _token_diff(a: list, b: list, norm: _Norm) -> tuple[list, list]:
    """Shapes of the argv elements only in a / only in b (multisets), in order of appearance."""
    sa, sb = [norm.shape(t) for t in a], [norm.shape(t) for t in b]
    only_a, only_b = Counter(sa) - Counter(sb), Counter(sb) - Counter(sa)
    out_a = [t for t in dict.fromkeys(sa) if only_a[t] > 0]
    out_b = [t for t in dict.fromkeys(sb) if only_b[t] > 0]
    if any(t not in _PREFIXES for t in out_a + out_b):
        out_a = [t for t in out_a if t not in _PREFIXES]
        out_b = [t for t in out_b if t not in _PREFIXES]
    return out_a, out_b


def _brief(tokens: list, n: int = 4) -> str:
    shown = " ".join(tokens[:n])
    return f"[{shown}{' ...' if len(tokens) > n else ''}]"


def _line(argv: tuple) -> str:
    """A command on one line of a detail (a config's text the recorder appends keeps its line
    breaks shown as \\n), so that the detail's `upstream:` / `plan:` lines are one command each."""
    return " ".join(a.replace("\n", "\\n") for a in argv)


def _aligned(got: list, want: list) -> list:
    """(i, j) pairs of upstream command i and plan step j, in order; i or j None for a command only
    one side runs. Aligned on the argv (difflib), so one inserted or dropped command does not
    shift every later one into a difference; within a block that differs, commands pair by their
    interpreter and script (the same step with other options), the rest one side only."""
    out: list = []
    top = SequenceMatcher(None, [g[0] for g in got], [w[0] for w in want], autojunk=False)
    for tag, i1, i2, j1, j2 in top.get_opcodes():
        if tag == "equal":
            out += list(zip(range(i1, i2), range(j1, j2)))
            continue
        coarse = SequenceMatcher(None, [g[0][:2] for g in got[i1:i2]], [w[0][:2] for w in want[j1:j2]], autojunk=False)
        for sub, a1, a2, b1, b2 in coarse.get_opcodes():
            pairs = list(zip(range(i1 + a1, i1 + a2), range(j1 + b1, j1 + b2))) if sub in ("equal", "replace") else []
            out += pairs
            n = len(pairs)
            out += [(i, None) for i in range(i1 + a1 + n, i1 + a2)]
            out += [(None, j) for j in range(j1 + b1 + n, j1 + b2)]
    return out


def _compare_commands(up: list, ran: list, norm: _Norm) -> list:
    """Every command that differs between upstream's run (`up`) and the plan's steps (`ran`): one
    Difference per differing command (argv, CUDA_VISIBLE_DEVICES, cwd) and per command only one
    side runs, in upstream's order, each detail with both sides."""
    want = [
        (recorded_argv(step.argv, step.files), step.cuda_visible_devices, step.cwd or ".", step) for step, _ok in ran
    ]
    got = [(tuple(norm.text(a, "argv") for a in c.argv), c.cuda_visible_devices, c.cwd) for c in up]
    out: list = []
    pairs = _aligned(got, want)
    for i, j in pairs:
        if j is None:
            extra = got[i][0]
            out.append(
                Difference(
                    "commands",
                    f"steps: upstream runs more ({norm.shape(extra[1]) if len(extra) > 1 else '?'} ...)",
                    f"upstream's command {i} (the plan has none here; upstream runs {len(got)} commands, the plan "
                    f"{len(want)})\n    upstream: {_line(extra)}\n    plan:     <none>",
                    (f"upstream +{_line(extra)}",),
                )
            )
            continue
        step = want[j][3]
        where = f"step {j} ({step.kind}" + (f", log {step.log}" if step.log else "") + ")"
        if i is None:
            out.append(
                Difference(
                    "commands",
                    f"steps: plan runs more ({step.kind})",
                    f"{where}: only the plan runs it (the plan runs {len(want)} commands, upstream {len(got)})\n"
                    f"    upstream: <none>\n    plan:     {_line(want[j][0])}",
                    (f"plan +{_line(want[j][0])}",),
                )
            )
            continue
        out += _pair_differences(got[i], want[j], where, norm)
    cwd = _compare_cwd(up, [i for i, j in pairs if j is None])
    return out + ([cwd] if cwd else [])


def _pair_differences(g: tuple, w: tuple, where: str, norm: _Norm) -> list:
    """The differences of one upstream command and the plan step aligned with it."""
    argv_u, cvd_u, cwd_u = g
    argv_p, cvd_p, cwd_p, step = w
    out: list = []
    if argv_u != argv_p:
        j = next((k for k, (x, y) in enumerate(zip(argv_u, argv_p)) if x != y), min(len(argv_u), len(argv_p)))
        xu = argv_u[j] if j < len(argv_u) else "<end>"
        xp = argv_p[j] if j < len(argv_p) else "<end>"
        detail = (
            f"{where}: argv[{j}]: upstream {xu!r}, plan {xp!r}\n"
            f"    upstream: {_line(argv_u)}\n    plan:     {_line(argv_p)}"
        )
        only_u, only_p = _token_diff(list(argv_u[1:]), list(argv_p[1:]), norm)
        if j == 0:
            out.append(Difference("commands", f"{step.kind}: interpreter", detail))
        elif only_u or only_p:
            parts = ([f"upstream +{_brief(only_u)}"] if only_u else []) + (
                [f"plan +{_brief(only_p)}"] if only_p else []
            )
            items = tuple(f"{step.kind} upstream +{t}" for t in only_u) + tuple(
                f"{step.kind} plan +{t}" for t in only_p
            )
            out.append(Difference("commands", f"{step.kind} argv: " + ", ".join(parts), detail, items))
        else:
            cat = f"{step.kind} argv: order or values ({norm.shape(xu)} vs {norm.shape(xp)})"
            out.append(Difference("commands", cat, detail, (cat,)))
    if cvd_u != cvd_p:
        out.append(
            Difference(
                "commands",
                f"{step.kind}: CUDA_VISIBLE_DEVICES upstream {cvd_u} vs plan {cvd_p}",
                f"{where}: CUDA_VISIBLE_DEVICES: upstream {cvd_u!r}, plan {cvd_p!r}: {' '.join(argv_p)}",
            )
        )
    if cwd_u != cwd_p:
        out.append(
            Difference(
                "commands",
                f"{step.kind}: upstream runs it from {cwd_u}/",
                f"{where}: upstream runs it from {cwd_u}/, the plan from {cwd_p}/: {' '.join(argv_p)}",
            )
        )
    return out


def recorded_argv(argv: tuple, files: tuple = ()) -> tuple:
    """What the recorder sees of a step's argv: a leading `timeout DURATION` (PaddleDetection's
    `timeout 5m`) is recorded as it is (the timeout shim records its wrapper); `bash test_tipc/X.sh ARGS`
    is X.sh's recorder (`nested_recorder`): its name, ARGS, then the text of the files the step
    writes first (the config it reads)."""
    if len(argv) > 1 and argv[0] == "bash" and argv[1].endswith(".sh"):
        return (argv[1].rsplit("/", 1)[-1], *argv[2:], *(text for _path, text in files))
    if len(argv) > 3 and argv[0] == "timeout" and argv[2] == "bash" and argv[3].endswith(".sh"):
        return (*argv[:2], *recorded_argv(argv[2:], files))
    if argv and "/" in argv[0] and argv[0].rsplit("/", 1)[1] in (*BUILT, *_PREBUILT_NAMES):  # a built demo, by its name
        return (argv[0].rsplit("/", 1)[1], *argv[1:])
    return tuple(argv)


def _compare_cwd(up: list, unpaired: list) -> Optional[Difference]:
    """Commands only upstream runs (no plan step aligned with them) from another directory than
    the repo root (PaddleDetection's op build in ppdet/.../ext_op/): one Difference for them all."""
    elsewhere = Counter(up[i].cwd for i in unpaired if up[i].cwd != ".")
    if not elsewhere:
        return None
    cwd, n = elsewhere.most_common(1)[0]
    example = next(c for c in up if c.cwd == cwd)
    return Difference(
        "commands",
        f"cwd: upstream runs commands from {cwd}/",
        f"upstream runs {n} of its {len(up)} commands from {cwd}/, the plan all from the repo root; e.g. "
        f"{' '.join(example.argv)}",
    )


def _compare_logs(up_logs: list, plan_logs: list, norm: _Norm) -> Optional[Difference]:
    got = {norm.text(p, "logs") for p in up_logs}
    want = {p.replace("//", "/") for p in plan_logs}
    only_u, only_p = sorted(got - want), sorted(want - got)
    if not only_u and not only_p:
        return None
    su = list(dict.fromkeys(norm.shape(p, 100) for p in only_u))
    sp = list(dict.fromkeys(norm.shape(p, 100) for p in only_p))
    cat = "logs: " + ", ".join(
        ([f"upstream +{_brief(su, 3)}"] if su else []) + ([f"plan +{_brief(sp, 3)}"] if sp else [])
    )
    detail = f"log files: only upstream {only_u[:3]}{'...' if len(only_u) > 3 else ''}; only plan {only_p[:3]}" + (
        "..." if len(only_p) > 3 else ""
    )
    items = tuple(f"upstream +{x}" for x in su) + tuple(f"plan +{x}" for x in sp)
    return Difference("logs", cat, detail, items)


_STATUS = re.compile(r"^\x1b\[33m (Run \w+(?: \([^)]*\))?) with command - ")
# How each script ends a status line after the command (status_check's `- ${log_path}` forms),
# tried in this order; the plan (and the models script) end it with "!  ".
_TRAILERS = (
    re.compile(r" - (\S*) ! $"),  # PaddleClas
    re.compile(r"!  $"),  # models, the plan
    re.compile(r" - (\S*)  $"),  # PaddleSeg, PaddleDetection
    re.compile(r" - (\S*) $"),  # PaddleOCR, PaddleVideo
)


def _split_status(line: str, model: str) -> Optional[tuple]:
    """(verdict, command, trailer, log) of a status line, None when it is not one."""
    m = _STATUS.match(line)
    if not m or not line.endswith("\x1b[0m"):
        return None
    rest = line[m.end() : -len("\x1b[0m")]
    if not rest.startswith(f"{model} - "):
        return None
    rest = rest[len(model) + 3 :]
    for pattern in _TRAILERS:
        t = pattern.search(rest)
        if t:
            return m.group(1), rest[: t.start()], rest[t.start() :], (t.group(1) if t.groups() else None)
    return m.group(1), rest, "", None


def _compare_status(run: UpstreamRun, plan, lines: list, norm: _Norm) -> list:  # noqa: C901 (one pass, one kind each)
    """One Difference per kind of status-line difference (its first occurrence)."""
    out: dict = {}

    def add(kind: str, category: str, detail: str) -> None:
        out.setdefault(kind, Difference("status", category, detail))

    got_path = [norm.text(p, "status log path") for p in run.status_logs]
    # A plan with nothing to write (no step, no preamble) writes no status log, like a script that ran nothing.
    # the file a path names: a `//` in it (a log directory of an unset variable's name) is one `/`
    want_path = re.sub("/{2,}", "/", plan.status_log)
    if got_path != ([want_path] if plan.steps or plan.preamble else []):
        add("path", "status: results_python.log elsewhere",
            f"upstream writes its status lines to {got_path}, the plan to {plan.status_log}")  # fmt: skip
    got = [norm.text(line, "status lines") for line in run.status_lines]
    # the model a status line names: none where the chain's status_check is given none
    shown_model = plan.model_name if "{model}" in getattr(plan, "status_format", "{model}") else ""
    preamble = list(getattr(plan, "preamble", ()))
    if preamble and got[: len(preamble)] == preamble:
        got = got[len(preamble) :]  # the plan writes these first too (e.g. PaddleSeg's mode banner)
    parsed: list = []
    other: list = []
    for line in got:
        split = _split_status(line, shown_model)
        if split is None:
            other.append(line)
        else:
            parsed.append((line, split))
    if other:
        shape = re.sub(r"(lite|whole)_\w+", "MODE", other[0].strip())
        add("other", f"status: other line {shape[:60]!r}", f"upstream also writes {other[:2]!r}")
    want = [f"\x1b[33m {line}\x1b[0m" for line in lines]
    env = KNOWN_ENVIRONMENT.get(run.repo)
    writers = [s for s in plan.steps if s.writes_status_line]  # the step of each status line
    for i, ((g, pu), w) in enumerate(zip(parsed, want)):
        if g == w:
            continue
        pw = _split_status(w, shown_model)
        assert pw is not None
        step = writers[i] if i < len(writers) else None
        kind = step.kind if step else "?"
        if pu[0] != pw[0]:
            why = f" (env: {env})" if env and kind == "train" else ""
            add("verdict", f"status: {kind} verdict upstream '{pu[0]}' vs plan '{pw[0]}'{why}",
                f"status line {i} ({kind}): upstream {pu[0]!r}, plan {pw[0]!r}: {pw[1]}")  # fmt: skip
        if pu[1] != pw[1]:
            same_words = pu[1].split() == pw[1].split()
            add("whitespace" if same_words else "command",
                f"status: {kind} command {'whitespace' if same_words else 'text'}",
                f"status line {i} ({kind}): upstream {pu[1]!r}\n    plan     {pw[1]!r}")  # fmt: skip
        if pu[2] != pw[2]:
            log = pu[3]
            if log:
                shown = pu[2].replace(log, "<its log>" if step and log == step.log else norm.shape(log), 1)
            else:
                shown = pu[2]
            add("trailer", f"status: trailer {shown!r} vs {pw[2]!r}",
                f"status line {i} ({kind}): ends {pu[2]!r}, the plan's {pw[2]!r}")  # fmt: skip
    if len(parsed) != len(want):
        add("count", "status: number of lines",
            f"upstream writes {len(parsed)} status lines, the plan {len(want)}")  # fmt: skip
    return list(out.values())


def compare(
    config,
    repo: str,
    mode: str,
    gpuid: Optional[str] = None,
    fail: Optional[str] = None,
    *,
    upstream: Optional[Path] = None,
    layout: Optional[str] = None,
    runner: Optional[str] = None,
    timeout: float = DEFAULT_TIMEOUT,
    run: Optional[UpstreamRun] = None,
    chain: Optional[str] = None,
    quant_made: bool = True,
    device: Optional[str] = None,
) -> Diff:
    """Run upstream `repo` (a folder of ../shared/upstream, e.g. "PaddleOCR/seed-era") on `config`
    and compare with plan_source(config, mode, layout=<our dialect for repo>).

    Differences, in the order a reader needs them: commands (argv, CUDA_VISIBLE_DEVICES, cwd,
    number of steps), then log files, then status lines. A repo without a dialect gets a Diff
    with plan None and one "plan" difference. `chain`: a chain layout's name (dialects/chains/):
    its script runs, and the Plan follows that layout (dialects/chains/). `quant_made`: see
    run_upstream. `device` (npu, xpu): the family's device wrapper runs (on the scratch copy it
    edits in place), the Plan is of the config as our wrapper rewrites it (dialects/devices.py).
    """
    from tipcgen.errors import UsageError

    layout = layout if layout is not None else REPOS.get(repo)
    runner = runner if runner is not None else RUNNERS.get(repo)
    scripts: dict = {}
    if chain is not None:  # its own script and status log (the chain layout's dialect names them)
        scripts = chain_run_options(chain)
        layout, runner = chain, None
    if device is not None:  # the wrapper runs the real runner, which runs python3.9 after its rewrite
        scripts = {"script": f"test_train_inference_python_{device}.sh", "tools": ("python3.9",)}
    if run is None:
        run = _run_for_compare(
            config, repo, mode, gpuid, fail, upstream, timeout, chain, {**scripts, "quant_made": quant_made}
        )
    diff = Diff(repo, str(config), mode, gpuid, layout, run, runner=runner, device=device)
    built = _build_commands(run, scripts.get("script", ""))
    if built:
        diff.differences.append(built)
    commands = list(run.commands)
    if run.timed_out:
        diff.differences.append(Difference("upstream", "upstream timed out", f"upstream timed out after {timeout:g} s"))
    if layout is None:
        diff.differences.append(Difference("plan", "no dialect", f"{repo} has no dialect: upstream only"))
        return diff
    try:
        plan = _plan_for_compare(config, mode, gpuid, layout, runner, chain, device, run)
    except UsageError as exc:
        diff.differences.append(Difference("plan", "plan refuses the config", f"the plan refuses it: {exc}"))
        return diff
    diff.plan = plan
    plan = _resolved(plan, run.root)
    norm = _Norm(run.root, plan.model_name, mode)
    ran, lines, logs = _expected(plan, fail)
    commands, slept = _sleeps(commands, plan)
    diff.differences.extend(slept)
    commands, replaced = _replaced(commands, ran, layout, runner)
    ran = replaced["ran"]
    differing = _compare_commands(commands, ran, norm)
    diff.differences.extend(replaced["differences"])
    diff.differences.extend(differing)
    found = _compare_logs(run.logs, logs, norm)
    if found:
        diff.differences.append(found)
    diff.differences.extend(_compare_status(run, plan, lines, norm))
    for where, n in sorted(norm.hits.items()):
        diff.notes.append(f"upstream wrote the absolute repo root in {n} {where}; compared as `.`")
    if run.stray:
        diff.notes.append(f"upstream also created {run.stray[:3]}")
    return diff


def _plan_for_compare(config, mode: str, gpuid, layout: str, runner, chain, device, run: UpstreamRun):
    """The Plan compare() holds upstream's run to: a chain's, a device wrapper's or the runner's."""
    from tipcgen.check.source import plan_source

    if chain is not None:  # the chain's layout, whatever the config's name would tell
        from tipcgen.dialects import get_layout
        from tipcgen.inputs import read_text
        from tipcgen.plan.planner import plan_config

        # the config's path as the script was given it (a table's Config word passes it on)
        return plan_config(read_text(str(config)), get_layout(chain), mode, gpuid=gpuid, source=str(config),
                           config=run.config_arg or str(config))  # fmt: skip
    if device is not None:  # the path the wrapper was given: PaddleClas reads the model from it
        return plan_source(str(config), mode, layout=layout, gpuid=gpuid, runner=runner, device=device,
                           config=run.config_arg)  # fmt: skip
    return plan_source(str(config), mode, layout=layout, gpuid=gpuid, cuda_visible_devices=None, runner=runner)


def _run_for_compare(
    config, repo: str, mode: str, gpuid, fail, upstream: Optional[Path], timeout: float, chain, scripts: dict
) -> UpstreamRun:
    """The upstream run compare() holds the Plan to (a chain's: in the directories its steps use)."""
    if upstream is None:
        raise ValueError("compare: give the scripts' folder (upstream) or a finished run")
    if chain is not None:  # the directories its steps run in: a checkout has them
        scripts = {**scripts, "dirs": step_dirs(config, mode, gpuid)}
    return run_upstream(Path(upstream) / repo, config, mode, gpuid=gpuid, fail=fail, timeout=timeout, **scripts)


def _build_commands(run: UpstreamRun, script: str) -> Optional[Difference]:
    """Take the commands of a chain script's build (BUILD_TOOLS) out of `run.commands`: one
    difference naming them (the Plan builds nothing); None when the script built nothing."""
    tools = BUILD_TOOLS.get(script, ())
    built = [c for c in run.commands if c.argv and c.argv[0] in tools]
    if not built:
        return None
    run.commands = [c for c in run.commands if not (c.argv and c.argv[0] in tools)]
    names = " ".join(dict.fromkeys(c.argv[0] for c in built))
    return Difference(
        "commands",
        f"build: upstream builds the demo first ({names})",
        f"upstream runs {len(built)} build commands first: " + "; ".join(" ".join(c.argv) for c in built[:4]),
    )


def _sleeps(commands: list, plan) -> tuple[list, list]:
    """Upstream's recorded `sleep`s, when the Plan sleeps nowhere: taken out of the commands (so
    the rest are compared step by step) into one difference, `sleep: upstream sleeps ARG...`, that
    only a runner's named deviation explains. A Plan with sleep steps is compared as it is."""
    slept = [c for c in commands if c.argv and c.argv[0] == "sleep"]
    if not slept or any(s.argv and s.argv[0] == "sleep" for s in plan.steps):
        return commands, []
    args = " ".join(dict.fromkeys(" ".join(c.argv[1:]) or "<none>" for c in slept))
    return [c for c in commands if c not in slept], [
        Difference(
            "commands",
            f"sleep: upstream sleeps {args}",
            f"upstream runs `sleep` {len(slept)} times ({args}); the plan never waits",
            tuple(f"sleep {' '.join(c.argv[1:])}" for c in slept),
        )
    ]


def _replaced(commands: list, ran: list, layout: str, runner: Optional[str]) -> tuple[list, dict]:
    """Commands a runner's deliberate replacement of upstream's stand for (its ORACLE_REPLACED:
    (label, upstream pattern, plan pattern), e.g. dy2static's loss comparison) taken out of both
    sides before the commands are compared, with one Difference (the label) where they were."""
    from tipcgen.dialects import get_layout
    from tipcgen.plan.planner import runner_for

    out: dict = {"ran": list(ran), "differences": []}
    for label, up_pattern, plan_pattern in getattr(runner_for(get_layout(layout), runner), "ORACLE_REPLACED", ()):
        up = [c for c in commands if re.search(up_pattern, " ".join(c.argv))]
        ours = [x for x in out["ran"] if x[0].argv and re.search(plan_pattern, " ".join(x[0].argv))]
        if not up and not ours:
            continue
        commands = [c for c in commands if c not in up]
        out["ran"] = [x for x in out["ran"] if x not in ours]
        out["differences"].append(
            Difference("commands", label, f"{label}: upstream runs {len(up)} such commands, the plan {len(ours)}")
        )
    return commands, out


def step_dirs(config, mode: str, gpuid: Optional[str]) -> tuple:
    """The directories a chain config's planned steps run in (none when the plan refuses it)."""
    from tipcgen.check.source import plan_source
    from tipcgen.errors import UsageError

    try:
        plan = plan_source(str(config), mode, gpuid=gpuid)
    except UsageError:
        return ()
    return tuple(sorted({s.cwd for s in plan.steps if s.cwd}))


def _resolved(plan, root: str):
    """`plan` with its steps' run-time parts (Step.fills, Step.globs) as they were in `root`, the
    scratch repo (no converted model there: empty feed variables, unmatched globs)."""
    if not any(s.fills or s.globs for s in plan.steps):
        return plan
    from dataclasses import replace

    from tipcgen.plan.steps import runtime_argv

    return replace(plan, steps=tuple(replace(s, argv=runtime_argv(s, root)) for s in plan.steps))
