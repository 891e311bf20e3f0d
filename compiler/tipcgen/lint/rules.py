"""The lint rule table: rule ids, names, severities and summaries, and the Finding a check reports.

The checks themselves (reading a config as the scripts do) are in `tipcgen.lint.checks`; the spec
validator (`tipcgen.check.spec`) and the importer run them (`lint.checks.lint_text`), so a spec cannot describe a defect
unless the suite `allow`s it by rule id.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Callable, Optional

from tipcgen.errors import printable

ERROR, WARNING, INFO = "error", "warning", "info"


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    severity: str
    summary: str


RULES = {
    r.id: r
    for r in [
        Rule(
            "TIPC001",
            "bool-typo",
            ERROR,
            "a misspelt boolean (e.g. `Fasle`) is neither True nor False to the scripts (a note where the runner"
            " runs the same commands either way)",
        ),
        Rule("TIPC002", "unknown-mode", ERROR, "a mode table names a mode no script runs"),
        Rule(
            "TIPC003",
            "missing-mode",
            WARNING,
            "a mode table lacks a training mode another table has: the flag vanishes in that mode",
        ),
        Rule(
            "TIPC004",
            "not-a-mode-table",
            WARNING,
            "a plain value where the runner looks the current mode up: it drops the flag in every mode",
        ),
        Rule(
            "TIPC005",
            "misplaced-key",
            ERROR,
            "a key is not on its line (shifted or missing): the scripts read lines by index",
        ),
        Rule("TIPC006", "truncated", ERROR, "the config is shorter than its layout: the missing fields read as empty"),
        Rule("TIPC007", "hash-separator", WARNING, "`#` where the layout has the `##` separator"),
        Rule(
            "TIPC008",
            "model-name-mismatch",
            WARNING,
            "model_name disagrees with the model the file is named after (the scripts read only model_name)",
        ),
        Rule("TIPC009", "null-with-spaces", WARNING, "`null` with trailing spaces is a value, not null"),
        Rule(
            "TIPC010",
            "trainer-without-slot",
            ERROR,
            "a trainer name matches no trainer slot: it runs the norm trainer only by fallback",
        ),
        Rule(
            "TIPC011",
            "device-list-short",
            ERROR,
            "fewer device values than gpu_list entries where the runner takes one per entry: later runs lose the"
            " device flag",
        ),
        Rule("TIPC012", "double-extension", WARNING, "a config file named `*.txt.txt`"),
        Rule(
            "TIPC013",
            "whitespace-line",
            ERROR,
            "a line of only spaces counts as a line and shifts every index after it",
        ),
        Rule(
            "TIPC014",
            "line-ends",
            WARNING,
            "a BOM (warning), or CRLF line ends (error: every value would end in `\\r`, so the runner refuses them)",
        ),
        Rule("TIPC015", "unverified-artifact", INFO, "prepare downloads an artifact without a sha256"),
        Rule("TIPC016", "empty-config", ERROR, "the config has no train_params lines"),
        Rule(
            "TIPC017",
            "tipcgen-extension",
            WARNING,
            "tipcgen syntax upstream scripts do not understand (cpuxN CPU processes)",
        ),
        Rule(
            "TIPC018",
            "unknown-layout",
            ERROR,
            "a train_params config that no layout fits: the scripts read its lines by index all the same",
        ),
        Rule("TIPC019", "all-null", ERROR, "every key:value line is null:null: the config tests nothing"),
        Rule(
            "TIPC020",
            "bad-gpu-list",
            ERROR,
            "a gpu_list entry that is not -1, GPU ids, cpuxN or ips;ids with IPv4 addresses",
        ),
        Rule(
            "TIPC021",
            "shell-metachar",
            ERROR,
            "a shell metacharacter in a line the scripts build commands from and `eval`",
        ),
        Rule("TIPC022", "control-character", ERROR, "a control or invisible format character inside a line"),
        Rule(
            "TIPC023",
            "bench-param",
            ERROR,
            "a benchmark parameter benchmark_train.sh misreads (batch sizes, precisions, counts, flags, input shapes)",
        ),
        Rule("TIPC024", "bench-blanks", WARNING, "a benchmark parameter ending in blanks, which reach the command"),
        Rule(
            "TIPC025",
            "runner-refuses",
            ERROR,
            "a config the runner refuses before running anything (a model_name or log name leaving "
            "test_tipc/output/, lists multiplying past the step limit)",
        ),
        Rule(
            "TIPC026",
            "onnx-opset",
            ERROR,
            "a paddle2onnx `--opset_version` the converter refuses (paddle2onnx 2.x converts to opsets 7 to 21)",
        ),
        Rule(
            "TIPC027",
            "chain-model-unprepared",
            WARNING,
            "another chain's suite reads a model folder that no prepare step of its mode provides",
        ),
        Rule(
            "TIPC028",
            "chain-model-url-differs",
            WARNING,
            "suites of one model name different inference model URLs (`infer_model_url`): its chains test"
            " different models",
        ),
    ]
}


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    file: str
    line: Optional[int]  # 1-based physical line
    message: str
    hint: str = ""
    role: Optional[str] = None  # the layout role of the line, when known

    def render(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        hint = f" ({self.hint})" if self.hint else ""
        # printable: a file name or value must not forge a line
        return printable(f"{where}: {self.severity}: {self.rule} {RULES[self.rule].name}: {self.message}{hint}")


def findings_json(findings: list[Finding]) -> str:
    return json.dumps([asdict(f) for f in findings], indent=2, ensure_ascii=False)


def rule_ids() -> list[str]:
    return list(RULES)


FindingFilter = Callable[[Finding], bool]
