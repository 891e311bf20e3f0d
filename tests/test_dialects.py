"""Golden identity tests per dialect, in the style of sqlglot's per-dialect identity tests.

Each `tests/fixtures/<layout>[.<runner>]/<stem>.txt` is a small legacy config written for these
tests (invented models, no upstream file); the folder names its layout and, after a dot, the runner
it is planned and built with (else the layout's default). For every one of them:

1. identity: importing the config gives the golden `<stem>.spec.yml`, and building that spec
   gives back the config byte for byte;
2. plan: `plan` in each mode its runner takes (a train layout's four, a chain's own) gives the
   golden `<stem>.<mode>.plan.json` (compared as parsed JSON, with a unified diff on failure);
3. the folder names a known layout (and one of its runners), and detection picks that layout for
   the config (`detect` for a train layout, `chain_layout` for another chain's, as `import` does);
   every layout, every chain and every runner of the registry has a fixture folder;
4. bash: building the golden spec gives, byte for byte, the golden `<stem>.<script>.sh` of each
   script of test_tipc/ (test_train_inference_python.sh, common_func.sh, prepare.sh, and
   benchmark_train.sh where the build writes one; a chain's own script for a chain's config), and
   no golden script the build does not write.

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
from typing import Optional

import pytest

# ---- everything used from tipcgen and from the golden generator (update here when modules move)
from tipcgen.check.spec import load_spec_text
from tipcgen.dialects import detect, signature
from tipcgen.dialects.chains import chain_family, chain_layout
from tipcgen.emit.files import config_files, runner_script
from tipcgen.plan.registry import RUNNERS
from tipcgen.script.decode import decode
from update_golden import (
    ALL_LAYOUTS,
    ENV_VARS,
    FIXTURES,
    NOT_GOLDEN,
    build_scripts,
    chain_first,
    dialect_of,
    fixture_configs,
    fixture_folders,
    fixture_id,
    folder_runner,
    import_spec_yaml,
    is_chain,
    modes_of,
    orphan_goldens,
    plan_json,
    plan_path,
    runner_of,
    script_goldens,
    script_path,
    spec_path,
    split_folder,
)

REGENERATE = "regenerate with `python tests/update_golden.py` and review `git diff tests/fixtures`"
CONFIGS = fixture_configs()
PLANS = [(config, mode) for config in CONFIGS for mode in modes_of(config)]


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
    folders = [f for f in fixture_folders() if split_folder(f)[0] in ALL_LAYOUTS]
    layouts = sorted(set(ALL_LAYOUTS) - {split_folder(f)[0] for f in folders})
    runners = sorted(set(RUNNERS) - {folder_runner(f) for f in folders})
    assert not layouts, f"layouts without fixtures: {layouts}; add configs under {FIXTURES}/<layout>/"
    known = "; ".join(f"{name}: {', '.join(lay.dialect.runners)}" for name, lay in ALL_LAYOUTS.items())
    assert not runners, (
        f"runners without fixtures: {runners}; add configs under {FIXTURES}/<layout>.<runner>/ (runners: {known})"
    )


def test_one_lookup_finds_every_layout_by_its_own_name():
    """get_layout is the one lookup of a layout by name: a chain never shares a train layout's name
    (one would hide the other), and each name finds its own record."""
    from tipcgen.dialects import LAYOUTS, get_layout
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


@pytest.mark.parametrize(("config", "mode"), PLANS, ids=[f"{_id(c)}-{m}" for c, m in PLANS])
def test_plan_matches_golden(config, mode, clean_env):
    golden_text = _golden(plan_path(config, mode))
    actual_text = plan_json(config, mode)
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
    assert layout in ALL_LAYOUTS, (
        f"fixture folder {config.parent.name!r} is not a layout[.runner]; layouts: {', '.join(ALL_LAYOUTS)}"
    )
    runners = ALL_LAYOUTS[layout].dialect.runners
    assert runner is None or runner in runners, (
        f"fixture folder {config.parent.name!r}: {runner!r} is not a runner of {layout} ({', '.join(runners)})"
    )


def test_detect_layout_picks_the_folder(config):
    lines = decode(str(config), config.read_bytes()).lines
    chain = chain_layout(signature(lines, config.name))
    if is_chain(config):
        # knowing the repo's family (import does), where two families' tables read the same lines
        chain = chain_layout(signature(lines, config.name), chain_family(dialect_of(config)))
        assert chain is not None and chain.name == dialect_of(config), f"chain_layout says {chain} for {_id(config)}"
        return
    assert chain is None, f"{_id(config)} is taken for another chain's config ({chain.name})"
    layout, why = detect(lines)
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


def _golden_of(config: Path, path: Path) -> Optional[bytes]:
    """The golden bytes of a built script: its own golden file; for a chain's config but its
    folder's first, the folder's one golden with this config's banner line (a chain's script reads
    its config when it runs: nothing else of it may depend on the config)."""
    first = chain_first(config) if is_chain(config) else config
    golden = script_path(first, path.name[len(config.stem) + 1 :])
    if not golden.is_file():
        return None
    if first == config:
        return golden.read_bytes()
    lines = golden.read_bytes().split(b"\n")
    banner = build_scripts(config, _golden(spec_path(config)))[path].split(b"\n")[1]
    return b"\n".join([lines[0], banner, *lines[2:]])


def test_build_matches_golden_scripts(config):
    """Every test_tipc/*.sh `tipcgen build` writes for the golden spec equals its golden file."""
    built = build_scripts(config, _golden(spec_path(config)))
    problems = []
    for path, data in built.items():
        golden = _golden_of(config, path)
        if golden is None:
            problems.append(f"missing golden file {path.name}\n")
        elif golden != data:
            problems.append(_short_diff(golden, data, path.name))
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


# ---------------------------------------------------------------- 5. another chain's script


# What makes each chain's steps fail in the recorder (an argv substring), one case each: its
# script then goes on, skips or stops as its Plan says. Every chain names at least one (checked below).
CHAIN_FAILS = {
    "paddleclas_cpp_infer": ("generate_cpp_yaml", ".yaml", "fp16"),  # the yaml writer, the demo, some runs
    "paddleclas_lite_arm": ("LD_LIBRARY_PATH", "push", "precision INT8"),  # the runs, the pushes, one edit
    "paddleclas_ptq": ("slim/quant_post_static.py", "predict_cls"),  # the quantization, the inference
    "paddleclas_dy2static": ("trainer:to_static_train", "trainer:norm_train", "compare_loss"),
    "paddleseg_dy2static": ("to_static_training=True", "compare_loss"),  # the to-static run, the comparison
    "paddlevideo_dy2static": ("to_static=True", "compare_loss"),
    "paddleclas_paddle2onnx": ("--save_file", "predict_cls"),  # the conversion, the inference
    "paddleclas_serving_python": ("web_service",),  # the server dies at once
    "paddleclas_serving_python_shitu": ("_client.py",),  # the clients fail
    "paddleclas_serving_cpp": ("paddle_serving_client.convert",),
    "paddleclas_serving_cpp_shitu": ("prototxt",),  # the edits fail: nothing else does
    "paddleseg_paddle2onnx": ("--save_file", "infer_onnx"),  # the conversion, the inference
    "paddlevideo_paddle2onnx": ("--save_file", "predict_onnx"),
    "models_paddle2onnx": ("--save_file", "onnx_python"),
    "paddledetection_paddle2onnx": ("export_model", "--save_file", "infer.py"),  # the export, conversion, inference
    "paddleseg_ptq": ("quant/ptq.py", "--device=gpu"),  # the quantization, the GPU inference
    "models_ptq": ("post_quant.py", "infer.py"),  # the quantization, the inference
    "paddledetection_ptq": ("post_quant.py", "--device=gpu", "--device=cpu"),  # the export, each device's inference
    "paddledetection_cpp_infer": ("export_model", "--device=gpu", "--device=cpu"),  # the export, each device's runs
    # the export, the web service (dies at once), the client
    "paddledetection_serving_python": ("export_model", "web_service", "http_client"),
    "paddledetection_serving_cpp": ("export_model", "paddle_serving_server", "serving_client"),
    # the conversion, the web service (dies at once), the client
    "paddleseg_serving_python": ("paddle_serving_client.convert", "web_service", "pipeline_http_client"),
    # the conversion, the client config's fit (no status line), the server, the client
    "paddleseg_serving_cpp": ("convert", "modify_serving", "paddle_serving_server", "serving_client"),
    "paddlevideo_ptq": ("quant_post_static.py", "predict.py"),  # the quantization, the inference
    "paddlevideo_cpp_infer": ("--rec_model_dir", "--use_gpu=True"),  # every run of the demo, the GPU's
    "paddlevideo_serving_python": ("paddle_serving_client.convert", "web_service", "--input_file"),
    "paddlevideo_serving_cpp": ("paddle_serving_client.convert", "paddle_serving_server", "--input_file"),
    "models_serving_python": ("paddle_serving_client.convert", "web_service", "--image_dir"),
    "models_serving_cpp": ("paddle_serving_client.convert", "paddle_serving_server", "toy_serving_client.py"),
    "paddleocr_paddle2onnx": ("--enable_dev_version", "--use_onnx"),  # the conversions, the inference
    "paddleocr_infer_python": ("--use_gpu=True", "--image_dir"),  # the GPU's runs, every run
    "paddleocr_cpp_infer": ("--image_dir", "--use_gpu=True"),  # every run of the demo, the GPU's
    "paddleocr_ptq": ("quant_kl.py", "--use_gpu=True", "--image_dir"),  # the quantization, the GPU's runs, every run
    # the conversion (no status line), the web service (dies at once), a pipeline client
    "paddleocr_serving_python": ("paddle_serving_client.convert", "web_service", "pipeline_rpc_client"),
    # the conversions (the det one without a status line), the C++ server, the client
    "paddleocr_serving_cpp": ("paddle_serving_client.convert", "paddle_serving_server", "toy_ocr_cpp_client"),
    "paddleseg_cpp_binary": ("_demo.",),  # the C++ binary's one run (its demo image's argument)
    "models_cpp_binary": ("demo.jpg",),  # the same
    "paddleocr_lite_arm": ("slim", "_opt.nb"),  # the slim (INT8) models' runs, every run of the demo
    "paddledetection_pipeline": ("--device=gpu", "pipeline.py"),  # the GPU's runs, every run
    "models_lite_arm": ("push", "shell"),  # the push (no status line), the predictor on the device
}
CHAINS = [c for c in CONFIGS if is_chain(c)]


def _chain_script(config: Path) -> str:
    return ALL_LAYOUTS[dialect_of(config)].dialect.script


def test_every_chain_has_its_failures_named():
    assert set(CHAIN_FAILS) == {dialect_of(c) for c in CHAINS}, "name what makes each chain's steps fail"


def test_each_chains_script_passes_bash_n_and_shellcheck(tmp_path):
    """One golden script per chain script (the others differ from it in their banner only; the
    PP-ShiTu serving tables share their language's script)."""
    from helpers.tools import shellcheck

    # keyed by family too: PaddleClas's and PaddleDetection's serving scripts share a name
    firsts = {(dialect_of(c).split("_", 1)[0], _chain_script(c)): c for c in reversed(CHAINS)}
    scripts = []
    for config in sorted(firsts.values()):
        layout = dialect_of(config)
        golden = script_path(config, _chain_script(config))
        d = tmp_path / layout / "test_tipc"
        d.mkdir(parents=True)
        script = d / _chain_script(config)
        script.write_bytes(golden.read_bytes())
        (d / "common_func.sh").write_text(runner_script(ALL_LAYOUTS[layout], "test")[1])
        ran = subprocess.run(["bash", "-n", script.name], cwd=d, capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, f"{layout}: bash -n {script.name}:\n{ran.stderr}"
        scripts += [script, d / "common_func.sh"]  # the library it sources: checked once per content
    found = shellcheck(scripts)
    assert not found, f"shellcheck:\n{found}"


@pytest.mark.parametrize("config", CHAINS, ids=[_id(c) for c in CHAINS])
def test_a_chains_script_runs_what_its_plan_says(config, tmp_path, clean_env):
    """The generated script under the recorder against the Plan, in each of the chain's modes:
    passing, and with each of its steps failing (CHAIN_FAILS); on GPU 1 too where it takes a GPUID."""
    from helpers.difftest import Case, Harness
    from tipcgen.migrate.oracle import CHAIN_TOOLS
    from tipcgen.plan.planner import runner_for

    layout = ALL_LAYOUTS[dialect_of(config)]
    tools = getattr(runner_for(layout), "ORACLE_TOOLS", ()) + CHAIN_TOOLS.get(layout.dialect.script, ())
    cases = []
    for mode in modes_of(config):
        cases.append(Case(str(config), layout.name, mode))
        cases += [Case(str(config), layout.name, mode, fail=f) for f in CHAIN_FAILS[layout.name]]
        if layout.dialect.gpuid_arg:  # CONFIG [MODE] [GPUID]
            cases.append(Case(str(config), layout.name, mode, gpuid="1", fail=CHAIN_FAILS[layout.name][-1]))
    mismatches = Harness(tmp_path / "h", tools=tools).run(cases)
    assert not mismatches, "\n".join(mismatches)


def test_a_chains_config_in_another_mode_is_refused_naming_its_own(tmp_path):
    from helpers.cli import invoke_in

    firsts = {dialect_of(c): c for c in reversed(CHAINS)}
    for layout, config in sorted(firsts.items()):
        other = next(m for m in ("cpp_infer", "lite_train_lite_infer") if m not in modes_of(config))
        res = invoke_in(tmp_path, "plan", str(config), "--mode", other)
        assert res.exit_code == 2, f"{layout}: {res.output}"
        assert any(m in res.output for m in modes_of(config)), f"{layout}: {res.output}"


def test_each_script_header_names_the_status_log_its_plans_write():
    """The header of every generated runner says where its status lines go: for each golden
    script, that path with the config's model name and mode put in is the status log of each of
    the config's Plans (the same value, so a chain's own log, e.g. results_cpp.log under
    deploy/lite/output, is never said to be results_python.log)."""
    import re

    from update_golden import FIXTURES

    checked = 0
    for script in sorted(FIXTURES.glob("*/*.sh")):
        stem = script.name.split(".", 1)[0]
        text = script.read_text()
        if "# Reads CONFIG by line position" not in text:
            continue  # not a runner (common_func.sh, prepare.sh, ...)
        said = re.search(r"appends the same status lines to\n# (\S+)\.\n", text)
        assert said, script
        for planned in sorted(script.parent.glob(f"{stem}.*.plan.json")):
            plan = json.loads(planned.read_text())
            where = said.group(1).replace("<model_name>", plan["model_name"]).replace("<MODE>", plan["mode"])
            assert plan["status_log"].removeprefix("./") == where, (script.name, planned.name)
            checked += 1
    assert checked
