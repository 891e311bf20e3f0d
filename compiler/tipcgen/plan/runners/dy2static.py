"""The test_train_dy2static_python.sh scripts (PaddleClas, PaddleSeg, PaddleVideo) as Plans: for each
section of the config (`base_train`, `amp_train`: 22 lines from each line holding `============`),
write that section as a train config of its own (gpu_list forced to `0`; PaddleClas appends
`-o Global.print_batch_step=1` to line 16), run the repo's test_train_inference_python.sh on it
(dygraph), edit it into the family's to-static form and run it again (dynamic-to-static: PaddleClas
rewrites line 15 to `trainer:to_static_train`, PaddleSeg appends `--opts to_static_training=True` to
line 16, PaddleVideo `-o to_static=True`), then compare the two loss curves. One `Dy2Static` per
family holds what differs; the Plan and the bash (templates/runner_dy2static.sh.j2) read the same
values.

The train runs write no status line of their own: the nested runner appends its own lines to the
same results_python.log (as upstream). Only the comparison gets one, in the family's status_check
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

import re
from dataclasses import dataclass
from typing import Optional

from tipcgen.errors import UsageError
from tipcgen.plan.builder import Builder, OcrScript
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation

# Upstream forces lite_train_lite_infer; we honour the MODE given (default: lite_train_lite_infer).
MODES = ("lite_train_lite_infer", "lite_train_whole_infer", "whole_train_whole_infer")
RTOL = "0.001"  # see the module docstring
NESTED = "test_tipc/test_train_inference_python.sh"  # what each train run runs
COMPARE = "test_tipc/compare_loss.py"
SECTION_LINES = 22  # upstream: `sed -n "${cln},\$p" | head -n 22`
TRAIN_LINE = 16  # the section's train command line (norm_train: / amp_train:)


@dataclass(frozen=True)
class Edit:
    """A `sed -i` edit of one line of a section's train config: `replace` it with `text`
    (`15ctext`) or append `text` to it (`16s/$/text/`)."""

    line: int
    text: str
    replace: bool = False

    def sed(self) -> str:
        """The sed program (its text is ours: plain words, checked here)."""
        if not re.fullmatch(r"[\w .:=+-]+", self.text):
            raise AssertionError(f"a dy2static edit must be plain text: {self.text!r}")
        return f"{self.line}c{self.text}" if self.replace else f"{self.line}s/$/{self.text}/"

    def apply(self, text: str) -> str:
        """The edit over a newline-ended text: line `line` (1-based) edited, if it exists."""
        lines = text.split("\n")[:-1]
        if self.line <= len(lines):
            lines[self.line - 1] = self.text if self.replace else lines[self.line - 1] + self.text
        return "".join(f"{line}\n" for line in lines)


def _mode_deviation(upstream_also: str = "") -> Deviation:
    return Deviation(
        "dy2static-mode",
        "the MODE argument is honoured (lite_train_lite_infer when none is given)",
        "upstream overwrites it with lite_train_lite_infer whatever is given, so whole_train_whole_infer "
        "silently runs the lite setting" + upstream_also,
        (
            r"^train argv: upstream \+\[\S*/lite_train_lite_infer/dy2static_",
            r"^status: results_python\.log elsewhere$",
            r"^logs: upstream \+\[\./test_tipc/output/<model>/lite_train_lite_infer/",
            r"^status: trailer ' - \./test_tipc/output/<model>/lite_train_lite_infer/\w+_diff_lo",
        ),
    )


def _compare_deviation(upstream: str, more: tuple = ()) -> Deviation:
    return Deviation(
        "dy2static-loss-compare",
        "the loss curves are compared by test_tipc/compare_loss.py: every `loss:` value of both "
        f"outputs pairs up within a relative tolerance of {RTOL}, and the status line reports its "
        "exit code (non-zero: a curve is empty, the lengths differ, or a pair differs)",
        upstream,
        (
            r"^loss comparison: upstream test_tipc/extract_loss\.py, plan test_tipc/compare_loss\.py$",
            r"^status: compare command text$",
            r"^status: compare verdict upstream 'Run failed' vs plan 'Run successfully'$",
            r"^logs: upstream \+\[\$LOG/\w+_(dygraph|dy2static)_loss\.txt",
            *more,
        ),
    )


# Every family's: the exit status and the log directory.
_SHARED = (
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


@dataclass(frozen=True)
class Dy2Static:
    """One family's test_train_dy2static_python.sh: what its Plan and its bash differ in."""

    STATUS_FORMAT: str  # the family's status_check line
    dygraph: Optional[Edit]  # the section's edit before both runs (PaddleClas: losses every step)
    to_static: Edit  # the edit making the second run dynamic-to-static
    deviations: tuple  # its own (Deviation), after COMMON_DEVIATIONS

    TEMPLATE = "runner_dy2static.sh.j2"
    MODES = MODES
    GPU_ENTRIES_BY_LENGTH = False  # gpu_list is the nested runner's
    CLASSIC: Optional[OcrScript] = None
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

    @property
    def DEVIATIONS(self) -> tuple[Deviation, ...]:
        return (*COMMON_DEVIATIONS, *self.deviations)

    @property
    def TEMPLATE_VARS(self) -> dict:
        return {
            "dygraph_sed": self.dygraph.sed() if self.dygraph is not None else "",
            "to_static_sed": self.to_static.sed(),
            "to_static_replace": self.to_static.replace,
        }

    def dygraph_config(self, section: str) -> str:
        """The section as the dygraph run reads it: `s/gpu_list.*$/gpu_list:0/g`, then the family's edit."""
        lines = section.split("\n")[:-1]
        lines = [line[: line.index("gpu_list")] + "gpu_list:0" if "gpu_list" in line else line for line in lines]
        text = "".join(f"{line}\n" for line in lines)
        return self.dygraph.apply(text) if self.dygraph is not None else text

    def plan(self, b: Builder) -> None:
        v = b.v
        b.log_dir = f"./test_tipc/output/{v.value_to_colon('model_name')}/{b.mode}"
        b.status_log = f"{b.log_dir}/{v.layout.dialect.status_log}"
        python = v.value_to_colon("python")
        for number, name, section in sections(b.text):
            if "/" in name or "\n" in name or not name:
                raise UsageError(
                    f"{b.source}: the section on line {number} is named {name!r}: its logs would not be "
                    "plain files in the log directory (one name, without `/`, and one header per 22 lines)"
                )
            sub = f"{b.log_dir}/dy2static_{name}.txt"
            train = f"bash {NESTED} {sub} {b.mode}"
            dygraph = self.dygraph_config(section)
            dy_out = f"{b.log_dir}/{name}_python_train_infer_dygraph_output.txt"
            st_out = f"{b.log_dir}/{name}_python_train_infer_dy2static_output.txt"
            b.add("train", train, dy_out, files=((sub, dygraph),), writes_status=False)
            b.add("train", train, st_out, files=((sub, self.to_static.apply(dygraph)),), writes_status=False)
            diff_log = f"{b.log_dir}/{name}_diff_log.txt"
            compare = f"{python} {COMPARE} {dy_out} {st_out} --rtol {RTOL}"
            b.add("compare", compare, diff_log, shown=f"{compare} > {diff_log}", status_path=diff_log)


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


PADDLECLAS = Dy2Static(
    "{verdict} with command - {model} - {command} - {log} ! ",  # PaddleClas's status_check
    Edit(TRAIN_LINE, " -o Global.print_batch_step=1"),
    Edit(15, "trainer:to_static_train", replace=True),
    (
        _mode_deviation(),
        _compare_deviation(
            "upstream's test_tipc/extract_loss.py is not in the repo's test_tipc/, it writes each curve into "
            "the other's file, and its `diff -w` demands textual equality of the printed losses (a last-digit "
            "difference fails); an empty curve fails as upstream's does"
        ),
        *_SHARED,
    ),
)

# PaddleSeg's: its trainer takes `--opts` (PaddleClas's `-o Global.print_batch_step=1` it rejects).
PADDLESEG = Dy2Static(
    "{verdict} with command - {model} - {command} - {log}  ",  # PaddleSeg's status_check
    None,
    Edit(TRAIN_LINE, " --opts to_static_training=True"),
    (
        _mode_deviation(),
        _compare_deviation(
            "upstream reads the losses of the `[TRAIN] epoch:` lines with test_tipc/extract_loss.py, writes "
            "each curve into the other's file, and its `diff -w` demands textual equality of the printed "
            "losses (a last-digit difference fails); an empty curve fails as upstream's does"
        ),
        *_SHARED,
    ),
)

# PaddleVideo's: `-o to_static=True`; its script also evals what it takes for a section's last line.
PADDLEVIDEO = Dy2Static(
    "{verdict} with command - {model} - {command} - {log} ",  # PaddleVideo's status_check
    None,
    Edit(TRAIN_LINE, " -o to_static=True"),
    (
        _mode_deviation(),
        _compare_deviation(
            "upstream reads the losses of the `train step` lines with test_tipc/extract_loss.py and keeps the "
            "first three of each curve only (`head -n 3`), writes each curve into the other's file, and its "
            "`diff -w` demands textual equality of the printed losses (a last-digit difference fails); an "
            "empty curve fails as upstream's does"
        ),
        Deviation(
            "dy2static-custom-cmd",
            'a section\'s last line (`echo "No Custom Cmd"` in the corpus) is not run: it is config text, '
            "and no command runs that is not a train run or the comparison",
            "upstream `eval`s `$(echo $config_lines | tail -n 1)` before the dygraph run; with IFS a newline "
            "that is the whole section joined into one line, so the shell tries to run the `=====` header as "
            "a command (not found), and each word after a `|` in a value (`null`), and the `##` line comments "
            "out the rest: the intended command never runs",
            (),
        ),
        *_SHARED,
    ),
)
