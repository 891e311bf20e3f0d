#!/usr/bin/env python3
"""Spec loading speed: the libyaml loader against the ruamel one it replaced, and `tipcgen check`.

On the same spec texts in one run: the best of --repeat passes of the old loader (ruamel's
pure-Python parser, `load_yaml(..., libyaml=False)`) and of the new one (`load_yaml(...)`: libyaml
through PyYAML), and their ratio (target >= 10x); then `tipcgen check` over the imported corpus
specs in configs/s (target >= 500), each directory built first into a scratch directory. Times are
wall clock and CPU (this process's, or the `tipcgen` processes'); the CPU figures are the ones to
compare on a busy machine.

    python benchmarks/loader.py [--corpus ../shared/corpus] [--specs DIR ...] [--repeat 3]

Without --specs, every repository of the corpus is imported into a scratch directory first.
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


def _best(fn, texts: list[tuple[str, str]], repeat: int) -> tuple[float, float]:
    """Best wall and best CPU seconds of `repeat` passes of `fn` over every text."""
    walls, cpus = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        for name, text in texts:
            fn(text, name)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus)


def compare_loaders(texts: list[tuple[str, str]], repeat: int = 3) -> float:
    """Print old vs new loader time on `texts` ((name, spec text) pairs); return the CPU ratio."""
    from tipcgen.spec import yamlpos

    def old(text: str, name: str):
        return yamlpos.load_yaml(text, name, libyaml=False)

    def new(text: str, name: str):
        return yamlpos.load_yaml(text, name)

    fell_back = sum(yamlpos.load_with_libyaml(text, name) is None for name, text in texts)
    name, text = texts[0]
    new(text, name)  # warm-up: first-use imports
    old(text, name)
    old_wall, old_cpu = _best(old, texts, repeat)
    new_wall, new_cpu = _best(new, texts, repeat)
    size = sum(len(t) for _, t in texts)
    print(f"loader: {len(texts)} specs, {size / 2**20:.2f} MiB; libyaml {'on' if yamlpos.HAVE_LIBYAML else 'OFF'}")
    print(f"  old (ruamel, pure Python): {old_wall:.3f} s wall, {old_cpu:.3f} s CPU")
    print(f"  new (libyaml):             {new_wall:.3f} s wall, {new_cpu:.3f} s CPU ({fell_back} fell back to ruamel)")
    ratio = old_cpu / new_cpu
    print(f"  ratio old/new: {ratio:.1f}x CPU, {old_wall / new_wall:.1f}x wall (target >= 10x)")
    return ratio


def _import_corpus(corpus: Path, into: Path) -> list[Path]:
    dirs = []
    for repo in sorted(p for p in corpus.iterdir() if p.is_dir()):
        out = into / repo.name
        result = subprocess.run(["tipcgen", "import", str(repo), "--out", str(out)], capture_output=True, text=True)
        if any(out.glob("*.yml")):
            dirs.append(out)
        else:
            last = (result.stderr.strip().splitlines() or ["?"])[-1]
            print(f"  import {repo.name}: nothing written ({last})", file=sys.stderr)
    return dirs


def _batches(specs: list[tuple[Path, dict]]) -> list[list[Path]]:
    """Specs grouped so that no batch has two specs of one model (they could not be built together)."""
    batches: list[tuple[set, list[Path]]] = []
    for path, data in specs:
        model = data.get("model")
        batch = next((b for b in batches if model not in b[0]), None)
        if batch is None:
            batch = (set(), [])
            batches.append(batch)
        batch[0].add(model)
        batch[1].append(path)
    return [paths for _, paths in batches]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_check(dirs: list[Path], scratch: Path) -> None:
    """Build each directory's specs, then time `tipcgen check` on them: configs/s."""
    from tipcgen.spec.yamlpos import load_yaml

    specs = []
    for d in dirs:
        for path in sorted(d.glob("*.yml")):
            specs.append((path, load_yaml(path.read_text(encoding="utf-8"), str(path))[0]))
    configs = sum(len(data.get("suites") or {}) + len(data.get("other_configs") or {}) for _, data in specs)
    runs = []
    for i, batch in enumerate(_batches(specs)):
        out = scratch / f"generated-{i}"
        args = [str(p) for p in batch]
        build = subprocess.run(["tipcgen", "build", *args, "--out", str(out)], capture_output=True, text=True)
        if build.returncode:
            print(f"  build failed: {build.stderr.strip()[-300:]}", file=sys.stderr)
            return
        runs.append((args, out))
    wall, cpu0 = 0.0, _children_cpu()
    stale = 0
    for args, out in runs:
        t0 = time.perf_counter()
        result = subprocess.run(["tipcgen", "check", *args, "--out", str(out)], capture_output=True, text=True)
        wall += time.perf_counter() - t0
        stale += result.returncode != 0
    cpu = _children_cpu() - cpu0
    print(
        f"tipcgen check: {len(specs)} specs, {configs} configs in {len(runs)} run(s): {wall:.2f} s wall "
        f"= {configs / wall:.0f} configs/s, {cpu:.2f} s CPU = {configs / cpu:.0f} configs/s (target >= 500)"
        + (f"; {stale} run(s) reported stale files" if stale else "")
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=os.environ.get("TIPC_CORPUS", str(HERE.parent / "shared" / "corpus")))
    parser.add_argument("--specs", nargs="*", help="directories of already imported specs (skips importing)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-check", action="store_true", help="time the loaders only")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="tipcgen-loader-") as tmp:
        scratch = Path(tmp)
        if args.specs:
            dirs = [Path(d) for d in args.specs]
        else:
            corpus = Path(args.corpus)
            if not corpus.is_dir():
                print(f"no corpus at {corpus} (pass --corpus or --specs)", file=sys.stderr)
                return 2
            dirs = _import_corpus(corpus, scratch / "specs")
        paths = sorted(p for d in dirs for p in d.glob("*.yml")) + sorted((HERE / "specs").glob("*.yml"))
        if not paths:
            print("no specs", file=sys.stderr)
            return 2
        compare_loaders([(str(p), p.read_text(encoding="utf-8")) for p in paths], args.repeat)
        if not args.no_check:
            time_check(dirs, scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
