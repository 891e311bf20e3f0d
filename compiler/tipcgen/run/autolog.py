"""Parse the AutoLog benchmark block that inference scripts print with `--benchmark=True`.

The block (PaddleOCR, PaddleClas, the `models` tutorials all use AutoLog) looks like::

    [2022/06/02 22:53:35] ppocr INFO: ---------------------- Env info ----------------------
    [2022/06/02 22:53:35] ppocr INFO:  OS_version: Ubuntu 16.04
    ...
    [2022/06/02 22:53:35] ppocr INFO: ----------------------- Perf info -----------------------
    [2022/06/02 22:53:35] ppocr INFO:  cpu_rss(MB): 288.957, gpu_rss(MB): None, gpu_util: None%

`parse_autolog(text)` returns ``{"env": {...}, "paddle": {...}, "conf": {...}, "model": {...},
"data": {...}, "perf": {...}}`` (every section present, empty when the log lacks it), or None when
the text holds no block. Values: numbers become floats (a trailing `%` is dropped: `gpu_util: 12%`
-> 12.0), `None` becomes None, `True`/`False` booleans, anything else stays a string; keys named
`*version` or `*commit` always stay strings. When a log holds several blocks the last one wins.
"""

from __future__ import annotations

import re
from typing import Any, Optional

SECTIONS = ("env", "paddle", "conf", "model", "data", "perf")

_HEADER = re.compile(r"-{3,}\s*(Env|Paddle|Conf|Model|Data|Perf)\s+info\s*-{3,}", re.IGNORECASE)
# A logging prefix: `[2022/06/02 22:53:35] ppocr INFO: `, `I0602 root INFO: `, `INFO: ` ...
_PREFIX = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:\S+\s+){0,4}?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s*:")
_BRACKET = re.compile(r"^\s*\[[^\]]*\]\s*")
# One `key: value` item. Keys are short words with units in parentheses (`cpu_rss(MB)`,
# `total time spent(s)`); a path or a sentence (`Predicts of ./x.jpg: ...`) is not a key, so the
# log lines that follow the block end it.
_KEY = r"[A-Za-z_][A-Za-z0-9_]*(?:\([^()]*\))?(?: [A-Za-z_][A-Za-z0-9_]*(?:\([^()]*\))?){0,4}"
_ITEM = re.compile(rf"^\s*({_KEY})\s*:\s?(.*)$")
# Where a line with several items splits: `, ` followed by another `key: `.
_NEXT_ITEM = re.compile(rf",\s*(?=(?:{_KEY})\s*:(?:\s|$))")
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")


def _message(line: str) -> str:
    """The line without its logging prefix."""
    m = _PREFIX.match(line)
    if m:
        return line[m.end() :]
    m = _BRACKET.match(line)
    return line[m.end() :] if m else line


def convert(key: str, raw: str) -> Any:
    """The typed value of one item (see the module docstring)."""
    value = raw.strip()
    if key.lower().endswith(("version", "commit")):
        return value
    bare = value[:-1].rstrip() if value.endswith("%") else value
    if bare in ("None", "none", "null"):
        return None
    if bare in ("True", "False"):
        return bare == "True"
    if _NUMBER.match(bare):
        return float(bare)
    return value


def _items(message: str) -> Optional[list[tuple[str, Any]]]:
    """The items of one message, or None when it is not an item line."""
    if not _ITEM.match(message):
        return None
    out = []
    for part in _NEXT_ITEM.split(message):
        m = _ITEM.match(part)
        if not m:
            return None
        key = m.group(1).strip()
        out.append((key, convert(key, m.group(2))))
    return out


def parse_autolog(text: str) -> Optional[dict]:
    """The last AutoLog block of `text` as {section: {key: value}}, or None when there is none."""
    found: Optional[dict] = None
    block: Optional[dict] = None
    section: Optional[str] = None
    for line in text.splitlines():
        header = _HEADER.search(line)
        if header:
            name = header.group(1).lower()
            # a new block starts at `Env info`, or at any header coming back to an earlier section
            if block is None or name == "env" or block[name]:
                block = {s: {} for s in SECTIONS}
                found = block
            section = name
            continue
        if section is None or block is None:  # (a section is only set together with its block)
            continue
        message = _message(line)
        if not message.strip():
            continue  # the blank logger line around the block
        items = _items(message)
        if items is None:
            section = None  # the block is over; its sections stay as parsed
            continue
        block[section].update(items)
    return found
