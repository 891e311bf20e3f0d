"""The character policy of spec text, defined once.

Specs arrive in pull requests, so every string a spec gives is untrusted. Each string field of
the Spec models is one of the Annotated types below (a test walks the models to prove no field
was forgotten); the validators are the only place the rules live:

- `ConfigText` / `ConfigKey`: text that becomes part of a config line. Upstream scripts build
  commands from config lines and `eval` them, so shell metacharacters `; & | < > ` $ \\` are
  refused, and so is every control character (see `CONTROL`). Keys also refuse `:` (a line
  is split on its first colon). `|` is never needed inside a value: where a line holds a list
  (list flags, mode tables, trainer runs, gpu_list, whole_infer) tipcgen writes the `|`
  separators itself, from a YAML list.
- `Interpreter`: `python`, the first word of every command: one name or path, no spaces
  (`rm -rf ~ #` has no metacharacter but would run instead of python).
- `SectionScalar`: a value of a trailing `===..._params===` section (benchmark parameters).
  The benchmark scripts split these on `|` (a list) and `;` (flags, profiler options) and run
  each piece as `export piece`, so `|` and `;` are kept; `& < > ` $ \\` and control
  characters are refused.
- `VerbatimLine`: a whole upstream line kept verbatim (trivia, other_configs): no control
  characters (a newline would add a line), anything else is upstream's text.
- `DocText`: text that only reaches the generated Markdown docs: no control characters, and
  no `|`, `<`, `>` (a table cell separator, raw HTML).
- `PlainText`: text of a prepare step, which tipcgen shell-quotes itself: no control characters.
- Names (`ConfigFileName` `*.txt`, `RawFileName` `*.txt`, `DocFileName` `*.md`, `Name` for
  model/model_name/trainer runs): path components. ASCII `[A-Za-z0-9._+-]` only (no
  look-alikes), starting with a letter or digit (no hidden files, no options), no `..`, no `/`
  or `\\`, at most 200 characters, with the extension the file must have. `SuiteName`
  (`[A-Za-z0-9_][A-Za-z0-9_-]*`, it names a docs file) and `SectionName` (letters, digits, `_`,
  inner spaces: a `===name===` header) are narrower still.
- `ChainWord` / `ChainCommand` / `ChainKey`: a value or key of another chain's config (serving,
  C++, Lite, Paddle2ONNX, dy2static). Its scripts pass a value as an argument, splice it into a
  `sed` replacement (escaped there) or a device's shell line (`adb shell '...'`), so a value is
  one word of `WORD_CHARS` (no space, quote, glob or shell character), not starting with `-` (it
  would be read as an option); a command fragment (the dialect's `command_roles`) is such words
  separated by spaces (there `-m` is an option by design). `word_problem` is the one rule: the
  runners refuse a raw config's value by it too, and the Lite script by `WORD_BASH_RE`.
- Numbers: a `Scalar` float must be finite (`.inf`/`.nan` are refused). Counts (mode tables,
  inference threads/batch sizes given as numbers), GPU ids and trivia indexes are bounded in
  spec.py.

spec.py adds validators of the same kind (marked with `@policy`) for closed sets: modes, lint
rule ids, trainer run names.

CONTROL: Unicode categories Cc (C0 controls incl. tab, newline, carriage return, ESC; DEL;
C1 controls), Cf (invisible format characters: zero-width spaces, bidi overrides, BOM),
Cs (lone surrogates, not encodable) and Zl/Zp (U+2028, U+2029).
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from typing import Annotated, Callable, Optional, Union

from pydantic import AfterValidator

from tipcgen.script.shellwords import WORD_CHARS

SHELL_META = ";&|<>`$\\"
SECTION_META = "&<>`$\\"  # SHELL_META less `;` and `|`, which separate benchmark values
DOC_META = "|<>"
SHELL_META_SHOWN = " ".join(SHELL_META)
CONTROL_CATEGORIES = ("Cc", "Cf", "Cs", "Zl", "Zp")
MAX_NAME = 200
# GPU ids: CUDA device ordinals are small (a node has a few, at most a few dozen GPUs); the bound
# only catches typos and overflow like 10**30 (spec topology and lint's gpu_list check).
MAX_GPU_ID = 1023

_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NAMES = {
    0x00: "NUL",
    0x09: "TAB",
    0x0A: "LINE FEED",
    0x0B: "LINE TABULATION",
    0x0C: "FORM FEED",
    0x0D: "CARRIAGE RETURN",
    0x1B: "ESCAPE",
    0x7F: "DELETE",
    0x85: "NEXT LINE",
}


def policy(fn: Callable) -> Callable:
    """Mark a validator as part of the policy (the model-walking test looks for the mark)."""
    fn.__tipc_policy__ = True  # type: ignore[attr-defined]
    return fn


def char_name(ch: str) -> str:
    """`U+000B (LINE TABULATION)`: how an error names a character."""
    code = ord(ch)
    name = _NAMES.get(code) or unicodedata.name(ch, "") or unicodedata.category(ch)
    return f"U+{code:04X} ({name})"


def first_control(value: str) -> Optional[str]:
    """The first character of a refused Unicode category, or None."""
    if value.isascii():
        m = _ASCII_CONTROL.search(value)
        return m.group(0) if m else None
    for ch in value:
        if unicodedata.category(ch) in CONTROL_CATEGORIES:
            return ch
    return None


def _show(value: str) -> str:
    shown = repr(value)  # escapes control and format characters: safe to print
    return shown if len(shown) <= 80 else shown[:60] + "..." + shown[-12:]


def refuse_control(value: str) -> None:
    """Raise the policy's error for the first control character of `value`."""
    ch = first_control(value)
    if ch is not None:
        raise ValueError(
            f"{_show(value)} contains {char_name(ch)} at offset {value.index(ch)}: control characters"
            " (tab, newline, carriage return, ESC, DEL, C1), invisible format characters and the"
            " line/paragraph separators U+2028/U+2029 (Unicode Cc, Cf, Cs, Zl, Zp) are not allowed"
        )


def _refuse(value: str, chars: str, why: str) -> None:
    if not _any_of(chars).search(value):  # the common case, in C
        return
    for i, ch in enumerate(value):
        if ch in chars:
            raise ValueError(f"{_show(value)} contains {ch!r} at offset {i}: {why}")


@functools.lru_cache(maxsize=16)
def _any_of(chars: str) -> re.Pattern:
    return re.compile("[" + re.escape(chars) + "]")


@policy
def check_config_text(value: str) -> str:
    refuse_control(value)
    _refuse(
        value,
        SHELL_META,
        "upstream scripts `eval` the commands built from config lines, so shell"
        f" metacharacters ({SHELL_META_SHOWN}) are not allowed",
    )
    return value


@policy
def check_config_key(value: str) -> str:
    check_config_text(value)
    _refuse(value, ":", "a config line is split on its first colon, so a key cannot contain one")
    return value


_INTERPRETER = re.compile(r"[A-Za-z0-9_.+/][A-Za-z0-9_.+/-]*")


@policy
def check_interpreter(value: str) -> str:
    """`python`: the first word of every command the scripts run."""
    check_config_text(value)
    if not _INTERPRETER.fullmatch(value):
        raise ValueError(
            f"python {_show(value)} must be one interpreter name or path (letters, digits and"
            " `._+-/`, no spaces): every step's command starts with it"
        )
    return value


@policy
def check_section_text(value: str) -> str:
    refuse_control(value)
    _refuse(
        value,
        SECTION_META,
        "benchmark scripts run section values through the shell, so"
        f" {' '.join(SECTION_META)} are not allowed (`;` and `|` separate values)",
    )
    return value


@policy
def check_verbatim_line(value: str) -> str:
    refuse_control(value)
    return value


@policy
def check_plain_text(value: str) -> str:
    refuse_control(value)
    return value


@policy
def check_doc_text(value: str) -> str:
    refuse_control(value)
    _refuse(value, DOC_META, "it is written into a Markdown table, where `|` ends the cell and `<`/`>` is HTML")
    return value


def _refuse_non_finite(value, hint: str = "") -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number (.inf and .nan are not allowed){hint}")


@policy
def check_scalar(value):
    """A legacy value (bool, int, float or text) that becomes config text."""
    _refuse_non_finite(value, "; quote it to mean the text")
    if isinstance(value, str):
        check_config_text(value)
    return value


@policy
def check_section_scalar(value):
    _refuse_non_finite(value)
    if isinstance(value, str):
        check_section_text(value)
    return value


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


def name_problem(value: object, suffix: str = "") -> Optional[str]:
    """Why `value` is not a plain ASCII file or directory name ending in `suffix`, or None."""
    if not isinstance(value, str) or value == "":
        return "it is empty"
    ch = first_control(value)
    if ch is not None:
        return f"it contains {char_name(ch)}"
    if "/" in value or "\\" in value:
        return "it contains a path separator"
    if ".." in value:
        return "it contains `..`"
    if len(value) > MAX_NAME:
        return f"it is {len(value)} characters long (at most {MAX_NAME})"
    if not value.isascii():
        bad = next(c for c in value if not c.isascii())
        return f"it contains the non-ASCII {char_name(bad)}"
    if not _NAME.fullmatch(value):
        return (
            "it must start with a letter or digit"
            if not value[0].isalnum()
            else "it may only hold letters, digits and `._+-`"
        )
    if suffix and (not value.endswith(suffix) or value == suffix):
        return f"it does not end in `{suffix}`"
    return None


def is_name(value: object, suffix: str = "") -> bool:
    return name_problem(value, suffix) is None


def _name_check(fn_name: str, what: str, suffix: str = "", why: str = "") -> Callable:
    @policy
    def check(value: str) -> str:
        refuse_control(value)
        problem = name_problem(value, suffix)
        if problem:
            kind = f"a plain `*{suffix}` file name" if suffix else "a plain name"
            raise ValueError(
                f"{what} {_show(value)} must be {kind} ({problem}): ASCII letters, digits"
                f" and `._+-`, starting with a letter or digit, no `..`, `/` or `\\`{why}"
            )
        return value

    check.__name__ = check.__qualname__ = fn_name
    return check


check_config_file_name = _name_check("check_config_file_name", "file", ".txt", "; it is written in configs/<model>/")
check_raw_file_name = _name_check("check_raw_file_name", "config file", ".txt", "; it is written in configs/<model>/")
check_doc_file_name = _name_check("check_doc_file_name", "doc", ".md", "; it is written in docs/")
check_name = _name_check("check_name", "name", "", "; it names a directory and is interpolated into shell commands")

_SUITE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
_SECTION = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_ ]*[A-Za-z0-9_])?")


@policy
def check_suite_name(value: str) -> str:
    refuse_control(value)
    if not (_SUITE.fullmatch(value) and len(value) <= 100):
        raise ValueError(
            f"suite name {_show(value)} must be ASCII letters, digits, `_` and `-`"
            " (at most 100; it names the suite's docs file)"
        )
    return value


@policy
def check_section_name(value: str) -> str:
    refuse_control(value)
    if not _SECTION.fullmatch(value) or len(value) > 100:
        raise ValueError(
            f"section name {_show(value)} must be ASCII letters, digits, `_` and inner spaces"
            " (it is written as a `===name===` header line)"
        )
    return value


# One word of a chain's value: what a shell, sed's replacement and a device shell all take as
# plain text (a path, a URL, a name, a number): script/shellwords.py WORD_CHARS.
_WORD = re.compile(f"[{WORD_CHARS}]*")
# The same rule for bash's `[[ $v =~ ... ]]` (the Lite script refuses a raw config's value by it).
WORD_BASH_RE = f"^[{WORD_CHARS}]*$"


def word_problem(value: str, command: bool = False) -> Optional[str]:
    """Why `value` cannot be passed as data by a chain's script (None: it can). `command`: a
    command fragment, words separated by spaces, which may be options."""
    words = value.split(" ") if command else [value]
    for word in words:
        # the whole word at once; char by char only to name the first bad one
        bad = None if _WORD.fullmatch(word) else next((c for c in word if not _WORD.fullmatch(c)), None)
        if bad is not None:
            shown = char_name(bad) if not bad.isprintable() or bad == " " else repr(bad)
            return f"it contains {shown}"
        if word.startswith("-") and not command:
            return "it starts with `-` (it would be read as an option)"
    return None


def _chain_check(fn_name: str, command: bool, what: str) -> Callable:
    @policy
    def check(value):
        check_scalar(value)
        if isinstance(value, str):
            problem = word_problem(value, command)
            if problem:
                raise ValueError(
                    f"{_show(value)} is not {what} ({problem}): the chain scripts pass it as data (an"
                    f" argument, a sed replacement, a device's shell line), so it may only hold ASCII"
                    f" letters, digits and `._+/=,:@%-`{'' if command else ', not starting with `-`'}"
                )
        return value

    check.__name__ = check.__qualname__ = fn_name
    return check


check_chain_word = _chain_check("check_chain_word", False, "one word")
check_chain_command = _chain_check("check_chain_command", True, "words separated by spaces")


@policy
def check_chain_key(value: str) -> str:
    """A chain flag's key (`--serving_server`): one word, an option by design."""
    check_config_key(value)
    problem = word_problem(value, command=True) or (" " in value and "it contains U+0020 (SPACE)") or None
    if problem:
        raise ValueError(f"key {_show(value)} is not one word ({problem}): ASCII letters, digits and `._+/=,:@%-`")
    return value


@policy
def check_config_folder(value: str) -> str:
    """A spec's `configs:` folder: relative to the repo root, each part a plain name (never `..`,
    a glob character or a blank: the runner matches the path in a `case` pattern)."""
    parts = value.split("/")
    bad = next((p for p in parts if name_problem(p)), None)
    if bad is not None or len(parts) > 16 or parts[0] != "test_tipc" or len(parts) < 2:
        why = (
            name_problem(bad)
            if bad is not None
            else "it has more than 16 parts"
            if len(parts) > 16
            else "tipcgen writes and owns files only inside test_tipc/"
        )
        raise ValueError(
            f"configs {_show(value)} must be a relative folder of plain names (test_tipc/configs/a/b): "
            f"{_show(bad or value)}: {why}"
        )
    return value


ConfigText = Annotated[str, AfterValidator(check_config_text)]
ConfigKey = Annotated[str, AfterValidator(check_config_key)]
Interpreter = Annotated[str, AfterValidator(check_interpreter)]
SectionKey = ConfigKey
VerbatimLine = Annotated[str, AfterValidator(check_verbatim_line)]
PlainText = Annotated[str, AfterValidator(check_plain_text)]
DocText = Annotated[str, AfterValidator(check_doc_text)]
ConfigFileName = Annotated[str, AfterValidator(check_config_file_name)]
RawFileName = Annotated[str, AfterValidator(check_raw_file_name)]
DocFileName = Annotated[str, AfterValidator(check_doc_file_name)]
Name = Annotated[str, AfterValidator(check_name)]
ConfigFolder = Annotated[str, AfterValidator(check_config_folder)]
SuiteName = Annotated[str, AfterValidator(check_suite_name)]
SectionName = Annotated[str, AfterValidator(check_section_name)]

# A legacy value: what YAML gives us, rendered to config text by `spec.text()`. The check runs
# on the union's result, so a refused text gives one error, not one per union member.
Scalar = Annotated[Union[bool, int, float, str], AfterValidator(check_scalar)]
SectionScalar = Annotated[Union[bool, int, float, str], AfterValidator(check_section_scalar)]
ChainWord = Annotated[Union[bool, int, float, str], AfterValidator(check_chain_word)]
ChainCommand = Annotated[Union[bool, int, float, str], AfterValidator(check_chain_command)]
ChainKey = Annotated[str, AfterValidator(check_chain_key)]


def text(value: Optional[Scalar]) -> str:
    """Render a YAML scalar as legacy config text (None -> `null`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return repr(value)
    return str(value)
