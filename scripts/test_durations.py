"""Write tests/durations.json from pytest `--durations=0` output: each test file's seconds (setup,
call and teardown of its tests, summed). tests/conftest.py hands the files to the workers longest
first, so no worker is left running one long file alone at the end of a tier.

    python -m pytest -q --durations=0 > fast.log
    python -m pytest -q -m "corpus or paddle or slow" --durations=0 > full.log
    python scripts/test_durations.py fast.log full.log
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

LINE = re.compile(r"^([0-9.]+)s (?:setup|call|teardown)\s+(tests/[^:\s]+\.py)::")
OUT = Path(__file__).resolve().parents[1] / "tests" / "durations.json"


def main(logs: list[str]) -> int:
    seconds: dict[str, float] = {}
    for log in logs:
        for line in Path(log).read_text(encoding="utf-8", errors="replace").splitlines():
            found = LINE.match(line)
            if found:
                seconds[found.group(2)] = seconds.get(found.group(2), 0.0) + float(found.group(1))
    if not seconds:
        print("no --durations=0 lines in the logs given", file=sys.stderr)
        return 2
    data = {name: round(value, 1) for name, value in sorted(seconds.items())}
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(data)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
