"""What importing one model's configs gives: the spec as plain data, with where each config came from."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ImportResult:
    spec: dict  # the spec as plain data (ready for YAML)
    sources: dict = field(default_factory=dict)  # config file name -> source path
    layouts: dict = field(default_factory=dict)  # config file name -> layout (or "raw")
    findings: dict = field(default_factory=dict)  # suite name -> the upstream defects its `allow` keeps
