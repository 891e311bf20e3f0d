"""PaddleClas's test_train_dy2static_python.sh as a Plan: for each section of the config
(`base_train`, `amp_train`: 22 lines from each line holding `============`), write that section as
a train config of its own (gpu_list forced to `0`, `-o Global.print_batch_step=1` appended to line
16), run the repo's test_train_inference_python.sh on it (dygraph), rewrite its line 15 to
`trainer:to_static_train` and run it again (dynamic-to-static), then compare the two loss curves.

The train runs write no status line of their own: the nested runner appends its own lines to the
same results_python.log (as upstream). Only the comparison gets one, in PaddleClas's status_check
format. Logs under `./test_tipc/output/<model_name>/<MODE>/`.

The comparison is ours (test_tipc/compare_loss.py, emitted beside the script): every `loss: X`
value of the two outputs, in order, must pair up within a relative tolerance RTOL. Why 1e-3: the
two runs execute the same kernels, but the static program may fuse ops or reorder float32
reductions, which moves a loss by float32 rounding (about 1e-7 relative per op); over the few
hundred steps of a lite run that grows to about 1e-5..1e-4 at most. 1e-3 stays ten times above
that, and far below what a wrongly converted graph does (it moves the loss by percents within a
few steps). Upstream demands textual equality of the printed values (`diff -w`), which flakes at
the last printed digit.
"""

from __future__ import annotations

from tipcgen.errors import UsageError
from tipcgen.plan.builder import Builder
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation

# Upstream forces lite_train_lite_infer; we honour the MODE given (default: lite_train_lite_infer).
MODES = ("lite_train_lite_infer", "lite_train_whole_infer", "whole_train_whole_infer")
TEMPLATE = "runner_paddleclas_dy2static.sh.j2"
STATUS_FORMAT = "{verdict} with command - {model} - {command} - {log} ! "  # PaddleClas's status_check
GPU_ENTRIES_BY_LENGTH = False  # gpu_list is the nested runner's
CLASSIC = None

RTOL = "0.001"  # see the module docstring
NESTED = "test_tipc/test_train_inference_python.sh"  # what each train run runs
COMPARE = "test_tipc/compare_loss.py"
SECTION_LINES = 22  # upstream: `sed -n "${cln},\$p" | head -n 22`
# For the oracle (tipcgen.migrate.oracle): upstream commands matching the first pattern stand for
# plan steps matching the second (one difference, the label, explained by dy2static-loss-compare).
ORACLE_REPLACED = (
    (
        "loss comparison: upstream test_tipc/extract_loss.py, plan test_tipc/compare_loss.py",
        r"test_tipc/extract_loss\.py",
        r"test_tipc/compare_loss\.py",
    ),
)
# Scripts the oracle replaces with a recording stub (they are the nested runner).
ORACLE_NESTED = ("test_train_inference_python.sh",)

DEVIATIONS = (
    *COMMON_DEVIATIONS,
    Deviation(
        "dy2static-mode",
        "the MODE argument is honoured (lite_train_lite_infer when none is given)",
        "upstream overwrites it with lite_train_lite_infer whatever is given, so whole_train_whole_infer "
        "silently runs the lite setting",
        (
            r"^train argv: upstream \+\[\S*/lite_train_lite_infer/dy2static_",
            r"^status: results_python\.log elsewhere$",
            r"^logs: upstream \+\[\./test_tipc/output/<model>/lite_train_lite_infer/",
            r"^status: trailer ' - \./test_tipc/output/<model>/lite_train_lite_infer/\w+_diff_lo",
        ),
    ),
    Deviation(
        "dy2static-loss-compare",
        "the loss curves are compared by test_tipc/compare_loss.py: every `loss:` value of both "
        f"outputs pairs up within a relative tolerance of {RTOL}, and the status line reports its "
        "exit code (non-zero: a curve is empty, the lengths differ, or a pair differs)",
        "upstream's test_tipc/extract_loss.py is not in the repo's test_tipc/, it writes each curve into "
        "the other's file, and its `diff -w` demands textual equality of the printed losses (a last-digit "
        "difference fails); an empty curve fails as upstream's does",
        (
            r"^loss comparison: upstream test_tipc/extract_loss\.py, plan test_tipc/compare_loss\.py$",
            r"^status: compare command text$",
            r"^status: compare verdict upstream 'Run failed' vs plan 'Run successfully'$",
            r"^logs: upstream \+\[\$LOG/\w+_(dygraph|dy2static)_loss\.txt",
        ),
    ),
    Deviation(
        "dy2static-exit-status",
        "the script exits 1 when a train run or a comparison failed",
        "upstream always exits with the last status_check's status (0): a failed train run goes unnoticed",
        (),
    ),
    Deviation(
        "dy2static-keep-logs",
        "the log directory is kept (created if absent), not removed first",
        "upstream `rm -rf`s test_tipc/output/<model>/<MODE>/, deleting the train chain's logs of the same "
        "model and mode",
        (),
    ),
)


def sections(text: str) -> list[tuple[int, str, str]]:
    """(header line number, name, section text) of each section, as upstream cuts them: the
    lines holding `============` (grep -n), 22 lines from each, trailing empty lines dropped
    (`$(...)`), then written with one newline; the name is the second blank-separated field of
    the lines holding `=====` (`cut -d' ' -f2`; a line without a blank is taken whole)."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    out = []
    for number, line in enumerate(lines, 1):
        if "============" not in line:
            continue
        body = "\n".join(lines[number - 1 : number - 1 + SECTION_LINES]).rstrip("\n")
        names = [x.split(" ")[1] if " " in x else x for x in body.split("\n") if "=====" in x]
        out.append((number, "\n".join(names).rstrip("\n"), body + "\n"))
    return out


def _edit(text: str, number: int, edit) -> str:
    """`sed -i 'NUMBER...'` over a newline-ended text: line NUMBER (1-based) edited, if it exists."""
    lines = text.split("\n")[:-1]
    if number <= len(lines):
        lines[number - 1] = edit(lines[number - 1])
    return "".join(f"{line}\n" for line in lines)


def dygraph_config(section: str) -> str:
    """The section as the dygraph run reads it: `s/gpu_list.*$/gpu_list:0/g`, then line 16's suffix."""
    lines = section.split("\n")[:-1]
    lines = [line[: line.index("gpu_list")] + "gpu_list:0" if "gpu_list" in line else line for line in lines]
    text = "".join(f"{line}\n" for line in lines)
    return _edit(text, 16, lambda line: line + " -o Global.print_batch_step=1")


def to_static_config(dygraph: str) -> str:
    """The same file after `sed -i '15ctrainer:to_static_train'`."""
    return _edit(dygraph, 15, lambda _line: "trainer:to_static_train")


def plan(b: Builder) -> None:
    v = b.v
    b.log_dir = f"./test_tipc/output/{v.value_to_colon('model_name')}/{b.mode}"
    b.status_log = f"{b.log_dir}/{v.layout.dialect.status_log}"
    python = v.value_to_colon("python")
    for number, name, section in sections(b.text):
        if "/" in name or "\n" in name or not name:
            raise UsageError(
                f"{b.source}: the section on line {number} is named {name!r}: its logs would not be plain "
                "files in the log directory (one name, without `/`, and one header per 22 lines)"
            )
        sub = f"{b.log_dir}/dy2static_{name}.txt"
        train = f"bash {NESTED} {sub} {b.mode}"
        dygraph = dygraph_config(section)
        dy_out = f"{b.log_dir}/{name}_python_train_infer_dygraph_output.txt"
        st_out = f"{b.log_dir}/{name}_python_train_infer_dy2static_output.txt"
        b.add("train", train, dy_out, files=((sub, dygraph),), writes_status=False)
        b.add("train", train, st_out, files=((sub, to_static_config(dygraph)),), writes_status=False)
        diff_log = f"{b.log_dir}/{name}_diff_log.txt"
        compare = f"{python} {COMPARE} {dy_out} {st_out} --rtol {RTOL}"
        b.add("compare", compare, diff_log, shown=f"{compare} > {diff_log}", status_path=diff_log)
