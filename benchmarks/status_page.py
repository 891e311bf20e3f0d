"""Time `tipcgen status` on a long history: 200 runs x 20 models.

    python benchmarks/status_page.py [--runs 200] [--models 20]

Each run of each model is a `tipcgen run` JSON report (5 steps, with their logs) and a `tipcgen
bench` session of two records (N1C1, N1C2), so 20 x 200 x 3 = 12,000 record files. Prints the
time to read them, to build and render the page (one language), the whole command in a fresh
process (both languages written), and the page's size. Target: reading and rendering within 2 s.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.history import bench_record, run_report, stamp, with_logs, write  # noqa: E402
from tipcgen.results.history import load_history  # noqa: E402
from tipcgen.results.page import DEFAULT_THRESHOLD, page_context, render_page  # noqa: E402

TARGET = 2.0
TIPCGEN = [sys.executable, "-c", "import sys; sys.argv[0] = 'tipcgen'; from tipcgen.cli import main; main()"]


def make(root: Path, models: int, runs: int) -> None:
    rng = random.Random(1)
    for m in range(models):
        model = f"model_{m:02d}"
        for i in range(runs):
            when = stamp(i)
            statuses = ["passed"] * 5 if rng.random() > 0.1 else ["passed", "passed", "failed", "skipped", "skipped"]
            data = run_report(model, "lite_train_lite_infer", statuses, when)
            data["record"]["root"] = str(root / "repo" / model)
            write(root / "records" / model / f"run_{i:03d}.json", data)
            if i == runs - 1:
                with_logs(root / "repo" / model, data)
            session = root / "records" / model / f"bench_{i:03d}"
            write(session / "sp.json", bench_record(model, "N1C1", 1, 1, round(300 * rng.uniform(0.98, 1.02), 2), when))
            write(session / "mp.json", bench_record(model, "N1C2", 2, 1, round(500 * rng.uniform(0.98, 1.02), 2), when))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--models", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make(root, args.models, args.runs)
        files = sum(1 for _ in (root / "records").rglob("*.json"))
        site = root / "site"
        c0, t0 = time.process_time(), time.perf_counter()
        runs, problems = load_history([str(root / "records")])
        t1 = time.perf_counter()
        html = render_page(page_context(runs, problems, "en", DEFAULT_THRESHOLD, str(site)))
        t2, c2 = time.perf_counter(), time.process_time()
        t3 = time.perf_counter()
        done = subprocess.run([*TIPCGEN, "status", str(root / "records"), "--out", str(site)], capture_output=True,
                              text=True)  # fmt: skip
        t4 = time.perf_counter()
        assert done.returncode == 0, done.stderr
        size = (site / "index.html").stat().st_size
        print(
            f"{args.models} models x {args.runs} runs: {files} record files, {len(runs)} runs, {len(problems)} skipped"
        )
        print(f"read records       {t1 - t0:6.2f} s")
        print(f"build + render     {t2 - t1:6.2f} s  (one language, {len(html.encode()) / 1024:.0f} KiB)")
        print(f"read + render      {t2 - t0:6.2f} s  (target {TARGET:.1f} s: {'ok' if t2 - t0 <= TARGET else 'OVER'}; "
              f"{c2 - c0:.2f} s of CPU)")  # fmt: skip
        print(
            f"load average       {os.getloadavg()[0]:6.1f}    ({os.cpu_count()} CPUs: above that, others' work slows the wall time)"
        )
        print(f"tipcgen status     {t4 - t3:6.2f} s  (fresh process, both languages written)")
        print(f"page size          {size / 1024:6.0f} KiB ({size} bytes, index.html)")
        print(done.stdout.strip())


if __name__ == "__main__":
    main()
