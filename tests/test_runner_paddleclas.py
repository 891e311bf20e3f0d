"""The PaddleClas runner (plan/runners/paddleclas.py + templates/runner_paddleclas.sh.j2): our bash
equals our Plan on the dialect's fixtures (all modes, failing train and export, variants of the
gpu list, trainers and kl_quant), and what a user sees of upstream's script: its flags, logs,
CUDA_VISIBLE_DEVICES at each step, deploy/ as inference's directory, whole_infer's kl_quant path."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.configs import variant
from helpers.difftest import Case, Harness
from tipcgen.dialects import get_layout
from tipcgen.plan.planner import plan_config
from tipcgen.plan.runners.paddleclas import quant_cwd
from tipcgen.spec.modes import MODES

FIXTURES = Path(__file__).parent / "fixtures" / "paddleclas"
A = FIXTURES / "toy_cls_a_train_infer_python.txt"
B = FIXTURES / "toy_cls_b_train_amp_infer_python.txt"
LAYOUT = get_layout("paddleclas")


def _plan(path: Path, mode: str, **kw):
    return plan_config(path.read_text(), LAYOUT, mode, **kw)


def test_bash_equals_plan_on_the_fixtures_and_variants(tmp_path):
    """Both fixtures in every mode, with a failing train and export; variants of B (its small
    inference matrix keeps this fast) for multi-node and two-digit entries, whole_infer from deploy/,
    RecModel and to_static trainers, fused-attention models."""
    cases = []
    for n, config in enumerate((A, B)):
        cases += [Case(str(config), "paddleclas", mode, cuda="7" if n else None) for mode in MODES]
        cases.append(Case(str(config), "paddleclas", "whole_infer", gpuid="1"))
        cases.append(Case(str(config), "paddleclas", "lite_train_lite_infer", fail="train.py"))
        cases.append(Case(str(config), "paddleclas", "lite_train_lite_infer", fail="export"))
    nodes = variant(tmp_path, B, "multinode", gpu_list="192.168.0.1,192.168.0.2;0,1|10|0,1")
    cases += [Case(str(nodes), "paddleclas", mode, cuda="3") for mode in MODES[:3]]
    cases.append(Case(str(nodes), "paddleclas", "lite_train_lite_infer", node_ip="192.168.0.2"))
    kl = variant(tmp_path, B, "kl", infer_model="./q_infer/")
    cases += [Case(str(kl), "paddleclas", "whole_infer", gpuid=g, cuda="5") for g in (None, "1")]
    rec = variant(tmp_path, B, "rec", model_name="GeneralRecognition_toy", trainer="amp_train|to_static_train")
    cases += [Case(str(rec), "paddleclas", "lite_train_lite_infer", fail=f) for f in (None, "export")]
    fused = variant(tmp_path, B, "fused", model_name="CLIP_vit_base_patch16_224_toy", gpu_list="0,1")
    cases.append(Case(str(fused), "paddleclas", "whole_train_whole_infer"))
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, f"{len(mismatches)} of {len(cases)} disagree; first: {mismatches[0]}"


def test_train_passes_upstreams_fixed_flags_and_two_epochs_in_every_mode():
    for mode in ("lite_train_lite_infer", "whole_train_whole_infer"):
        train = _plan(A, mode).steps[0]
        assert train.kind == "train"
        assert train.argv[-6:] == (
            "-o", "AMP.use_amp=False", "-o", "DataLoader.Train.sampler.batch_size=8", "-o", "Global.print_mem_info=True",
        )  # fmt: skip
        # func_parser_params is called without the mode: the epochs table is never matched.
        assert "Global.epochs=2" in train.argv
        assert "Global.device=gpu" in train.argv
        out = f"Global.output_dir=./test_tipc/output/toy_cls_a/{mode}/norm_train_gpus_0_autocast_null_nodes_1"
        assert out in train.argv
        assert train.log == out.split("=", 1)[1] + ".log" and train.output == "tee"


def test_amp_flags_and_multi_gpu_launch():
    steps = _plan(B, "lite_train_lite_infer").steps
    amp = [s for s in steps if s.kind == "train"][0]
    assert "AMP.level=O1" in amp.argv and "AMP.use_amp=True" in amp.argv
    multi = [s for s in _plan(A, "lite_train_lite_infer").steps if s.kind == "train"][1]
    assert multi.argv[1:4] == ("-m", "paddle.distributed.launch", "--devices=0,1")
    assert multi.argv[-2:] == ("-o", "Global.log_ranks=0,1,2,3,4,5,6,7")


def test_cuda_visible_devices_follow_upstreams_env_handling():
    steps = _plan(A, "lite_train_lite_infer", cuda_visible_devices="7").steps
    by_group: dict = {}
    for s in steps:
        by_group.setdefault(s.group, []).append(s)
    single = by_group["norm_train_gpus_0_autocast_null_nodes_1"]
    assert {s.cuda_visible_devices for s in single} == {"0"}  # exported when the entry starts
    multi = by_group["norm_train_gpus_0,1_autocast_null_nodes_1"]
    # after the previous run's unset: train, eval and export run without it; inference on the first id
    assert [s.cuda_visible_devices for s in multi if s.kind != "infer"] == [None, None, None]
    assert {s.cuda_visible_devices for s in multi if s.kind == "infer"} == {"0"}


def test_inference_runs_from_deploy_with_upstreams_log_names_and_status_lines():
    plan = _plan(A, "lite_train_lite_infer", root="/repo")
    infer = [s for s in plan.steps if s.kind == "infer"]
    assert {s.cwd for s in infer} == {"deploy"}
    cpu = [s for s in infer if "Global.use_gpu=False" in s.argv][0]
    assert cpu.log == (
        "/repo/test_tipc/output/toy_cls_a/lite_train_lite_infer/"
        "python_infer_cpu_gpus_0_usemkldnn_True_threads_1_precision_True_batchsize_1.log"
    )
    assert not any("use_fp16" in a for a in cpu.argv)  # CPU runs pass no precision flag
    assert "Global.inference_model_dir=/repo/test_tipc/output/toy_cls_a/lite_train_lite_infer/" \
        "norm_train_gpus_0_autocast_null_nodes_1" in cpu.argv  # fmt: skip
    line = plan.status_line(cpu, True)
    assert line.endswith(f" > {cpu.log} 2>&1  - {cpu.log} ! ")
    gpu_runs = [s for s in infer if "Global.use_gpu=True" in s.argv and s.group.startswith("norm_train_gpus_0_")]
    # precision True without TensorRT is skipped: 2 (trt True) + 1 (trt False) precisions x 2 batch sizes
    assert len(gpu_runs) == 6
    assert plan.status_log == "/repo/test_tipc/output/toy_cls_a/lite_train_lite_infer/results_python.log"


def test_recmodel_export_has_no_weights_flag_and_to_static_appends_its_flag(tmp_path):
    config = variant(tmp_path, B, "rec", model_name="GeneralRecognition_toy", trainer="to_static_train")
    steps = _plan(config, "lite_train_lite_infer").steps
    train, export = steps[0], [s for s in steps if s.kind == "export"][0]
    assert "tools/train.py -c ppcls/configs/ImageNet/ToyNet/toy_cls_b.yaml -o AMP.scale_loss=128 -o AMP.level=O1  " \
        "-o Global.to_static=True" in train.command  # fmt: skip
    assert not any(a.startswith("Global.pretrained_model=") for a in export.argv)
    assert "tools/export_model.py -c ppcls/configs/ImageNet/ToyNet/toy_cls_b.yaml  -o Global.save_inference_dir" \
        in export.command  # fmt: skip


def test_whole_infer_runs_only_the_kl_quant_path(tmp_path):
    assert _plan(A, "whole_infer").steps == ()  # kl_quant null: nothing at all
    config = variant(tmp_path, A, "kl", kl_quant="deploy/slim/quant_post_static.py -c x.yaml", infer_model="./q/")
    plan = _plan(config, "whole_infer", gpuid="3", cuda_visible_devices="5")
    quant, *infer = plan.steps
    assert quant.argv == ("python3.7", "deploy/slim/quant_post_static.py", "-c", "x.yaml")
    assert quant.log == "./test_tipc/output/toy_cls_a/whole_infer/export.log" and quant.cwd is None
    assert infer and {s.cwd for s in infer} == {"deploy"}
    assert {s.cuda_visible_devices for s in plan.steps} == {"5"}  # the GPUID argument is ignored
    assert all("Global.inference_model_dir=.././q//quant_post_static_model" in s.argv for s in infer)
    assert all("_gpus_0_" in s.log for s in infer)


@pytest.mark.parametrize(
    ("infer_dir", "cwd"),
    [("./q/", "deploy"), ("q", "deploy"), ("../inference/", None), ("", None), ("a/b", "a/b/quant_post_static_model")],
)
def test_whole_infer_directory_follows_upstreams_cds(infer_dir, cwd):
    assert quant_cwd(infer_dir) == cwd


def test_gpu_entries_are_read_by_length_like_upstream(tmp_path):
    config = variant(tmp_path, A, "len", gpu_list="10|192.168.0.1,192.168.0.2;0,1")
    trains = [s for s in _plan(config, "lite_train_lite_infer").steps if s.kind == "train"]
    # "10" is two characters: one process, no launcher, CUDA_VISIBLE_DEVICES not exported for it
    assert trains[0].argv[1] == "tools/train.py" and trains[0].cuda_visible_devices is None
    assert trains[1].argv[3:5] == ("--ips=192.168.0.1,192.168.0.2", "--devices=0,1")
    assert trains[1].group.endswith("_nodes_2")
