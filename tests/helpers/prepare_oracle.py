"""The prepare.sh differential over the corpus: a repo's configs imported with its own prepare.sh
traced (tipcgen import --prepare), built, and for every suite x mode the repo's prepare.sh (traced)
against the generated one (TIPC_PREPARE_PLAN=1): identical / faithful / CHANGED."""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tipcgen.check.spec import load_spec_text
from tipcgen.emit.files import build_files
from tipcgen.importer import config_groups, import_group
from tipcgen.importer.prepare_import import add_prepare, chain_prepare_modes, repo_prepare_modes, train_config_modes
from tipcgen.migrate.prepare_diff import compare_prepare
from tipcgen.script.decode import read_config

# Corpus folder -> its prepare.sh, relative to ../shared/upstream.
PREPARE = {
    "PaddleClas": "PaddleClas/prepare.sh",
    "PaddleDetection": "PaddleDetection/prepare.sh",
    "PaddleSeg": "PaddleSeg/prepare.sh",
    "PaddleVideo": "PaddleVideo/prepare.sh",
    "models": "models/prepare.sh",
    "PaddleOCR": "PaddleOCR/head/prepare.sh",
}


@dataclass
class PrepareTally:
    counts: Counter = field(default_factory=Counter)  # verdict -> runs
    deviations: Counter = field(default_factory=Counter)  # deviation -> runs it explains
    changed: list = field(default_factory=list)  # (config, mode, first difference or error)
    groups: int = 0
    not_imported: list = field(default_factory=list)  # config folders that do not import

    @property
    def runs(self) -> int:
        return sum(self.counts.values())


def differential(corpus: Path, upstream: Path, repo: str, group_filter=None) -> PrepareTally:
    script = upstream / PREPARE[repo]
    tally = PrepareTally()
    groups = list(config_groups([str(corpus / repo)]).items())
    if group_filter is not None:
        groups = group_filter(groups)
    train_modes = train_config_modes(script)  # MODES, and benchmark_train etc. when the repo uses them
    used = repo_prepare_modes(script)
    with tempfile.TemporaryDirectory(prefix="tipc-prepare-oracle-") as tmp:
        for directory, paths in groups:
            report = import_group(paths)
            if report.failures or report.yaml is None:
                tally.not_imported.append(directory)
                continue
            tally.groups += 1
            report, _found = add_prepare(report, script)
            spec = load_spec_text(report.yaml, f"{report.model}.yml")
            out = Path(tmp) / spec.model
            for rel, data in build_files(spec).items():
                if rel.endswith(".sh"):
                    (out / rel).parent.mkdir(parents=True, exist_ok=True)
                    (out / rel).write_bytes(data)
            for name, suite in spec.suites.items():
                text = read_config(report.result.sources[suite.file]).decode("utf-8", "replace")
                rel = f"test_tipc/configs/{spec.model}/{suite.file}"
                # another chain's config: the modes of its script that prepare.sh serves
                modes = chain_prepare_modes(str(suite.layout), used) if name in spec.chain_suites else train_modes
                for mode in modes:
                    row = compare_prepare(script, out / "test_tipc", text, rel, mode, suite.python)
                    tally.counts[row.diff.verdict] += 1
                    tally.deviations.update(row.diff.deviations)
                    if row.diff.verdict == "CHANGED":
                        tally.changed.append((rel, mode, row.error or row.diff.first))
    return tally
