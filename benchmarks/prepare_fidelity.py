#!/usr/bin/env python3
"""The prepare.sh differential table: per repo, its corpus configs x the 4 modes, the repo's own
prepare.sh (../shared/upstream/<repo>/prepare.sh, traced with recording shims) against the one
tipcgen generates from the imported specs (TIPC_PREPARE_PLAN=1): identical, faithful (with the
deviations), CHANGED (unexplained, listed).

    python benchmarks/prepare_fidelity.py [--repo NAME ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))

from conftest import corpus_dir  # noqa: E402
from helpers.prepare_oracle import PREPARE, differential  # noqa: E402
from helpers.upstream import upstream_dir  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", action="append", choices=sorted(PREPARE))
    args = ap.parse_args()
    print("| repo | config folders | configs x modes | identical | faithful | CHANGED | deviations | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    bad = 0
    for repo in args.repo or sorted(PREPARE):
        t0 = time.perf_counter()
        tally = differential(corpus_dir(), upstream_dir(), repo)
        devs = ", ".join(f"{k} {v}" for k, v in sorted(tally.deviations.items()))
        folders = f"{tally.groups}" + (f" (+{len(tally.not_imported)} not importable)" if tally.not_imported else "")
        print(
            f"| {repo} | {folders} | {tally.runs} | {tally.counts['identical']} | {tally.counts['faithful']} "
            f"| {tally.counts['CHANGED']} | {devs} | {time.perf_counter() - t0:.0f} |"
        )
        for item in tally.changed[:5]:
            print(f"|   | CHANGED {item} | | | | | | |")
        bad += len(tally.changed)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
