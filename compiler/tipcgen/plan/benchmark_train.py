"""The Plan of a benchmark run: `bash test_tipc/benchmark_train.sh CONFIG benchmark_train [PARAMS]`.

Each repo's upstream benchmark_train.sh reads the config's `train_benchmark_params` section (batch
sizes, precisions, epochs, profiler options, FLAGS_* exports, ...), rewrites some lines of a copy
of the config, then, per batch size x precision x device count, runs test_train_inference_python.sh
in `benchmark_train` mode (first with the profiler on a single GPU), writes its output to
`<SAVE_LOG>/{profiling_log,train_log}/<repo>_<model>_bs<N>_<precision>_<run_mode>_<devices>_...`
and parses it with the benchmark tooling's `analysis.py`. `plan_benchmark` lists those runs: argv,
log, the config text each run reads and the status line; `BENCH` holds where the repos differ
(`BenchDialect`) and `DEVIATIONS` what the generated script (templates/benchmark_train*.sh.j2) does
differently on purpose. Pure Python: the caller passes the environment the script would read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional

from tipcgen.errors import UsageError
from tipcgen.plan.runner import Deviation
from tipcgen.script.shellwords import extra_args, grep_w_lines, ifs_split, words
from tipcgen.spec.sections import flag_name_problem

HEADER = "train_benchmark_params"
RUNNER = "test_tipc/test_train_inference_python.sh"
MODE = "benchmark_train"
PROBE = ("python", "-c", "import paddle;print(paddle.version.commit)")  # exported as frame_commit
SECTION_FIELDS = ("batch_size", "fp_items", "epoch", "model_type", "num_workers", "repeat", "profile", "flags")


@dataclass(frozen=True)
class BenchDialect:
    """One upstream benchmark_train.sh: what it reads and rewrites, and how it names and runs."""

    name: str  # the dialect
    upstream: str  # the folder of ../shared/upstream holding the script
    runner: Optional[str]  # the dialect's runner the inner test_train_inference_python.sh follows
    fields: tuple  # the section's values after the header, in order (profile: `key:value` kept whole)
    grep_word: bool = True  # `grep -n -w` finds the header (without -w: to_static_train_... matches too)
    null_lines: tuple = (24, 30)  # config lines (1-based) set to `key:null` (eval and export off)
    mode_prefix: bool = True  # batch size and epoch lines get `benchmark_train=<N>`
    default_devices: tuple = ("N1C4",)  # without PARAMS
    profile_line: int = 13
    profile_quoted: bool = True  # the profile line becomes `"<key>:<value>"`
    timer_option: bool = True  # PROFILING_TIMER_ONLY (no: no profiling run; False: timer_only=False)
    timeout_profile: str = "5m"
    timeout_train: str = ""  # a single-GPU run's timeout ("" none)
    timeout_multi: str = ""
    skip_steps: str = "2"
    units: tuple = ("samples/s", "images/s")  # analysis.py --speed_unit: single GPU, several
    status_model: tuple = (True, True)  # the status line names the model: single GPU, several
    status_trailer: str = " "  # status_check's end after the log path (none is passed)
    # The analysis command is written over lines ending in `\` inside double quotes: the status
    # line keeps each next line's indent, so its options are separated by 1 + this many blanks.
    analysis_indent: int = 24
    static_mode: str = "sed"  # dynamicTostatic: sed (trainer line), params (any PARAMS naming it), list, none
    # PARAMS' precision as the runs read it (PaddleOCR: fp16 is its `amp`), and back in log names
    # (None: as given).
    precision_in: tuple = (("null", "fp32"),)
    precision_named: Optional[Callable[[str], str]] = None
    substitutions: tuple = ()  # (old, new) rewritten in the config first (sed without specials)
    rewrite: Optional[Callable[[_State, dict], None]] = None  # more edits before the runs
    epochs: Optional[Callable[[BenchDialect, _Params, str, dict, str], tuple[str, tuple]]] = None
    skip_null_flags: bool = False  # a `null` (or empty) flags value is not exported
    extra_args: bool = False  # the last line's `key:value;...` items (PaddleSeg's parse_extra_args)
    colon_logs: bool = False  # matting models log `key=value`: the train log is rewritten to `key: value`
    timeouts: tuple = ()  # (device_num, timeout) of multi-GPU runs that get their own timeout
    accumulation_line: Optional[int] = None  # PaddleVideo: TimeSformer's global batch appended here
    git_env: bool = False  # model_branch and model_commit exported from `git` (the benchmark tooling reads them)


# PaddleClas's script rewrites these (sed regexes without special characters but `.`) first.
CLAS_PRE = (
    (" -o DataLoader.Train.sampler.shuffle=False", " -o Global.print_batch_step=1"),
    ("-o DataLoader.Train.loader.use_shared_memory=False", " -o Global.eval_during_train=False"),
)
CLAS_WORKERS = " -o DataLoader.Train.loader.num_workers=0"
VIDEO_TRAIN_LINE = 16
# PaddleDetection: models trained on full COCO scale their epochs; the others one epoch, and the
# datasets' `repeat` (line 10 of these files, with this indent) scaled by the GPU count instead.
DET_FULL_COCO = ("higherhrnet", "hrnet", "tinypose", "ppyoloe_r_crn_s_3x_spine_coco")
DET_DATASETS = (
    ("configs/datasets/coco_detection.yml", "  "),
    ("configs/datasets/coco_instance.yml", "  "),
    ("configs/datasets/mot.yml", "    "),
)
DET_DATASET_LINE = 10

DEVIATIONS = (
    Deviation(
        "config-copy-outside-tree",
        "the config is copied to a fresh temporary directory (removed at exit) and rewritten there; "
        "the user's config and test_tipc/ are never written",
        "upstream writes the copy to ./test_tipc/benchmark_train.txt in the source tree: two runs at "
        "once overwrite each other's config, and the file is left behind",
        (r"^logs: upstream \+\./test_tipc/benchmark_train\.txt$",),
    ),
    Deviation(
        "literal-config-edits",
        "config lines are rewritten literally (`key:value`, profile options, appended flags)",
        "upstream builds `sed` and `eval` commands from the values: a `/`, `&`, `\\`, `'` or `;` in a "
        "value breaks the edit or the command",
    ),
    Deviation(
        "dataset-repeat-restored",
        "PaddleDetection: the datasets' `repeat` line is rewritten for the run, as upstream, and the "
        "files are restored when the script ends",
        "upstream leaves configs/datasets/*.yml modified in the user's checkout",
        (r"^datasets: upstream leaves them rewritten$",),
    ),
    Deviation(
        "analysis-needs-benchmark-root",
        "without BENCHMARK_ROOT the analysis.py step is skipped (status line `Run skipped (BENCHMARK_ROOT unset)`)",
        "upstream runs `python /scripts/analysis.py`, which cannot exist, and reports a failure",
    ),
    Deviation(
        "benchmark-exit-code",
        "exit 1 when a run, a log filter or an analysis failed (after a summary); 2 for a wrong "
        "MODE, a missing config or section",
        "upstream always exits 0 (or dies on an arithmetic error for a config without the section)",
    ),
    Deviation(
        "model-name-kept",
        "every run's logs and analysis are named after the config's model_name",
        "PaddleOCR's status_check sets the global model_name to an argument its benchmark script "
        "never passes: after the first analysis, logs are named `<repo>__bs...` and analyses "
        "`--model_name _bs...`",
        (r"^upstream loses the model name after the first analysis$",),
    ),
    Deviation(
        "flags-exported-not-evaluated",
        "each `FLAGS_*=VALUE` of the section's `flags` is exported as is (blanks before the name "
        "and after the value dropped, as upstream's eval drops them); an item without `=` is "
        "ignored, another name refused (exit 2)",
        "upstream runs `eval export <item>`: an item is shell code, and a variable such as BASH_ENV "
        "or LD_PRELOAD runs code in every later process",
    ),
)


@dataclass(frozen=True)
class BenchStep:
    index: int
    kind: str  # probe | profile | train | filter | analysis
    argv: tuple  # profile/train: the inner script's argv, CONFIG standing for the config copy
    log: Optional[str] = None  # where stdout+stderr go (profile/train)
    config: Optional[str] = None  # the config text the inner script reads (profile/train)
    run: str = ""  # bs<N>_<precision>_<run_mode>_<devices>: the run it belongs to
    status: Optional[str] = None  # the results.log line, {verdict} for the verdict (analysis)
    colon_log: bool = False  # PaddleSeg matting: `=` becomes `: ` in the log after the run
    skip: Optional[str] = None  # why it does not run (analysis without BENCHMARK_ROOT)


@dataclass(frozen=True)
class BenchPlan:
    dialect: str
    model_name: str
    params: str
    save_log: str
    env: tuple  # (NAME, VALUE) exported for every run (the section's flags)
    dataset_edits: tuple  # (path, line, text): PaddleDetection's repeat lines
    steps: tuple
    status_log: str

    def runs(self) -> list:
        return [s for s in self.steps if s.kind in ("profile", "train")]


CONFIG = "CONFIG"  # stands for the config copy's path in a run's argv


class _Config:
    """The config copy as sed sees it: physical lines, a missing final newline kept."""

    def __init__(self, text: str):
        self.lines = text.split("\n")
        self.final_newline = bool(self.lines) and self.lines[-1] == ""
        if self.final_newline:
            self.lines.pop()

    def text(self) -> str:
        return "\n".join(self.lines) + ("\n" if self.final_newline else "")

    def set_value(self, number: int, value: str) -> None:
        """func_sed_params: line `number` becomes `<its key>:<value>` (no such line: unchanged)."""
        if 1 <= number <= len(self.lines):
            parts = ifs_split(self.lines[number - 1], ":")
            self.lines[number - 1] = f"{parts[0] if parts else ''}:{value}"

    def set_line(self, number: int, text: str) -> None:
        if 1 <= number <= len(self.lines):
            self.lines[number - 1] = text

    def append(self, number: int, text: str) -> None:
        if 1 <= number <= len(self.lines):
            self.lines[number - 1] += text

    def drop_first(self, number: int, text: str) -> None:
        if 1 <= number <= len(self.lines):
            self.lines[number - 1] = self.lines[number - 1].replace(text, "", 1)

    def substitute(self, old: str, new: str) -> None:
        self.lines = [line.replace(old, new) for line in self.lines]


def parser_key(line: str) -> str:
    parts = ifs_split(line, ":")
    return parts[0] if parts else ""


def parser_value(line: str) -> str:
    """func_parser_value: the line's second `:` field."""
    parts = ifs_split(line, ":")
    return parts[1] if len(parts) > 1 else ""


def expr_int(text: str) -> Optional[int]:
    """An integer as expr(1) reads it (None: expr fails)."""
    return int(text) if re.fullmatch(r"[+-]?[0-9]+", text) else None


def devices(device_num: str) -> tuple[Optional[int], Optional[int]]:
    """(M, P) of `N<M>C<P>` as the scripts cut it: `${s:1:6}` split on `C`."""
    parts = ifs_split(device_num[1:7], "C")
    m = expr_int(parts[0]) if parts else None
    p = expr_int(parts[1]) if len(parts) > 1 else None
    return m, p


def gpu_ids(device_num: str) -> str:
    """set_gpu_id: `seq -s , 0 <(P-1)/M>` (expr's integer division; an error: no ids)."""
    m, p = devices(device_num)
    if m is None or p is None or m == 0:
        return ""
    last = int((p - 1) / m)  # expr truncates toward zero
    return ",".join(str(i) for i in range(last + 1))


def scaled(device_num: str, value: str, by_nodes: bool) -> str:
    """set_dynamic_epoch: value x P (PaddleDetection) or value x M x P (PaddleOCR); '' on an expr error."""
    m, p = devices(device_num)
    n = expr_int(value)
    if n is None or p is None or (by_nodes and m is None):
        return ""
    return str(n * p * (m if by_nodes and m is not None else 1))


def digits(text: str) -> str:
    """`echo ${bs} | tr -cd "[0-9]"` (the brackets are in the set too)."""
    return "".join(c for c in text if c in "[]0123456789")


@dataclass
class _Params:
    """What PARAMS (or the section, without it) asks for."""

    batch_sizes: list
    precisions: list
    device_nums: list
    model_types: list  # PaddleClas's trainer loop ([""] elsewhere)
    run_mode: str = "DP"
    model_type: str = ""
    device_num: str = ""  # PaddleDetection/PaddleOCR: what the epoch scaling reads


def _read_params(d: BenchDialect, params: str, section: dict) -> _Params:
    if params == "" or (params == "dynamicTostatic" and d.static_mode != "none"):
        out = _Params(
            ifs_split(section["batch_size"], "|"), ifs_split(section["fp_items"], "|"), list(d.default_devices),
            ifs_split(section.get("model_type", ""), "|") if d.static_mode == "list" else [""],
            model_type=params, device_num=d.default_devices[0],
        )  # fmt: skip
        if params and d.static_mode == "list":
            out.model_types = []  # upstream never sets its trainer list for this PARAMS: nothing runs
        return out
    parts = [*ifs_split(params, "_"), "", "", "", "", ""]
    model_type, precision, run_mode, device_num = parts[0], parts[2], parts[3], parts[4]
    precision = dict(d.precision_in).get(precision, precision)
    trainer = "to_static_train" if model_type == "dynamicTostatic" else "norm_train"
    return _Params(
        [digits(parts[1])], ifs_split(precision, ";"), ifs_split(device_num, ";"),
        [trainer] if d.static_mode == "list" else [""], run_mode, model_type, device_num,
    )  # fmt: skip


def section_header_lines(text: str, grep_word: bool = True) -> list[int]:
    """The (1-based) file lines naming the section, as the scripts find them: `grep -n -w`, or
    without -w (then `to_static_train_benchmark_params` matches too)."""
    if grep_word:
        return grep_w_lines(text, HEADER)
    return [n for n, line in enumerate(text.split("\n"), 1) if HEADER in line]


def section_rows(fields: tuple, text: str, at: int) -> list[tuple[str, str, Optional[int]]]:
    """(field, the line the script reads as it, that line's file line number or None) for the
    header on file line `at`: upstream reads `lines[at + i]` of the config's NON-EMPTY lines, a
    file line number used as an index among them (so a blank line above shifts what it reads).
    The one reader of the section by position: benchmark_train.sh's plan and `tipcgen bench
    CONFIG` both use it."""
    numbered = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line != ""]
    rows = []
    for i, name in enumerate(fields):
        n, line = numbered[at + i] if at + i < len(numbered) else (None, "")
        rows.append((name, line, n))
    return rows


def read_section(d: BenchDialect, text: str, source: str) -> dict:
    """The section's values, read as the script does: `lines[<header's file line number>]` on."""
    numbers = section_header_lines(text, d.grep_word)
    if not numbers:
        raise UsageError(f"{source}: no `{HEADER}` section: nothing to benchmark")
    if len(numbers) > 1:
        raise UsageError(
            f"{source}: `{HEADER}` is on lines {', '.join(map(str, numbers))}; {d.upstream}'s script "
            "cannot tell which section to read (it stops on an arithmetic error)"
        )
    out = {}
    for name, line, _n in section_rows(d.fields, text, numbers[0]):
        out[name] = f"{parser_key(line)}:{parser_value(line)}" if name == "profile" else parser_value(line)
    return out


def flag_exports(flags: str, source: str = "config") -> tuple:
    """(NAME, VALUE) of the `flags` items that are assignments (`NAME=VALUE`); a UsageError for
    one whose NAME is not Paddle's FLAGS_* (spec/sections.py's rule, lint TIPC023)."""
    out = []
    for item in ifs_split(flags, ";"):
        problem = flag_name_problem(item)
        if problem:
            raise UsageError(f"{source}: {problem}")
        # blanks around an item are dropped, as upstream's `eval export <item>` drops them
        # (`FLAGS_cudnn_exhaustive_search=1 ` is 1, not "1 ", which Paddle reads as false)
        name, eq, value = item.strip(" \t").partition("=")
        if eq:
            out.append((name, value))
    return tuple(out)


def _check_log_names(source: str, model: str, p: _Params) -> None:
    """Logs are named <repo>_<model>_bs<N>_<precision>_<run_mode>_<devices>_: refuse a part that
    would put one elsewhere (the generated script refuses the same, exit 2)."""
    if "/" in model or model in (".", ".."):
        raise UsageError(
            f"{source}: model_name {model!r} would put logs outside train_log/ (it must be one plain name, without `/`)"
        )
    for item in (*p.batch_sizes, *p.precisions, *p.device_nums):
        if "/" in item:
            raise UsageError(
                f"{source}: {item!r} (a batch size, precision or device count) holds a `/`, but it names log files"
            )


@dataclass
class _State:
    """What the script carries from one run to the next."""

    d: BenchDialect
    config: _Config
    model: str
    repo: str
    save_log: str
    profiling: str
    benchmark_root: Optional[str]
    profile_option: str
    to_static: str = ""
    steps: list = None  # type: ignore[assignment]

    def add(self, kind: str, argv: tuple, **kw) -> None:
        self.steps.append(BenchStep(len(self.steps), kind, argv, **kw))

    def inner(self, kind: str, timeout: str, log: str, run: str, colon_log: bool = False) -> None:
        argv = (("timeout", timeout) if timeout else ()) + ("bash", RUNNER, CONFIG, MODE)
        self.add(kind, argv, log=log, config=self.config.text(), run=run, colon_log=colon_log)


def plan_benchmark(
    text: str,
    dialect: str,
    params: str = "",
    *,
    repo_name: str = "repo",
    save_log: str = ".",
    profiling: Optional[str] = None,
    benchmark_root: Optional[str] = None,
    source: str = "config",
) -> BenchPlan:
    """Plan `benchmark_train.sh CONFIG benchmark_train [PARAMS]` for the config `text` of `dialect`.

    The environment the script reads: the repo root's name (`repo_name`, in log names),
    BENCHMARK_LOG_DIR (`save_log`, default the repo root), PROFILING_TIMER_ONLY (`profiling`,
    None: True) and BENCHMARK_ROOT (`benchmark_root`, None: unset)."""
    if dialect not in BENCH:
        raise UsageError(f"{source}: dialect {dialect} has no benchmark_train.sh (dialects: {', '.join(BENCH)})")
    d = BENCH[dialect]
    config = _Config(text)
    if d.static_mode == "params" and "dynamicTostatic" in params:
        config.substitute("trainer:norm_train", "trainer:to_static_train")
    for old, new in d.substitutions:
        config.substitute(old, new)
    lines = [line for line in config.lines if line != ""]
    model = parser_value(lines[1]) if len(lines) > 1 else ""
    section = read_section(d, config.text(), source)
    env = flag_exports(section["flags"], source) if _flags_on(d, section) else ()
    st = _State(
        d, config, model, repo_name, save_log, profiling or "True", benchmark_root, section["profile"], steps=[]
    )
    st.add("probe", PROBE)
    for number in d.null_lines:
        config.set_value(number, "null")
    config.set_value(3, "python")
    if d.rewrite:
        d.rewrite(st, section)
    p = _read_params(d, params, section)
    _check_log_names(source, model, p)
    if (d.static_mode == "params" and "dynamicTostatic" in params) or (
        d.static_mode == "sed" and p.model_type == "dynamicTostatic"
    ):
        st.to_static = "d2sT_"
        if d.static_mode == "sed":
            config.substitute("trainer:norm_train", "trainer:to_static_train")
    epoch, edits = d.epochs(d, p, params, section, model) if d.epochs else (section["epoch"], ())
    extra = extra_args(lines) if d.extra_args else {}  # script/shellwords.py
    for bs in p.batch_sizes:
        for precision in p.precisions:
            for device_num in p.device_nums:
                for model_type in p.model_types:
                    _one_run(st, p, extra, bs, precision, device_num, model_type, epoch)
    return BenchPlan(
        d.name, model, params, save_log, env, edits, tuple(st.steps), f"{save_log}/benchmark_log/results.log",
    )  # fmt: skip


def _flags_on(d: BenchDialect, section: dict) -> bool:
    # A `null` (or empty) flags value is exported by most scripts (a no-op), skipped by some.
    return not d.skip_null_flags or section["flags"] not in ("", "null")


def _clas_workers(st: _State, section: dict) -> None:
    st.config.substitute(CLAS_WORKERS, f" -o DataLoader.Train.loader.num_workers={section['num_workers']}")


def _video_max_iters(st: _State, section: dict) -> None:
    st.config.append(VIDEO_TRAIN_LINE, f" --max_iters={section['max_iters']} -o log_interval=1")
    st.config.drop_first(VIDEO_TRAIN_LINE, "--validate")


def _ocr_epochs(d: BenchDialect, p: _Params, params: str, section: dict, model: str) -> tuple[str, tuple]:
    """PaddleOCR scales a PARAMS run's epochs by its node count."""
    return (scaled(p.device_num, section["epoch"], True) if params else section["epoch"]), ()


def _ocr_precision(precision: str) -> str:
    return "fp16" if precision == "amp" else "fp32"


def _det_epochs(d: BenchDialect, p: _Params, params: str, section: dict, model: str) -> tuple[str, tuple]:
    """PaddleDetection: models trained on full COCO scale their epochs; the others run one epoch
    with the datasets' `repeat` scaled instead (the dataset edits)."""
    epoch = section["epoch"]
    if any(name in model for name in DET_FULL_COCO):
        return scaled(p.device_num, epoch, False), ()
    repeat = scaled(p.device_num, section["repeat"], False)
    return "1", tuple((path, DET_DATASET_LINE, f"{indent}repeat: {repeat}") for path, indent in DET_DATASETS)


# Each upstream benchmark_train.sh, by dialect: a new one is an entry here and its template.
BENCH: dict[str, BenchDialect] = {
    "paddleclas": BenchDialect(
        "paddleclas", "PaddleClas", None,
        ("batch_size", "fp_items", "epoch", "model_type", "num_workers", "profile", "flags"),
        grep_word=False, null_lines=(24, 30, 17, 18), mode_prefix=False, timeout_train="5m",
        timeout_multi="5m", skip_steps="100", static_mode="list", status_trailer=" ! ", analysis_indent=28,
        substitutions=CLAS_PRE, rewrite=_clas_workers, timeouts=(("N4C32", "10m"),),
    ),
    "paddleseg": BenchDialect(
        "paddleseg", "PaddleSeg", None, ("batch_size", "fp_items", "epoch", "profile", "flags"),
        default_devices=("N1C1", "N1C8"), status_model=(False, True), status_trailer="  ",
        extra_args=True, colon_logs=True,
    ),
    "paddlevideo": BenchDialect(
        "paddlevideo", "PaddleVideo", None, ("batch_size", "fp_items", "epoch", "profile", "flags", "max_iters"),
        null_lines=(24, 25, 38, 28, 30), mode_prefix=False, profile_line=12, skip_steps="5",
        units=("instance/sec", "instance/sec"), static_mode="params", rewrite=_video_max_iters,
        accumulation_line=VIDEO_TRAIN_LINE, git_env=True,
    ),
    "paddledetection": BenchDialect(
        "paddledetection", "PaddleDetection", None, ("batch_size", "fp_items", "epoch", "repeat", "profile", "flags"),
        skip_steps="4", units=("images/s", "images/s"), status_trailer="  ", epochs=_det_epochs,
        skip_null_flags=True, git_env=True,
    ),
    "paddleocr": BenchDialect(
        "paddleocr", "PaddleOCR/head", "ocr_head", ("batch_size", "fp_items", "epoch", "profile", "flags"),
        grep_word=False, profile_quoted=False, timer_option=False, timeout_profile="",
        status_model=(False, False), static_mode="none", precision_in=(("fp16", "amp"),),
        precision_named=_ocr_precision, epochs=_ocr_epochs,
    ),
}  # fmt: skip


def _one_run(
    st: _State, p: _Params, extra: dict, bs: str, precision: str, device_num: str, model_type: str, epoch: str
):
    d, config = st.d, st.config
    config.set_value(6, precision)
    config.set_value(9, f"{MODE}={bs}" if d.mode_prefix else bs)
    config.set_value(7, f"{MODE}={epoch}" if d.mode_prefix else epoch)
    if d.static_mode == "list":
        config.set_value(15, model_type)
        st.to_static = "d2sT_" if model_type == "to_static_train" else ""
    if d.precision_named:
        precision = d.precision_named(precision)
    run = f"bs{bs}_{precision}_{p.run_mode}_{device_num}"
    stem = f"{st.repo}_{st.model}_{run}_{st.to_static}"
    gpus = gpu_ids(device_num)
    single = len(gpus) <= 1
    if single:
        config.set_value(4, "0")
        if not d.timer_option or st.profiling != "no":
            _profile_run(st, bs, device_num, stem, run)
    else:
        config.set_value(4, gpus)
    config.set_value(d.profile_line, "null")
    if not single:
        _time_sformer(st, bs, device_num)
    timeout = d.timeout_train if single else dict(d.timeouts).get(device_num, d.timeout_multi)
    log_name = f"{stem}log"
    # PaddleSeg's matting models log `key=value`: analysis.py reads `key: value`.
    colon = d.colon_logs and ((extra.get("task") == "mat") if single else (st.model == "ppmatting"))
    log = f"{st.save_log}/train_log/{log_name}"
    st.inner("train", timeout, log, run, colon)
    if single and extra.get("skip_iters"):
        filtered = f"{log}_filtered"
        cmd = (
            f"python test_tipc/filter_log.py --in_log_path '{log}' --out_log_path '{filtered}'"
            f" --skip_iters {extra['skip_iters']}"
        )
        st.add("filter", tuple(words(cmd) or ()), run=run)
        log = filtered
    _analysis(st, p, bs, precision, device_num, single, log, f"{stem}speed", run)


def _profile_run(st: _State, bs: str, device_num: str, stem: str, run: str) -> None:
    d = st.d
    if d.timer_option and st.profiling == "False":
        st.profile_option += ";timer_only=False"  # again for every run, as upstream
    st.config.set_line(d.profile_line, f'"{st.profile_option}"' if d.profile_quoted else st.profile_option)
    _time_sformer(st, bs, device_num)
    st.inner("profile", d.timeout_profile, f"{st.save_log}/profiling_log/{stem}profiling", run)


def _time_sformer(st: _State, bs: str, device_num: str) -> None:
    """PaddleVideo's TimeSformer accumulates gradients: the global batch is appended (again for
    every run) to the trainer line."""
    line = st.d.accumulation_line
    if line is None or "TimeSformer" not in st.model:
        return
    a, b = expr_int(bs), expr_int(device_num[3:7])
    total = str(a * b * 8) if a is not None and b is not None else ""
    st.config.append(line, f" -o GRADIENT_ACCUMULATION.global_batch_size={total}")


def _analysis(st: _State, p: _Params, bs: str, precision: str, devices: str, single: bool, log: str, speed: str, run):
    d = st.d
    root = st.benchmark_root if st.benchmark_root is not None else ""
    cmd = (" " * (d.analysis_indent + 1)).join((
        f"python {root}/scripts/analysis.py --filename {log}",
        f"--speed_log_file '{st.save_log}/index/{speed}'",
        f"--model_name {st.model}_bs{bs}_{precision}_{p.run_mode}",
        f"--base_batch_size {bs}",
        f"--run_mode {p.run_mode}",
        f"--fp_item {precision}",
        "--keyword ips:",
        f"--skip_steps {d.skip_steps}",
        f"--device_num {devices}",
        f"--speed_unit {d.units[0 if single else 1]}",
        "--convergence_key loss: ",
    ))  # fmt: skip
    model = st.model if d.status_model[0 if single else 1] else ""
    status = f"{{verdict}} with command - {model} - {cmd} - {d.status_trailer}"
    skip = None if st.benchmark_root is not None else "BENCHMARK_ROOT unset"
    st.add("analysis", tuple(words(cmd) or ()), run=run, status=status, skip=skip)


def inner_plans(bp: BenchPlan, layout, cuda_visible_devices: Optional[str] = None) -> list:
    """The Plan of test_train_inference_python.sh for each profile/train run, in order."""
    from tipcgen.plan.planner import plan_config

    runner = BENCH[bp.dialect].runner
    return [
        plan_config(s.config, layout, MODE, cuda_visible_devices=cuda_visible_devices, runner=runner) for s in bp.runs()
    ]


def commands(bp: BenchPlan, layout, cuda_visible_devices: Optional[str] = None) -> list:
    """Every interpreter command of the benchmark run in order (what a recording `python` sees):
    (argv, kind); a run's argv are its inner steps'. An analysis without BENCHMARK_ROOT is left out."""
    plans = iter(inner_plans(bp, layout, cuda_visible_devices))
    out = []
    for s in bp.steps:
        if s.kind in ("profile", "train"):
            out += [(step.argv, f"{s.kind}:{step.kind}") for step in next(plans).steps if step.argv]
        elif s.skip is None:
            out.append((s.argv, s.kind))
    return out


__all__ = ["BENCH", "DEVIATIONS", "BenchDialect", "BenchPlan", "BenchStep", "commands", "plan_benchmark"]
