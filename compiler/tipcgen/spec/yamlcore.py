"""What a YAML scalar means in a spec: its tag when it is plain and untagged, and its value.

The spec loader reads YAML 1.2 as ruamel.yaml's safe loader does, whichever parser produced the
events (libyaml's resolver follows YAML 1.1, where `yes`, `on` and `010` are not what they are in
1.2, so the events' text is resolved here instead). The rules, as ruamel applies them:

- true/false in three spellings (`true`, `True`, `TRUE`) are booleans; `yes`, `no`, `on`, `off`, `y`
  and `n` are text (an explicit `!!bool` still reads them);
- integers are decimal, `0b`, `0o` or `0x` with optional sign and `_` anywhere after the first
  character; a leading zero is decimal (`010` is 10); `1:20` is text;
- floats need a `.` or an exponent; `.inf`, `-.inf` and `.nan` are the special values;
- `~`, `null`, `Null`, `NULL` and nothing at all are null;
- `YYYY-MM-DD` is a date, a date with a time a timestamp;
- `<<` is a merge key and `=` a value key (the loader refuses both).

tests/test_load_fast.py checks these rules against ruamel's own on generated text.
"""

from __future__ import annotations

import datetime
import math
import re
from typing import Any, Callable

CORE = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = (CORE + t for t in ("str", "int", "float", "bool", "null"))
TIMESTAMP, MERGE, VALUE, YAML = (CORE + t for t in ("timestamp", "merge", "value", "yaml"))

_TRUE_FALSE = {"true", "True", "TRUE", "false", "False", "FALSE"}
_NULLS = {"", "~", "null", "Null", "NULL"}
_FLOAT = re.compile(
    r"[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?"  # 1.5, 1., 1.5e3
    r"|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+"  # 1e3
    r"|[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?"  # .5, .5e+3 (the exponent's sign is required here)
    r"|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN)"
)
_INT = re.compile(r"[-+]?(?:0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|[0-9_]+)")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME = re.compile(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
    r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?"
)
_NUMERIC_START = set("-+0123456789.")


class NeedsTimestamp(Exception):
    """A date with a time of day: read by ruamel's constructor (time zones, fractions), not here."""


def resolve(value: str) -> str:
    """The tag of a plain, untagged scalar."""
    if not value:
        return NULL
    first = value[0]
    if first in _NUMERIC_START:
        if _FLOAT.fullmatch(value):
            return FLOAT
        if first != "." and _INT.fullmatch(value):
            return INT
        if first.isdigit() and (_DATE.fullmatch(value) or _DATETIME.fullmatch(value)):
            return TIMESTAMP
        return STR
    if first in "tTfF":
        return BOOL if value in _TRUE_FALSE else STR
    if first in "~nN":
        return NULL if value in _NULLS else STR
    if value == "<<":
        return MERGE
    if value == "=":
        return VALUE
    return STR


def _int(value: str) -> int:
    digits = value.replace("_", "")
    sign = -1 if digits[0] == "-" else 1  # IndexError on empty text, as ruamel
    if digits[0] in "+-":
        digits = digits[1:]
    if digits == "0":
        return 0
    for prefix, base in (("0b", 2), ("0x", 16), ("0o", 8)):
        if digits.startswith(prefix):
            return sign * int(digits[2:], base)
    return sign * int(digits)


def _float(value: str) -> float:
    digits = value.replace("_", "").lower()
    sign = -1 if digits[0] == "-" else 1
    if digits[0] in "+-":
        digits = digits[1:]
    if digits == ".inf":
        return sign * math.inf
    if digits == ".nan":
        return math.nan
    return sign * float(digits)


_BOOLS = {"yes": True, "no": False, "y": True, "n": False, "true": True, "false": False, "on": True, "off": False}


def _bool(value: str) -> bool:
    return _BOOLS[value.lower()]  # KeyError on anything else, as ruamel


def _timestamp(value: str) -> datetime.date:
    if not _DATE.fullmatch(value):
        raise NeedsTimestamp(value)
    return datetime.date(int(value[:4]), int(value[5:7]), int(value[8:]))


CONSTRUCT: dict[str, Callable[[str], Any]] = {
    INT: _int,
    FLOAT: _float,
    BOOL: _bool,
    NULL: lambda _value: None,
    TIMESTAMP: _timestamp,
}
