"""User-facing errors. Anything else escaping the CLI is a bug and gets a traceback."""

from __future__ import annotations

from dataclasses import dataclass

from tipcgen.escape import for_terminal


class TipcError(Exception):
    """An error caused by the user's input; the CLI prints it and exits 2."""

    exit_code = 2


@dataclass
class Problem:
    """One located problem in an input file."""

    file: str
    line: int | None  # 1-based
    col: int | None  # 1-based
    field: str | None  # dotted path of the offending field, if any
    message: str
    hint: str | None = None

    def render(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        text = f"{where}: error: "
        if self.field:
            text += f"field `{self.field}`: "
        text += self.message
        if self.hint:
            text += f" ({self.hint})"
        return printable(text)  # one problem, one line: nothing in it can forge another


class SpecError(TipcError):
    """One or more located problems in a spec or config file."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(p.render() for p in problems))

    def __reduce__(self):  # pickled whole (its problems, not its text) from `check`'s workers
        return (type(self), (self.problems,))


class UsageError(TipcError):
    """Bad command-line usage (unknown mode, missing file, ...)."""


# The terminal's escaper (tipcgen.escape) under the name every message site uses: a file name with
# a newline must not forge an output line, nor an ESC drive the terminal.
printable = for_terminal
