"""A lint baseline: the findings a repo has accepted, so that `lint` fails only on new ones.

A finding is matched by its rule, its file (relative to the baseline file's folder, so the
baseline works from any checkout), its line's role and its message; not by line number, which
moves with every edit above it. Counts are kept per key: a second identical finding is new.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Annotated

from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from tipcgen.errors import UsageError
from tipcgen.lint.rules import Finding

FORMAT = "tipcgen-lint-baseline"
VERSION = 1


def _key(f: Finding, base: str) -> tuple[str, str, str, str]:
    rel = os.path.relpath(os.path.abspath(f.file), base).replace(os.sep, "/")
    return (f.rule, rel, f.role or "", f.message)


def baseline_text(findings: list[Finding], path: str) -> str:
    base = os.path.dirname(os.path.abspath(path))
    counts = Counter(_key(f, base) for f in findings)
    entries = [
        {"rule": rule, "file": file, "role": role, "message": message, "count": n}
        for (rule, file, role, message), n in sorted(counts.items())
    ]
    return json.dumps({"format": FORMAT, "version": VERSION, "findings": entries}, indent=1, ensure_ascii=False) + "\n"


MAX_COUNT = 1_000_000  # occurrences of one finding a baseline may accept


class _Entry(TypedDict):
    rule: str
    file: str
    role: str
    message: str
    count: NotRequired[Annotated[int, Field(ge=1, le=MAX_COUNT)]]


class _Baseline(TypedDict):
    format: str
    version: int
    findings: list[_Entry]


def read_baseline(path: str) -> Counter:
    """The accepted findings of a baseline, read through the one bounded JSON reader and typed:
    a wrong type, a count out of 1..MAX_COUNT or a missing key is an error naming the file and
    the entry's field."""
    from tipcgen.inputs import check_shape, read_json

    data = read_json(path, what="a lint baseline")
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise UsageError(f"{path}: not a tipcgen lint baseline (version {VERSION}); write one with --write-baseline")
    typed = check_shape(data, _Baseline, path)
    counts: Counter = Counter()
    for entry in typed["findings"]:
        counts[(entry["rule"], entry["file"], entry["role"], entry["message"])] += entry.get("count", 1)
    return counts


def apply_baseline(findings: list[Finding], accepted: Counter, path: str) -> tuple[list[Finding], int, int]:
    """(the findings the baseline does not accept, how many it accepted, how many of its
    entries no longer occur: fixed since)."""
    base = os.path.dirname(os.path.abspath(path))
    left = Counter(accepted)
    new = []
    matched = 0
    for f in findings:
        key = _key(f, base)
        if left[key] > 0:
            left[key] -= 1
            matched += 1
        else:
            new.append(f)
    return new, matched, sum(left.values())
