"""Every generated runner refuses a config that another script runs (its first section says which:
one table, dialects.section_owners), naming that script, before it runs or writes anything; its own
configs (and the dy2static blocks the train runner is handed) pass the check. Upstream's scripts
read any file by line position and ran its values as their own keys."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tipcgen.dialects import LAYOUTS, first_sections, script_foreign_sections, section_owners
from tipcgen.dialects.chains import CHAIN_LAYOUTS
from tipcgen.emit.files import runner_script
from tipcgen.plan.planner import runner_for

ALL = {**LAYOUTS, **CHAIN_LAYOUTS}


def _script(tmp_path: Path, layout) -> Path:
    script, common = runner_script(layout, "test")
    tipc = tmp_path / "test_tipc"
    tipc.mkdir(exist_ok=True)
    (tipc / "common_func.sh").write_text(common)
    path = tipc / layout.dialect.script
    path.write_text(script)
    return path


def _run(tmp_path: Path, script: Path, layout, first_line: str) -> subprocess.CompletedProcess:
    config = tmp_path / "config.txt"
    config.write_text(f"\n{first_line}\nmodel_name:m\npython:python3\n")
    mode = runner_for(layout).MODES[0]
    return subprocess.run(
        ["bash", str(script), str(config), mode],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("name", sorted(ALL))
def test_a_config_of_another_script_is_refused_by_name(tmp_path, name):
    layout = ALL[name]
    script = _script(tmp_path, layout)
    foreign = script_foreign_sections(layout)  # what its generated script refuses
    assert foreign, "every script has configs of other scripts to refuse"
    for section, scripts in foreign:
        ran = _run(tmp_path, script, layout, f"===== {section} =====")
        assert ran.returncode == 2, (section, ran.stderr)
        assert f"its first section is '{section}', a config of test_tipc/{scripts}" in ran.stderr
        assert not (tmp_path / "test_tipc" / "output").exists(), "refused before anything is written"


@pytest.mark.parametrize("name", sorted(ALL))
def test_its_own_configs_pass_the_check(tmp_path, name):
    layout = ALL[name]
    script = _script(tmp_path, layout)
    for section in (*first_sections(layout), "a_section_no_table_knows"):
        ran = _run(tmp_path, script, layout, f"===== {section} =====")
        assert "its first section is" not in ran.stderr, (section, ran.stderr)


def test_the_train_runner_takes_the_dy2static_blocks_it_is_handed():
    owners = section_owners()
    for section in ("base_train", "amp_train"):
        assert set(owners[section]) == {"test_train_dy2static_python.sh", "test_train_inference_python.sh"}
    assert "test_train_inference_python.sh" not in owners["serving_params"]
