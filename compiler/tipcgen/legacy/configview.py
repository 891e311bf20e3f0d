"""A legacy config as the upstream test script sees it: lines by index, split on the first colon."""

from __future__ import annotations

from dataclasses import dataclass

from tipcgen.dialects import Layout


def script_lines(text: str, limit: int) -> list[str]:
    """`awk 'NR==1, NR==limit'` then `IFS=$'\\n' lines=(...)`: empty lines vanish."""
    physical = text.split("\n")
    if physical and physical[-1] == "":
        physical.pop()
    return [line for line in physical[:limit] if line != ""]


def split_line(line: str) -> tuple[str, str]:
    """(key, value) on the first colon; a line without a colon is all key."""
    key, _sep, value = line.partition(":")
    return key, value


# What a script variable holds when its layout has no line for the role.
ABSENT = {"export.inference_dir": "null"}


@dataclass(frozen=True)
class ConfigView:
    layout: Layout
    lines: tuple[str, ...]

    @classmethod
    def parse(cls, text: str, layout: Layout) -> ConfigView:
        return cls(layout, tuple(script_lines(text, layout.read_lines)))

    def line(self, role: str) -> str:
        i = self.layout.index(role)
        if i is None or i >= len(self.lines):
            return ""
        return self.lines[i]

    def key(self, role: str) -> str:
        return split_line(self.line(role))[0]

    def value(self, role: str) -> str:
        if self.layout.index(role) is None:
            return ABSENT.get(role, "")
        return split_line(self.line(role))[1]
