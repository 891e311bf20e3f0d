#!/usr/bin/env python3
"""Round-trip speed: import + build of every config in the legacy corpus.

Prints configs/s and peak memory for (a) import + build in memory (text -> Spec -> text, the
tool's core path) and (b) the full path through YAML text (import -> YAML -> load -> build).
Target: >= 1000 configs/s for (a) after start-up, on one core. Then (c) the spec loader on the
specs (b) wrote: the old loader (ruamel's pure-Python parser) against the new one (libyaml), same
texts, same run (target >= 10x; benchmarks/loader.py also times `tipcgen check`).

    python benchmarks/roundtrip.py [--corpus ../shared/corpus] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path


def main() -> int:
    here = Path(__file__).resolve().parents[1]
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=os.environ.get("TIPC_CORPUS", str(here.parent / "shared" / "corpus")))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from tipcgen.dialects import detect, get_layout
    from tipcgen.importer import import_group, import_suite
    from tipcgen.lower.text import config_text
    from tipcgen.script.decode import decode
    from tipcgen.spec.ir import Suite

    corpus = Path(args.corpus)
    files = sorted(corpus.rglob("*.txt"))
    if not files:
        print(f"no configs under {corpus}", file=sys.stderr)
        return 2
    blobs = [(p, p.read_bytes()) for p in files]
    train = []
    for path, data in blobs:
        try:
            dec = decode(str(path), data)
        except Exception:
            continue
        layout, _ = detect(dec.lines)
        if layout:
            train.append((path, data, dec, get_layout(layout)))

    def core_pass() -> int:
        exact = 0
        for path, data, dec, layout in train:
            suite = Suite.model_validate(import_suite(dec, layout, path.name))
            exact += config_text(suite, layout).encode("utf-8") == data
        return exact

    core_pass()  # warm-up: imports, pydantic schema build
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        exact = core_pass()
        times.append(time.perf_counter() - t0)
    best = min(times)
    tracemalloc.start()
    core_pass()
    _, peak_core = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    groups: dict = {}
    for path, _ in blobs:
        groups.setdefault(path.parent, []).append(str(path))
    t0 = time.perf_counter()
    reports = [import_group(sorted(ps)) for ps in groups.values()]
    full = time.perf_counter() - t0
    peak_full = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    full_exact = sum(r.exact for r in reports)

    print(f"corpus: {len(files)} configs, {len(train)} train-type, {len(groups)} model directories")
    print(
        f"(a) import+build in memory (train-type): {exact}/{len(train)} exact, best {best:.3f} s "
        f"= {len(train) / best:.0f} configs/s on one core, peak {peak_core / 2**20:.1f} MiB traced"
    )
    print(
        f"(b) import -> YAML -> load -> build (all kinds): {full_exact}/{len(files)} exact, {full:.2f} s "
        f"= {len(files) / full:.0f} configs/s, process peak RSS {peak_full / 2**20:.0f} MiB"
    )
    target = 1000
    print(f"ratio to target ({target} configs/s) for (a): {len(train) / best / target:.2f}")

    from loader import compare_loaders  # benchmarks/loader.py

    print("(c) ", end="")
    compare_loaders([(r.directory, r.yaml) for r in reports if r.yaml], args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
