"""Golden identity tests per dialect, in the style of sqlglot's per-dialect identity tests.

Each `tests/fixtures/<layout>[.<runner>]/<stem>.txt` is a small legacy config written for these
tests (invented models, no upstream file); the folder names its layout and, after a dot, the runner
it is planned and built with (else the layout's default). For every one of them:

1. identity: importing the config gives the golden `<stem>.spec.yml`, and building that spec
   gives back the config byte for byte;
2. plan: `plan` in each of the four modes gives the golden `<stem>.<mode>.plan.json`
   (compared as parsed JSON, with a unified diff on failure);
3. the folder names a known layout (and one of its runners), and `detect_layout` picks that
   layout for the config; every layout and every runner of the registry has a fixture folder;
4. bash: building the golden spec gives, byte for byte, the golden `<stem>.<script>.sh` of each
   script of test_tipc/ (test_train_inference_python.sh, common_func.sh, prepare.sh, and
   benchmark_train.sh where the build writes one), and no golden script the build does not write.

A new dialect (or runner) is a new folder of configs; `python tests/update_golden.py` writes its
golden files (its docstring lists them). Everything runs through the Python API except
`test_cli_smoke`.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# ---- everything used from tipcgen and from the golden generator (update here when modules move)
from tipcgen.check.spec import load_spec_text
from tipcgen.dialects import LAYOUTS, detect
from tipcgen.emit.files import config_files
from tipcgen.plan.registry import RUNNERS
from tipcgen.script.decode import decode
from update_golden import (
    ENV_VARS,
    FIXTURES,
    MODES,
    NOT_GOLDEN,
    build_scripts,
    dialect_of,
    fixture_configs,
    fixture_folders,
    fixture_id,
    folder_runner,
    import_spec_yaml,
    orphan_goldens,
    plan_json,
    plan_path,
    runner_of,
    script_goldens,
    spec_path,
    split_folder,
)

REGENERATE = "regenerate with `python tests/update_golden.py` and review `git diff tests/fixtures`"
CONFIGS = fixture_configs()


def _id(config: Path) -> str:
    return fixture_id(config)


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


def test_every_layout_and_runner_has_fixtures():
    """The registry's layouts and runners are each covered by a fixture folder: a new dialect or
    runner without fixtures fails here."""
    # (a folder of no layout: test_folder_is_a_known_layout_and_runner says so)
    folders = [f for f in fixture_folders() if split_folder(f)[0] in LAYOUTS]
    layouts = sorted(set(LAYOUTS) - {split_folder(f)[0] for f in folders})
    from tipcgen.dialects.chains import CHAIN_LAYOUTS

    chains = {r for layout in CHAIN_LAYOUTS.values() for r in layout.dialect.runners}  # tests/test_chains.py
    runners = sorted(set(RUNNERS) - chains - {folder_runner(f) for f in folders})
    assert not layouts, f"layouts without fixtures: {layouts}; add configs under {FIXTURES}/<layout>/"
    known = "; ".join(f"{name}: {', '.join(lay.dialect.runners)}" for name, lay in LAYOUTS.items())
    assert not runners, (
        f"runners without fixtures: {runners}; add configs under {FIXTURES}/<layout>.<runner>/ (runners: {known})"
    )


def test_one_lookup_finds_every_layout_by_its_own_name():
    """get_layout is the one lookup of a layout by name: a chain never shares a train layout's name
    (one would hide the other), and each name finds its own record."""
    from tipcgen.dialects import get_layout
    from tipcgen.dialects.chains import CHAIN_LAYOUTS
    from tipcgen.errors import UsageError

    assert not set(LAYOUTS) & set(CHAIN_LAYOUTS)
    for name, layout in {**LAYOUTS, **CHAIN_LAYOUTS}.items():
        assert get_layout(name) is layout
    with pytest.raises(UsageError, match="unknown layout 'nosuch'"):
        get_layout("nosuch")


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


def test_folder_is_a_known_layout_and_runner(config):
    layout, runner = dialect_of(config), runner_of(config)
    assert layout in LAYOUTS, (
        f"fixture folder {config.parent.name!r} is not a layout[.runner]; layouts: {', '.join(LAYOUTS)}"
    )
    runners = LAYOUTS[layout].dialect.runners
    assert runner is None or runner in runners, (
        f"fixture folder {config.parent.name!r}: {runner!r} is not a runner of {layout} ({', '.join(runners)})"
    )


def test_detect_layout_picks_the_folder(config):
    layout, why = detect(decode(str(config), config.read_bytes()).lines)
    assert layout == dialect_of(config), f"detect_layout says {layout!r} ({why}) for {_id(config)}"


# ---------------------------------------------------------------- 4. generated bash

DIFF_LINES = 40  # of each differing script's unified diff, in a failure message


def _short_diff(golden: bytes, actual: bytes, name: str) -> str:
    lines = difflib.unified_diff(
        golden.decode("utf-8", "replace").splitlines(keepends=True),
        actual.decode("utf-8", "replace").splitlines(keepends=True),
        f"{name} (golden)",
        f"{name} (built)",
        n=2,
    )
    out = list(lines)
    more = f"... ({len(out) - DIFF_LINES} more diff lines)\n" if len(out) > DIFF_LINES else ""
    return "".join(out[:DIFF_LINES]) + more


def test_build_matches_golden_scripts(config):
    """Every test_tipc/*.sh `tipcgen build` writes for the golden spec equals its golden file."""
    built = build_scripts(config, _golden(spec_path(config)))
    problems = []
    for path, data in built.items():
        if not path.is_file():
            problems.append(f"missing golden file {path.name}\n")
        elif path.read_bytes() != data:
            problems.append(_short_diff(path.read_bytes(), data, path.name))
    problems += [f"{p.name}: the build writes no such script\n" for p in script_goldens(config) if p not in built]
    if problems:
        pytest.fail(
            f"the generated bash of {_id(config)} differs from its golden files; {REGENERATE}\n" + "".join(problems)
        )


# ---------------------------------------------------------------- the CLI, once


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("tipcgen")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-c", "import sys; sys.argv[0] = 'tipcgen'; from tipcgen.cli import main; main()"]


def test_cli_smoke(tmp_path):
    """`tipcgen import`, `tipcgen plan --format json` and `tipcgen build` agree with the goldens the
    API made (the build in another process: its hash seed differs, so set order cannot hide)."""
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

    # the build of a spec with a runner and a benchmark_train.sh, if a fixture has one
    config = max(CONFIGS, key=lambda c: (runner_of(c) is not None, len(script_goldens(c))))
    out = tmp_path / "built"
    run = subprocess.run(
        [*_cli(), "build", str(spec_path(config)), "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    built = {p.name: p.read_bytes() for p in out.glob("*/test_tipc/*.sh") if p.name not in NOT_GOLDEN}
    golden = {p.name[len(config.stem) + 1 :]: p.read_bytes() for p in script_goldens(config)}
    assert sorted(built) == sorted(golden), f"`tipcgen build` writes {sorted(built)}; {REGENERATE}"
    for name, data in built.items():
        assert data == golden[name], f"`tipcgen build` differs; {REGENERATE}\n" + _short_diff(golden[name], data, name)
