"""Path containment, as a property: whatever name a spec or config puts in a path-bearing field
(`..`, absolute paths, separators, backslashes, unicode look-alikes of `/` and `.`), and whatever
symlinks sit in the output tree, nothing is written outside `--out`, and a config whose
model_name would put logs outside test_tipc/output/ is refused by both `plan` and the bash."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import Recorder, run_bash
from test_load import VALID
from tipcgen.cli import app
from tipcgen.dialects import get_layout
from tipcgen.emit.files import runner_script
from tipcgen.errors import TipcError
from tipcgen.lower.text import config_text
from tipcgen.plan.planner import plan_config
from tipcgen.spec.ir import Suite

runner = CliRunner()

# Pieces of hostile names: traversal, separators, look-alikes of `/` (U+2215, U+FF0F, U+2044) and
# of `.` (U+2024, U+FF0E), control characters, and plain text.
PIECES = st.sampled_from(
    [
        "..",
        ".",
        "/",
        "\\",
        "/etc",
        "~",
        "a",
        "demo",
        "x.txt",
        "\u2215",
        "\uff0f",
        "\u2044",
        "\u2024\u2024",
        "\uff0e\uff0e",
        "\x00",
        "\n",
        " ",
        "-",
        "_",
        ".md",
        ".txt",
    ]
)
NAMES = st.lists(PIECES, min_size=1, max_size=6).map("".join)
FIELDS = st.sampled_from(["model", "model_name", "file", "doc", "other_config", "suite"])


def _spec_text(field: str, name: str) -> str:
    quoted = json.dumps(name)  # a YAML double-quoted scalar holds any of these characters
    text = VALID
    if field == "model":
        return text.replace("model: demo\n", f"model: {quoted}\n")
    if field == "model_name":
        return text.replace("model_name: demo_rec", f"model_name: {quoted}")
    if field == "file":
        return text.replace("file: train_infer_python.txt", f"file: {quoted}")
    if field == "doc":
        return text.replace(
            "    file: train_infer_python.txt\n", f"    file: train_infer_python.txt\n    doc: {quoted}\n"
        )
    if field == "suite":
        return text.replace("  normal:\n", f"  {quoted}:\n")
    return text + f"other_configs:\n  {quoted}: {{lines: ['a:b']}}\n"


def _snapshot(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@example(field="doc", name="../../../../../../tmp/x/ESCAPED_doc.md", link=False)
@example(field="other_config", name="../../../../../../tmp/x/ESCAPED_cfg.txt", link=False)
@example(field="model", name="..", link=True)
@given(field=FIELDS, name=NAMES, link=st.booleans())
def test_build_never_writes_outside_out(tmp_path_factory, field, name, link):
    base = tmp_path_factory.mktemp("contain")
    outside, out = base / "outside", base / "work" / "out"
    outside.mkdir()
    out.mkdir(parents=True)
    if link:  # a symlink in the output tree that leads out
        os.symlink(outside, out / "demo")
    spec = base / "work" / "s.yml"
    spec.write_text(_spec_text(field, name), encoding="utf-8", errors="surrogatepass")
    before_outside, before_base = _snapshot(outside), _snapshot(base)
    result = runner.invoke(app, ["build", str(spec), "--out", str(out)])
    assert result.exit_code in (0, 2), result.output
    assert "Traceback" not in result.output
    assert _snapshot(outside) == before_outside, f"{field}={name!r} wrote outside --out: {result.output}"
    written = _snapshot(base) - before_base
    assert all(p.startswith(os.path.join("work", "out")) for p in written), sorted(written)
    if result.exit_code == 0:  # then the name was a plain one
        assert ".." not in name and "/" not in name and "\\" not in name


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@example(name="../../../tmp/x")
@example(name="/abs")
@example(name="..")
@given(name=NAMES.filter(lambda n: "\n" not in n and "\x00" not in n and "|" not in n and n.strip() == n and n))
def test_bash_and_plan_refuse_model_names_that_leave_the_output_dir(tmp_path_factory, name):
    root = tmp_path_factory.mktemp("runtime")
    layout = get_layout("paddleocr")
    suite = Suite.model_validate({"file": "t.txt", "model_name": "m", "topology": ["cpu"]})
    text = config_text(suite, layout).replace("model_name:m\n", f"model_name:{name}\n", 1)
    config = root / "test_tipc" / "configs" / "m" / "t.txt"
    config.parent.mkdir(parents=True)
    config.write_text(text, encoding="utf-8")
    script, common = runner_script(layout, "test")
    (root / "test_tipc" / "test_train_inference_python.sh").write_text(script)
    (root / "test_tipc" / "common_func.sh").write_text(common)
    escapes = "/" in name or name in (".", "..")
    try:
        plan_config(text, layout, "lite_train_lite_infer")
        planned = True
    except TipcError:
        planned = False
    recorder = Recorder(tmp_path_factory.mktemp("rec"))
    recorder.install("python3.7")
    proc = run_bash(
        root / "test_tipc" / "test_train_inference_python.sh",
        ["test_tipc/configs/m/t.txt", "lite_train_lite_infer"],
        root,
        recorder.env(),
    )
    if escapes:
        assert not planned and proc.returncode == 2, proc.stderr
    written = {p for p in _snapshot(root) if not p.startswith("test_tipc")}
    assert not written, f"model_name {name!r} made files outside test_tipc/: {sorted(written)}"
    for p in _snapshot(root / "test_tipc"):
        assert ".." not in Path(p).parts
