"""The bits of bash semantics that legacy configs rely on, in Python.

Upstream scripts build command strings and `eval` them; we split them into argv
with POSIX quote removal (shlex, no expansions, no globbing). The generated
bash's `tipc_words` implements exactly this; tests hold the two together.
"""

from __future__ import annotations

import re


def ifs_split(s: str, sep: str) -> list[str]:
    """Bash word splitting of `s` with IFS=`sep` (one non-blank char), as `read -a` does."""
    if s == "":
        return []
    parts = s.split(sep)
    if parts[-1] == "":
        parts.pop()
    return parts


_BLANKS = re.compile(r"[ \t\r\n]+")


def words(command: str) -> list[str] | None:
    """argv of a command string, or None when its quotes do not balance (shlex.split semantics)."""
    if "'" not in command and '"' not in command and "\\" not in command:
        return [w for w in _BLANKS.split(command) if w]  # the common case
    out: list[str] = []
    word: list[str] = []
    have = False
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if c in " \t\r\n":
            if have:
                out.append("".join(word))
                word, have = [], False
        elif c == "'":
            end = command.find("'", i + 1)
            if end < 0:
                return None
            word.append(command[i + 1 : end])
            have, i = True, end
        elif c == '"':
            i += 1
            while True:
                if i >= n:
                    return None
                c = command[i]
                if c == '"':
                    break
                if c == "\\" and i + 1 < n and command[i + 1] in '"\\':
                    i += 1
                    c = command[i]
                word.append(c)
                i += 1
            have = True
        elif c == "\\":
            if i + 1 >= n:
                return None
            i += 1
            word.append(command[i])
            have = True
        else:
            word.append(c)
            have = True
        i += 1
    if have:
        out.append("".join(word))
    return out


_UNARY = set(
    [
        "-a",
        "-b",
        "-c",
        "-d",
        "-e",
        "-f",
        "-g",
        "-h",
        "-k",
        "-p",
        "-r",
        "-s",
        "-t",
        "-u",
        "-w",
        "-x",
        "-G",
        "-L",
        "-N",
        "-O",
        "-S",
        "-z",
        "-n",
        "-o",
        "-v",
        "-R",
    ]
)
_BINARY = {"=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "-a", "-o"}


def _unary(op: str, arg: str) -> bool:
    if op == "-n":
        return arg != ""
    if op == "-z":
        return arg == ""
    return False  # file and option tests: the scripts' words never name real files


def _binary(a: str, op: str, b: str) -> bool | None:
    if op in ("=", "=="):
        return a == b
    if op == "!=":
        return a != b
    if op == "<":
        return a < b
    if op == ">":
        return a > b
    if op == "-a":
        return a != "" and b != ""
    if op == "-o":
        return a != "" or b != ""
    if op in ("-nt", "-ot", "-ef"):
        return False
    try:
        x, y = int(a.strip()), int(b.strip())
    except ValueError:
        return None  # "integer expression expected"
    return {"-eq": x == y, "-ne": x != y, "-lt": x < y, "-le": x <= y, "-gt": x > y, "-ge": x >= y}[op]


def _test(args: list[str]) -> bool | None:
    """POSIX `test` by argument count; None is a usage error (exit status 2)."""
    n = len(args)
    if n == 0:
        return False
    if n == 1:
        return args[0] != ""
    if n == 2:
        if args[0] == "!":
            return args[1] == ""
        if args[0] in _UNARY:
            return _unary(args[0], args[1])
        return None
    if n == 3:
        if args[1] in _BINARY:
            return _binary(args[0], args[1], args[2])
        if args[0] == "!":
            r = _test(args[1:])
            return None if r is None else not r
        if args[0] == "(" and args[2] == ")":
            return args[1] != ""
        return None
    if n == 4:
        if args[0] == "!":
            r = _test(args[1:])
            return None if r is None else not r
        if args[0] == "(" and args[3] == ")":
            return _test(args[1:3])
    return None


def single_test(args: list[str]) -> bool:
    """Bash `[ ... ]` on these words; a usage error counts as false, as in an `if`."""
    return _test(args) is True


def unquoted_test(left: str, op: str, right: str) -> bool:
    """`[ ${left} OP ${right} ]` with both sides unquoted and IFS='|' (as in the scripts)."""
    return single_test([*ifs_split(left, "|"), op, *ifs_split(right, "|")])


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
