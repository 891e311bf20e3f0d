"""A lint baseline: the findings a repo has accepted, so that `lint` fails only on new ones.

A finding is matched by its rule, its file (relative to the baseline file's folder, so the
baseline works from any checkout), its line's role and its message; not by line number, which
moves with every edit above it. Counts are kept per key: a second identical finding is new.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

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


def read_baseline(path: str) -> Counter:
    from tipcgen.inputs import read_text

    try:
        data: Any = json.loads(read_text(path))
    except ValueError as exc:
        raise UsageError(
            f"{path}: not a lint baseline (invalid JSON: {exc}); write one with --write-baseline"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise UsageError(f"{path}: not a tipcgen lint baseline (version {VERSION}); write one with --write-baseline")
    counts: Counter = Counter()
    for entry in data.get("findings") or []:
        try:
            key = (str(entry["rule"]), str(entry["file"]), str(entry["role"]), str(entry["message"]))
            counts[key] += int(entry.get("count", 1))
        except (KeyError, TypeError, ValueError):
            raise UsageError(f"{path}: a finding entry lacks rule/file/role/message: {entry!r}") from None
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
