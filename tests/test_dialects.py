"""Golden identity tests per dialect, in the style of sqlglot's per-dialect identity tests.

Each `tests/fixtures/<layout>/<stem>.txt` is a small legacy config written for these tests
(invented models, no upstream file). For every one of them:

1. identity: importing the config gives the golden `<stem>.spec.yml`, and building that spec
   gives back the config byte for byte;
2. plan: `plan` in each of the four modes gives the golden `<stem>.<mode>.plan.json`
   (compared as parsed JSON, with a unified diff on failure);
3. the folder names a known layout, and `detect_layout` picks that layout for the config.

A new dialect is a new folder of configs; `python tests/update_golden.py` writes its golden
files. Everything runs through the Python API except `test_cli_smoke`.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tipcgen.check.spec import load_spec_text
from tipcgen.dialects import LAYOUTS, detect

# ---- everything used from tipcgen and from the golden generator (update here when modules move)
from tipcgen.emit.files import config_files
from tipcgen.script.decode import decode
from update_golden import (
    ENV_VARS,
    FIXTURES,
    MODES,
    dialect_of,
    fixture_configs,
    import_spec_yaml,
    orphan_goldens,
    plan_json,
    plan_path,
    spec_path,
)

REGENERATE = "regenerate with `python tests/update_golden.py` and review `git diff tests/fixtures`"
CONFIGS = fixture_configs()


def _id(config: Path) -> str:
    return f"{dialect_of(config)}/{config.stem}"


def _golden(path: Path) -> str:
    if not path.is_file():
        pytest.fail(f"missing golden file {path}; {REGENERATE}")
    return path.read_bytes().decode("utf-8")


def _diff(expected: str, actual: str, name: str, labels: tuple = ("golden", "now")) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(keepends=True),
        actual.splitlines(keepends=True),
        f"{name} ({labels[0]})",
        f"{name} ({labels[1]})",
    )
    return "".join(lines)


@pytest.fixture
def clean_env(monkeypatch):
    """No CUDA_VISIBLE_DEVICES / TIPC_NODE_IP / FLAGS_START_PORT: plans do not depend on the host."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(params=CONFIGS, ids=[_id(c) for c in CONFIGS])
def config(request) -> Path:
    return request.param


def test_fixtures_exist():
    assert CONFIGS, f"no fixture configs under {FIXTURES}/<layout>/"


def test_every_layout_has_fixtures():
    covered = {dialect_of(c) for c in CONFIGS}
    missing = sorted(set(LAYOUTS) - covered)
    assert not missing, f"layouts without fixtures: {missing}; add configs under {FIXTURES}/<layout>/"


def test_no_orphan_goldens():
    orphans = orphan_goldens()
    assert not orphans, f"golden files without a config: {[str(p) for p in orphans]}; {REGENERATE}"


# ---------------------------------------------------------------- 1. identity


def test_import_matches_golden_spec(config):
    golden = _golden(spec_path(config))
    actual = import_spec_yaml(config)
    if actual != golden:
        pytest.fail(
            f"import of {_id(config)} differs from its golden spec; {REGENERATE}\n"
            + _diff(golden, actual, spec_path(config).name)
        )


def test_golden_spec_builds_config_byte_for_byte(config):
    spec = load_spec_text(_golden(spec_path(config)), spec_path(config).name)
    files = {Path(rel).name: text for rel, text in config_files(spec).items()}
    assert config.name in files, f"the spec builds {sorted(files)}, not {config.name}"
    built, original = files[config.name].encode("utf-8"), config.read_bytes()
    if built != original:
        pytest.fail(
            f"building {spec_path(config).name} does not give back {config.name}:\n"
            + _diff(original.decode("utf-8"), built.decode("utf-8"), config.name, ("fixture", "built"))
        )


# ---------------------------------------------------------------- 2. plan


@pytest.mark.parametrize("mode", MODES)
def test_plan_matches_golden(config, mode, clean_env):
    golden_text = _golden(plan_path(config, mode))
    actual_text = plan_json(config, mode, layout=dialect_of(config))
    golden, actual = json.loads(golden_text), json.loads(actual_text)
    if actual != golden:
        pytest.fail(
            f"plan of {_id(config)} in {mode} differs from its golden file; {REGENERATE}\n"
            + _diff(
                json.dumps(golden, indent=2, sort_keys=True) + "\n",
                json.dumps(actual, indent=2, sort_keys=True) + "\n",
                plan_path(config, mode).name,
            )
        )


# ---------------------------------------------------------------- 3. layout


def test_folder_is_a_known_layout(config):
    assert dialect_of(config) in LAYOUTS, (
        f"fixture folder {dialect_of(config)!r} is not a layout; layouts: {', '.join(LAYOUTS)}"
    )


def test_detect_layout_picks_the_folder(config):
    layout, why = detect(decode(str(config), config.read_bytes()).lines)
    assert layout == dialect_of(config), f"detect_layout says {layout!r} ({why}) for {_id(config)}"


# ---------------------------------------------------------------- the CLI, once


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("tipcgen")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-c", "import sys; sys.argv[0] = 'tipcgen'; from tipcgen.cli import main; main()"]


def test_cli_smoke(tmp_path):
    """`tipcgen import` and `tipcgen plan --format json` agree with the goldens the API made."""
    fleet = [c for c in CONFIGS if "fleet" in c.name] or CONFIGS  # multi-node: the env-sensitive case
    config = fleet[0]
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    out = tmp_path / "specs"
    run = subprocess.run(
        [*_cli(), "import", str(config), "--out", str(out)], env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    written = sorted(out.glob("*.yml"))
    assert len(written) == 1, f"expected one spec, got {written}: {run.stdout}"
    assert written[0].read_text(encoding="utf-8") == _golden(spec_path(config))

    mode = "lite_train_lite_infer"
    run = subprocess.run(
        [*_cli(), "plan", str(config), "--layout", dialect_of(config), "--mode", mode, "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == json.loads(_golden(plan_path(config, mode)))
