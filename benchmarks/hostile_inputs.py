"""Time the worst hostile inputs end to end (target: each refused or accepted within 5 s).

    python benchmarks/hostile_inputs.py

Each case runs the real CLI in a fresh process, as CI would on a pull request's spec.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 5.0
REPO = Path(__file__).resolve().parents[1]
VALID = (REPO / "specs" / "tiny_rec.yml").read_text()


def _laughs(levels: int = 9, width: int = 9) -> str:
    lines = ["tipcgen: 1", "a0: &a0 [x]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def _cases(tmp: Path) -> list[tuple[str, list[str]]]:
    files = {
        "billion_laughs.yml": _laughs(),
        "deep_nesting.yml": VALID + "x: " + "[" * 1000 + "]" * 1000 + "\n",
        "1MiB_comments.yml": VALID + "#\n" * ((1 << 20) - len(VALID) - 10 >> 1),
        "50k_flow_list.yml": VALID + "x: [" + ", ".join(["1"] * 49_000) + "]\n",
        "50MB_file.yml": "#" * (50 << 20),
        "5000_digit_int.yml": VALID + "x: " + "9" * 5000 + "\n",
    }
    cases = []
    for name, text in files.items():
        (tmp / name).write_text(text)
        cases.append((name, ["validate", str(tmp / name)]))
    fifo = tmp / "fifo.yml"
    os.mkfifo(fifo)
    cases.append(("fifo", ["validate", str(fifo)]))
    config = (REPO / "generated/tiny_rec/test_tipc/configs/tiny_rec/train_infer_python.txt").read_text()
    huge = tmp / "huge_gpu_list.txt"
    huge.write_text(config.replace("gpu_list:", "gpu_list:" + "|".join(["0"] * 5000) + "|", 1))
    cases.append(("5000-entry gpu_list (plan)", ["plan", str(huge), "--layout", "paddleocr"]))
    return cases


def main() -> None:
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in _cases(Path(tmp)):
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "tipcgen.cli", *args], capture_output=True, text=True, timeout=120
            )
            took = time.perf_counter() - start
            worst = max(worst, took)
            verdict = {0: "accepted", 2: "refused"}.get(proc.returncode, f"exit {proc.returncode}")
            clean = "Traceback" not in proc.stderr
            print(f"{name:<28} {took:6.2f} s  {verdict}{'' if clean else '  TRACEBACK'}")
    print(f"worst {worst:.2f} s; target {TARGET} s; ratio {worst / TARGET:.2f} ({'ok' if worst <= TARGET else 'OVER'})")


if __name__ == "__main__":
    main()
