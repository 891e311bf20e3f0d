"""A config's text as upstream's bash reads it: lines (what `awk`/`IFS=$'\\n'` keep), `key:value`
split on the first colon (or a layout's own separator), section headers (`===...name...===`).
Imports nothing of tipcgen."""

from __future__ import annotations

import re
from typing import Optional

HEADER = re.compile(r"^=+\s*([A-Za-z0-9_ ]*?)\s*=+\s*$")


def split_lines(text: str) -> list[str]:
    """A config's lines as the scripts count them: BOM and CRLF removed, empty lines dropped."""
    text = text.removeprefix("\ufeff")
    if "\r\n" in text and text.count("\r\n") == text.count("\n"):
        text = text.replace("\r\n", "\n")
    return [line for line in text.split("\n") if line != ""]


def script_lines(text: str, limit: int) -> list[str]:
    """`awk 'NR==1, NR==limit'` then `IFS=$'\\n' lines=(...)`: empty lines vanish."""
    physical = text.split("\n")
    if physical and physical[-1] == "":
        physical.pop()
    return [line for line in physical[:limit] if line != ""]


def split_line(line: str, separator: str = ":") -> tuple[str, str]:
    """(key, value) on the first `separator` (a layout's: the TIPC configs' colon); a line
    without it is all key. A separator of blanks (a C++ binary's own `key  value` config) splits
    at the first blank, and the value starts after the whole run of blanks: how the scripts'
    `IFS=" "` word split reads the key (func_parser_key_cpp) and the rest of the line."""
    if separator.strip(" \t") == "":
        key, blank, _rest = line.partition(" ")
        return key, line[len(key) :].lstrip(" \t") if blank else ""
    key, _sep, value = line.partition(separator)
    return key, value


def has_separator(line: str, separator: str = ":") -> bool:
    """Whether a line has a key/value separator at all (split_line's "all key" case otherwise)."""
    return (" " in line) if separator.strip(" \t") == "" else (separator in line)


def script_pair(line: str, separator: str = ":") -> tuple[str, str]:
    """(key, value) as a script reads a line: split_line on a colon; on blanks, the line's first
    and second blank-separated words (func_parser_key_cpp, func_parser_value_cpp: `IFS=" "`), so a
    value with a blank in it is read to its first blank. split_line keeps the whole rest (import)."""
    if separator.strip(" \t") == "":
        words = [w for w in line.split(" ") if w]
        return (words[0] if words else ""), second_word(line)
    return split_line(line, separator)


def second_word(line: str) -> str:
    """A `key value` line's value as a C++ config is read (PaddleSeg's func_parser_value_cpp,
    the generated tipc_word): its second blank-separated word, else empty."""
    words = [w for w in line.split(" ") if w]
    return words[1] if len(words) > 1 else ""


def header_name(line: str) -> Optional[str]:
    m = HEADER.match(line)
    return m.group(1).strip() if m and m.group(1).strip() else None


def first_header(text: str) -> Optional[str]:
    """The name of a config's first line when that is a section header, as the generated scripts
    read it (tipc_first_section; which script runs it: dialects.section_owners), else None."""
    lines = split_lines(text)
    return header_name(lines[0]) if lines else None


def config_python(text: str) -> Optional[str]:
    """The value of a config's first `python:` line (stripped), or None."""
    for line in text.split("\n"):
        if line.startswith("python:"):
            return line.split(":", 1)[1].strip() or None
    return None
