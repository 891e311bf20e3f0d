"""The device variants (dialects/devices.py): each family's test_train_inference_python_{npu,xpu}.sh
as a record. The corpus tier runs each family's REAL wrapper (on a scratch copy it edits in place,
under the recording shims) against our device Plan; our generated wrapper runs against the same
Plan and leaves the checkout byte for byte as it was (upstream's changes it: the check can fail)."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from helpers.oracle_runs import oracle
from helpers.sweep import by_shape, every_kth, rotate
from helpers.upstream import MODES, compare, run_upstream, train_configs, upstream_dir
from tipcgen.dialects.devices import DEVICE_DEVIATIONS, DEVICES, LOOKUP, Rewrite, device_for, device_text
from tipcgen.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "paddleclas" / "toy_cls_a_train_infer_python"
# layout -> the upstream folder whose wrappers it follows
REPOS = {
    "paddleclas": "PaddleClas",
    "paddleseg": "PaddleSeg",
    "paddlevideo": "PaddleVideo",
    "paddledetection": "PaddleDetection",
}
FAMILIES = sorted(LOOKUP)
RUNS = [(mode, None) for mode in MODES] + [("whole_infer", "1")]
# configs per family and device in CI's tier (TIPC_FULL_SWEEP: all): a budget, not a count
SAMPLE = 8


def test_device_for_is_the_one_lookup():
    for (layout, device), record in LOOKUP.items():
        assert device_for(layout, device) is record and record.word == device
        assert record.script == f"test_train_inference_python_{device}.sh"
    assert device_for("PaddleClas", "xpu") is LOOKUP[("paddleclas", "xpu")]
    with pytest.raises(UsageError, match="no npu variant"):
        device_for("models", "npu")
    assert {name for dev in DEVICE_DEVIATIONS for name in [dev.name]} >= {
        "device-no-checkout-edit",
        "device-gpuid-kept",
    }


def test_rewrites_are_literal_ordered_and_conditional():
    clas = device_for("paddleclas", "npu")
    text = "model_name:PVTV2\npython:python3.7\ngpu_list:0|0,1\n-o Global.device:gpu\n"
    # PaddleClas reads the model from the config's path (its 3rd field)
    assert "gpu_list:0,1" in device_text(text, clas, "test_tipc/configs/PVTV2/a.txt", "x86_64")
    other = device_text(text, clas, "test_tipc/configs/ResNet/a.txt", "x86_64")
    assert "gpu_list:0|0,1" in other and "python3.9" in other and "Global.device:npu" in other
    seg = device_for("paddleseg", "xpu")
    mk = "x\n--enable_mkldnn:True|False\n"
    assert device_text(mk, seg, "c.txt", "x86_64") == mk
    assert device_text(mk, seg, "c.txt", "unknown") == "x\n--enable_mkldnn:False\n"
    appended = Rewrite("", " -o A=1", line=2)
    rec = replace(seg, rewrites=(appended,))
    assert device_text("a\nb\nc\n", rec, "c.txt", "x86_64") == "a\nb -o A=1\nc\n"


def _toy(layout: str) -> Path:
    """The first fixture config of a layout's folder (tests/fixtures/<layout>/), without suffix."""
    return sorted((ROOT / "tests" / "fixtures" / layout).glob("*.txt"))[0].with_suffix("")


def _build(tmp: Path, devices: str, fixture: Path = FIXTURE, layout: str = "paddleclas") -> Path:
    from tipcgen.check.spec import load_spec
    from tipcgen.emit.files import build_files

    text = fixture.with_suffix(".spec.yml").read_text(encoding="utf-8")
    text = text.replace(f"\nlayout: {layout}\n", f"\nlayout: {layout}\ndevices: {devices}\n", 1)
    (tmp / "spec").mkdir()
    (tmp / "spec" / "toy.spec.yml").write_text(text, encoding="utf-8")
    (tmp / "spec" / fixture.with_suffix(".txt").name).write_bytes(fixture.with_suffix(".txt").read_bytes())
    for rel, data in build_files(load_spec(str(tmp / "spec" / "toy.spec.yml"))).items():
        (tmp / "out" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "out" / rel).write_bytes(data)
    return tmp / "out" / "test_tipc"


def test_build_writes_the_wrappers_the_spec_asks_for(tmp_path):
    built = _build(tmp_path, "[npu, xpu]")
    for device in DEVICES:
        wrapper = built / f"test_train_inference_python_{device}.sh"
        text = wrapper.read_text(encoding="utf-8")
        code = [line for line in text.split("\n") if not line.lstrip().startswith("#")]
        assert not [line for line in code if "sed " in line or "eval " in line]
        assert f"TIPC_DEVICE_WORD={device}" in text
    runner = (built / "test_train_inference_python.sh").read_text(encoding="utf-8")
    assert '"${TIPC_DEVICE_WORD:-gpu}"' in runner


def test_a_spec_without_devices_builds_no_wrapper(tmp_path):
    built = _build(tmp_path, "[]")
    assert not list(built.glob("test_train_inference_python_*.sh"))
    assert "TIPC_DEVICE_WORD" not in (built / "test_train_inference_python.sh").read_text(encoding="utf-8")


def test_a_layout_without_the_device_is_refused(tmp_path):
    from tipcgen.check.spec import load_spec
    from tipcgen.errors import SpecError

    text = (ROOT / "tests/fixtures/models").glob("*.spec.yml").__next__().read_text(encoding="utf-8")
    (tmp_path / "m.spec.yml").write_text(text.replace("\nlayout: models\n", "\nlayout: models\ndevices: [npu]\n"))
    with pytest.raises(SpecError, match="no npu variant"):
        load_spec(str(tmp_path / "m.spec.yml"))


def _unchanged(run, source: Path, config: Path) -> list:
    """Files of the scratch checkout whose bytes differ from what was staged (outputs aside)."""
    root = Path(run.root)
    changed = [run.config_arg] if (root / run.config_arg).read_bytes() != config.read_bytes() else []
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        if path.is_file() and rel.parts[0] not in ("output", "configs", "specs"):
            if (root / "test_tipc" / rel).read_bytes() != path.read_bytes():
                changed.append(f"test_tipc/{rel}")
    return changed


# the upstream folder (oracle.REPOS) whose runner each layout's spec builds by default
OUR_REPOS = {"paddleocr": "PaddleOCR/seed-era"}


@pytest.mark.sandbox
@pytest.mark.parametrize("layout,device", FAMILIES, ids=[f"{lay}-{dev}" for lay, dev in FAMILIES])
def test_our_wrapper_runs_the_device_plan_and_leaves_the_checkout(tmp_path, layout, device):
    """Each family's toy fixture built with the device: its wrapper under the recorders runs the
    device Plan's commands and status lines, and the checkout is byte for byte as staged."""
    fixture = _toy(layout)
    built = _build(tmp_path, f"[{device}]", fixture, layout)
    config = fixture.with_suffix(".txt")
    repo = OUR_REPOS[layout] if layout in OUR_REPOS else REPOS[layout]
    for mode, gpuid in (("lite_train_lite_infer", None), ("whole_infer", "1")):
        scratch = Path(tempfile.mkdtemp(prefix="tipc-device-"))
        try:
            run = run_upstream(built, config, mode, gpuid=gpuid, script=f"test_train_inference_python_{device}.sh",
                               tools=("python3.9",), keep=True, scratch=scratch, repo=repo)  # fmt: skip
            assert run.returncode == 0, run.stderr
            assert _unchanged(run, built, config) == []
            diff = compare(config, repo, mode, gpuid, run=run, device=device, layout=layout)
            copy = f"./test_tipc/output/device_{device}/{run.config_arg}"
            assert not diff.aspect("commands") and not diff.aspect("status"), diff.describe()
            assert [d.detail for d in diff.aspect("logs")] == [f"log files: only upstream [{copy!r}]; only plan []"]
            assert run.commands or mode == "whole_infer"
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


# ---- the corpus tier: each family's real wrapper vs our device Plan


def _sample(configs: list, record) -> list:
    """Every k-th config of a shape's first (TIPC_FULL_SWEEP: all), the first config holding each
    row's text, and the first config a model-conditioned row applies to (as the wrapper is given it)."""
    shaped = by_shape(configs)
    picked = every_kth(shaped, max(1, len(shaped) // SAMPLE))
    for row in (r for r in record.rewrites if r.old and not r.models):  # each row where the corpus has it
        found = next((c for c in configs if row.old in c.read_text(encoding="utf-8")), None)
        if found is not None and found not in picked:
            picked.append(found)
    for row in (r for r in record.rewrites if r.models):
        for config in configs:
            text = config.read_text(encoding="utf-8")
            arg = f"test_tipc/configs/{config.parent.name}/{config.name}"
            if row.old in text and device_text(text, record, arg, "x86_64") != device_text(
                text, replace(record, rewrites=tuple(r for r in record.rewrites if not r.models)), arg, "x86_64"
            ):
                if config not in picked:
                    picked.append(config)
                break
    return picked


@pytest.mark.corpus
@pytest.mark.sandbox
@pytest.mark.parametrize(
    "layout,device",
    [f for f in FAMILIES if f[0] in REPOS],
    ids=[f"{lay}-{dev}" for lay, dev in FAMILIES if lay in REPOS],
)
def test_each_family_wrapper_runs_as_our_device_plan(corpus, layout, device):
    repo = REPOS[layout]
    if not (upstream_dir() / repo / f"test_train_inference_python_{device}.sh").is_file():
        pytest.skip(f"{repo}'s {device} wrapper is not at {upstream_dir()}")
    configs = _sample(train_configs(corpus, repo), device_for(layout, device))
    assert configs, f"no {repo} train config in the corpus"
    # whole_infer with a GPUID too: upstream's wrapper drops it, ours passes it on (device-gpuid-kept)
    runs = [(c, m, g, None) for n, c in enumerate(configs) for m, g in rotate(n, RUNS)]
    tally = oracle(repo, runs, device=device)
    print("\n" + tally.report(f"{repo} {device}: {len(configs)} configs, {len(runs)} runs"))
    assert not tally.unfaithful, f"{len(tally.unfaithful)} of {tally.runs} not faithful; first: {tally.unfaithful[0]}"
    assert tally.runs == len(runs)


@pytest.mark.corpus
@pytest.mark.sandbox
@pytest.mark.parametrize(
    "layout,device",
    [f for f in FAMILIES if f[0] in REPOS],
    ids=[f"{lay}-{dev}" for lay, dev in FAMILIES if lay in REPOS],
)
def test_upstream_wrapper_edits_its_checkout(corpus, layout, device):
    """What our wrapper must not do, upstream's does: the config and the runner change in place."""
    repo = REPOS[layout]
    source = upstream_dir() / repo
    if not (source / f"test_train_inference_python_{device}.sh").is_file():
        pytest.skip(f"{repo}'s {device} wrapper is not at {upstream_dir()}")
    config = next(c for c in train_configs(corpus, repo) if "gpu" in c.read_text(encoding="utf-8"))
    scratch = Path(tempfile.mkdtemp(prefix="tipc-device-up-"))
    try:
        run = run_upstream(source, config, "lite_train_lite_infer", script=f"test_train_inference_python_{device}.sh",
                           tools=("python3.9",), keep=True, scratch=scratch)  # fmt: skip
        changed = _unchanged(run, source, config)
        assert "test_tipc/test_train_inference_python.sh" in changed, changed
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# PaddleOCR: its wrappers sit with its chain scripts (../shared/chains); they run the head runner
OCR_MODELS = ("rec_r31_sar", "ch_ppocr_mobile_v2_0_rec_FPGM")


def _ocr_view(tmp: Path, device: str) -> Path:
    """A scripts folder laid out as compare() expects (`<view>/PaddleOCR/head/`): the head runner
    and what it sources, beside the family's device wrapper."""
    from helpers.upstream import chains_dir

    wrapper = chains_dir() / "PaddleOCR" / "scripts" / f"test_train_inference_python_{device}.sh"
    head = upstream_dir() / "PaddleOCR" / "head"
    if not wrapper.is_file() or not (head / "test_train_inference_python.sh").is_file():
        pytest.skip(f"PaddleOCR's {device} wrapper or head runner is not at {wrapper.parent}, {head}")
    view = tmp / "view" / "PaddleOCR" / "head"
    shutil.copytree(head, view)
    shutil.copy2(wrapper, view / wrapper.name)
    return tmp / "view"


@pytest.mark.corpus
@pytest.mark.sandbox
@pytest.mark.parametrize("device", DEVICES)
def test_paddleocr_wrapper_runs_as_our_device_plan(corpus, tmp_path, device):
    """Its train configs in every mode, and each in turn named as a model its rows single out
    (the rows that apply to those models only: the written config's line 2)."""
    view = _ocr_view(tmp_path, device)
    base = train_configs(corpus, "PaddleOCR/head")
    assert base, "no PaddleOCR train config in the corpus"
    record = device_for("paddleocr", device)
    configs = list(base)
    plain = replace(record, rewrites=tuple(r for r in record.rewrites if not r.models))
    for model in OCR_MODELS:
        applied = 0
        for n, config in enumerate(base):
            lines = config.read_text(encoding="utf-8").split("\n")
            lines[1] = f"model_name:{model}"
            text = "\n".join(lines)
            applied += device_text(text, record, "c.txt", "x86_64") != device_text(text, plain, "c.txt", "x86_64")
            (tmp_path / f"{model}{n}").mkdir()
            (tmp_path / f"{model}{n}" / config.name).write_text(text, encoding="utf-8")
            configs.append(tmp_path / f"{model}{n}" / config.name)
        assert applied, f"{model}'s rows change none of the configs: the runs would not test them"
    from helpers.oracle_runs import Tally

    runs, tally = 0, Tally()
    for n, config in enumerate(configs):
        for mode, gpuid in rotate(n, RUNS, per=2):
            diff = compare(config, "PaddleOCR/head", mode, gpuid, upstream=view, device=device)
            tally.add(config, diff)
            runs += 1
    print("\n" + tally.report(f"PaddleOCR {device}: {len(configs)} configs, {runs} runs"))
    assert not tally.unfaithful, f"{len(tally.unfaithful)} of {tally.runs} not faithful; first: {tally.unfaithful[0]}"


def _texts(record) -> list:
    """(config path, text) pairs holding every row's old text, for each model a row names and one
    it does not, with and without a final newline and with an empty line."""
    models = sorted({m for r in record.rewrites for m in r.models}) + ["other_model"]
    body = "\n".join(f"key{n}:{r.old}|{r.old}" for n, r in enumerate(record.rewrites) if r.old)
    out = []
    for model in models:
        lines = ["===train_params===", f"model_name:{model}", "python:python3.7", "", body]
        lines += [f"line{n}:value" for n in range(40)]
        text = "\n".join(lines)
        out += [(f"test_tipc/configs/{model}/a.txt", text + "\n"), (f"./test_tipc/configs/{model}/b.txt", text)]
    return out


@pytest.mark.parametrize("layout,device", FAMILIES, ids=[f"{lay}-{dev}" for lay, dev in FAMILIES])
def test_the_wrapper_rewrites_as_device_text(tmp_path, layout, device):
    """The generated wrapper's bash (parameter expansion) writes the copy device_text() plans."""
    import subprocess

    from tipcgen.emit.files import device_wrapper
    from tipcgen.sandbox import machine_arch

    record = device_for(layout, device)
    (tmp_path / "test_tipc").mkdir()
    (tmp_path / "test_tipc" / record.script).write_text(device_wrapper(record, "test"), encoding="utf-8")
    # a runner that records the word it was given and succeeds
    (tmp_path / "test_tipc" / "test_train_inference_python.sh").write_text(
        'printf "%s" "$TIPC_DEVICE_WORD" > word\nexit 3\n', encoding="utf-8"
    )
    for config, text in _texts(record):
        path = tmp_path / config
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        ran = subprocess.run(["bash", f"test_tipc/{record.script}", config, "lite_train_lite_infer"], cwd=tmp_path)
        assert ran.returncode == 3  # the runner's status
        copy = tmp_path / "test_tipc" / "output" / f"device_{device}" / config.removeprefix("./")
        assert copy.read_text(encoding="utf-8") == device_text(text, record, config, machine_arch()), config
        assert path.read_text(encoding="utf-8") == text
        assert (tmp_path / "word").read_text() == record.word
    ran = subprocess.run(["bash", f"test_tipc/{record.script}", "absent.txt", "x"], cwd=tmp_path, capture_output=True)
    assert ran.returncode == 2 and b"not found" in ran.stderr


# The generated wrappers, one golden per record (not tests/fixtures/: the golden harness builds
# from imported configs, whose specs name no device). `TIPC_UPDATE_GOLDEN=1` rewrites them; review
# `git diff tests/golden_devices` before committing.
GOLDEN = ROOT / "tests" / "golden_devices"


@pytest.mark.parametrize("layout,device", FAMILIES, ids=[f"{lay}-{dev}" for lay, dev in FAMILIES])
def test_the_generated_wrapper_is_its_golden(layout, device):
    import os
    import subprocess

    from tipcgen.emit.files import device_wrapper

    text = device_wrapper(device_for(layout, device), "Generated by tipcgen (golden: tests/test_devices.py).")
    path = GOLDEN / f"{layout}.test_train_inference_python_{device}.sh"
    if os.environ.get("TIPC_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} is missing: TIPC_UPDATE_GOLDEN=1 writes it"
    assert path.read_text(encoding="utf-8") == text, f"{path.name} is stale: TIPC_UPDATE_GOLDEN=1, then review"
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
    if shutil.which("shellcheck"):
        found = subprocess.run(["shellcheck", "-s", "bash", str(path)], capture_output=True, text=True)
        assert found.returncode == 0, found.stdout
