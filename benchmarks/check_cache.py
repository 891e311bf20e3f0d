#!/usr/bin/env python3
"""`tipcgen check` when nothing changed (the pre-commit case) against a cold check.

The corpus's PaddleClas configs (or --corpus-repo) are imported into specs in a scratch directory
and built; then `tipcgen check` runs cold (`--no-cache`: every spec loaded, rendered and
compared), once more to record the cache, and warm (nothing changed: only the specs' bytes are
read and the generated files stat'ed). Best of --repeat runs each, wall clock and CPU of the
`tipcgen` process. Targets (issue 21): warm <= 0.3 s on a PaddleClas-sized repo.

    python benchmarks/check_cache.py [--corpus ../shared/corpus] [--corpus-repo PaddleClas] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def run(args: list[str], cwd: Path, env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of one `tipcgen` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "tipcgen.cli", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"tipcgen {' '.join(args)} failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(args: list[str], cwd: Path, env: dict, repeat: int) -> tuple[float, float]:
    runs = [run(args, cwd, env) for _ in range(repeat)]
    return min(w for w, _ in runs), min(c for _, c in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=os.environ.get("TIPC_CORPUS", str(HERE.parent / "shared" / "corpus")))
    ap.add_argument("--corpus-repo", default="PaddleClas")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    source = Path(args.corpus) / args.corpus_repo
    if not source.is_dir():
        sys.exit(f"no corpus at {source}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {**os.environ, "TIPC_CACHE": str(root / "cache"), "TIPC_CHECK_CACHE": "1"}
        subprocess.run(
            [sys.executable, "-m", "tipcgen.cli", "import", str(source), "--out", "specs"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )  # fmt: skip  (exit 1 when some configs are skipped; the specs written are what we time)
        specs = sorted((root / "specs").glob("*.yml"))
        if not specs:
            sys.exit(f"nothing imported from {source}")
        run(["build", "specs/", "--out", "gen"], root, env)
        configs = sum(1 for _ in (root / "gen").rglob("configs/*/*.txt"))
        files = sum(1 for p in (root / "gen").rglob("*") if p.is_file())
        print(f"{args.corpus_repo}: {len(specs)} specs, {configs} configs, {files} generated files")
        cold = best(["check", "specs/", "--out", "gen", "--no-cache"], root, env, args.repeat)
        run(["check", "specs/", "--out", "gen"], root, env)  # records the cache
        warm = best(["check", "specs/", "--out", "gen"], root, env, args.repeat)
        start = best(["--version"], root, env, args.repeat)
        print(
            f"  cold check (--no-cache): {cold[0]:.3f} s wall, {cold[1]:.3f} s CPU ({configs / cold[1]:.0f} configs/s of CPU)"
        )
        print(f"  warm check (unchanged):  {warm[0]:.3f} s wall, {warm[1]:.3f} s CPU (target <= 0.3 s)")
        print(f"  `tipcgen --version` alone: {start[0]:.3f} s wall")
        print(f"  warm / cold: {warm[0] / cold[0]:.3f}")
        repo_mode(root, env, args, source)


def repo_mode(tmp: Path, env: dict, args, source: Path) -> None:
    """The same configs as one model repo: specs in test_tipc/specs/ (with prepare traced from the
    repo's own prepare.sh when ../shared/upstream has it), `tipcgen build`/`check` in the root."""
    root = tmp / "repo"
    (root / "test_tipc").mkdir(parents=True)
    prepare = Path(args.corpus).parent / "upstream" / args.corpus_repo / "prepare.sh"
    extra = ["--prepare", str(prepare)] if prepare.is_file() else ["--prepare", "none"]
    subprocess.run(
        [sys.executable, "-m", "tipcgen.cli", "import", str(source), "--out", "test_tipc/specs", *extra,
         "--schema", "../spec.schema.json"],
        cwd=root, env=env, capture_output=True, text=True,
    )  # fmt: skip
    run(["build"], root, env)
    configs = sum(1 for _ in (root / "test_tipc" / "configs").rglob("*.txt"))
    files = sum(1 for p in (root / "test_tipc").rglob("*") if p.is_file())
    print(f"{args.corpus_repo} as one repo (tipcgen build/check in its root): {configs} configs, {files} files")
    cold = best(["check", "--no-cache"], root, env, args.repeat)
    run(["check"], root, env)
    warm = best(["check"], root, env, args.repeat)
    print(f"  cold check: {cold[0]:.3f} s wall, {cold[1]:.3f} s CPU ({configs / cold[1]:.0f} configs/s of CPU)")
    print(f"  warm check: {warm[0]:.3f} s wall, {warm[1]:.3f} s CPU (target <= 0.3 s)")


if __name__ == "__main__":
    main()
