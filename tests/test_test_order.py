"""The tiers' file order (conftest.py): longest measured files first, each file's tests kept in
their order, and tests/durations.json naming only files that exist."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import conftest

TESTS = Path(__file__).resolve().parent


def test_durations_name_only_test_files_that_exist():
    seconds = json.loads((TESTS / "durations.json").read_text(encoding="utf-8"))
    assert seconds and all(isinstance(v, (int, float)) and v >= 0 for v in seconds.values())
    missing = [name for name in seconds if not (TESTS.parent / name).is_file()]
    assert not missing, f"stale entries (rerun scripts/test_durations.py): {missing}"


def test_longest_files_go_first_and_a_files_tests_keep_their_order():
    seconds = json.loads((TESTS / "durations.json").read_text(encoding="utf-8"))
    slow, fast = sorted(seconds, key=seconds.get)[-1], sorted(seconds, key=seconds.get)[0]
    ids = [f"{fast}::a", "tests/test_not_measured.py::x", f"{slow}::test_2", f"{fast}::b", f"{slow}::test_1"]
    items = [SimpleNamespace(nodeid=i) for i in ids]
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.nodeid for i in items] == [
        f"{slow}::test_2",
        f"{slow}::test_1",
        f"{fast}::a",
        f"{fast}::b",
        "tests/test_not_measured.py::x",
    ]


def test_hang_guards_stretch_with_the_load_and_never_shrink(monkeypatch):
    """helpers/machine.py: a time bound of the tests (a hang guard) times the load per CPU."""
    import os

    from helpers.machine import bound

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "getloadavg", lambda: (6.0, 6.0, 6.0))
    assert bound(10) == 30.0
    monkeypatch.setattr(os, "getloadavg", lambda: (0.4, 0.4, 0.4))
    assert bound(10) == 10.0


def test_every_timed_assert_goes_through_the_load_stretched_bound():
    """A test that times a run asserts `took < bound(N)`, never a bare number: a bare bound fails
    on a loaded machine (CI's second tier shares its two CPUs), which is no hang."""
    import re
    from pathlib import Path

    timed = re.compile(r"\bassert\b.*\b(took|elapsed|seconds|wall)\s*<\s*[\w(]")
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted(Path(__file__).parent.glob("test_*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if (m := timed.search(line)) and "bound(" not in line[m.start(1) :]
    ]
    assert found == [], "\n".join(found)
