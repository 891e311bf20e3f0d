"""JUnit XML, the one writer `run` (a testsuite for the run) and `fleet` (a testsuite per node)
share: CI systems read it to show each step as a test."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Optional

from tipcgen.escape import for_terminal


def xml_text(text: str) -> str:
    """Text for an XML element: what a CI's test view shows as text, so the terminal's rule
    (control, bidi and surrogate characters as visible escapes; XML 1.0 cannot even hold most of
    them); ElementTree then escapes `<`, `&` and quotes."""
    return for_terminal(text, lines=True)


def _attr(text: str) -> str:
    return for_terminal(text)  # an attribute is one line


@dataclass(frozen=True)
class Case:
    """One testcase: `outcome` is passed, failed (with `kind`, the failure's type), error (it
    could not be known: a lost node) or skipped;
    `message` says why, `text` the command or status line, `out` the log's tail."""

    classname: str
    name: str
    outcome: str = "passed"
    message: str = ""
    kind: str = ""
    text: str = ""
    out: str = ""
    seconds: Optional[float] = None  # None: no `time` attribute


@dataclass(frozen=True)
class Suite:
    name: str
    seconds: float
    properties: tuple[tuple[str, str], ...] = ()
    cases: list[Case] = field(default_factory=list)


def _counts(cases: list[Case], seconds: float) -> dict[str, str]:
    return {
        "tests": str(len(cases)),
        "failures": str(sum(1 for c in cases if c.outcome == "failed")),
        "errors": str(sum(1 for c in cases if c.outcome == "error")),
        "skipped": str(sum(1 for c in cases if c.outcome == "skipped")),
        "time": f"{seconds:.3f}",
    }


def junit_xml(name: str, suites: list[Suite], seconds: float) -> str:
    root = ET.Element("testsuites", {"name": _attr(name), **_counts([c for s in suites for c in s.cases], seconds)})
    for s in suites:
        suite = ET.SubElement(root, "testsuite", {"name": _attr(s.name), **_counts(s.cases, s.seconds)})
        props = ET.SubElement(suite, "properties")
        for key, value in s.properties:
            ET.SubElement(props, "property", {"name": _attr(key), "value": _attr(value)})
        for c in s.cases:
            attrs = {"classname": _attr(c.classname), "name": _attr(c.name)}
            if c.seconds is not None:
                attrs["time"] = f"{c.seconds:.3f}"
            case = ET.SubElement(suite, "testcase", attrs)
            if c.outcome == "skipped":
                ET.SubElement(case, "skipped", {"message": _attr(c.message)}).text = xml_text(c.text)
            elif c.outcome in ("failed", "error"):
                tag = "failure" if c.outcome == "failed" else "error"
                failure = ET.SubElement(case, tag, {"message": _attr(c.message), "type": _attr(c.kind)})
                failure.text = xml_text(c.text)
            if c.out:
                ET.SubElement(case, "system-out").text = xml_text(c.out)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
