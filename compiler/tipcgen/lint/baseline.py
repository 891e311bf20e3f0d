"""A lint baseline: the findings a repo has accepted, so that `lint` fails only on new ones.

A finding is matched by its rule, its file (relative to the baseline file's folder, so the
baseline works from any checkout), its line's role and its message; not by line number, which
moves with every edit above it. Counts are kept per key: a second identical finding is new.
"""

from __future__ import annotations

import json
import os
from collections import Counter

from tipcgen.errors import Problem, SpecError, UsageError, printable
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


MAX_COUNT = 1_000_000  # identical findings one key may accept (a repo has thousands of configs at most)
_TEXT_FIELDS = ("rule", "file", "role", "message")


def _bad(path: str, field: str, message: str) -> SpecError:
    return SpecError(
        [Problem(printable(path), None, None, field, message, "write the baseline again with --write-baseline")]
    )


def read_baseline(path: str) -> Counter:
    """The accepted findings of the baseline file `path`, each key's count. The file comes with
    the repo (so with a pull request): it is read through the one bounded JSON reader (size,
    nesting, numbers that fit), then every value is checked for its type and range, and a bad one
    is an error naming the file and the field (never a count of -1000000 "fixed since")."""
    from tipcgen.inputs import read_json

    data = read_json(path, what="a lint baseline")
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise UsageError(f"{path}: not a tipcgen lint baseline (version {VERSION}); write one with --write-baseline")
    entries = data.get("findings", [])
    if not isinstance(entries, list):
        raise _bad(path, "findings", f"must be a list of findings, not {type(entries).__name__}")
    counts: Counter = Counter()
    for i, entry in enumerate(entries):
        where = f"findings[{i}]"
        if not isinstance(entry, dict):
            raise _bad(path, where, f"must be an object (rule, file, role, message, count), not {type(entry).__name__}")
        for name in _TEXT_FIELDS:
            if not isinstance(entry.get(name), str):
                got = "missing" if name not in entry else f"a {type(entry[name]).__name__}"
                raise _bad(path, f"{where}.{name}", f"must be a string ({got})")
        count = entry.get("count", 1)
        # bool is an int to Python; a float or a string is not a count
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
            raise _bad(path, f"{where}.count", f"must be a whole number from 1 to {MAX_COUNT}, not {count!r}"[:300])
        counts[tuple(entry[name] for name in _TEXT_FIELDS)] += count
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
