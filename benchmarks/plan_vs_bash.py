#!/usr/bin/env python3
"""How much cheaper plan() is than running the generated bash (with a recording interpreter
standing in for python) on the same config and mode. Target: a ratio of at least 100.

    python benchmarks/plan_vs_bash.py [CONFIG --layout NAME] [--mode M] [--repeat N]
Default config: the seed's ch_PP-OCRv3_rec fleet config from the corpus.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RECORDER = """#!/usr/bin/env bash
printf '%s\\x1f' "$@" >>"$TIPC_RECORD"
exit 0
"""


def main() -> int:
    here = Path(__file__).resolve().parents[1]
    corpus = Path(os.environ.get("TIPC_CORPUS", here.parent / "shared" / "corpus"))
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "config",
        nargs="?",
        default=str(corpus / "PaddleOCR/ch_PP-OCRv3_rec/train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu.txt"),
    )
    parser.add_argument("--layout", default="paddleocr")
    parser.add_argument("--mode", default="lite_train_lite_infer")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    from tipcgen.dialects import get_layout
    from tipcgen.emit.files import runner_script
    from tipcgen.plan.planner import plan_config

    layout = get_layout(args.layout)
    text = Path(args.config).read_text()
    work = Path(tempfile.mkdtemp(prefix="tipc-bench-"))
    try:
        (work / "test_tipc").mkdir()
        script, common = runner_script(layout, "benchmark")
        (work / "test_tipc/test_train_inference_python.sh").write_text(script)
        (work / "test_tipc/common_func.sh").write_text(common)
        (work / "bin").mkdir()
        for name in ("python", "python3", "python3.7", "python3.10"):
            (work / "bin" / name).write_text(RECORDER)
            (work / "bin" / name).chmod(0o755)
        env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
        env.update(PATH=f"{work / 'bin'}:{env['PATH']}", TIPC_RECORD=str(work / "rec"))

        def bash_once() -> float:
            shutil.rmtree(work / "test_tipc/output", ignore_errors=True)
            t0 = time.perf_counter()
            subprocess.run(
                ["bash", "test_tipc/test_train_inference_python.sh", args.config, args.mode],
                cwd=work,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=True,
            )
            return time.perf_counter() - t0

        bash_once()
        bash = min(bash_once() for _ in range(args.repeat))
        plan_config(text, layout, args.mode)
        loops = 200
        t0 = time.perf_counter()
        for _ in range(loops):
            plan = plan_config(text, layout, args.mode)
        plan_t = (time.perf_counter() - t0) / loops
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"config: {args.config} ({args.layout}, {args.mode}, {len(plan.steps)} steps)")
    print(f"generated bash, recording interpreter: {bash * 1e3:.1f} ms (best of {args.repeat})")
    print(f"plan():                                {plan_t * 1e3:.3f} ms (mean of {loops})")
    print(f"ratio bash/plan: {bash / plan_t:.0f}x (target >= 100x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
