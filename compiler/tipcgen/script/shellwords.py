"""The bits of bash semantics that legacy configs rely on, in Python.

Upstream scripts build command strings and `eval` them; we split them into argv
with POSIX quote removal (shlex, no expansions, no globbing). The generated
bash's `tipc_words` implements exactly this; tests hold the two together.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import Optional


def ifs_split(s: str, sep: str) -> list[str]:
    """Bash word splitting of `s` with IFS=`sep` (one non-blank char), as `read -a` does."""
    if s == "":
        return []
    parts = s.split(sep)
    if parts[-1] == "":
        parts.pop()
    return parts


_BLANKS = re.compile(r"[ \t\r\n]+")
# What str.split() splits an ASCII string on besides the blanks above (bash does not).
_OTHER_SPACE = frozenset("\x0b\x0c\x1c\x1d\x1e\x1f")


def argv_of(command: str) -> Optional[tuple[str, ...]]:
    """words() as a tuple (a Step's argv)."""
    found = words(command)
    return tuple(found) if found is not None else None


def words(command: str) -> list[str] | None:
    """argv of a command string, or None when its quotes do not balance (shlex.split semantics)."""
    if "'" not in command and '"' not in command and "\\" not in command:
        if command.isascii() and _OTHER_SPACE.isdisjoint(command):
            return command.split()  # the common case (the same split, in C)
        return [w for w in _BLANKS.split(command) if w]
    out: list[str] = []
    word: list[str] = []
    have = False  # a word has started (it may be empty: '' and "" are words)
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if c in " \t\r\n":
            if have:
                out.append("".join(word))
                word, have = [], False
            i += 1
            continue
        piece = _QUOTING.get(c, _plain)(command, i)
        if piece is None:
            return None
        word.append(piece[0])
        have, i = True, piece[1]
    if have:
        out.append("".join(word))
    return out


# Each reads one piece of a word starting at command[i] -> (its text, the index after it),
# or None when the piece never ends (an unclosed quote, a backslash at the very end).
_Piece = Optional[tuple[str, int]]


def _plain(command: str, i: int) -> _Piece:
    """A character without special meaning."""
    return command[i], i + 1


def _single_quoted(command: str, i: int) -> _Piece:
    """Single quotes: everything literal up to the next one."""
    end = command.find("'", i + 1)
    if end < 0:
        return None
    return command[i + 1 : end], end + 1


def _double_quoted(command: str, i: int) -> _Piece:
    """Double quotes: a backslash escapes only `"` and `\\` (no expansions: nothing else is special)."""
    text: list[str] = []
    i, n = i + 1, len(command)
    while i < n:
        c = command[i]
        if c == '"':
            return "".join(text), i + 1
        if c == "\\" and i + 1 < n and command[i + 1] in '"\\':
            i += 1
            c = command[i]
        text.append(c)
        i += 1
    return None


def _escaped(command: str, i: int) -> _Piece:
    """A backslash outside quotes: the next character, literally."""
    if i + 1 >= len(command):
        return None
    return command[i + 1], i + 2


_QUOTING = {"'": _single_quoted, '"': _double_quoted, "\\": _escaped}


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
        return _test2(args[0], args[1])
    if n == 3:
        return _test3(args)
    if n == 4:
        return _test4(args)
    return None


def _not(args: list[str]) -> bool | None:
    """`! EXPR`: the negation, a usage error staying one."""
    r = _test(args)
    return None if r is None else not r


def _test2(op: str, arg: str) -> bool | None:
    if op == "!":
        return arg == ""
    if op in _UNARY:
        return _unary(op, arg)
    return None


def _test3(args: list[str]) -> bool | None:
    """A binary operator wins over `!` and parentheses (`[ ! = x ]` compares)."""
    if args[1] in _BINARY:
        return _binary(args[0], args[1], args[2])
    if args[0] == "!":
        return _not(args[1:])
    if args[0] == "(" and args[2] == ")":
        return args[1] != ""
    return None


def _test4(args: list[str]) -> bool | None:
    if args[0] == "!":
        return _not(args[1:])
    if args[0] == "(" and args[3] == ")":
        return _test(args[1:3])
    return None


def single_test(args: list[str]) -> bool:
    """Bash `[ ... ]` on these words; a usage error counts as false, as in an `if`."""
    return _test(args) is True


def unquoted_test(left: str, op: str, right: str) -> bool:
    """`[ ${left} OP ${right} ]` with both sides unquoted and IFS='|' (as in the scripts)."""
    return single_test([*ifs_split(left, "|"), op, *ifs_split(right, "|")])


# The characters a word of a command string passes through unquoted, and that a shell, a sed
# replacement and a device's shell line all read as plain text (spec/policy.py types a chain's
# values by them; the generated scripts' tipc_word and tipc_sed_value mirror the two below).
WORD_CHARS = "A-Za-z0-9._+/=,:@%-"
_PLAIN_WORD = re.compile(f"[{WORD_CHARS}]+")


def path_word(path: str) -> str:
    """`path` as one word of a command string (words() gives it back unchanged): kept as it is
    when plain, else single-quoted; a path starting with `-` is prefixed with `./` (the same file,
    never an option)."""
    if path.startswith("-"):
        path = "./" + path
    if _PLAIN_WORD.fullmatch(path):
        return path
    return "'" + path.replace("'", "'\\''") + "'"


def shell_quote(text: str) -> str:
    """`text` as one bash word that expands to it (the templates' `sh` filter): shlex.quote's
    single quotes, or, when it holds `$` or a backtick, double quotes with `\\ " $ `` ` `` escaped
    (the same word; shellcheck reads `'$x'` in single quotes as a forgotten expansion, SC2016)."""
    if "$" not in text and "`" not in text:
        return shlex.quote(text)
    return '"' + "".join("\\" + c if c in '\\"$`' else c for c in text) + '"'


def sed_literal(text: str) -> str:
    """`text` as the literal replacement of a `sed s/.../.../` (`\\`, `/`, `&` and a newline
    escaped): sed reads it as data, whatever it holds."""
    return text.replace("\\", "\\\\").replace("/", "\\/").replace("&", "\\&").replace("\n", "\\\n")


def sed_quoted(text: str) -> str:
    """sed_literal(text) inside a single-quoted word of a command string (`'` as `'\\''`)."""
    return sed_literal(text).replace("'", "'\\''")


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


def dirname(path: str) -> str:
    """dirname(1) of one operand, as the scripts' `$(dirname ${path})` (no operand: nothing)."""
    if path == "":
        return ""
    stripped = path.rstrip("/")
    if stripped == "":
        return "/"
    head = posixpath.dirname(stripped).rstrip("/")
    if head == "":
        return "/" if stripped.startswith("/") else "."
    return head


def grep_w_lines(text: str, word: str) -> list[int]:
    """`grep -n -w WORD` over a file: the 1-based physical line numbers where WORD stands with no
    word character ([A-Za-z0-9_]) right before or after it."""
    pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])")
    physical = text.split("\n")
    if physical and physical[-1] == "":
        physical.pop()  # the newline ending the last line starts no line of its own
    return [n for n, line in enumerate(physical, 1) if pattern.search(line)]


def extra_args(lines: list[str]) -> dict[str, str]:
    """PaddleSeg's parse_extra_args: the last of a config's (non-empty) lines as `key:value` items
    split on `;`, by key (its runner and its benchmark_train.sh both read them)."""
    out: dict[str, str] = {}
    for item in ifs_split(lines[-1], ";") if lines else []:
        parts = ifs_split(item, ":")
        out[parts[0] if parts else ""] = parts[1] if len(parts) > 1 else ""
    return out
