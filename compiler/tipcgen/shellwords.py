"""The bits of bash semantics that legacy configs rely on, in Python.

Upstream scripts build command strings and `eval` them; we split them into argv
with POSIX quote removal (shlex, no expansions, no globbing). The generated
bash's `tipc_words` implements exactly this; tests hold the two together.
"""

from __future__ import annotations

import shlex


def ifs_split(s: str, sep: str) -> list[str]:
    """Bash word splitting of `s` with IFS=`sep` (one non-blank char), as `read -a` does."""
    if s == "":
        return []
    parts = s.split(sep)
    if parts[-1] == "":
        parts.pop()
    return parts


def words(command: str) -> list[str] | None:
    """argv of a command string, or None when its quotes do not balance."""
    try:
        return shlex.split(command, comments=False, posix=True)
    except ValueError:
        return None


def single_test(args: list[str]) -> bool:
    """Bash `[ ... ]` with the string operators the scripts use; errors count as false."""
    n = len(args)
    if n == 0:
        return False
    if n == 1:
        return args[0] != ""
    if n == 2:
        if args[0] == "!":
            return args[1] == ""
        if args[0] == "-n":
            return args[1] != ""
        if args[0] == "-z":
            return args[1] == ""
        return False
    if n == 3:
        a, op, b = args
        if op in ("=", "=="):
            return a == b
        if op == "!=":
            return a != b
        if a == "!":
            return not single_test(args[1:])
        return False
    if n == 4 and args[0] == "!":
        return not single_test(args[1:])
    return False


def test_unquoted(left: str, op: str, right: str) -> bool:
    """`[ ${left} OP ${right} ]` with both sides unquoted and IFS='|' (as in the scripts)."""
    return single_test(ifs_split(left, "|") + [op] + ifs_split(right, "|"))


def set_param(key: str, value: str) -> str:
    """func_set_params: `key=value`, or a blank when key or value is null/empty."""
    if key == "null":
        return " "
    if value in ("null", " ", ""):
        return " "
    return f"{key}={value}"


def mode_value(table: str, mode: str) -> str:
    """func_parser_params: the value of `mode` in `m1=v1|m2=v2`, or '' when absent."""
    for item in ifs_split(table, "|"):
        parts = ifs_split(item, "=")
        name = parts[0] if parts else ""
        if name == mode:
            return parts[1] if len(parts) > 1 else ""
    return ""
