"""The device variants (issue 34): what each family's `test_train_inference_python_npu.sh` and
`_xpu.sh` do before they run the train runner, as one `Device` record per (layout, device).

Upstream's wrappers edit the checkout in place (`sed -i` on the config, on model YAMLs and on the
train runner itself), then run `test_train_inference_python.sh CONFIG MODE` (the GPU id dropped).
A record says the same as data:

- `rewrites`: the config's literal substitutions in upstream's order (`old` -> `new`, every
  occurrence); a row may hold only off x86_64 (`off_x86_64`: upstream's `uname -i` test) or only
  for some models (`models`: the name the family reads, `model_from`), or append text to a line
  (`line`: upstream's `Ns/$/ text/`);
- `word`: the word the runner's inference branch compares `use_gpu` with (upstream seds the
  runner's one quoted "gpu" to it);
- `runner_edits`: other edits of the runner text a table can name (PaddleClas's XPU log paths);
  the Plan reads them by name (`Builder.runner_edits`), our runner by an environment variable;
- `yaml_edits`: what upstream changes in model YAMLs of the checkout, and what it becomes here
  (we never edit the checkout: deviation `device-no-checkout-edit`);
- `dropped`: what else upstream's wrapper does that ours does not, and why (PaddleDetection's
  `aligned: False` YAML edit and NPU annotation download);
- `visible`: the variable that selects the device's cards (not set by upstream's wrappers nor by
  ours: the runner exports CUDA_VISIBLE_DEVICES as it does for a GPU; shown in the docs).

`device_text` applies a record to a config's text (the Plan's input); the generated wrapper
(templates/device_wrapper.sh.j2) applies the same rows in bash, by parameter expansion, to a copy
in the run's own output directory. `device_for` is the one lookup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tipcgen.dialects.steps import Deviation
from tipcgen.errors import UsageError

DEVICES = ("npu", "xpu")
# Where the card-selecting variables are documented: the Ascend CANN environment-variable
# reference (ASCEND_RT_VISIBLE_DEVICES, envref_07_0028) and Paddle's paddle.static.xpu_places
# page (FLAGS_selected_xpus: "the visible XPU device" of a multi-card task).
VISIBLE = {"npu": "ASCEND_RT_VISIBLE_DEVICES", "xpu": "FLAGS_selected_xpus"}


@dataclass(frozen=True)
class Rewrite:
    """One substitution of upstream's `sed -i "s/old/new/g" $FILENAME` (literal text), or with
    `line` an append to that line (upstream's `sed -i 'Ns/$/new/'`: 1-based, empty lines count)."""

    old: str
    new: str
    off_x86_64: bool = False  # only where `uname -i` is not x86_64
    models: tuple = ()  # only for these model names (Device.model_from)
    line: int = 0


@dataclass(frozen=True)
class RunnerEdit:
    """An edit upstream's wrapper makes to the runner's text besides the "gpu" word: `name` is
    what the Plan reads (Builder.runner_edits), `env` the variable our runner reads (=1; "": our
    runner has no such text, the edit changes nothing of ours)."""

    name: str
    old: str
    new: str
    env: str


@dataclass(frozen=True)
class YamlEdit:
    """An edit upstream's wrapper makes to model YAMLs of the checkout (`files`: which), and what
    it becomes here (we never edit the checkout)."""

    files: str
    old: str
    new: str
    becomes: str


@dataclass(frozen=True)
class Device:
    layout: str
    device: str
    script: str  # upstream's wrapper, and ours (same name: CI calls keep working)
    word: str
    rewrites: tuple
    # how the family reads the model name its `models` rows test: "path3" (the config path's 3rd
    # `/` field, PaddleClas's `cut -d/ -f3`) or "line2" (the value of the 2nd non-empty line)
    model_from: str = "line2"
    runner_edits: tuple = ()
    yaml_edits: tuple = ()
    dropped: tuple = ()  # what else upstream's wrapper does that we do not (named, with why)

    @property
    def visible(self) -> str:
        return VISIBLE[self.device]


_MKLDNN_OFF = (
    Rewrite("--enable_mkldnn:True|False", "--enable_mkldnn:False", off_x86_64=True),
    Rewrite("--enable_mkldnn:True", "--enable_mkldnn:False", off_x86_64=True),
)


def _clas(dev: str) -> Device:
    edits: tuple = ()
    if dev == "xpu":
        edits = (
            # our runner reports the trainer's own status (train-status-from-trainer): no train.log to find
            RunnerEdit("train-log-without-model-folder", "${model_name}/train.log", "train.log", ""),
            RunnerEdit(
                "weights-without-model-folder",
                "${model_name}/${train_model_name}",
                "${train_model_name}",
                "TIPC_DEVICE_FLAT_WEIGHTS",
            ),
        )
    return Device(
        "paddleclas",
        dev,
        f"test_train_inference_python_{dev}.sh",
        dev,
        (
            Rewrite("Global.device:gpu", f"Global.device:{dev}"),
            Rewrite("Global.use_gpu", f"Global.use_{dev}"),
            Rewrite("Global.use_tensorrt:True|False", "Global.use_tensorrt:False"),
            Rewrite("Global.save_interval=2", "Global.save_interval=1"),
            Rewrite("-o Global.epochs:lite_train_lite_infer=2", "-o Global.epochs:lite_train_lite_infer=1"),
            Rewrite("enable_mkldnn:True|False", "enable_mkldnn:False"),
            Rewrite("python3.7", "python3.9"),
            Rewrite("python3.10", "python3.9"),
            Rewrite("gpu_list:0|0,1", "gpu_list:0,1", models=("PVTV2", "Twins", "SwinTransformer")),
        ),
        model_from="path3",
        runner_edits=edits,
        yaml_edits=(
            YamlEdit(
                "deploy/<the inference command's config>",
                "use_gpu: True",
                f"use_{dev}: True",
                f"the config's own `-o Global.use_{dev}=...` override (its rewritten use_gpu line) sets it",
            ),
            YamlEdit(
                "<each train command's -c config>",
                "device: gpu",
                f"device: {dev}",
                f"the config's own `-o Global.device:{dev}` override (its rewritten device line) sets it",
            ),
        ),
    )


def _seg(dev: str) -> Device:
    rows = [*_MKLDNN_OFF, Rewrite("Global.use_gpu", f"Global.use_{dev}"), Rewrite("--device gpu", f"--device {dev}")]
    if dev == "npu":
        rows.append(Rewrite("--device:gpu", "--device:npu"))
    rows += [Rewrite("--device:cpu|gpu", f"--device:cpu|{dev}"), Rewrite("--benchmark:True", "--benchmark:False")]
    if dev == "npu":
        slow = ("hrnet_w48_contrast", "pfpnnet", "knet", "maskformer", "ocrnet_hrformer_small")
        rows += [
            Rewrite("python3.7", "python3.9"),
            Rewrite("lite_train_lite_infer=20", "lite_train_lite_infer=2", models=slow),
            Rewrite("--save_interval 500", "--save_interval 50", models=slow),
        ]
    return Device("paddleseg", dev, f"test_train_inference_python_{dev}.sh", dev, tuple(rows))


def _video(dev: str) -> Device:
    rows = (
        *_MKLDNN_OFF,
        Rewrite("use_gpu", f"use_{dev}"),
        Rewrite("--enable_benchmark:True", "--enable_benchmark:False"),
        Rewrite("python3.7", "python3.9"),
    )
    return Device("paddlevideo", dev, f"test_train_inference_python_{dev}.sh", dev, rows)


def _ocr(dev: str) -> Device:
    slow = ("rec_r31_sar", "rec_mtb_nrtr")
    fpgm = ("ch_ppocr_mobile_v2_0_rec_FPGM",)
    rows = (
        *_MKLDNN_OFF,
        Rewrite("use_gpu", f"use_{dev}"),
        Rewrite("--benchmark:True", "--benchmark:False"),
        Rewrite("python3.7", "python3.9"),
        Rewrite("Global.epoch_num:lite_train_lite_infer=2", "Global.epoch_num:lite_train_lite_infer=1", models=slow),
        Rewrite("gpu_list:0|0,1", "gpu_list:0,1", models=slow),
        Rewrite(f"Global.use_{dev}:True|True", f"Global.use_{dev}:True", models=slow),
        # physical lines 18 and 32 (the norm trainer's and the eval's): upstream's `sed 'Ns/$/ .../'`
        Rewrite("", " -o Global.use_gpu=False", models=fpgm, line=18),
        Rewrite("", " Global.use_gpu=False", models=fpgm, line=32),
    )
    return Device(
        "paddleocr",
        dev,
        f"test_train_inference_python_{dev}.sh",
        dev,
        rows,
        yaml_edits=(
            YamlEdit(
                "<each `tools/...yml` train command's -c config>",
                "use_gpu",
                f"use_{dev}",
                f"the config's own `-o Global.use_{dev}=...` override (its rewritten use_gpu line) sets it",
            ),
        ),
        dropped=(
            "<each train command's -c config>: `use_sync_bn: True` → `use_sync_bn: False` is not made "
            "(the checkout is not edited, and the config passes no override for it): a run with more than "
            "one card keeps the YAML's synchronized batch norm (device-no-checkout-edit)",
        ),
    )


def _det(dev: str) -> Device:
    rows = [Rewrite("use_gpu:True", f"use_{dev}:True"), Rewrite("--device:gpu|cpu", f"--device:{dev}|cpu")]
    if dev == "npu":
        rows += [Rewrite("--device:gpu", "--device:npu"), Rewrite("--device:cpu|gpu", "--device:cpu|npu")]
    # the slim trainers dropped: their runs become the norm trainer's, their slim configs a blank
    rows += [
        Rewrite("trainer:pact_train", "trainer:norm_train"),
        Rewrite("trainer:fpgm_train", "trainer:norm_train"),
        Rewrite("--slim_config _template_pact", " "),
        Rewrite("--slim_config _template_fpgm", " "),
        Rewrite("--slim_config _template_kl_quant", " "),
    ]
    if dev == "npu":
        rows.append(Rewrite("python3.7", "python3.9"))
    yamls = [
        YamlEdit(
            "<each `.yml` line's -c config, and the configs its `.yml` lines include>",
            "use_gpu",
            f"use_{dev}",
            f"the config's own `-o use_{dev}=True` override (its rewritten use_gpu line) sets it",
        )
    ]
    dropped = []
    if dev == "npu":
        dropped = [
            "the same YAMLs' `aligned: True` → `aligned: False` is not made (the checkout is not edited, and "
            "the config passes no override for it): a model whose ops need it unaligned on the NPU fails there "
            "(device-no-checkout-edit)",
            "dataset/coco/annotations/instances_train2017.json is not replaced by a downloaded 8-image file when "
            "it holds another number of images (a dataset is prepare's, not the runner's: "
            "device-no-annotation-download)",
        ]
    return Device(
        "paddledetection",
        dev,
        f"test_train_inference_python_{dev}.sh",
        dev,
        tuple(rows),
        yaml_edits=tuple(yamls),
        dropped=tuple(dropped),
    )


LOOKUP: dict[tuple[str, str], Device] = {
    (d.layout, d.device): d for dev in DEVICES for d in (_clas(dev), _seg(dev), _video(dev), _ocr(dev), _det(dev))
}

DEVICE_DEVIATIONS = (
    Deviation(
        "device-no-checkout-edit",
        "writes the rewritten config to the run's output directory (test_tipc/output/device_<device>/) and "
        "passes the device word (and runner edits) to the runner; the checkout is never edited",
        "upstream's wrapper `sed -i`s the config, model YAMLs and the train runner in the checkout: the "
        "next GPU run of that checkout runs the device's config (each YAML edit's replacement: the docs' table)",
        (r"^device: ",),
    ),
    Deviation(
        "device-no-annotation-download",
        "PaddleDetection's NPU wrapper: leaves dataset/coco/annotations/instances_train2017.json as prepare left it",
        "upstream's moves it aside and downloads an 8-image file in its place when it holds another number of "
        "images (a dataset edit in the checkout, from the network, at run time: prepare's business)",
        (r"^download: upstream downloads \S*/instances_train2017\.json$",),
    ),
    Deviation(
        "device-gpuid-kept",
        "passes the GPU id (the 3rd argument) on to the runner",
        "upstream's wrapper drops it: its whole_infer runs on whatever CUDA_VISIBLE_DEVICES the caller had",
        (r"^\w+: CUDA_VISIBLE_DEVICES upstream None vs plan \S+$",),
    ),
)


def devices_of(layout: str) -> tuple:
    """The device records of a train layout, in DEVICES order (none: a layout without variants)."""
    return tuple(LOOKUP[(layout, dev)] for dev in DEVICES if (layout, dev) in LOOKUP)


def device_for(layout: str, device: str) -> Device:
    """The device record of a train layout or its family (paddleclas or PaddleClas, ...), or a
    UsageError naming the layouts that have one."""
    found = LOOKUP.get((layout.lower(), device))
    if found is None:
        have = sorted({lay for lay, dev in LOOKUP if dev == device})
        raise UsageError(
            f"layout {layout} has no {device} variant" + (f"; the layouts with one: {', '.join(have)}" if have else "")
        )
    return found


def _model(record: Device, text: str, config: str) -> str:
    """The model name the record's `models` rows test (upstream's, read where they stand)."""
    if record.model_from == "path3":
        parts = config.split("/")
        return parts[2] if len(parts) > 2 else ""
    lines = [line for line in text.split("\n") if line]
    second = lines[1] if len(lines) > 1 else ""
    return second.split(":")[1].strip() if ":" in second else ""


def device_text(text: str, record: Device, config: str, arch: str) -> str:
    """The config text the device's runner reads: `record`'s rewrites in order (`config`: its
    path as the wrapper is given it; `arch`: what `uname -i` says)."""
    model: Optional[str] = None
    for row in record.rewrites:
        if row.off_x86_64 and arch == "x86_64":
            continue
        if row.models:
            if model is None:  # read once, where the first model row stands (upstream reads it there)
                model = _model(record, text, config)
            if model not in row.models:
                continue
        if row.line:
            lines = text.split("\n")
            if row.line <= len(lines) and not (row.line == len(lines) and lines[-1] == ""):
                lines[row.line - 1] += row.new
            text = "\n".join(lines)
        else:
            text = text.replace(row.old, row.new)
    return text
