"""How long `tipcgen migrate` takes on a whole model repo, and `--apply` after it.

For each corpus family (PaddleClas, PaddleDetection, PaddleSeg, PaddleVideo) a whole scratch repo is
built: the repo's own scripts and docs (../shared/upstream/<repo>), its .gitignore, and every
corpus config of the repo at the path it has upstream (MANIFEST.tsv's repo_path column). Then, in
a fresh process each, with the real CLI:

    tipcgen migrate ROOT --json report.json            (the report: every run compared)
    tipcgen migrate ROOT --apply --accept-changes      (reuses the report's verdicts)

and prints wall times, the number of runs, their verdicts and the cache's effect. Target (issue 31):
the whole PaddleClas tree <= 180 s on 2 cores for the report, <= 30 s more for --apply.

    python benchmarks/migrate_repo.py [--repo PaddleClas ...] [--jobs N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
FAMILIES = ("PaddleClas", "PaddleDetection", "PaddleSeg", "PaddleVideo")


def shared() -> Path:
    corpus = os.environ.get("TIPC_CORPUS")
    return Path(corpus).resolve().parent if corpus else SHARED


def build_repo(dest: Path, repo: str, base: Path, keep=None, upstream_base=None, corpus=None) -> int:
    """The whole scratch repo `repo` in dest/: returns the number of configs placed. `keep(row)`:
    whether a MANIFEST.tsv row's config is placed (default: all); `upstream_base`, `corpus`: the
    folders when they are not base/upstream and base/corpus (the tests' overrides)."""
    upstream = (upstream_base or base / "upstream") / repo
    corpus = corpus or base / "corpus"
    tipc = dest / "test_tipc"
    tipc.mkdir(parents=True)
    for item in upstream.iterdir():
        if item.name == "root.gitignore":
            shutil.copy(item, dest / ".gitignore")
        elif item.is_dir():
            shutil.copytree(item, tipc / item.name)
        else:
            shutil.copy(item, tipc / item.name)
    placed = 0
    with open(corpus / "MANIFEST.tsv", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if row["corpus_path"].split("/", 1)[0] != repo or not row["repo_path"].startswith("test_tipc/configs/"):
                continue
            if keep is not None and not keep(row):
                continue
            target = dest / row["repo_path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(corpus / row["corpus_path"], target)
            placed += 1
    return placed


def run(argv: list, env: dict) -> tuple[float, int, str]:
    start = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    return time.monotonic() - start, done.returncode, done.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", action="append", choices=FAMILIES, help="repeatable; default: all four")
    parser.add_argument("--jobs", type=int, default=0, help="TIPC_JOBS for migrate (default: cores)")
    parser.add_argument("--keep", help="build the repos under this directory and keep them")
    parser.add_argument("--mode", action="append", help="migrate --mode (repeatable; default: every mode)")
    args = parser.parse_args()
    base = shared()
    tipcgen = [sys.executable, "-m", "tipcgen.cli"]
    env = dict(os.environ)
    if args.jobs:
        env["TIPC_JOBS"] = str(args.jobs)
    top = Path(args.keep or tempfile.mkdtemp(prefix="tipcgen-migrate-bench-"))
    env["TIPC_CACHE"] = str(top / "cache")  # a cold cache: the report computes every verdict
    print(f"cores {os.cpu_count()}, TIPC_JOBS {env.get('TIPC_JOBS', '(cores)')}, repos under {top}")
    failed = 0
    try:
        for repo in args.repo or FAMILIES:
            root = top / repo
            if root.exists():
                shutil.rmtree(root)
            n = build_repo(root, repo, base)
            modes = [x for m in args.mode or () for x in ("--mode", m)]
            report = top / f"{repo}.json"
            t_report, rc_report, err = run([*tipcgen, "migrate", str(root), "--json", str(report), *modes], env)
            if rc_report not in (0, 1) or not report.is_file():
                print(f"{repo}: migrate exited {rc_report}: {err[-800:]}")
                failed += 1
                continue
            phases = re.search(r"imported in ([0-9.]+) s.*?runs compared in ([0-9.]+) s", err, re.S)
            data = json.loads(report.read_text(encoding="utf-8"))
            rows = data["rows"] + data["chain_rows"]
            verdicts = Counter(r["runner"] for r in rows)
            differing = sum(len(r["differences"]) for r in rows)
            entries = Counter(e["verdict"] for e in data["entries"])
            t_apply, rc_apply, err = run([*tipcgen, "migrate", str(root), "--apply", "--accept-changes", *modes], env)
            reused = "reused" in err
            print(
                f"{repo}: {n} configs, {len(rows)} runs ({', '.join(f'{k} {v}' for k, v in sorted(verdicts.items()))}),"
                f" {differing} differences; {len(data['entries'])} entry points"
                f" ({', '.join(f'{k} {v}' for k, v in sorted(entries.items()))}),"
                f" {'ready' if data['ready'] else 'NOT ready'}; report {t_report:.1f} s (exit {rc_report}"
                + (f"; import {phases[1]} s, comparisons {phases[2]} s" if phases else "")
                + "),"
                f" --apply {t_apply:.1f} s (exit {rc_apply}, verdicts {'reused' if reused else 'recomputed'})"
            )
            if rc_apply != 0:
                print(f"  --apply: {err[-800:]}")
                failed += 1
    finally:
        if not args.keep:
            shutil.rmtree(top, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
