"""The PaddleDetection runner (plan/runners/paddledetection.py + templates/runner_paddledetection.sh.j2):
our bash equals our Plan on the dialect's fixtures and variants (all modes incl. klquant_whole_infer,
failing train and export, a multi-node TIPC_NODE_IP), and what a user sees of PaddleDetection's own
script: `timeout 5m` training with `log_iter`/`filename` and, on one process, a base learning rate;
`--amp amp_level=O1|O2`; the device value reused from the inference loop; entries told apart by
length; the ONNX export; whole_infer and klquant_whole_infer per infer_mode; log names and status
lines."""

from __future__ import annotations

from pathlib import Path

from helpers.difftest import Case, Harness
from tipcgen.dialects import get_layout
from tipcgen.emit.files import runner_script
from tipcgen.lint.checks import lint_text
from tipcgen.plan.planner import plan_config
from tipcgen.plan.runners.paddledetection import MODES, mode_table, to_static_line, value_of

FIXTURES = Path(__file__).parent / "fixtures" / "paddledetection"
DET = FIXTURES / "toydet_tiny_8e_demo_train_infer_python.txt"  # gpu_list 0|0,1; norm_train|pact_train
TRACK = FIXTURES / "toytrack_lite_20e_train_linux_gpu_fleet_amp_infer_python_linux_gpu_cpu.txt"  # 2 nodes, amp
LAYOUT = get_layout("paddledetection")
LOG = "./test_tipc/output/toydet_tiny_8e_demo"


def _variant(tmp_path: Path, base: Path, name: str, **lines: str) -> Path:
    """`base` with some `key:value` lines replaced by key (`gpu_list="0"`)."""
    out = []
    for line in base.read_text().split("\n"):
        key = line.split(":", 1)[0]
        out.append(f"{key}:{lines[key]}" if key in lines else line)
    path = tmp_path / f"{name}.txt"
    path.write_text("\n".join(out))
    return path


def _plan(path: Path, mode: str, **kw):
    return plan_config(path.read_text(), LAYOUT, mode, **kw)


def _kinds(plan, kind: str) -> list:
    return [s for s in plan.steps if s.kind == kind]


def _flag(step, key: str) -> str:
    return next(a for a in step.argv if a.startswith(f"{key}="))


def _on(step, run: str) -> bool:
    """An inference step on the model of `run` (its --model_dir)."""
    return run in _flag(step, "--model_dir")


def test_bash_equals_plan_on_the_fixtures_and_variants(tmp_path):
    configs = [
        DET,
        TRACK,
        _variant(tmp_path, DET, "fp16", gpu_list="-1|10|0,1", auto_cast="fp16|amp", trainer="pact_train|norm_train"),
        _variant(tmp_path, DET, "static", trainer="to_static_train|fpgm_train", fpgm_train="tools/train.py -o x=1"),
        _variant(tmp_path, TRACK, "onnx", gpu_list="0|1.1.1.1,2.2.2.2;0,1", eval="tools/eval.py -c a.yml"),
        _variant(tmp_path, DET, "modes", infer_mode="pact|null|kl_quant|norm", infer_quant="True"),
    ]
    cases = []
    for n, config in enumerate(configs):
        cases += [Case(str(config), "paddledetection", mode, cuda="7" if n % 2 else None) for mode in MODES]
        cases.append(Case(str(config), "paddledetection", "whole_infer", gpuid="1"))
        cases.append(Case(str(config), "paddledetection", "lite_train_lite_infer", fail=("train.py", "export")[n % 2]))
    cases.append(Case(str(DET), "paddledetection", "klquant_whole_infer", fail="post_quant"))
    cases.append(Case(str(TRACK), "paddledetection", "lite_train_lite_infer", node_ip="10.0.0.2"))
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, f"{len(mismatches)} of {len(cases)} disagree; first: {mismatches[0]}"


def test_training_runs_under_timeout_with_detections_own_arguments():
    single, multi = _kinds(_plan(DET, "lite_train_lite_infer"), "train")[::2]
    assert single.argv[:2] == ("timeout", "5m") and single.argv[2:5] == ("python3", "tools/train.py", "-c")
    assert single.argv[7:10] == ("LearningRate.base_lr=0.0001", "log_iter=1", "use_gpu=True")
    assert "filename=toydet_tiny_8e_demo" in single.argv and "epoch=2" in single.argv
    assert single.log == f"{LOG}/lite_train_lite_infer/norm_train_gpus_0_autocast_null_nodes_1.log"
    # the status line shows the command without `timeout` and ends with its log
    assert single.command.startswith("python3 tools/train.py") and single.status_path == single.log
    assert multi.argv[2:6] == ("python3", "-m", "paddle.distributed.launch", "--gpus=0,1")
    assert not any(a.startswith("LearningRate") for a in multi.argv)
    nodes = _kinds(_plan(TRACK, "lite_train_lite_infer"), "train")[0]
    assert nodes.argv[3:7] == ("-m", "paddle.distributed.launch", "--ips=10.0.0.1,10.0.0.2", "--gpus=0,1")
    assert nodes.argv[-2:] == ("amp_level=O1", "--amp") and nodes.log.endswith("autocast_amp_nodes_2.log")


def test_fp16_is_amp_level_o2(tmp_path):
    plan = _plan(_variant(tmp_path, DET, "fp16", gpu_list="0", auto_cast="fp16"), "lite_train_lite_infer")
    assert _kinds(plan, "train")[0].argv[-2:] == ("amp_level=O2", "--amp")


def test_later_trainers_of_an_entry_train_with_the_last_inference_device():
    plan = _plan(DET, "lite_train_lite_infer")
    trains, evals = _kinds(plan, "train"), _kinds(plan, "eval")
    assert [_flag(t, "use_gpu") for t in trains] == ["use_gpu=True", "use_gpu=cpu", "use_gpu=True", "use_gpu=cpu"]
    assert evals[1].argv[-1] == "use_gpu=cpu"  # eval passes the same flag
    # the pact trainer's CPU inference skips mkldnn=False (a quantized model)
    pact_cpu = [s for s in _kinds(plan, "infer") if _on(s, "pact_train_gpus_0_") and "--device=cpu" in s.argv]
    assert pact_cpu and all("--enable_mkldnn=True" in s.argv for s in pact_cpu)


def test_entries_are_told_apart_by_length_and_env_is_exported_late(tmp_path):
    plan = _plan(_variant(tmp_path, DET, "len", gpu_list="10|-1", trainer="norm_train"), "lite_train_lite_infer")
    train = _kinds(plan, "train")
    # `10` is two characters: one process with a base learning rate, CUDA_VISIBLE_DEVICES set only
    # before inference (to its first id), and unset after it
    assert "LearningRate.base_lr=0.0001" in train[0].argv and train[0].cuda_visible_devices is None
    assert {s.cuda_visible_devices for s in plan.steps if s.kind == "infer" and "gpus_10" in s.log} == {"10"}
    assert train[1].cuda_visible_devices is None and "use_gpu=False" in train[1].argv


def test_eval_and_export_load_the_model_under_the_model_name_and_inference_reads_it_there():
    plan = _plan(DET, "lite_train_lite_infer")
    run = f"{LOG}/lite_train_lite_infer/norm_train_gpus_0_autocast_null"
    weights = f"weights={run}/toydet_tiny_8e_demo/model_final.pdparams"
    assert weights in _kinds(plan, "eval")[0].argv and weights in _kinds(plan, "export")[0].argv
    export = _kinds(plan, "export")[0]
    assert export.argv[-2:] == ("filename=toydet_tiny_8e_demo", f"--output_dir={run}")
    assert export.command.endswith(f"--output_dir={run} ") and export.log == f"{run}_nodes_1_export.log"
    infer = _kinds(plan, "infer")
    assert f"--model_dir={run}/toydet_tiny_8e_demo" in infer[0].argv
    names = {s.log.rsplit("/", 1)[1] for s in infer if _on(s, "norm_train_gpus_0_")}
    assert "python_infer_gpu_gpus_0_mode_paddle_batchsize_4.log" in names
    assert "python_infer_cpu_gpus_0_usemkldnn_True_threads_2_mode_paddle_batchsize_1.log" in names
    line = plan.status_line(infer[0], True)
    assert line.endswith(f"2>&1  - {infer[0].log}  ")


def test_an_export_onnx_line_adds_an_onnx_export_first(tmp_path):
    plan = _plan(_variant(tmp_path, TRACK, "onnx", gpu_list="0"), "lite_train_lite_infer")
    onnx, export = _kinds(plan, "export")
    assert "export_onnx=True" in onnx.argv and onnx.log.endswith("_nodes_1_onnx_export.log")
    assert onnx.command.endswith(f" >{onnx.log} 2>&1") and "export_onnx=True" not in export.argv


def test_whole_infer_exports_each_infer_mode_and_klquant_runs_only_kl_quant():
    whole = _plan(DET, "whole_infer", gpuid="1")
    export = _kinds(whole, "export")
    assert len(export) == 1 and export[0].argv[1] == "tools/export_model.py" and export[0].log is None
    assert export[0].argv[-3:] == (
        "weights=https://example.invalid/toydet/toydet_tiny_8e_demo.pdparams",
        "filename=toydet_tiny_8e_demo",
        "--output_dir=./output_inference",
    )
    assert whole.status_line(export[0], True).endswith("--output_dir=./output_inference  -   ")
    assert {s.cuda_visible_devices for s in whole.steps} == {"1"}
    assert "--model_dir=./output_inference/toydet_tiny_8e_demo" in _kinds(whole, "infer")[0].argv
    assert _kinds(whole, "infer")[0].log.endswith("/whole_infer/python_infer_gpu_gpus_0_mode_paddle_batchsize_1.log")
    kl = _plan(DET, "klquant_whole_infer")
    assert [s.argv[1] for s in _kinds(kl, "export")] == ["tools/post_quant.py"]
    # upstream counts only the infer_modes it runs: kl_quant reads infer_quant's FIRST flag (False),
    # so its CPU inference keeps mkldnn=False
    assert any("--enable_mkldnn=False" in s.argv for s in _kinds(kl, "infer"))


def test_parsing_follows_utils_func():
    assert value_of("a:b:c") == "b:c" and value_of("##") == "##"
    assert mode_table("epoch:lite_train_lite_infer=1:x|whole_infer=2", "lite_train_lite_infer") == "1"
    text = DET.read_text()
    lines = tuple(line for line in text.split("\n") if line)
    assert to_static_line(text, lines) == "to_static_train:--to_static"
    assert to_static_line("a\n\nb\n", ("a", "b")) == "a"  # no header: lines[0]


def test_the_generated_script_accepts_klquant_and_lint_knows_use_gpu_goes_whole():
    script, _common = runner_script(LAYOUT, "test")
    accepted = next(line for line in script.splitlines() if line.startswith("lite_train_lite_infer |"))
    assert "klquant_whole_infer" in accepted.rstrip(" ;)").split(" | ") and "timeout 5m" in script
    assert "TIPC011" not in {f.rule for f in lint_text(DET.read_text(), LAYOUT, DET.name)}
    ocr = DET.read_text().replace("trained_model_name:", "train_model_name:").replace("kl_quant_export", "x")
    ocr = ocr.replace("infer_mode", "y")
    assert "TIPC011" in {f.rule for f in lint_text(ocr, get_layout("paddleocr"), DET.name)}


def test_a_node_other_than_the_first_skips_what_only_trainer_0_can_do():
    plan = _plan(TRACK, "lite_train_lite_infer", node_ip="10.0.0.2")
    assert plan.steps[0].kind == "train" and plan.steps[0].skip is None
    assert {s.skip for s in plan.steps[1:]} == {"not trainer 0"}
