"""Bash text as code: its comments gone, so that what a script *names* in a comment (a mode in a
usage line, `prepare.sh in cpp_infer`) is never read as what it does. Imports nothing of tipcgen."""

from __future__ import annotations

import functools
import re

_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_]\w*)\2")


def _heredoc_end(text: str, line_end: int, word: str, tabs: bool) -> int:
    """Where the here-document whose operator line ends at `line_end` ends (after its closing
    `word` line; `<<-`: tabs before it allowed); the end of the text when it never closes."""
    if line_end < 0:
        return len(text)
    pos = line_end + 1
    while pos < len(text):
        nl = text.find("\n", pos)
        line = text[pos : len(text) if nl < 0 else nl]
        if (line.lstrip("\t") if tabs else line) == word:
            return len(text) if nl < 0 else nl
        if nl < 0:
            break
        pos = nl + 1
    return len(text)


def _in_arithmetic(text: str, i: int) -> bool:
    """Whether position `i` is inside a `((...))` opened on its line (`$((1<<n))` is a shift)."""
    line = text[text.rfind("\n", 0, i) + 1 : i]
    return line.count("((") > line.count("))")


@functools.lru_cache(maxsize=256)  # migrate asks it of the same scripts once per model and mode
def code_only(text: str) -> str:
    """`text` (bash) without its comments, lines kept: a `#` starting a word outside quotes and
    `${...}` begins one (`$#`, `${#x}`, `a#b` and a quoted `#` do not)."""
    out: list = []
    stack: list = []  # the open quotes and ${ (', ", {), innermost last
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        top = stack[-1] if stack else ""
        if top == "'":
            if c == "'":
                stack.pop()
        elif c == "\\" and i + 1 < n:
            out.append(text[i : i + 2])
            i += 2
            continue
        elif text.startswith("${", i):
            stack.append("{")
            out.append("${")
            i += 2
            continue
        elif c == "}" and top == "{":
            stack.pop()
        elif c == '"':
            if top == '"':
                stack.pop()
            else:
                stack.append('"')
        elif c == "'" and top != '"':
            stack.append("'")
        elif (
            not stack and text.startswith("<<", i) and not _in_arithmetic(text, i) and (doc := _HEREDOC.match(text, i))
        ):
            # a here-document's body is data, kept as it is (an apostrophe in it opens no quote)
            line_end = text.find("\n", doc.end())
            body = _heredoc_end(text, line_end, doc.group(3), bool(doc.group(1)))
            out.append(text[i:body])
            i = body
            continue
        elif c == "#" and not stack and (i == 0 or text[i - 1] in " \t\n;&|()"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        out.append(c)
        i += 1
    return "".join(out)
