"""How fast the CLI starts: `tipcgen --help` cold (target <= 0.25 s) and what `import tipcgen.cli` loads.

    python benchmarks/startup.py [runs]

A pre-commit hook runs tipcgen on every commit, so start-up is the time users feel most.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

TARGET = 0.25


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    help_times = [timed([sys.executable, "-m", "tipcgen.cli", "--help"]) for _ in range(runs)]
    bare = [timed([sys.executable, "-c", "pass"]) for _ in range(runs)]
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, tipcgen.cli; print(len(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    med = statistics.median(help_times)
    print(f"tipcgen --help: median {med:.3f} s, max {max(help_times):.3f} s over {runs} runs (target {TARGET} s)")
    print(
        f"bare interpreter: median {statistics.median(bare):.3f} s; tipcgen's own share {med - statistics.median(bare):.3f} s"
    )
    print(f"modules loaded by `import tipcgen.cli`: {loaded}")
    print(f"ratio to target: {med / TARGET:.2f} ({'ok' if med <= TARGET else 'OVER'})")


if __name__ == "__main__":
    main()
