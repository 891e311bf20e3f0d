"""The PaddleVideo runner (plan/runners/paddlevideo.py + templates/runner_paddlevideo.sh.j2): our
bash equals our Plan on the dialect's fixtures and variants (all modes, failing train and export),
and what a user sees of PaddleVideo's own script: the lite modes' 30 iterations, what whole_train
drops, the `-B` launch with a quoted `--devices`, the weights eval and export load, when
CUDA_VISIBLE_DEVICES is exported, amp and to_static trainers, `|` in a command, whole_infer's export
into the model's directory and its log next to the mode's folder, and the status lines."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.configs import variant
from helpers.difftest import Case, Harness
from tipcgen.dialects import get_layout
from tipcgen.plan.planner import plan_config
from tipcgen.plan.runners.paddlevideo import dirname, to_static_line
from tipcgen.spec.modes import MODES

FIXTURES = Path(__file__).parent / "fixtures" / "paddlevideo"
A = FIXTURES / "train_infer_python.txt"  # toy_video_a: gpu_list 0|0,1, norm_train
B = FIXTURES / "train_linux_gpu_normal_amp_infer_python_linux_gpu_cpu.txt"  # toy_video_b: amp_train
LAYOUT = get_layout("paddlevideo")
TO_STATIC = "===========================to_static_train_benchmark_params===========================\n"


_variant = variant


def _plan(path: Path, mode: str, **kw):
    return plan_config(path.read_text(), LAYOUT, mode, **kw)


def _kinds(plan, kind: str) -> list:
    return [s for s in plan.steps if s.kind == kind]


def test_bash_equals_plan_on_the_fixtures_and_variants(tmp_path):
    configs = [
        A,
        B,
        _variant(tmp_path, A, "nodes", gpu_list="192.168.0.1,192.168.0.2;0,1|-1", **{"Global.auto_cast": "fp16"}),
        _variant(
            tmp_path,
            A,
            "static",
            append=TO_STATIC + "to_static_train:-o to_static=True\n",
            trainer="norm_train|to_static_train|pact_train",
            pact_train="main.py -c q.yaml",
        ),  # fmt: skip
        _variant(tmp_path, B, "pipes", gpu_list="0|0,1", infer_quant="True", infer_export="null"),
        _variant(tmp_path, A, "ppname", model_name="PP-toy", eval="null", norm_export="null", gpu_list="1|0,1|-1"),
    ]
    cases = []
    for n, config in enumerate(configs):
        cases += [Case(str(config), "paddlevideo", mode, cuda="7" if n % 2 else None) for mode in MODES]
        cases.append(Case(str(config), "paddlevideo", "whole_infer", gpuid="1"))
        cases.append(Case(str(config), "paddlevideo", "lite_train_lite_infer", fail=("main.py", "export")[n % 2]))
    cases.append(Case(str(configs[0]), "paddlevideo", "whole_infer", fail="export"))
    cases.append(Case(str(configs[1]), "paddlevideo", "klquant_whole_infer", gpuid="1"))
    cases.append(Case(str(configs[2]), "paddlevideo", "lite_train_lite_infer", node_ip="192.168.0.2"))
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, f"{len(mismatches)} of {len(cases)} disagree; first: {mismatches[0]}"


def test_lite_modes_cap_iterations_and_whole_train_drops_epochs_batch_and_extras():
    lite = _kinds(_plan(A, "lite_train_lite_infer"), "train")[0]
    assert lite.argv[:8] == (
        "python3.7", "main.py", "--validate", "-c", "configs/recognition/toynet/toy_video_a_k10.yaml",
        "--seed", "1234", "--max_iters=30",
    )  # fmt: skip
    assert {"epochs=2", "DATASET.batch_size=4", "DATASET.train.file_path=data/toy_k10/train_small.list"} <= set(
        lite.argv
    )
    whole = _kinds(_plan(A, "whole_train_whole_infer"), "train")[0]
    assert "--max_iters=30" not in whole.argv
    assert not {"epochs=2", "DATASET.batch_size=4", "DATASET.train.file_path=data/toy_k10/train_small.list"} & set(
        whole.argv
    )
    assert "MODEL.backbone.pretrained=data/toy_backbone_pretrained.pdparams" in whole.argv


def test_train_status_shows_the_scratch_log_and_names_the_run_log():
    plan = _plan(A, "lite_train_lite_infer")
    train = plan.steps[0]
    run = "./test_tipc/output/toy_video_a/lite_train_lite_infer/norm_train_gpus_0_autocast_null_nodes_1"
    assert train.log == train.status_path == run + ".log" and train.output == "tee"
    assert f"-o output_dir={run} -o epochs=2" in train.command
    assert train.command.endswith("   > ./test_tipc/output/toy_video_a/lite_train_lite_infer/train.log 2>&1")
    line = plan.status_line(train, True)
    assert line.startswith("Run successfully with command - toy_video_a - python3.7 main.py --validate")
    assert line.endswith(f"train.log 2>&1 - {run}.log ")
    infer = _kinds(plan, "infer")[0]
    assert plan.status_line(infer, False).endswith(f"2>&1  - {infer.log} ")


def test_multi_gpu_launch_is_dash_b_with_quoted_devices_and_cuda_is_exported_only_for_inference():
    plan = _plan(A, "lite_train_lite_infer", cuda_visible_devices="7")
    trains = _kinds(plan, "train")
    assert trains[0].cuda_visible_devices == "0"  # a single GPU is exported when its entry starts
    multi = trains[1]
    assert multi.argv[1:6] == ("-B", "-m", "paddle.distributed.launch", "--devices=0,1", "main.py")
    assert ' -B -m paddle.distributed.launch --devices="0,1" main.py ' in multi.command
    # the single entry's inference unset it; the multi entry exports its first GPU for inference only
    after = [s for s in plan.steps if s.index > multi.index]
    assert multi.cuda_visible_devices is None
    assert {s.cuda_visible_devices for s in after if s.kind in ("eval", "export")} == {None}
    assert {s.cuda_visible_devices for s in after if s.kind == "infer"} == {"0"}
    assert "_gpus_0,1_" in after[-1].log


def test_eval_and_export_load_the_first_epochs_weights_named_after_the_model(tmp_path):
    config = _variant(tmp_path, A, "pp", model_name="PP-toy")
    plan = _plan(config, "lite_train_lite_infer")
    run = "./test_tipc/output/PP-toy/lite_train_lite_infer/norm_train_gpus_0_autocast_null_nodes_1"
    ev, ex = _kinds(plan, "eval")[0], _kinds(plan, "export")[0]
    assert f"-w={run}/ppToy_epoch_00001.pdparams" not in ev.argv  # only `PP-` becomes `pp`
    assert f"-w={run}/pptoy_epoch_00001.pdparams" in ev.argv
    assert ev.argv[-4:] == (
        "-o", "DATASET.train.file_path=data/toy_k10/train_small.list",
        "-o", "DATASET.valid.file_path=data/toy_k10/val_small.list",
    )  # fmt: skip
    assert ex.argv[-2:] == (f"-p={run}/pptoy_epoch_00001.pdparams", f"-o={run}")
    # The train extras reach eval in lite_train_lite_infer only.
    other = _kinds(_plan(config, "lite_train_whole_infer"), "eval")[0]
    assert "DATASET.train.file_path=data/toy_k10/train_small.list" not in other.argv


def test_inference_reads_the_exported_files_and_names_the_gpus_in_its_logs():
    plan = _plan(A, "lite_train_lite_infer")
    run = "./test_tipc/output/toy_video_a/lite_train_lite_infer/norm_train_gpus_0_autocast_null_nodes_1"
    infer = _kinds(plan, "infer")
    assert [s.log.rsplit("/", 1)[1] for s in infer[:3]] == [
        "python_infer_gpu_gpus_0_usetrt_False_precision_fp32_batchsize_1.log",
        "python_infer_cpu_gpus_0_usemkldnn_False_threads_1_precision_fp32_batchsize_1.log",
        "python_infer_cpu_gpus_0_usemkldnn_False_threads_6_precision_fp32_batchsize_1.log",
    ]
    cpu = infer[1]
    assert cpu.argv[4:] == (
        "--use_gpu=False", "--enable_mkldnn=False", "--cpu_threads=1", f"--model_file={run}/inference.pdmodel",
        "--batch_size=1", "--input_file=./data/toy_example.avi", "--enable_benchmark=True", "--precision=fp32",
        f"--params_file={run}/inference.pdiparams",
    )  # fmt: skip


def test_amp_trainer_exports_with_norm_export_and_fp16_autocast_adds_amp_flags(tmp_path):
    plan = _plan(B, "lite_train_lite_infer")
    train = _kinds(plan, "train")[0]
    assert train.argv[1:3] == ("main.py", "--amp") and "--amp_level=O1" in train.argv
    # the mode table is passed as it is, and its `|` splits words (upstream's `eval $cmd`, IFS='|')
    assert ("epochs=lite_train_lite_infer=1", "whole_train_whole_infer=5") == train.argv[-5:-3]
    assert "-o epochs=lite_train_lite_infer=1|whole_train_whole_infer=5 " in train.command
    assert _kinds(plan, "export")[0].argv[1] == "tools/export_model.py"
    fp16 = _kinds(
        _plan(_variant(tmp_path, A, "fp16", **{"Global.auto_cast": "fp16"}), "lite_train_lite_infer"), "train"
    )
    assert fp16[0].argv[8:11] == ("--amp", "--amp_level", "O2")
    assert "_autocast_fp16_nodes_1" in fp16[0].log


def test_to_static_and_pact_trainers(tmp_path):
    config = _variant(
        tmp_path, A, "ts", append=TO_STATIC + "to_static_train:-o to_static=True\n",
        trainer="to_static_train|pact_train", pact_train="main.py -c q.yaml",
    )  # fmt: skip
    trains = _kinds(_plan(config, "lite_train_lite_infer"), "train")
    static, pact = trains[0], trains[1]
    assert "--seed 1234  -o to_static=True --max_iters=30 " in static.command
    assert static.argv[7:10] == ("-o", "to_static=True", "--max_iters=30")
    assert "MODEL.backbone.pretrained=data/toy_backbone_pretrained.pdparams" in static.argv
    # pact/fpgm trainers get upstream's never-set norm weights instead of the pretrained ones
    assert pact.argv[1:4] == ("main.py", "-c", "q.yaml")
    assert not any(a.startswith("MODEL.backbone.pretrained") for a in pact.argv)


def test_to_static_line_is_read_as_upstream_indexes_it():
    head = "a:1\nb:2\n"
    assert to_static_line(head + TO_STATIC + "to_static_train:-o x=1\n") == ("to_static_train", "-o x=1")
    # a blank line above the header: grep's number counts it, the array does not (one line further)
    assert to_static_line("a:1\n\nb:2\n" + TO_STATIC + "t:1\nu:2\n") == ("u", "2")
    assert to_static_line(head) == ("a", "1")  # no header: lines[0]
    assert to_static_line(head + TO_STATIC + TO_STATIC + "t:1\n") == ("", "")  # arithmetic error
    assert to_static_line(head + TO_STATIC) == ("", "")  # past the end


@pytest.mark.parametrize("path", ["./data/x.pdparams", "x", "/x", "a/b/", "a//b", "//", "/", "a/", "./", "..", "."])
def test_dirname_is_dirname1(path):
    tool = shutil.which("dirname")
    assert tool is not None
    assert dirname(path) == subprocess.run([tool, "--", path], capture_output=True, text=True).stdout.strip()


def test_whole_infer_exports_into_the_models_directory_and_logs_next_to_the_mode_folder():
    plan = _plan(A, "whole_infer", gpuid="1")
    export = plan.steps[0]
    assert export.kind == "export" and export.log == "./test_tipc/output/toy_video_a/whole_infer_export_0.log"
    assert export.argv[-2:] == ("-p=./data/toy_video_a_k10.pdparams", "-o=./data")
    assert {s.cuda_visible_devices for s in plan.steps} == {"1"}
    infer = plan.steps[1]
    assert infer.log.endswith("/whole_infer/python_infer_gpu_gpus__usetrt_False_precision_fp32_batchsize_1.log")
    assert "--model_file=./data/inference.pdmodel" in infer.argv


def test_whole_infer_without_export_infers_from_the_model_path(tmp_path):
    plan = _plan(_variant(tmp_path, A, "noexp", infer_export="null"), "whole_infer")
    assert [s.kind for s in plan.steps] == ["infer"] * 3
    assert "--model_file=./data/toy_video_a_k10.pdparams/inference.pdmodel" in plan.steps[0].argv
    # a quantized model: GPU needs TensorRT (off here), CPU needs mkldnn (off): nothing runs
    quant = _plan(_variant(tmp_path, A, "quant", infer_export="null", infer_quant="True"), "whole_infer")
    assert quant.steps == ()


def test_klquant_whole_infer_runs_nothing_as_upstreams_script_reads_no_line_in_it(tmp_path):
    """Upstream re-reads the config with `awk 'NR==1 NR==17{print}'`, which prints no line: its
    whole_infer branch then has no model. The Plan has no step; the script says so and exits 0."""
    from tipcgen.emit.files import runner_script

    assert not _plan(B, "klquant_whole_infer").steps
    d = tmp_path / "test_tipc"
    d.mkdir()
    script, common = runner_script(LAYOUT, "test", None)
    (d / "test_train_inference_python.sh").write_text(script)
    (d / "common_func.sh").write_text(common)
    ran = subprocess.run(
        ["bash", "test_tipc/test_train_inference_python.sh", str(B), "klquant_whole_infer"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "klquant_whole_infer runs nothing with this script" in ran.stderr
    assert "0 steps run" in ran.stdout
