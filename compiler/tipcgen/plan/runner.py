"""The runner interface. A runner is one upstream `test_train_inference_python.sh` made a module
(plan/runners/<name>.py), registered in plan/registry.py and named in its dialect's
`Dialect.runners`, or a chain of fixed commands written as a table (dialects/steps.py, run by
plan/runners/table.py); mypy holds every registered runner to `Runner`:

- `plan(b: Builder) -> None`: the steps of `b.mode` for the config `b.v`, added with `b.add`
  in the order that repo's script runs them (argv, CUDA_VISIBLE_DEVICES, logs, status paths);
- `TEMPLATE`: the bash template under templates/ that generates the same script;
- `STATUS_FORMAT`: its status_check line ({verdict} {model} {command} {log});
- `MODES`: the modes its script accepts;
- `DEVIATIONS`: its deliberate differences from that script (`Deviation`, below);
- `GPU_ENTRIES_BY_LENGTH`: its script tells gpu_list entries apart by their length, as upstream's
  do (the docs say so), instead of by structure;
- `CLASSIC`: the version of the classic script (runners/classic.py) it follows, an `OcrScript`
  that both its plan and its bash template read; None for a runner with a script of its own.

The generated bash of a runner and its `plan` are held equal by tests/test_plan_differential.py;
each runner and its repo's real script by the upstream oracle (tests/helpers/upstream.py).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional, Protocol

from tipcgen.dialects.steps import Deviation

if TYPE_CHECKING:
    from tipcgen.plan.builder import Builder, OcrScript


class Runner(Protocol):
    # Read-only members: a module's constants are checked against them (a tuple of five modes
    # is a `tuple[str, ...]`).
    @property
    def TEMPLATE(self) -> str: ...
    @property
    def STATUS_FORMAT(self) -> str: ...
    @property
    def MODES(self) -> tuple[str, ...]: ...
    @property
    def DEVIATIONS(self) -> tuple[Deviation, ...]: ...
    @property
    def GPU_ENTRIES_BY_LENGTH(self) -> bool: ...
    @property
    def CLASSIC(self) -> Optional[OcrScript]: ...

    def plan(self, b: Builder) -> None: ...


# The chains that edit config files with `sed -i` (serving, Lite): their values are data.
EDITS_AS_DATA = Deviation(
    "edits-as-data",
    "a value put into a `sed -i` edit is data: in the sed expression it is escaped as a literal "
    "replacement (`\\`, `/`, `&`), and a file the edit names is one argument (quoted when it holds "
    "anything but plain characters, `./` before a leading `-`); the same for the feed variable read "
    "from a converted model's config. The edits of a plain value are upstream's, byte for byte",
    "upstream splices the values into the sed program and its command line: a space or a quote in a "
    "path adds words (`-e '1e touch X'` makes GNU sed run a command) and a `/` or `&` in a value "
    "changes what sed does",
)

# The oracles' category for a command upstream's `eval` ran only up to a `;` of a value.
EVAL_CUT = "eval: upstream splits the command at ';'"

# Deviations of every runner: the improvements all generated scripts share.
COMMON_DEVIATIONS = (
    Deviation(
        "skip-after-failed-train",
        "after a failed train, that run's eval, export and inference are skipped "
        "(status line `Run skipped (train failed)`)",
        "upstream runs them on weights that were never written, burying the real failure",
        (r"^status: \w+ verdict upstream 'Run (successfully|failed)' vs plan 'Run skipped \(train failed\)'",),
    ),
    Deviation(
        "no-eval",
        "a step's command is split into words and run as they are: a `;` (or `$`, `*`) in a config "
        "value reaches the program as part of its argument",
        "upstream `eval`s the command line it built: a `;` in a value ends the command there and runs "
        "the rest as further shell commands (a profiler option read into another flag, for one)",
        ("^" + re.escape(EVAL_CUT) + "$",),
    ),
)
