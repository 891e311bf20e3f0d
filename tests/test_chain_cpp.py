"""PaddleClas's C++ inference chain (test_inference_cpp.sh): what is this chain's own. Its toy
configs, their Plans and generated script are the golden harness's (tests/fixtures/
paddleclas_cpp_infer/, tests/test_dialects.py: detection, identity, plans, bytes, bash = Plan with
each step failing). Here: what is refused, the corpus tier against the real script (recording
shims for its build: cmake, make, wget, tar, git, apt-get, CMake's bootstrap, the demo `make`
leaves in build/), and runs of the built script and of `tipcgen run` with stand-ins.

No Paddle Inference C++ library is on this machine: the chain is held to the commands it runs.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from helpers.cli import invoke_in
from helpers.configs import fixture_text
from helpers.difftest import Case, Harness
from helpers.oracle_runs import need_upstream, oracle
from tipcgen.dialects import signature
from tipcgen.dialects.chains import PADDLECLAS_CPP_INFER, chain_layout
from tipcgen.errors import UsageError
from tipcgen.plan.planner import plan_config
from tipcgen.script.lines import split_lines

LAYOUT = PADDLECLAS_CPP_INFER.name
MODE = "cpp_infer"
SUFFIX = "_linux_gpu_normal_normal_infer_cpp_linux_gpu_cpu.txt"


def _toy(name: str) -> str:
    return fixture_text(LAYOUT, f"toy{name}{SUFFIX}")


# A toy model of our own, shaped like PaddleClas's C++ configs, with lists to loop over; its
# variants (a quantised model, PP-ShiTu, two models, an XPU item, no quant flag) beside it.
TOY = _toy("")
SHITU = _toy("_shitu")
VARIANTS = {name: _toy(f"_{name}") for name in ("quant", "shitu", "two_models", "xpu", "no_quant_flag")}
VARIANTS["unknown_type"] = TOY.replace("cpp_infer_type:cls", "cpp_infer_type:det")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "configs" / f"{name}{SUFFIX}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def test_what_this_chain_does_not_read_is_refused_or_not_taken(tmp_path):
    # PaddleDetection's cpp_infer_params configs have `python:` on line 3: not this table
    other = TOY.replace("cpp_infer_type:cls", "python:python3.7")
    assert chain_layout(signature(split_lines(other))) is None
    # a type the demo has no branch for: refused (upstream runs nothing and exits 0)
    with pytest.raises(UsageError, match="cls or shitu"):
        plan_config(VARIANTS["unknown_type"], PADDLECLAS_CPP_INFER, MODE)
    res = invoke_in(tmp_path, "plan", str(_write(tmp_path, "det", VARIANTS["unknown_type"])), "--mode", MODE)
    assert res.exit_code == 2 and "cls or shitu" in res.output


@pytest.mark.corpus
def test_every_paddleclas_cpp_config_is_faithful_to_the_real_script(corpus, tmp_path):
    """Every corpus config of the chain x (passing, the yaml writer failing, the demo failing):
    the real test_inference_cpp.sh and our Plan agree, every difference a deviation (its build,
    which the Plan leaves to preparation); and our generated script agrees with the Plan."""
    need_upstream("test_inference_cpp.sh")
    configs = sorted(
        p for p in (corpus / "PaddleClas").rglob("*.txt")
        if chain_layout(signature(split_lines(p.read_bytes().decode("utf-8", "replace")))) is PADDLECLAS_CPP_INFER
    )  # fmt: skip
    assert len(configs) == len(list((corpus / "PaddleClas").rglob("*_infer_cpp_linux_gpu_cpu.txt")))
    runs = [(config, MODE, None, fail) for config in configs for fail in (None, "generate_cpp_yaml", "inference_")]
    tally = oracle("PaddleClas", runs, chain=LAYOUT)
    print(tally.report("cpp oracle"))
    assert not tally.unfaithful, "\n".join(tally.unfaithful[:5])
    # every run is identical but for the build (the Plan leaves it to preparation)
    assert all([x.category.split(":")[0] for x in d.differences] == ["build"] for _run, d in tally.diffs)
    cases = [Case(str(c), LAYOUT, MODE, fail="inference_" if n % 2 else None) for n, c in enumerate(configs[::3])]
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, "\n".join(mismatches[:5])


@pytest.mark.corpus
def test_the_deviations_show_where_they_say_against_the_real_script(corpus, tmp_path):
    """Our toy variants against the real test_inference_cpp.sh: a quantised model, PP-ShiTu and
    a hardware item other than CPU/GPU agree but for the build; two models differ only as
    `cpp-model-dir-per-run` says; an unknown type runs nothing upstream (and exits 0), we refuse."""
    from tipcgen.migrate.oracle import compare, run_upstream

    upstream = need_upstream("test_inference_cpp.sh")
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
    script = (root / "test_tipc" / "test_inference_cpp.sh").read_text()
    assert "# usage: bash test_tipc/test_inference_cpp.sh CONFIG [MODE] [GPUID]" in script
    assert not re.search(r"^[ \t]*eval[ \t]", script, re.M)  # upstream evals every command
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
