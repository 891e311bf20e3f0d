"""Other TIPC chains (dialects/chains/): PaddleClas's test_paddle2onnx.sh, and how chain configs
travel through import and specs.

A chain config is planned by its own layout and runner (`tipcgen plan`/`run` pick it by its
first line); its toy configs, Plans and generated script are the golden harness's
(tests/fixtures/paddleclas_paddle2onnx/, tests/test_dialects.py: bash = Plan with the converter
recorded like the interpreter, each step failing). Here: what is not this table, --layout of a
train layout refused, the corpus tier against the real test_paddle2onnx.sh with recording shims
(identical, or different only where a named deviation says so: its status line for the inference
reuses the conversion's exit code), the built script run, and chain configs in specs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import invoke_in
from helpers.configs import fixture_text
from helpers.difftest import Case, Harness
from helpers.oracle_runs import compare_text, need_upstream, oracle
from helpers.sweep import rotate
from helpers.upstream import CHAIN_SOURCES, chains_dir, configs_root
from tipcgen.dialects import signature
from tipcgen.dialects.chains import PADDLECLAS_PADDLE2ONNX, chain_family, chain_layout
from tipcgen.dialects.chains.models_cpp_binary import MODELS_CPP_BINARY
from tipcgen.dialects.chains.models_lite_arm import MODELS_LITE_ARM
from tipcgen.dialects.chains.models_paddle2onnx import MODELS_PADDLE2ONNX
from tipcgen.dialects.chains.models_ptq import MODELS_PTQ
from tipcgen.dialects.chains.models_serving_cpp import MODELS_SERVING_CPP
from tipcgen.dialects.chains.models_serving_python import MODELS_SERVING_PYTHON
from tipcgen.dialects.chains.paddledetection_cpp_infer import PADDLEDETECTION_CPP_INFER
from tipcgen.dialects.chains.paddledetection_paddle2onnx import PADDLEDETECTION_PADDLE2ONNX
from tipcgen.dialects.chains.paddledetection_pipeline import PADDLEDETECTION_PIPELINE
from tipcgen.dialects.chains.paddledetection_ptq import PADDLEDETECTION_PTQ
from tipcgen.dialects.chains.paddledetection_serving_cpp import PADDLEDETECTION_SERVING_CPP
from tipcgen.dialects.chains.paddledetection_serving_python import PADDLEDETECTION_SERVING_PYTHON
from tipcgen.dialects.chains.paddleocr_cpp_infer import PADDLEOCR_CPP_INFER
from tipcgen.dialects.chains.paddleocr_infer_python import PADDLEOCR_INFER_PYTHON
from tipcgen.dialects.chains.paddleocr_lite_arm import PADDLEOCR_LITE_ARM
from tipcgen.dialects.chains.paddleocr_paddle2onnx import PADDLEOCR_PADDLE2ONNX
from tipcgen.dialects.chains.paddleocr_ptq import PADDLEOCR_PTQ
from tipcgen.dialects.chains.paddleocr_serving_cpp import PADDLEOCR_SERVING_CPP
from tipcgen.dialects.chains.paddleocr_serving_python import PADDLEOCR_SERVING_PYTHON
from tipcgen.dialects.chains.paddleseg_cpp_binary import PADDLESEG_CPP_BINARY
from tipcgen.dialects.chains.paddleseg_paddle2onnx import PADDLESEG_PADDLE2ONNX
from tipcgen.dialects.chains.paddleseg_ptq import PADDLESEG_PTQ
from tipcgen.dialects.chains.paddleseg_serving_cpp import PADDLESEG_SERVING_CPP
from tipcgen.dialects.chains.paddleseg_serving_python import PADDLESEG_SERVING_PYTHON
from tipcgen.dialects.chains.paddlevideo_cpp_infer import PADDLEVIDEO_CPP_INFER
from tipcgen.dialects.chains.paddlevideo_paddle2onnx import PADDLEVIDEO_PADDLE2ONNX
from tipcgen.dialects.chains.paddlevideo_ptq import PADDLEVIDEO_PTQ
from tipcgen.dialects.chains.paddlevideo_serving_cpp import PADDLEVIDEO_SERVING_CPP
from tipcgen.dialects.chains.paddlevideo_serving_python import PADDLEVIDEO_SERVING_PYTHON
from tipcgen.script.lines import split_lines

LAYOUT = PADDLECLAS_PADDLE2ONNX.name
MODE = "paddle2onnx_infer"

# A toy model of our own, shaped like PaddleClas's paddle2onnx configs: the harness's.
TOY = fixture_text(LAYOUT, "toy_paddle2onnx_python_linux_cpu.txt")
NULL_OPSET = fixture_text(LAYOUT, "toy_null_opset_paddle2onnx_python_linux_cpu.txt")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "configs" / f"{name}_paddle2onnx_python_linux_cpu.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def test_what_is_not_this_table_and_a_train_layout_for_it_are_refused(tmp_path):
    # PaddleSeg's paddle2onnx configs have other keys: not this table
    other = TOY.replace("inference:", "--onnx_file:").replace("Global.use_onnx:True", "--img_path:x.png")
    assert chain_layout(signature(split_lines(other))) is None
    res = invoke_in(tmp_path, "plan", str(_write(tmp_path, "toy", TOY)), "--mode", MODE, "--layout", "paddleclas")
    assert res.exit_code == 2 and "is a PaddleClas paddle2onnx config" in res.output


# The chains that are tables of another family than PaddleClas: (repo, layout, what fails each step)
# A device's programs no test machine has (a Lite chain's `adb`): recorded by the harness too.
DEVICE_TOOLS = ("adb",)
TABLE_CHAINS = [
    ("PaddleSeg", PADDLESEG_PADDLE2ONNX, ("--save_file", "infer_onnx")),
    ("PaddleVideo", PADDLEVIDEO_PADDLE2ONNX, ("--save_file", "predict_onnx")),
    ("models", MODELS_PADDLE2ONNX, ("--save_file", "onnx_python")),  # PaddleSeg's lines, its own script
    ("PaddleDetection", PADDLEDETECTION_PADDLE2ONNX, ("export_model", "--save_file", "infer.py")),
    ("PaddleSeg", PADDLESEG_PTQ, ("quant/ptq.py", "--device=gpu")),  # the quantization, the GPU inference
    ("models", MODELS_PTQ, ("post_quant.py", "infer.py")),  # PaddleSeg's twin; upstream never quantizes
    ("PaddleDetection", PADDLEDETECTION_PTQ, ("post_quant.py", "--device=gpu", "--device=cpu")),
    ("PaddleDetection", PADDLEDETECTION_CPP_INFER, ("export_model", "--device=gpu", "--device=cpu")),
    # the export, the web service (upstream's status says it started), the HTTP client
    ("PaddleDetection", PADDLEDETECTION_SERVING_PYTHON, ("export_model", "web_service", "http_client")),
    # the export, the C++ server, its client
    ("PaddleDetection", PADDLEDETECTION_SERVING_CPP, ("export_model", "paddle_serving_server", "serving_client")),
    # the conversion, the web service, the pipeline client
    ("PaddleSeg", PADDLESEG_SERVING_PYTHON, ("paddle_serving_client.convert", "web_service", "pipeline_http")),
    # the conversion, the client config's fit (no status line), the C++ server, its client
    (
        "PaddleSeg",
        PADDLESEG_SERVING_CPP,
        ("paddle_serving_client.convert", "modify_serving", "paddle_serving_server", "serving_client"),
    ),
    # the quantization, every inference, the CPU's
    ("PaddleVideo", PADDLEVIDEO_PTQ, ("quant_post_static.py", "predict.py", "--use_gpu=False")),
    # every run of the demo, the GPU's, the CPU's
    ("PaddleVideo", PADDLEVIDEO_CPP_INFER, ("--rec_model_dir", "--use_gpu=True", "--use_gpu=False")),
    # the conversion (no status line), the web service (upstream's status says it started), the client
    ("PaddleVideo", PADDLEVIDEO_SERVING_PYTHON, ("paddle_serving_client.convert", "web_service", "--input_file")),
    # the conversion, the C++ server (no status line of its own), the client
    (
        "PaddleVideo",
        PADDLEVIDEO_SERVING_CPP,
        ("paddle_serving_client.convert", "paddle_serving_server", "--input_file"),
    ),
    # the conversion, the web service, the client
    ("models", MODELS_SERVING_PYTHON, ("paddle_serving_client.convert", "web_service", "--image_dir")),
    # the conversion, the C++ server, the client
    ("models", MODELS_SERVING_CPP, ("paddle_serving_client.convert", "paddle_serving_server", "serving_client.py")),
    # its configs and script in ../shared/chains (CHAIN_SOURCES): the conversions, the GPU inference, every inference
    ("PaddleOCR/chains", PADDLEOCR_PADDLE2ONNX, ("--enable_dev_version", "--use_gpu=True", "--use_onnx")),
    # the GPU's runs, the CPU's, every run
    ("PaddleOCR/chains", PADDLEOCR_INFER_PYTHON, ("--use_gpu=True", "--use_gpu=False", "--image_dir")),
    # every run of the demo, the GPU's, the CPU's
    ("PaddleOCR/chains", PADDLEOCR_CPP_INFER, ("--image_dir", "--use_gpu=True", "--use_gpu=False")),
    # the KL quantization, the GPU's runs, every inference
    ("PaddleOCR/chains", PADDLEOCR_PTQ, ("quant_kl.py", "--use_gpu=True", "--image_dir")),
    # the conversions (no status line), the web service, the pipeline client
    ("PaddleOCR/chains", PADDLEOCR_SERVING_PYTHON, ("paddle_serving_client.convert", "web_service", "pipeline_http")),
    # the conversions (the det one without a status line), the C++ server, its client
    ("PaddleOCR/chains", PADDLEOCR_SERVING_CPP, ("paddle_serving_client.convert", "paddle_serving_server", "ocr_cpp")),
    # on the device: the slim (INT8) models' runs, every run of the demo
    ("PaddleOCR/chains", PADDLEOCR_LITE_ARM, ("slim", "_opt.nb")),
    # the GPU's runs (upstream's status says they succeeded: they ran in the background), every run
    ("PaddleDetection", PADDLEDETECTION_PIPELINE, ("--device=gpu", "pipeline.py")),
    # the push (no status line, its exit code unread), the predictor on the device
    ("models", MODELS_LITE_ARM, ("push", "shell")),
    # the C++ binary's one run (its demo image's argument)
    ("PaddleSeg", PADDLESEG_CPP_BINARY, ("_demo.",)),
    ("models", MODELS_CPP_BINARY, ("demo.jpg",)),  # its one run (its demo image's argument)
]


@pytest.mark.corpus
@pytest.mark.parametrize("repo, layout, fails", TABLE_CHAINS, ids=[t[1].name for t in TABLE_CHAINS])
def test_every_config_of_a_table_chain_is_faithful_to_its_repos_own_script(corpus, tmp_path, repo, layout, fails):
    """A chain written as a table (dialects/chains/, e.g. PaddleSeg's paddle2onnx): every corpus
    config imports as a typed suite of it, byte for byte; passing and with one step failing, in turn
    (each step fails on some config; TIPC_FULL_SWEEP=1: every step on every config), against the
    repo's own script; and our generated script against the Plan."""
    need_upstream(layout.dialect.script, repo=repo)
    family = chain_family(layout.name)
    configs = sorted(
        p for p in configs_root(repo).rglob("*.txt")  # the corpus's, or ../shared/chains' (CHAIN_SOURCES)
        if chain_layout(signature(split_lines(p.read_bytes().decode("utf-8", "replace"))), family) is layout
    )  # fmt: skip
    assert configs, f"no {layout.name} config in the corpus"
    from tipcgen.importer import config_groups, import_group

    for _directory, paths in config_groups(sorted({str(c.parent) for c in configs})).items():
        report = import_group(paths)  # typed as this chain's suites, rebuilt byte for byte
        assert not report.failures and report.layouts, report.failures
        assert all(report.layouts[c.name] == layout.name for c in configs if str(c.parent) == _directory)
    mode = layout.dialect.table.mode
    failing = [(c, f) for n, c in enumerate(configs) for f in rotate(n, fails)]
    failing += [(configs[0], f) for f in fails if f not in {f for _c, f in failing}]  # fewer configs than steps
    runs = [(c, mode, None, None) for c in configs] + [(c, mode, None, f) for c, f in failing]
    tally = oracle(repo, runs, chain=layout.name)
    print(tally.report(f"{layout.name} oracle"))
    assert not tally.unfaithful, "\n".join(tally.unfaithful[:5])
    cases = [Case(str(c), layout.name, mode, fail=f) for c in configs for f in (None, fails[-1])]
    mismatches = Harness(tmp_path / "h", tools=DEVICE_TOOLS).run(cases)
    assert not mismatches, "\n".join(mismatches[:5])


@pytest.mark.corpus
@pytest.mark.parametrize("repo", sorted(CHAIN_SOURCES))
def test_a_familys_chain_configs_and_scripts_in_shared_chains_are_where_the_oracle_reads_them(repo):
    """../shared/chains (PaddleOCR's chain configs and scripts, one commit): every file its
    MANIFEST.tsv lists is under configs_root / the oracle's scripts folder, beside the helpers the
    scripts source, and the importer reads every config (typed or raw, nothing fails)."""
    from tipcgen.importer import config_groups, import_groups

    # skips, naming where, when ../shared/chains is absent
    scripts, configs = need_upstream("test_paddle2onnx.sh", repo=repo) / repo, configs_root(repo)
    assert (scripts / "common_func.sh").is_file()  # what they source
    family = repo.split("/")[0]
    rows = [r.split("\t")[0] for r in (chains_dir() / family / "MANIFEST.tsv").read_text().splitlines()[1:] if r]
    listed = {"scripts": [], "configs": []}
    for row in rows:
        kind, rel = row.split("/", 2)[1:]
        listed[kind].append(rel)
        assert ((scripts if kind == "scripts" else configs) / rel).is_file(), row
    assert listed["scripts"] and listed["configs"]
    assert sorted(listed["configs"]) == sorted(
        p.relative_to(configs).as_posix() for p in configs.rglob("*") if p.is_file()
    )
    reports = import_groups(list(config_groups([str(configs)]).values()), "auto", None)
    txt = [rel for rel in listed["configs"] if rel.endswith(".txt")]  # a .yml one references is no config
    assert sum(len(r.layouts) for r in reports) == len(txt) and not any(r.failures for r in reports)


def test_an_infer_mode_without_an_export_is_refused_before_anything_runs(tmp_path):
    """PaddleDetection's script runs the items before it, then says `Undefined infer_mode!` and exits
    1 (a named deviation): the Plan refuses the config, naming the item, and the generated script
    exits 2 before it runs or writes anything (the harness checks that against the Plan's refusal)."""
    from tipcgen.errors import UsageError
    from tipcgen.plan.planner import plan_config

    layout = PADDLEDETECTION_PADDLE2ONNX
    toy = fixture_text(layout.name, "toydet_s_320_paddle2onnx_python_linux_cpu.txt")
    assert "infer_mode:norm|null|kl_quant\n" in toy
    odd = _write(tmp_path, "odd", toy.replace("infer_mode:norm|null|kl_quant", "infer_mode:norm|pact"))
    with pytest.raises(UsageError, match="infer_mode `pact` is none of norm, quant, fpgm, distill, kl_quant"):
        plan_config(odd.read_text(), layout, MODE, source=str(odd))
    # an empty item or `null` runs no export, so it needs no case (upstream's `[ ${x} != "null" ]`)
    empty = _write(tmp_path, "empty", toy.replace("infer_mode:norm|null|kl_quant", "infer_mode:|null"))
    plan = plan_config(empty.read_text(), layout, MODE, source=str(empty))
    assert [s.kind for s in plan.steps] == ["export", "infer"] * 2
    # a list too long to run: refused by both (plan/refusals.py, the script's tipc_check_matrix)
    long = _write(tmp_path, "long", toy.replace("norm|null|kl_quant", "|".join(["null"] * 4097)))
    with pytest.raises(UsageError, match="more than 4096 combinations"):
        plan_config(long.read_text(), layout, MODE, source=str(long))
    cases = [Case(str(c), layout.name, MODE) for c in (odd, empty, long)]
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, "\n".join(mismatches)


def test_paddleocrs_model_name_picks_its_pairs_and_a_name_of_no_kind_is_refused(tmp_path):
    """PaddleOCR's test_paddle2onnx.sh branches on the model's name (a Pick): the first branch that
    fits decides (`toyocr_det_rec` contains `det`: the det pair only, as upstream's if/elif), a
    table model converts its det pair with paddle2onnx's dev version, and a name of no branch is
    refused before anything runs by the Plan and by the generated script (exit 2, nothing written)."""
    from tipcgen.errors import UsageError
    from tipcgen.plan.planner import plan_config

    layout = PADDLEOCR_PADDLE2ONNX
    toy = fixture_text(layout.name, "toyocr_det_paddle2onnx_python_linux_cpu.txt")

    def plan(name: str):
        path = _write(tmp_path, name, toy.replace("model_name:toyocr_det", f"model_name:{name}"))
        return path, plan_config(path.read_text(), layout, MODE, source=str(path))

    both, got = plan("toyocr_det_rec")
    assert [(s.kind, s.log.rsplit("/", 1)[-1]) for s in got.steps] == [
        ("export", "trans_model_det.log"), ("infer", "paddle2onnx_infer_gpu.log"), ("infer", "paddle2onnx_infer_cpu.log")
    ]  # fmt: skip
    table, got = plan("slanet")
    assert "--enable_dev_version=True >" in got.steps[0].command and "--det_model_dir=" in got.steps[1].command
    odd = _write(tmp_path, "toyocr_cls", toy.replace("model_name:toyocr_det", "model_name:toyocr_cls"))
    with pytest.raises(UsageError, match="model_name `toyocr_cls` is none of ch_PP-OCRv2, .* nor rec"):
        plan_config(odd.read_text(), layout, MODE, source=str(odd))
    mismatches = Harness(tmp_path / "h").run([Case(str(c), layout.name, MODE) for c in (both, table, odd)])
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.corpus
def test_paddleocrs_cpp_inference_skips_as_upstream_and_takes_its_gpuid_third(tmp_path):
    """PaddleOCR's test_inference_cpp.sh on our toy (a plain and a quantized model, the CPU and the
    GPU, TensorRT off and on, fp32/fp16/int8): a quantized model only with mkldnn on the CPU, only
    with TensorRT and not int8 on the GPU; int8 only quantized, fp16 only with TensorRT; every run
    with the det/rec/cls/use_angle_cls lines. Against the real script, with and without a GPUID."""
    from tipcgen.plan.planner import plan_config

    layout, mode = PADDLEOCR_CPP_INFER, "cpp_infer"
    need_upstream(layout.dialect.script, repo="PaddleOCR/chains")
    name = "toyocr_sys_linux_gpu_normal_normal_infer_cpp_linux_gpu_cpu.txt"
    path = tmp_path / "toyocr_sys" / name
    path.parent.mkdir()
    path.write_text(fixture_text(layout.name, name))
    runs = [(s.argv, s.log.rsplit("/", 1)[-1]) for s in plan_config(path.read_text(), layout, mode).steps]
    quant = [log for argv, log in runs if "--det_model_dir=./inference/toyocr_det_quant" in argv]
    plain = [log for argv, log in runs if "--det_model_dir=./inference/toyocr_det" in argv]
    assert all("--det=True" in argv and "--use_angle_cls=False" in argv for argv, _log in runs)
    assert sorted(quant) == sorted(
        ["cpp_infer_cpu_usemkldnn_True_threads_2_precision_fp32_batchsize_1.log"]
        + [f"cpp_infer_gpu_usetrt_True_precision_{p}_batchsize_1.log" for p in ("fp32", "fp16")]
    )
    assert (
        not any("int8" in log for log in plain)
        and "cpp_infer_gpu_usetrt_False_precision_fp16_batchsize_1.log" not in plain
    )
    tally = oracle("PaddleOCR/chains", [(path, mode, gpuid, None) for gpuid in (None, "1")], chain=layout.name)
    assert not tally.unfaithful, "\n".join(tally.unfaithful[:3])


def test_paddleocrs_python_inference_skips_as_upstream_and_refuses_an_export(tmp_path):
    """PaddleOCR's test_inference_python.sh: per inference model (its infer_quant item beside it) the
    CPU's and the GPU's runs, less the combinations upstream `continue`s past (fp16 without mkldnn; a
    quantized model only with mkldnn in int8 on the CPU, only with TensorRT and not int8 on the GPU;
    `int8` by containment, as its `=~`). An infer_export item other than `null` (upstream builds its
    export from variables it never sets) is refused by the Plan and by the script alike."""
    from tipcgen.errors import UsageError
    from tipcgen.plan.planner import plan_config

    layout, mode = PADDLEOCR_INFER_PYTHON, "whole_infer"
    name = "toyocr_linux_gpu_normal_normal_infer_python_linux_gpu_cpu.txt"
    toy = fixture_text(layout.name, name)
    path = tmp_path / "toyocr" / name
    path.parent.mkdir()
    path.write_text(toy.replace("--precision:fp32|fp16|int8", "--precision:fp32|fp16|int8_x"))
    logs = [s.log.rsplit("/", 1)[-1] for s in plan_config(path.read_text(), layout, mode, source=str(path)).steps]
    assert "python_infer_gpu_usetrt_True_precision_fp16_batchsize_1.log" in logs
    # contains int8: never on the GPU (upstream's `=~`); on the CPU the plain model runs any precision
    assert not any("gpu" in log and "int8_x" in log for log in logs)
    assert "python_infer_cpu_usemkldnn_False_threads_1_precision_int8_x_batchsize_1.log" in logs
    assert not any("usemkldnn_False_threads_1_precision_fp16" in log for log in logs)
    odd = tmp_path / "odd" / name
    odd.parent.mkdir()
    odd.write_text(toy.replace("infer_export:null", "infer_export:tools/export_model.py"))
    with pytest.raises(UsageError, match="pyinfer.export `tools/export_model.py` is not null"):
        plan_config(odd.read_text(), layout, mode, source=str(odd))
    mismatches = Harness(tmp_path / "h").run([Case(str(c), layout.name, mode) for c in (path, odd)])
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.corpus
def test_paddleocrs_kl_quantization_of_each_model_and_a_null_export_as_upstream(corpus):
    """PaddleOCR's test_ptq_inference_python.sh: per inference model its infer_export item (by
    position, the export log numbered by it) quantizes it into `<model>_klquant` and the inference
    runs that; after a `null` item the model itself runs; int8 only, a use_gpu item of no branch
    only echoed. Our toy config (two models, the second `null`) and the corpus's own PTQ config
    (under PaddleOCR, run by the chain script of ../shared/chains): the Plan is identical to the
    real script's run."""
    need_upstream(PADDLEOCR_PTQ.dialect.script, repo="PaddleOCR/chains")
    from update_golden import FIXTURES

    toy = FIXTURES / PADDLEOCR_PTQ.name / "toyocr_rec_train_ptq_infer_python.txt"
    diff = compare_text("PaddleOCR/chains", toy, toy.read_text(), "whole_infer", chain=PADDLEOCR_PTQ.name)
    assert diff.identical, diff.describe()
    kinds = [s.kind for s in diff.plan.steps]
    assert kinds.count("export") == 1 and kinds.count("infer") == 12
    assert diff.plan.steps[0].log.endswith("/whole_infer_export_0.log")
    two = toy.read_text().replace("-o|null", "-o|deploy/slim/quantization/quant_kl.py -c b.yml -o")
    diff = compare_text("PaddleOCR/chains", toy, two, "whole_infer", gpuid="1", chain=PADDLEOCR_PTQ.name)
    assert diff.identical, diff.describe()
    assert [s.log.rsplit("/", 1)[-1] for s in diff.plan.steps if s.kind == "export"] == [
        "whole_infer_export_0.log",
        "whole_infer_export_1.log",
    ]
    own = corpus / "PaddleOCR" / "ch_PP-OCRv3_rec" / "train_ptq_infer_python.txt"
    if not own.is_file():
        pytest.skip(f"{own} is not in the corpus")
    diff = compare_text("PaddleOCR/chains", own, own.read_text(), "whole_infer", chain=PADDLEOCR_PTQ.name)
    assert diff.identical, diff.describe()


@pytest.mark.corpus
def test_a_use_gpu_item_of_no_branch_is_skipped_as_upstream_only_echoes(corpus):
    """PaddleSeg's PTQ script: an item neither False/cpu nor True/gpu runs nothing (upstream echoes
    and goes on, unlike a Case's missing choice) and an empty batch size is a blank parameter: the
    Plan is identical to the real script's run on such a config."""
    need_upstream(PADDLESEG_PTQ.dialect.script, repo="PaddleSeg")
    config = corpus / "PaddleSeg" / "fcn_hrnetw18" / "train_ptq_infer_python.txt"
    text = (
        config.read_text()
        .replace("--device:cpu|gpu", "--device:xpu|gpu||cpu")
        .replace("--batch_size:1\n--config:quant", "--batch_size:1||2\n--config:quant")
    )
    assert "xpu|gpu||cpu" in text and "1||2" in text
    diff = compare_text("PaddleSeg", config, text, "whole_infer", chain=PADDLESEG_PTQ.name)
    assert diff.identical, diff.describe()
    assert [s.kind for s in diff.plan.steps] == ["export"] + ["infer"] * 6


# Each family's serving pair: the Python and the C++ script read configs of one first section.
SERVING_PAIRS = (
    (PADDLESEG_SERVING_PYTHON, PADDLESEG_SERVING_CPP),
    (PADDLEVIDEO_SERVING_PYTHON, PADDLEVIDEO_SERVING_CPP),
    (MODELS_SERVING_PYTHON, MODELS_SERVING_CPP),
    (PADDLEOCR_SERVING_PYTHON, PADDLEOCR_SERVING_CPP),
)


@pytest.mark.parametrize("pair", SERVING_PAIRS, ids=lambda p: p[0].name.rsplit("_", 2)[0])
def test_a_serving_script_refuses_its_twins_config_before_anything_runs(tmp_path, pair):
    """A family's Python and C++ serving configs share their first section: each script refuses the
    other's config (ChainTable.requires; upstream reads it by position), the Plan and the generated
    script alike."""
    from tipcgen.errors import UsageError
    from tipcgen.plan.planner import plan_config

    cases = []
    for layout, other in (pair, pair[::-1]):
        config = next((Path(__file__).parent / "fixtures" / other.name).glob("*.txt"))
        mode = layout.dialect.table.mode
        with pytest.raises(UsageError, match=f"a config of another script than {layout.dialect.script}"):
            plan_config(config.read_text(), layout, mode, source=str(config))
        cases.append(Case(str(config), layout.name, mode))
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize(("layout", "family"), [
    (PADDLESEG_PTQ, "paddleseg"), (MODELS_PTQ, "models"), (PADDLEVIDEO_PTQ, "paddlevideo"),
], ids=lambda x: getattr(x, "name", x))  # fmt: skip
def test_a_ptq_script_refuses_its_familys_train_config_before_anything_runs(tmp_path, layout, family):
    """Given a train config, upstream's PTQ script runs its lines by position as a quantization's;
    ours refuses it (exit 2, nothing run; ChainTable.requires), the Plan and the generated script alike."""
    from tipcgen.errors import UsageError
    from tipcgen.plan.planner import plan_config

    config = Path(__file__).parent / "fixtures" / family / "train_infer_python.txt"
    role, key = layout.dialect.table.requires[0]
    with pytest.raises(UsageError, match=f"its {role} line has the key .*, not '{key}'"):
        plan_config(config.read_text(), layout, "whole_infer", source=str(config))
    mine = next((Path(__file__).parent / "fixtures" / layout.name).glob("*.txt"))
    plan_config(mine.read_text(), layout, "whole_infer", source=str(mine))  # its own config passes
    cases = [Case(str(config), layout.name, "whole_infer"), Case(str(mine), layout.name, "whole_infer")]
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.corpus
@pytest.mark.parametrize("layout", [PADDLESEG_SERVING_PYTHON, PADDLESEG_SERVING_CPP], ids=lambda x: x.name)
def test_paddlesegs_serving_takes_the_first_python_and_any_device_items_as_upstream(corpus, layout):
    """PaddleSeg's serving scripts: the interpreter is the python line's first `|` item, every device
    item but `null` is a GPU run with that item, and GPUID is every command's CUDA_VISIBLE_DEVICES:
    the real script's run on such a config differs from the Plan only by the table's deviations."""
    need_upstream(layout.dialect.script, repo="PaddleSeg")
    kind = "python" if layout is PADDLESEG_SERVING_PYTHON else "cpp"
    config = corpus / "PaddleSeg" / "ppmatting" / f"model_linux_gpu_normal_normal_serving_{kind}_linux_gpu_cpu.txt"
    text = config.read_text().replace("python:python3.7", "python:python3.10|python3.7")
    text = text.replace(':"0"|null', ':"1"|null|"0"')
    assert "python3.10|python3.7" in text and '"1"|null|"0"' in text
    diff = compare_text("PaddleSeg", config, text, "serving_infer", gpuid="2", chain=layout.name)
    assert not diff.unexplained(), diff.describe()
    serves = [s for s in diff.plan.steps if s.kind == "serve"]
    assert len(serves) == 3 and all(s.argv[0] == "python3.10" and s.cuda_visible_devices == "2" for s in serves)


@pytest.mark.corpus
def test_paddledetections_ptq_configs_are_its_ptq_tables_and_no_other_chains(corpus):
    """Detection tells PaddleDetection's PTQ configs (`ptq_params`, its kl_quant export lines) from its
    other chains' and train configs, and from PaddleSeg's, the models tutorials' and PaddleClas's PTQ
    configs: every corpus config of that table is one of PaddleDetection's `*_ptq_infer_python.txt`,
    and every one of those is of that table."""
    found, named = set(), set()
    for path in sorted(corpus.rglob("*.txt")):
        text = path.read_bytes().decode("utf-8", "replace")
        if chain_layout(signature(split_lines(text), path.name)) is PADDLEDETECTION_PTQ:
            found.add(path)
        if path.is_relative_to(corpus / "PaddleDetection") and path.name.endswith("_ptq_infer_python.txt"):
            named.add(path)
    assert named and found == named, sorted(found ^ named)
    others = [p for p in corpus.rglob("*ptq*.txt") if not p.is_relative_to(corpus / "PaddleDetection")]
    assert others  # PaddleSeg's, the models tutorials', PaddleClas's: none is PaddleDetection's


@pytest.mark.corpus
def test_paddledetections_ptq_runs_only_its_devices_and_gpu_run_modes_as_its_script(corpus):
    """PaddleDetection's PTQ script: a device other than cpu or gpu (and an empty one) only echoes, a
    GPU run mode other than paddle and trt_int8 is skipped silently, the CPU runs each mkldnn x
    threads x batch size (an empty batch size a blank parameter): the Plan is identical to the real
    script's run on such a config, passing and with the GPU's inference failing."""
    need_upstream(PADDLEDETECTION_PTQ.dialect.script, repo="PaddleDetection")
    config = corpus / "PaddleDetection" / "ppyoloe" / "ppyoloe_crn_s_300e_coco_train_ptq_infer_python.txt"
    text = (
        config.read_text()
        .replace("--device:gpu|cpu", "--device:xpu|gpu||cpu")
        .replace("--enable_mkldnn:False", "--enable_mkldnn:False|True")
        .replace("--batch_size:1|2", "--batch_size:1||2")
        .replace("--run_mode:paddle", "--run_mode:trt_fp16|paddle|trt_int8")
    )
    assert "xpu|gpu||cpu" in text and "False|True" in text and "trt_fp16|paddle|trt_int8" in text
    for fail in (None, "--run_mode=trt_int8"):
        diff = compare_text("PaddleDetection", config, text, "whole_infer", chain=PADDLEDETECTION_PTQ.name, fail=fail)
        assert diff.identical, diff.describe()
        assert [s.kind for s in diff.plan.steps] == ["export"] + ["infer"] * (2 * 3 + 2 * 3)


@pytest.mark.corpus
def test_paddledetections_cpp_configs_are_its_cpp_table_and_paddleclas_are_not(corpus):
    """Both repos name their C++ configs `cpp_infer_params`: PaddleDetection's (its export lines,
    `infer_mode:`) are its own table's, every one of them, and no other repo's config is."""
    found, named = set(), set()
    for path in sorted(corpus.rglob("*.txt")):
        text = path.read_bytes().decode("utf-8", "replace")
        if chain_layout(signature(split_lines(text), path.name)) is PADDLEDETECTION_CPP_INFER:
            found.add(path)
        if path.is_relative_to(corpus / "PaddleDetection") and text.startswith("=" * 27 + "cpp_infer_params"):
            named.add(path)
    assert named and found == named, sorted(found ^ named)


def test_paddledetections_cpp_script_takes_a_library_link_not_a_mode(tmp_path):
    """Upstream's takes CONFIG, the Paddle Inference library's link (for its build), GPUID, and fixes
    MODE to cpp_infer: ours takes them alike (the link read and unused: it builds nothing) and
    refuses a fourth argument before anything runs."""
    from update_golden import FIXTURES

    src = FIXTURES / "paddledetection_cpp_infer"
    (spec,) = src.glob("*.spec.yml")
    res = invoke_in(tmp_path, "build", str(spec), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    (tipc,) = (tmp_path / "gen").glob("*/test_tipc")
    script = tipc / "test_inference_cpp.sh"
    text = script.read_text()
    assert "# usage: bash test_tipc/test_inference_cpp.sh CONFIG [PADDLE_INFER_LINK] [GPUID]\n" in text
    assert "\nMODE=cpp_infer\n" in text
    (config,) = tipc.glob("configs/*/*.txt")
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run(["bash", str(script), str(config), "https://x/paddle_inference.tgz", "1", "more"], cwd=work,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2 and "usage: bash" in proc.stderr, proc.stderr
    assert not any(work.iterdir())


@pytest.mark.corpus
def test_paddledetections_cpp_chain_pairs_each_infer_mode_with_its_quant_flag_as_its_script(corpus):
    """PaddleDetection's C++ script: each infer_mode with the infer_quant item at its position (none
    past the list's end), mkldnn off skipped on the CPU for a quantized model, on the GPU trt_int8
    only for a quantized model and another run mode but paddle only for another, a use_gpu item of
    no branch only echoed, GPUID every step's CUDA_VISIBLE_DEVICES: the Plan runs what the real
    script runs (its demo build aside, the one named deviation), passing and with the GPU failing."""
    need_upstream(PADDLEDETECTION_CPP_INFER.dialect.script, repo="PaddleDetection")
    config = (
        corpus / "PaddleDetection" / "ppyoloe" / "ppyoloe_crn_s_300e_coco_PACT_model_linux_gpu_normal_normal"
        "_infer_cpp_linux_gpu_cpu.txt"
    )
    text = (
        config.read_text()
        .replace(
            "infer_mode:quant\ninfer_quant:True", "infer_mode:norm|null|quant|kl_quant\ninfer_quant:False|True|True"
        )
        .replace("--device:gpu|cpu", "--device:xpu|gpu||cpu")
        .replace("--use_mkldnn:False", "--use_mkldnn:False|True")
        .replace("--run_mode:paddle", "--run_mode:trt_fp16|paddle|trt_int8")
    )
    assert "norm|null|quant|kl_quant" in text and "trt_fp16|paddle|trt_int8" in text
    for fail in (None, "--device=gpu"):
        diff = compare_text("PaddleDetection", config, text, "cpp_infer", "1", chain=PADDLEDETECTION_CPP_INFER.name,
                            fail=fail)  # fmt: skip
        assert [d.category for d in diff.differences] == ["build: upstream builds the demo first (wget tar cmake make)"]
        assert not diff.unexplained(), diff.describe()
        assert {s.cuda_visible_devices for s in diff.plan.steps} == {"1"}  # as upstream's (compared)
        # norm (not quantized): gpu paddle, trt_fp16 x 2 batch sizes, cpu mkldnn False, True x 2;
        # null, quant (quantized): gpu paddle, trt_int8 x 2, cpu mkldnn True x 2; kl_quant (no flag): all
        kinds = [s.kind for s in diff.plan.steps]
        assert kinds.count("export") == 3 and kinds.count("infer") == 8 + 6 + 6 + 10, kinds


@pytest.mark.corpus
def test_every_paddleclas_paddle2onnx_config_is_faithful_to_the_real_script(corpus, tmp_path):
    """Every corpus config of the chain x (passing, the conversion failing, the inference
    failing): the real test_paddle2onnx.sh and our Plan agree, every difference a deviation; and
    our generated script agrees with the Plan."""
    need_upstream("test_paddle2onnx.sh")
    configs = sorted(
        p for p in (corpus / "PaddleClas").rglob("*.txt")
        if chain_layout(signature(split_lines(p.read_bytes().decode("utf-8", "replace")))) is PADDLECLAS_PADDLE2ONNX
    )  # fmt: skip
    assert configs, "no PaddleClas paddle2onnx config in the corpus"
    tally = oracle("PaddleClas", [(c, MODE, None, f) for c in configs for f in (None, "--save_file", "predict_cls")],
                   chain=LAYOUT)  # fmt: skip
    print(tally.report("paddle2onnx oracle"))
    assert not tally.unfaithful, "\n".join(tally.unfaithful[:5])
    # the deviation shows on a failure only: every passing run is identical
    assert all(not d.differences for (_c, _m, _g, fail), d in tally.diffs if fail is None)
    cases = [Case(str(c), LAYOUT, MODE, fail=f) for c in configs for f in (None, "predict_cls")]
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, "\n".join(mismatches[:5])


def test_build_emits_the_chain_script_and_it_runs(tmp_path):
    """A spec carrying a paddle2onnx config (imported, kept verbatim) builds test_paddle2onnx.sh
    beside the train runner; run from the tree with a stand-in converter and interpreter."""
    import subprocess

    folder = tmp_path / "src" / "ToyNet"
    folder.mkdir(parents=True)
    (folder / "ToyNet_paddle2onnx_python_linux_cpu.txt").write_text(TOY + "\n")
    res = invoke_in(tmp_path, "import", str(folder), "--out", str(tmp_path / "specs"))
    assert res.exit_code == 0, res.output
    res = invoke_in(tmp_path, "build", str(tmp_path / "specs" / "ToyNet.yml"), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    root = tmp_path / "gen" / "ToyNet"
    assert (root / "test_tipc" / "test_paddle2onnx.sh").is_file()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("paddle2onnx", "python3.7"):
        (bin_dir / name).write_text('#!/bin/sh\necho "$0 $*"\n')
        (bin_dir / name).chmod(0o755)
    (root / "deploy").mkdir()
    run = subprocess.run(
        ["bash", "test_tipc/test_paddle2onnx.sh", "test_tipc/configs/ToyNet/ToyNet_paddle2onnx_python_linux_cpu.txt"],
        cwd=root, env=dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}"), capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    status = (root / "test_tipc/output/ToyNet/paddle2onnx_infer/results_paddle2onnx.log").read_text()
    assert status.count("Run successfully with command - ToyNet - ") == 2, status
    # the chain's page shows exactly those lines (computed from the Plan), paths from the repo root
    page = (root / "test_tipc" / "docs" / "test_paddle2onnx.md").read_text()
    expected = [line for line in page.split("\n") if line.startswith("Run successfully with command - ToyNet")]
    written = [re.sub(r"\x1b\[\d+m", "", line).strip() for line in status.splitlines()]  # (PaddleClas colours them)
    assert expected == [line.replace(str(root), ".") for line in written], (expected, written)
    assert "# Paddle2ONNX 模型转换与推理测试" in page and "tipcgen run test_tipc/configs/ToyNet/" in page


# ---------------------------------------------------------------- typed chain suites in a spec

SPEC_WITH_CHAIN = """tipcgen: 1
model: ToyNet
layout: paddleclas
defaults:
  python: python3.7
suites:
  paddle2onnx:
    file: ToyNet_paddle2onnx_python_linux_cpu.txt
    layout: paddleclas_paddle2onnx
    infer_model_url: https://example.invalid/ToyNet_infer.tar
    p2o:
      command: ' paddle2onnx'
      model_dir: ./deploy/models/ToyNet_infer/
      model_filename: inference.pdmodel
      params_filename: inference.pdiparams
      save_file: ./deploy/models/ToyNet_infer/inference.onnx
      opset: 11
      checker: True
      infer:
        script: ./python/predict_cls.py
        use_onnx: {key: Global.use_onnx, value: True}
        model_dir: {key: Global.inference_model_dir, value: ./models/ToyNet_infer}
        device: {key: Global.use_gpu, value: False}
        config: {key: -c, value: configs/inference_cls.yaml}
"""


def test_import_types_a_chain_config_and_rebuilds_it_byte_identical(tmp_path):
    folder = tmp_path / "src" / "ToyNet"
    folder.mkdir(parents=True)
    (folder / "ToyNet_paddle2onnx_python_linux_cpu.txt").write_text(TOY + "\n")
    (folder / "ToyNet_null_opset_paddle2onnx_python_linux_cpu.txt").write_text(NULL_OPSET)
    res = invoke_in(tmp_path, "import", str(folder), "--out", str(tmp_path / "specs"))
    assert res.exit_code == 0, res.output
    text = (tmp_path / "specs" / "ToyNet.yml").read_text()
    assert "\nother_configs:" not in text and "layout: paddleclas_paddle2onnx" in text
    assert "opset: 11" in text and "use_onnx: {key: Global.use_onnx, value: True}" in text
    res = invoke_in(tmp_path, "build", str(tmp_path / "specs" / "ToyNet.yml"), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    configs = tmp_path / "gen" / "ToyNet" / "test_tipc" / "configs" / "ToyNet"
    for src in folder.iterdir():
        assert (configs / src.name).read_bytes() == src.read_bytes(), src.name
    # one page for the chain (no train page for a chain suite)
    docs = sorted(p.name for p in (tmp_path / "gen" / "ToyNet" / "test_tipc" / "docs").iterdir())
    assert docs == ["test_paddle2onnx.md"], docs


def test_a_hand_written_chain_suite_builds_plans_and_edits_reach_the_config(tmp_path):
    spec = tmp_path / "ToyNet.yml"
    spec.write_text(SPEC_WITH_CHAIN.replace("opset: 11", "opset: 13"))
    res = invoke_in(tmp_path, "build", str(spec), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    root = tmp_path / "gen" / "ToyNet" / "test_tipc"
    config = (root / "configs" / "ToyNet" / "ToyNet_paddle2onnx_python_linux_cpu.txt").read_text()
    assert config == TOY.replace("--opset_version:11", "--opset_version:13") + "\n"
    assert (root / "test_paddle2onnx.sh").is_file()
    res = invoke_in(tmp_path, "plan", str(spec), "--mode", MODE, "--format", "json")
    assert res.exit_code == 0, res.output
    steps = json.loads(res.output)["steps"]
    assert "--opset_version=13" in steps[0]["argv"] and steps[1]["kind"] == "infer"


def test_a_chain_suite_takes_only_the_shared_fields_from_defaults(tmp_path):
    """`defaults` hold the train suites' values: a chain suite inherits model_name, python and
    infer_model_url only; a train field written in the chain suite itself has no line there."""
    spec = tmp_path / "ToyNet.yml"
    shared = SPEC_WITH_CHAIN.replace("  python: python3.7\n", "  python: python3.9\n  train: {model_file: latest}\n")
    spec.write_text(shared)
    res = invoke_in(tmp_path, "build", str(spec), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    config = (tmp_path / "gen/ToyNet/test_tipc/configs/ToyNet/ToyNet_paddle2onnx_python_linux_cpu.txt").read_text()
    assert "\npython:python3.9\n" in config
    bad = SPEC_WITH_CHAIN.replace(
        "    layout: paddleclas_paddle2onnx\n",
        "    layout: paddleclas_paddle2onnx\n    eval: {command: tools/eval.py}\n",
    )
    spec.write_text(bad)
    res = invoke_in(tmp_path, "build", str(spec), "--out", str(tmp_path / "gen2"))
    assert res.exit_code == 2 and "suites.paddle2onnx.eval.command" in res.output, res.output
    assert "has no line for this field" in res.output and not (tmp_path / "gen2").exists()
    # a train field in another chain's section: an unknown field, located
    spec.write_text(SPEC_WITH_CHAIN.replace("      opset: 11\n", "      opset: 11\n      epochs: 3\n"))
    res = invoke_in(tmp_path, "build", str(spec), "--out", str(tmp_path / "gen3"))
    assert res.exit_code == 2 and "ToyNet.yml:18" in res.output and "p2o.epochs" in res.output, res.output


@pytest.mark.corpus
def test_every_paddleclas_chain_config_imports_typed_and_rebuilds_byte_identical(corpus):
    """Import each PaddleClas model folder: every config rebuilds exactly, and each config a
    chain layout reads is a typed suite of that layout (not kept verbatim)."""
    from tipcgen.dialects.chains import CHAIN_LAYOUTS, chain_of_text
    from tipcgen.importer import config_groups, import_group

    counts: dict = {}
    for _directory, paths in config_groups([str(corpus / "PaddleClas")]).items():
        report = import_group(paths)
        assert not report.failures, report.failures
        for file, kind in report.layouts.items():
            counts[kind] = counts.get(kind, 0) + 1
            chain = chain_of_text(Path(_directory, file).read_text(errors="replace"), file)
            if chain is not None:
                assert kind == chain.name, file
    print("PaddleClas import by layout:", json.dumps(counts, sort_keys=True))
    assert all(counts.get(name, 0) > 0 for name in CHAIN_LAYOUTS if name.startswith("paddleclas_")), counts


def test_lint_knows_the_chain_opset_and_the_model_it_needs(tmp_path):
    bad = _write(tmp_path, "bad", TOY.replace("--opset_version:11", "--opset_version:5"))
    res = invoke_in(tmp_path, "lint", str(bad))
    assert res.exit_code == 1 and f"{bad}:9: error: TIPC026 onnx-opset" in res.output, res.output
    good = _write(tmp_path, "good", NULL_OPSET)
    assert invoke_in(tmp_path, "lint", str(good)).exit_code == 0
    # a spec refuses the opset at its line, like any error-level finding
    spec = tmp_path / "ToyNet.yml"
    spec.write_text(SPEC_WITH_CHAIN.replace("opset: 11", "opset: 99"))
    res = invoke_in(tmp_path, "build", str(spec), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 2 and "ToyNet.yml:17" in res.output and "TIPC026" in res.output, res.output
    # the model folder the conversion reads: no prepare step provides it, then one does
    spec.write_text(SPEC_WITH_CHAIN)
    res = invoke_in(tmp_path, "lint", str(spec))
    assert "TIPC027 chain-model-unprepared: paddle2onnx_infer: no prepare step provides" in res.output, res.output
    assert "'./deploy/models/ToyNet_infer/'" in res.output
    prepared = SPEC_WITH_CHAIN.replace(
        "defaults:\n",
        "prepare:\n  paddle2onnx_infer:\n    - {url: 'https://example.invalid/ToyNet_infer.tar', to: ./deploy/models, extract: true}\n"
        "defaults:\n",
    )
    spec.write_text(prepared)
    res = invoke_in(tmp_path, "lint", str(spec))
    assert "TIPC027" not in res.output, res.output
    # a second chain suite of the model naming another inference model
    second = prepared + SPEC_WITH_CHAIN.split("suites:\n", 1)[1].replace("  paddle2onnx:", "  paddle2onnx_b:").replace(
        "file: ToyNet_", "file: B_"
    ).replace("ToyNet_infer.tar", "Other_infer.tar")
    spec.write_text(second)
    res = invoke_in(tmp_path, "lint", str(spec))
    assert "TIPC028 chain-model-url-differs: model 'ToyNet' names 2 inference models" in res.output, res.output


def test_doctor_reads_a_chain_config_by_its_own_table(tmp_path):
    path = _write(tmp_path, "toy", TOY.replace("python:python3.7", f"python:{sys.executable}"))
    res = invoke_in(tmp_path, "doctor", str(path), "--mode", MODE, "--json", "--skip", "python")
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    states = {c["name"]: c["verdict"] for c in report["checks"]}
    assert report["mode"] == MODE and states["digest"] == "ok" and states["node"] == "skip", report


# ---- chain configs a repo's family or a file name decides (import, specs)

D2S = fixture_text("paddleclas_dy2static", "toy_train_dy2static_python.txt")
PTQ = fixture_text("paddleclas_ptq", "toy_train_ptq_infer_python.txt")
PTQ_NAME = "ToyNet_train_ptq_infer_python.txt"


def test_a_folder_holding_only_a_dy2static_config_is_of_the_repos_family(tmp_path):
    """PaddleVideo's BMN/ holds its dy2static config alone: with the repo's family given (migrate's
    repo_family), it is typed by that family's own dy2static layout (its script runs it its own way),
    never by PaddleClas's."""
    from tipcgen.importer import import_configs

    path = tmp_path / "train_dy2static_python.txt"
    path.write_text(D2S)
    alone = import_configs([str(path)])
    assert alone.layouts[path.name] == "paddleclas_dy2static", "no family known: the table it fits"
    for family in ("paddlevideo", "paddleseg", "paddleclas"):
        assert import_configs([str(path)], family=family).layouts[path.name] == f"{family}_dy2static"


def test_a_spec_suite_names_the_chain_and_the_build_writes_its_script(tmp_path):
    """Import names such a config's chain (its file name says it: `layout: paddleclas_ptq`),
    typed as a train suite, the same config bytes; planned and built as the chain's:
    test_ptq_inference_python.sh beside the train runner, the chain's page, no train doc."""
    folder = tmp_path / "src" / "ToyNet"
    folder.mkdir(parents=True)
    (folder / PTQ_NAME).write_text(PTQ + "\n")
    res = invoke_in(tmp_path, "import", str(folder), "--out", str(tmp_path / "specs"))
    assert res.exit_code == 0, res.output
    spec = tmp_path / "specs" / "ToyNet.yml"
    text = spec.read_text()
    assert "layout: paddleclas_ptq\n" in text and "train:" in text, text
    res = invoke_in(tmp_path, "plan", str(spec), "--mode", "whole_infer", "--format", "json")
    assert res.exit_code == 0, res.output
    plan = json.loads(res.output)
    assert plan["layout"] == "paddleclas_ptq" and [s["kind"] for s in plan["steps"]] == ["export"] + ["infer"] * 5
    res = invoke_in(tmp_path, "build", str(spec), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    tipc = tmp_path / "gen" / "ToyNet" / "test_tipc"
    assert (tipc / "configs" / "ToyNet" / PTQ_NAME).read_text() == PTQ + "\n"
    assert (
        "# usage: bash test_tipc/test_ptq_inference_python.sh CONFIG MODE"
        in (tipc / "test_ptq_inference_python.sh").read_text()
    )
    assert sorted(p.name for p in (tipc / "docs").iterdir()) == ["test_ptq_inference_python.md"]
    # another chain's table has no line for a train field: refused, located
    other = text.replace("layout: paddleclas_ptq\n", "layout: paddleclas_paddle2onnx\n", 1)
    spec.write_text(other)
    res = invoke_in(tmp_path, "build", str(spec), "--out", str(tmp_path / "gen2"))
    assert res.exit_code == 2 and "has no line for this field" in res.output, res.output


def test_paddleocrs_lite_inference_line_picks_what_runs_and_another_is_refused(tmp_path):
    """PaddleOCR's test_lite_arm_cpp.sh branches on its inference line (a Pick, by substring as
    upstream's if/elif): a system runs its det model's rec and cls models at its position, in INT8
    for a slim det model, each rec batch size naming its log only; a line of no branch (upstream:
    `inference_cmd is wrong`, exit 1) is refused before anything runs by the Plan and the script."""
    from tipcgen.errors import UsageError
    from tipcgen.plan.planner import plan_config

    layout = PADDLEOCR_LITE_ARM
    toy = fixture_text(layout.name, "toyocr_sys_lite_arm_cpu.txt")
    plan = plan_config(toy, layout, "lite_infer", source="toy.txt")
    got = [s.argv[1:7] for s in plan.steps]
    assert got[0] == ("system", "toyocr_det_infer_opt.nb", "toyocr_rec_infer_opt.nb", "toyocr_cls_infer_opt.nb",
                      "ARM_CPU", "FP32")  # fmt: skip
    assert got[-1][:2] == ("system", "toyocr_det_slim_infer_opt.nb") and got[-1][5] == "INT8"
    assert len(plan.steps) == 2 * 2 * 2  # det models x threads x rec batch sizes (the demo gets the det one)
    assert {s.argv[8] for s in plan.steps} == {"1"} and "rec_batchsize_8" in plan.steps[1].log
    odd = _write(tmp_path, "odd", toy.replace("inference:./ocr_db_crnn system", "inference:./ocr_db_crnn cls"))
    with pytest.raises(UsageError, match="contains none of det, rec, system"):
        plan_config(odd.read_text(), layout, "lite_infer", source=str(odd))
    mismatches = Harness(tmp_path / "h").run([Case(str(odd), layout.name, "lite_infer")])
    assert not mismatches, "\n".join(mismatches)


def test_the_tutorials_lite_values_reach_the_device_as_one_word_or_the_config_is_refused(tmp_path):
    """The models tutorial's test_lite_arm_cpu_cpp.sh: its sed replacements are escaped (a work path's
    `/`), and a value that would reach the device's shell line as more than one word (upstream splices
    it into `adb shell '...'`) is refused before anything runs by the Plan and the script alike."""
    from tipcgen.errors import UsageError
    from tipcgen.plan.planner import plan_config

    layout = MODELS_LITE_ARM
    toy = fixture_text(layout.name, "toynet_lite_arm_cpu_cpp.txt")
    plan = plan_config(toy, layout, "lite_infer", source="toy.txt")
    assert plan.steps[1].argv[2] == r"s/clas_model_file.*/clas_model_file  \/data\/local\/tmp\/toy_arm\/toynet_tiny.nb/"
    assert plan.steps[-1].argv[2].endswith("; /data/local/tmp/toy_arm/toynet /data/local/tmp/toy_arm/toy_config.txt "
                                           "/data/local/tmp/toy_arm/toy_cat.jpg")  # fmt: skip
    cases = [Case(str(_write(tmp_path, "toy", toy)), layout.name, "lite_infer")]
    for name, old, new in (("semicolon", "toy_cat.jpg", "toy_cat.jpg;reboot"), ("quote", "|2", "|2'x")):
        odd = _write(tmp_path, name, toy.replace(old, new))
        with pytest.raises(UsageError, match="device's shell line"):
            plan_config(odd.read_text(), layout, "lite_infer", source=str(odd))
        cases.append(Case(str(odd), layout.name, "lite_infer"))
    mismatches = Harness(tmp_path / "h", tools=DEVICE_TOOLS).run(cases)
    assert not mismatches, "\n".join(mismatches)
