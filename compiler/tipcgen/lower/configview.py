"""A legacy config as the upstream test script sees it: lines by index, split on the first colon
(or the layout's separator)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tipcgen.dialects import Layout
from tipcgen.script.lines import script_lines, script_pair

# What a script variable holds when its layout has no line for the role.
ABSENT = {"export.inference_dir": "null"}


# The key `roles_read` gives for a view whose lines were read other than by role.
WHOLE = "*"


@dataclass(frozen=True)
class ConfigView:
    layout: Layout
    _lines: tuple[str, ...]
    # role -> (line, key, value): a runner reads the same lines for every step it plans; its keys
    # are the roles read so far (WHOLE: the lines were read as such)
    _split: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def parse(cls, text: str, layout: Layout) -> ConfigView:
        return cls(layout, tuple(script_lines(text, layout.read_lines)))

    @property
    def lines(self) -> tuple[str, ...]:
        """The lines as the script reads them (reading them so counts as reading every role)."""
        self._split[WHOLE] = None
        return self._lines

    def mark_whole(self) -> None:
        """Something read the config other than through this view's roles (its whole text)."""
        self._split[WHOLE] = None

    def roles_read(self) -> frozenset:
        """The roles read so far; containing WHOLE when the lines were read as such."""
        return frozenset(self._split)

    def _read(self, role: str) -> tuple[str, str, str]:
        hit = self._split.get(role)
        if hit is None:
            i = self.layout.index(role)
            if i is None:
                hit = ("", "", ABSENT.get(role, ""))
            else:
                line = self._lines[i] if i < len(self._lines) else ""
                row = self.layout.rows[i]
                hit = (line, *script_pair(line, self.layout.row_separator(row)))
            self._split[role] = hit
        return hit

    # (each reads the kept split first: a plan reads roles hundreds of thousands of times)
    def line(self, role: str) -> str:
        return (self._split.get(role) or self._read(role))[0]

    def key(self, role: str) -> str:
        return (self._split.get(role) or self._read(role))[1]

    def value(self, role: str) -> str:
        return (self._split.get(role) or self._read(role))[2]

    def value_to_colon(self, role: str) -> str:
        """func_parser_value: the line's text between its first and second colon."""
        return self.value(role).split(":", 1)[0]
