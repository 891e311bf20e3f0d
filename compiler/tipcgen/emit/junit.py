"""JUnit XML, the one writer `run` (a testsuite for the run) and `fleet` (a testsuite per node)
share: CI systems read it to show each step as a test."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Optional

XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")  # not in XML 1.0


def xml_text(text: str) -> str:
    return XML_BAD.sub("", text)


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
    root = ET.Element("testsuites", {"name": name, **_counts([c for s in suites for c in s.cases], seconds)})
    for s in suites:
        suite = ET.SubElement(root, "testsuite", {"name": s.name, **_counts(s.cases, s.seconds)})
        props = ET.SubElement(suite, "properties")
        for key, value in s.properties:
            ET.SubElement(props, "property", {"name": key, "value": xml_text(value)})
        for c in s.cases:
            attrs = {"classname": c.classname, "name": c.name}
            if c.seconds is not None:
                attrs["time"] = f"{c.seconds:.3f}"
            case = ET.SubElement(suite, "testcase", attrs)
            if c.outcome == "skipped":
                ET.SubElement(case, "skipped", {"message": xml_text(c.message)}).text = xml_text(c.text)
            elif c.outcome in ("failed", "error"):
                tag = "failure" if c.outcome == "failed" else "error"
                failure = ET.SubElement(case, tag, {"message": xml_text(c.message), "type": c.kind})
                failure.text = xml_text(c.text)
            if c.out:
                ET.SubElement(case, "system-out").text = c.out
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
