"""One escaper per medium: every string that reaches a reader goes through exactly one of these.

Text from a spec, a config, a record or a log is hostile: an ESC byte drives the terminal (clears a
line, forges "up to date"), a CR overwrites what was printed, a bidi override (U+202E) reverses
what a reader sees, `<img onerror>` runs in a pull request's or a page's HTML, a backtick run
closes a code span early and a `|` splits a table row.

- `for_terminal(text)`: every character that is not printable (C0 and C1 controls, ESC, CR,
  backspace, DEL, bidi overrides and isolates, other format characters, lone surrogates) as a
  visible escape (`\\x1b`, `\\u202e`); newlines and tabs kept only when `lines=True` (a diff), so
  by default one message is one line; `json=True` writes every escape as JSON's `\\uXXXX` (JSON
  printed to a terminal reads back the same). cli.common.echo prints through it; JUnit XML holds
  its output (XML 1.0 cannot hold the control characters), escaped again by ElementTree.
- `for_markdown(text, form)`: `text` as literal inline text (`form="text"`: markdown punctuation
  backslash-escaped, newlines as spaces), as a code span (`"code"`: fenced by more backticks than
  any run inside, `|` escaped for table cells) or a fenced block (`"block"`: a fence longer than
  any backtick run inside); never an HTML element, a link or a cell from the value. Control and
  bidi characters are shown as in `for_terminal`.
- `for_html(text)`: `html.escape` (quotes too: safe in an attribute) after the same control rule.
"""

from __future__ import annotations

import html
import re
from typing import Any, Literal

__all__ = ["for_html", "for_markdown", "for_terminal"]


_DROP = {"\n\t": {10: None, 9: None}}  # the kept characters, removed for the fast check


def _visible(text: str, keep: str = "", json: bool = False) -> str:
    """Non-printable characters (Python's rule: Unicode categories C* and Z* but the space) as
    escapes; `keep` lists the ones a medium shows as they are (a diff's newlines). `json`: every
    escape as `\\uXXXX` (a surrogate pair above U+FFFF), which JSON reads back as the character."""
    if (text.translate(_DROP[keep]) if keep else text).isprintable():  # the common case, in C
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch.isprintable() or ch in keep:
            out.append(ch)
        elif json and code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        elif json:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


def for_terminal(text: Any, lines: bool = False, json: bool = False) -> str:
    """`text` safe to print: nothing in it drives the terminal or forges another line (with
    `lines=True` it may hold several lines and tabs, as a diff does; a CR still cannot
    overwrite one). `json=True` for JSON text printed to the terminal: a non-printable character
    can only sit in a JSON string there, so it becomes the `\\uXXXX` escape JSON reads back."""
    return _visible(str(text), "\n\t" if lines else "", json)


# Markdown that text could use to break a table (`|`), inject HTML or an entity (`<`, `>`, `&`),
# start a link or an image (`[`, `]`, `!`), open a code span (`` ` ``) or escape our escapes
# (`\`): escaped with a backslash, as CommonMark allows for any ASCII punctuation. `_` and `*`
# stay (at most emphasis; names have `_`): the text is never at a line's start.
_MD_SPECIAL = re.compile(r"([\\`|\[\]<>&!])")
_BREAK = re.compile(r"[\r\n\x0b\x0c\x85\u2028\u2029]+")
_TICKS = re.compile("`+")


def _longest_ticks(text: str) -> int:
    return max((len(run) for run in _TICKS.findall(text)), default=0)


def for_markdown(text: Any, form: Literal["text", "code", "block"] = "text", table: bool = False) -> str:
    """`text` as GitHub-flavoured markdown that shows it literally (see the module docstring).
    "text" is safe anywhere on a line; "code" too, in a table cell with `table=True` (its `|`
    escaped as GFM wants there); "block" starts and ends with its fence lines."""
    value = str(text)
    if form == "block":
        value = _visible(value, "\n\t")
        bar = "`" * max(3, _longest_ticks(value) + 1)
        return f"{bar}text\n{value}\n{bar}"
    value = _visible(_BREAK.sub(" ", value))
    if form == "text":
        return _MD_SPECIAL.sub(r"\\\1", value)
    # a code span: nothing inside is markdown or HTML; only a table cell's `|` needs its escape
    # (GFM removes it before the span is read); a span is never empty (`` is not one)
    value = (value.replace("|", "\\|") if table else value) or " "
    fence = "`" * (_longest_ticks(value) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or value.strip(" ") != value else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def for_html(text: Any) -> str:
    """`text` as HTML text or a quoted attribute value: no element, attribute or entity from it,
    control and bidi characters shown as escapes."""
    return html.escape(_visible(str(text)), quote=True)
