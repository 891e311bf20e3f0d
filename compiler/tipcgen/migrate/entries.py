"""The whole-tree oracle's records: every entry point of a repo's old test_tipc/ (each script, with
each config it reads and each mode it takes), run before and after the switch under the recorder.

An EntryRow is what the report, its JSON form and the verdict read; `entrypoints.py` fills them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

# The verdicts of one entry point, best first. "not run before": the old tree's script ran
# nothing (or failed at once) on it, so there is nothing to keep; never a reason for "ready" alone.
ENTRY_VERDICTS = ("identical", "faithful", "CHANGED", "broken", "not run before")


@dataclass(frozen=True)
class EntryPoint:
    script: str  # repo-relative, e.g. test_tipc/test_paddle2onnx.sh
    config: Optional[str]  # repo-relative config it reads (None: a script that takes none)
    mode: Optional[str]  # the mode argument (None: a script that takes none)

    @property
    def argv(self) -> tuple:
        return ("bash", self.script, *(a for a in (self.config, self.mode) if a))


@dataclass
class EntryRow:
    entry: EntryPoint
    verdict: str  # one of ENTRY_VERDICTS
    detail: str = ""  # the deviations behind "faithful", or why "CHANGED"/"broken"
    # Every differing command, in order: ("before", argv text) / ("after", argv text) pairs as
    # lines "- before: ..." / "+ after: ..." (a command only one side ran has one line).
    differences: list = field(default_factory=list)
    before_commands: int = 0
    after_commands: int = 0
    before_exit: Optional[int] = None  # None: timed out
    after_exit: Optional[int] = None
