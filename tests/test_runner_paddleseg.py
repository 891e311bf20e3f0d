"""The paddleseg runner (plan/runners/paddleseg.py + templates/runner_paddleseg.sh.j2): its bash
and its plan agree on the fixtures and on variations of them (failing steps, trainers, GPUs, a
model file left by a training), and the behaviours a user of PaddleSeg's script sees hold."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helpers.difftest import Case, Harness, _compare, _records
from tipcgen.dialects import get_layout
from tipcgen.plan.planner import plan_config
from tipcgen.plan.runners.paddleseg import dirname, to_static
from tipcgen.spec.modes import MODES

FIXTURES = Path(__file__).parent / "fixtures" / "paddleseg"
SINGLE = FIXTURES / "train_infer_python.txt"  # gpu_list 0|0,1, CPU and GPU inference
FLEET = FIXTURES / "train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu.txt"  # two nodes, two models
LOG = "./test_tipc/output/toy_seg_a/lite_train_lite_infer"


def _text(path: Path = SINGLE, **lines: str) -> str:
    """The fixture with lines replaced by index (`l15="..."`)."""
    rows = path.read_text().split("\n")
    for name, value in lines.items():
        rows[int(name[1:])] = value
    return "\n".join(rows)


def _plan(text: str, mode: str = "lite_train_lite_infer", **kw):
    return plan_config(text, get_layout("paddleseg"), mode, **kw)


def _argv(step) -> str:
    return " ".join(step.argv)


# Variations of the fixtures: more trainers (pact after norm, to_static), CPU and 3 entries,
# the quantized whole_infer model, amp.
TRAINERS = _text(
    l14="trainer:norm_train|pact_train|to_static_train",
    l16="pact_train:tools/train.py --config q.yml --slim",
    l30="quant_export:tools/export.py --config q.yml --slim",
)
TRAINERS = TRAINERS.rstrip("\n") + (
    "\n===========================to_static_train_benchmark_params===========================\n"
    "to_static_train:--opts to_static_training=True\n"
)
ENTRIES = _text(l3="gpu_list:-1|3|0,1", l4="--device:cpu|gpu|gpu", l5="--precision:fp32|amp")
# Entries upstream reads by their length, and tipcgen's CPU launches.
LENGTHS = _text(l3="gpu_list:10|0,1,2,3,4,5,6,7,8|10.0.0.1,10.0.0.2;0|1.1.1.1,2.2.2.2;0,1||cpux2|a,b;cpux2")
# One host name longer than 15 characters: upstream's multi-machine branch, one node.
LONG_HOST = _text(l3="gpu_list:averyveryverylonghostname;0,1")
QUANT = _text(
    FLEET, l38="infer_quant:True|", l45="--precision:fp32|int8", l40="--device:cpu|gpu", l44="--use_trt:False|True"
)


@pytest.fixture(scope="module")
def variations(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("seg-configs")
    out = {}
    variants = (("trainers", TRAINERS), ("entries", ENTRIES), ("quant", QUANT), ("lengths", LENGTHS))
    for name, text in (*variants, ("long_host", LONG_HOST)):
        (d / f"{name}.txt").write_text(text)
        out[name] = str(d / f"{name}.txt")
    return out


def test_bash_equals_plan_in_every_mode_and_when_steps_fail(tmp_path, variations):
    """The fixtures in every mode (one with CUDA_VISIBLE_DEVICES set), failing train and export;
    the variations in a train mode, whole_infer with a GPU id and with a failing train."""
    cases = []
    for n, config in enumerate((str(SINGLE), str(FLEET))):
        cases += [Case(config, "paddleseg", mode, cuda="7" if n else None) for mode in MODES]
        cases += [Case(config, "paddleseg", "lite_train_lite_infer", fail=f) for f in ("train.py", "export")]
        cases.append(Case(config, "paddleseg", "whole_infer", gpuid="1"))
        cases.append(Case(config, "paddleseg", "klquant_whole_infer", gpuid="1" if n else None))
    for config in variations.values():
        cases.append(Case(config, "paddleseg", "whole_train_whole_infer", cuda="5"))
        cases.append(Case(config, "paddleseg", "whole_infer", gpuid="1"))
        cases.append(Case(config, "paddleseg", "lite_train_lite_infer", fail="train.py"))
    cases.append(Case(str(FLEET), "paddleseg", "lite_train_lite_infer", node_ip="10.0.0.2"))
    cases.append(Case(variations["lengths"], "paddleseg", "lite_train_lite_infer", node_ip="b", start_port="6000"))
    mismatches = Harness(tmp_path).run(cases)
    assert not mismatches, f"{len(mismatches)} of {len(cases)} disagree; first: {mismatches[0]}"


def test_bash_and_plan_use_a_model_file_a_training_left(tmp_path):
    """The trained model file is tested for after each train: present (here left by an earlier
    run), eval/export use it; the bash tests at run time, the plan in the repo root it is given."""
    harness = Harness(tmp_path)
    script = harness.script("paddleseg")
    work = tmp_path / "repo"
    model = work / LOG[2:] / "norm_train_gpus_0_autocast_null" / "best_model" / "model.pdparams"
    model.parent.mkdir(parents=True)
    model.write_text("weights")
    record = work / "record.bin"
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "TIPC_RECORD_FAIL")}
    env.update(PATH=f"{harness.bin}{os.pathsep}{env['PATH']}", TIPC_RECORD=str(record))
    proc = subprocess.run(
        ["bash", str(script), str(SINGLE), "lite_train_lite_infer"], cwd=work, env=env, capture_output=True, text=True
    )
    plan = _plan(SINGLE.read_text(), root=str(work))
    case = Case(str(SINGLE), "paddleseg", "lite_train_lite_infer")
    assert _compare(case, plan, proc, _records(record, work), work) is None
    exports = [_argv(s) for s in plan.steps if s.kind == "export"]
    # the first run finds best_model/; the second (0,1) does not, and falls back to iter_<iters>
    assert f"--model_path={LOG}/norm_train_gpus_0_autocast_null/best_model/model.pdparams" in exports[0]
    assert f"--model_path={LOG}/norm_train_gpus_0,1_autocast_null/iter_10/model.pdparams" in exports[1]


def test_without_a_model_file_the_fallback_sticks_for_later_runs(tmp_path):
    model = tmp_path / LOG[2:] / "norm_train_gpus_0,1_autocast_null" / "best_model" / "model.pdparams"
    model.parent.mkdir(parents=True)
    model.write_text("weights")
    exports = [_argv(s) for s in _plan(SINGLE.read_text(), root=str(tmp_path)).steps if s.kind == "export"]
    assert "/iter_10/model.pdparams" in exports[0]
    assert "/iter_10/model.pdparams" in exports[1], "upstream reassigns train_model_name for good"


def test_single_gpu_entry_trains_with_cuda_visible_devices_and_unsets_it_after_inference():
    steps = _plan(SINGLE.read_text()).steps
    cvd = [(s.kind, s.cuda_visible_devices) for s in steps if s.kind != "infer"]
    # the multi-GPU entry exports its first id only before inference (eval and export: nothing)
    assert cvd == [("train", "0"), ("eval", "0"), ("export", "0"), ("train", None), ("eval", None), ("export", None)]
    assert {s.cuda_visible_devices for s in steps if s.kind == "infer"} == {"0"}
    second = next(s for s in steps if s.kind == "train" and s.index > 0)
    assert _argv(second).startswith("python3.7 -m paddle.distributed.launch --devices=0,1 tools/train.py")


def test_a_later_trainer_of_a_single_gpu_entry_trains_without_it(variations):
    """The entry's export happens once, before its first train; inference unsets it again."""
    trains = [s for s in _plan(_text(Path(variations["entries"]), l3="gpu_list:3")).steps if s.kind == "train"]
    assert [s.cuda_visible_devices for s in trains] == ["3", None]  # autocast fp32, then amp
    assert "Global.use_amp=True" in trains[1].argv


def test_status_lines_name_the_log_and_open_with_the_mode():
    plan = _plan(SINGLE.read_text())
    assert plan.preamble == ("------------------------ lite_train_lite_infer ------------------------",)
    train = plan.steps[0]
    assert train.output == "tee" and train.log == f"{LOG}/norm_train_gpus_0_autocast_null_nodes_1.log"
    line = plan.status_line(train, True)
    assert line.endswith(f"--batch_size=2     - {LOG}/norm_train_gpus_0_autocast_null_nodes_1.log  ")
    assert "--device=gpu  --save_dir=" in line, "the single-GPU command's two blanks"
    infer = plan.steps[3]
    assert plan.status_line(infer, False).endswith(f" 2>&1  - {infer.log}  ")
    export = _plan(FLEET.read_text(), "whole_infer").steps[0]
    assert export.log is None and _plan(FLEET.read_text(), "whole_infer").status_line(export, True).endswith(" -   ")


def test_inference_reads_deploy_yaml_and_names_logs_with_the_gpu():
    steps = _plan(SINGLE.read_text()).steps
    infer = steps[3]
    assert f"--config={LOG}/norm_train_gpus_0_autocast_null//deploy.yaml" in infer.argv
    assert infer.log == f"{LOG}/python_infer_cpu_gpu_0_usemkldnn_True_threads_2_precision_fp32_batchsize_1.log"
    # the first extra flag's value is replaced by the run's results path (CPU only)
    assert (
        f"--save_dir={LOG}/python_infer_cpu_usemkldnn_True_threads_2_precision_fp32_batchsize_1_results" in infer.argv
    )
    gpu = next(s for s in steps if "--device=gpu" in s.argv and s.kind == "infer")
    assert gpu.log.endswith("/python_infer_gpu_gpu_0_usetrt_False_precision_fp32_batchsize_1.log")
    assert not any(a.startswith("--save_dir=") for a in gpu.argv) and "--model_name=toy_seg_a" in gpu.argv


def test_whole_infer_exports_into_the_weights_directory(variations):
    plan = _plan(FLEET.read_text(), "whole_infer", gpuid="1")
    export = plan.steps[0]
    assert export.argv[-2:] == (
        "--model_path=./test_tipc/output/toy_seg_b/model.pdparams",
        "--save_dir=./test_tipc/output/toy_seg_b",
    )
    infers = [s for s in plan.steps if s.kind == "infer"]
    assert {s.cuda_visible_devices for s in plan.steps} == {"1"}
    assert "--config=./test_tipc/output/toy_seg_b/deploy.yaml" in infers[0].argv
    # the second model is not exported: inference reads the weights' path as its directory
    assert "--config=./test_tipc/output/toy_seg_b_alt/model.pdparams/deploy.yaml" in infers[-1].argv
    assert all("_gpu_0_" in s.log for s in infers)


def test_cpu_inference_runs_fp32_only_and_a_quant_model_int8_only(variations):
    steps = _plan(Path(variations["quant"]).read_text(), "whole_infer").steps
    first = [s for s in steps if s.kind == "infer" and "toy_seg_b/deploy" in " ".join(s.argv)]
    cpu = [s for s in first if "--device=cpu" in s.argv]
    assert cpu and all("--precision=int8" in s.argv for s in cpu)  # quant True: int8 only
    # the empty quant flag of the 2nd model: upstream's GPU `0` takes its place (neither True nor False)
    second = [s for s in steps if s.kind == "infer" and "toy_seg_b_alt" in " ".join(s.argv)]
    assert {p for s in second for p in s.argv if p.startswith("--precision")} == {
        "--precision=fp32",
        "--precision=int8",
    }
    float_model = [s for s in _plan(SINGLE.read_text()).steps if s.kind == "infer" and "--device=cpu" in s.argv]
    assert float_model and all("--precision=fp32" in s.argv for s in float_model)


def test_pact_starts_from_the_norm_weights_and_to_static_appends_its_flags():
    trains = [s for s in _plan(TRAINERS).steps if s.kind == "train"]
    norm, pact, static = trains[:3]
    assert "--model_path" not in " ".join(norm.argv)
    assert f"--model_path={LOG}/norm_train_gpus_0_autocast_null/iter_10/model.pdparams" in pact.argv
    assert pact.argv[1:5] == ("tools/train.py", "--config", "q.yml", "--slim")
    assert _argv(static).startswith(
        "python3.7 tools/train.py --config test_tipc/configs/toy_seg_a/toy_seg_a_512x512_1k.yml --device gpu "
        "--do_eval --save_interval 50 --seed 7 --opts to_static_training=True --device=gpu "
    )
    assert "/to_static_train_gpus_0_autocast_null" in _argv(static)


def test_to_static_reads_the_line_after_its_header_by_file_line_number():
    assert to_static(TRAINERS) == ("to_static_train", "--opts to_static_training=True")
    assert to_static("a:b\nto_static_train_benchmark_params\nk:v\n") == ("k", "v")
    # a blank line counts in grep's line number, not in the lines array: the line after is read
    assert to_static("\na:b\nto_static_train_benchmark_params\nk:v\nx:y\n") == ("x", "y")
    assert to_static("head\nx:y\n")[0] == "head", "no header: lines[0]"


@pytest.mark.parametrize("path", ["a//b", "//a", "/a", "a", "a/", "/", ".", "./x/y/m.pdparams", "x//"])
def test_dirname_is_gnu_dirname(path):
    assert dirname(path) == subprocess.run(["dirname", "--", path], capture_output=True, text=True).stdout.strip()
    assert dirname("") == ""


def test_multi_node_entry_keeps_upstreams_argument_order_and_nodes():
    train = _plan(FLEET.read_text()).steps[0]
    assert _argv(train).startswith(
        "python3.7 -m paddle.distributed.launch --ips=10.0.0.1,10.0.0.2 --devices=0,1 tools/train.py"
    )
    assert train.log.endswith("/norm_gpus_0,1_autocast_null_nodes_2.log") and train.cuda_visible_devices is None
    assert "_nodes_2/iter_10/model.pdparams" in _argv(_plan(FLEET.read_text()).steps[1])


def test_gpu_list_entries_are_read_by_their_length_as_upstream_does():
    trains = [s for s in _plan(LENGTHS).steps if s.kind == "train"]
    ten, nine_ids, one_id_nodes, short_ips, empty, cpux, cpux_nodes = trains
    # `10`: two characters, so no launcher and nothing exported before the train
    assert _argv(ten).startswith("python3.7 tools/train.py") and ten.cuda_visible_devices is None
    # 17 characters: read as `ips;ids` without ids, so one process named after 9 nodes
    assert _argv(nine_ids).startswith("python3.7 tools/train.py") and nine_ids.log.endswith(
        "_gpus__autocast_null_nodes_9.log"
    )
    # one id per node: no launcher; the run is still named after its 2 nodes
    assert "paddle.distributed.launch" not in one_id_nodes.argv and any(
        a.endswith("_gpus_0_autocast_null_nodes_2") for a in one_id_nodes.argv
    )
    # an ip list of 15 characters is one node: launched on the ids, without --ips
    assert _argv(short_ips).startswith("python3.7 -m paddle.distributed.launch --devices=0,1 tools/train.py")
    assert short_ips.log.endswith("/norm_train_gpus_0,1_autocast_null_nodes_1.log")
    # an empty entry exports an empty CUDA_VISIBLE_DEVICES at once
    assert empty.cuda_visible_devices == ""
    assert _argv(cpux).startswith("python3.7 -m paddle.distributed.launch --nproc_per_node=2 tools/train.py")
    assert "--ips=a,b" in cpux_nodes.argv and cpux.cuda_visible_devices is None


def test_a_long_host_name_is_one_node_named_in_the_save_dir():
    """Upstream: an ip list longer than 15 characters is the multi-machine branch, whose save
    directory names its nodes, however many: one host name gives `_nodes_1`."""
    train, *rest = _plan(LONG_HOST).steps
    assert _argv(train).startswith(
        "python3.7 -m paddle.distributed.launch --ips=averyveryverylonghostname --devices=0,1 tools/train.py"
    )
    save = "./test_tipc/output/toy_seg_a/lite_train_lite_infer/norm_train_gpus_0,1_autocast_null_nodes_1"
    assert f"--save_dir={save}" in train.argv
    assert train.log == f"{save}.log"
    # an ip list of 15 characters or less: one node, no suffix on the save directory
    short = _plan(_text(l3="gpu_list:1.1.1.1,2.2.2.2;0,1")).steps[0]
    assert any(a.endswith("_autocast_null") for a in short.argv if a.startswith("--save_dir="))


def test_klquant_whole_infer_runs_whole_infers_steps_in_its_own_log_dir():
    whole, kl = (_plan(FLEET.read_text(), mode) for mode in ("whole_infer", "klquant_whole_infer"))
    assert kl.steps and [s.kind for s in kl.steps] == [s.kind for s in whole.steps]
    assert [_argv(s).replace("/whole_infer/", "/M/") for s in whole.steps] == [
        _argv(s).replace("/klquant_whole_infer/", "/M/") for s in kl.steps
    ]


def test_the_script_refuses_a_mode_upstream_ran_another_modes_steps_under(tmp_path):
    """`klquant_infer`: upstream tests for it only inside the whole_infer branch, so it trained
    under that name. The generated script refuses it: exit 2, one line naming the modes it takes."""
    from tipcgen.emit.files import runner_script

    d = tmp_path / "test_tipc"
    d.mkdir()
    script, common = runner_script(get_layout("paddleseg"), "test", None)
    (d / "test_train_inference_python.sh").write_text(script)
    (d / "common_func.sh").write_text(common)
    ran = subprocess.run(
        ["bash", "test_tipc/test_train_inference_python.sh", str(SINGLE), "klquant_infer"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ran.returncode == 2 and ran.stdout == ""
    assert ran.stderr.count("\n") == 1 and "klquant_infer" in ran.stderr
    assert all(m in ran.stderr for m in (*MODES, "klquant_whole_infer", "benchmark_train"))
    assert not (tmp_path / "test_tipc" / "output").exists(), "nothing written"
