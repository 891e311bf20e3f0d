"""What a starter spec of each family holds: its entry points (where each repo keeps them, first
match wins), how a command passes the model's YAML, and the keys of its config lines.

The keys follow the family's own TIPC configs (the same keys `tipcgen import` reads from them, see
tests/fixtures/<family>/), so the generated suite asks the repo's scripts for flags they know. A
value the user must fill in is marked TODO in the starter.
"""

from __future__ import annotations

from dataclasses import dataclass

# A candidate entry point: (path in the repo, text in the spec). `{cfg}` is the model's YAML path;
# the spec text differs from the path where the family's runner starts the script elsewhere
# (PaddleClas runs inference from deploy/).
Candidate = tuple[str, str]


@dataclass(frozen=True)
class Family:
    name: str  # the dialect (layout) name
    train: tuple[Candidate, ...]
    eval: tuple[Candidate, ...]
    export: tuple[Candidate, ...]
    infer: tuple[Candidate, ...]
    config_dirs: tuple[str, ...]  # where the model's YAML may be ("" when the family takes none)
    config_placeholder: str  # the YAML path written when none is found ({model})
    train_lines: tuple[str, ...]  # `train:` fields (YAML, indented below `train:`)
    export_lines: tuple[str, ...]
    inference_lines: tuple[str, ...]


# Every family also tries these, after its own (the usual names across the Paddle repos).
_TRAIN: tuple[Candidate, ...] = (("tools/train.py", "tools/train.py -c {cfg}"),)
_EVAL: tuple[Candidate, ...] = (("tools/eval.py", "tools/eval.py -c {cfg}"),)
_EXPORT: tuple[Candidate, ...] = (
    ("tools/export_model.py", "tools/export_model.py -c {cfg}"),
    ("tools/export.py", "tools/export.py -c {cfg}"),
)
_INFER: tuple[Candidate, ...] = (
    ("deploy/python/infer.py", "deploy/python/infer.py"),
    ("tools/infer.py", "tools/infer.py"),
)

PADDLECLAS = Family(
    name="paddleclas",
    train=(("tools/train.py", "tools/train.py -c {cfg}"),),
    eval=(("tools/eval.py", "tools/eval.py -c {cfg}"),),
    export=(("tools/export_model.py", "tools/export_model.py -c {cfg}"),),
    # PaddleClas's runner starts inference from deploy/
    infer=(
        ("deploy/python/predict_cls.py", "python/predict_cls.py -c configs/inference_cls.yaml"),
        ("deploy/python/infer.py", "python/infer.py"),
    ),
    config_dirs=("ppcls/configs", "configs"),
    config_placeholder="ppcls/configs/ImageNet/{model}.yaml",
    train_lines=(
        "device: {key: -o Global.device, values: [gpu]}",
        "autocast: {key: -o Global.auto_cast, values: ['null']}",
        "epochs:",
        "  key: -o Global.epochs",
        "  by_mode: {lite_train_lite_infer: 2, whole_train_whole_infer: 120}",
        "save_dir: {key: -o Global.output_dir, value: ./output/}",
        "batch_size: {key: -o DataLoader.Train.sampler.batch_size, value: 8}",
        "pretrained: {key: -o Global.pretrained_model, value: null}",
        "model_file: latest",
        "infer_img_dir: ./dataset/ILSVRC2012/val  # TODO",
    ),
    export_lines=(
        "save_dir: {key: -o Global.save_inference_dir, value: ./inference}",
        "weights: {key: -o Global.pretrained_model, value: ''}",
    ),
    inference_lines=(
        "use_gpu: {key: -o Global.use_gpu, values: [True, False]}",
        "mkldnn: {key: -o Global.enable_mkldnn, values: [True, False]}",
        "threads: {key: -o Global.cpu_num_threads, values: [1, 6]}",
        "batch_size: {key: -o Global.batch_size, values: [1, 16]}",
        "tensorrt: {key: -o Global.use_tensorrt, values: [False]}",
        "precision: {key: -o Global.use_fp16, values: [False]}",
        "model_dir: {key: -o Global.inference_model_dir, value: ../inference}",
        "data: {key: -o Global.infer_imgs, value: ../dataset/ILSVRC2012/val}  # TODO",
        "save_log: {key: -o Global.save_log_path, value: null}",
        "benchmark: {key: -o Global.benchmark, value: True}",
    ),
)

PADDLEDETECTION = Family(
    name="paddledetection",
    # PaddleDetection's runner appends `key=value` pairs after the command's trailing -o
    train=(("tools/train.py", "tools/train.py -c {cfg} -o"),),
    eval=(("tools/eval.py", "tools/eval.py -c {cfg} -o"),),
    export=(("tools/export_model.py", "tools/export_model.py -c {cfg} -o"),),
    infer=(("deploy/python/infer.py", "./deploy/python/infer.py"),),
    config_dirs=("configs",),
    config_placeholder="configs/{model}.yml",
    train_lines=(
        "device: {key: use_gpu, values: [True]}",
        "autocast: {key: auto_cast, values: ['null']}",
        "epochs:",
        "  key: epoch",
        "  by_mode: {lite_train_lite_infer: 1, lite_train_whole_infer: 1, whole_train_whole_infer: 12}",
        "save_dir: {key: save_dir, value: null}",
        "batch_size:",
        "  key: TrainReader.batch_size",
        "  by_mode: {lite_train_lite_infer: 2, lite_train_whole_infer: 2, whole_train_whole_infer: 8}",
        "pretrained: {key: pretrain_weights, value: null}",
        "model_file: model_final.pdparams",
        "infer_img_dir: ./dataset/coco/test2017/  # TODO",
        "extra: {key: filename, value: null}",
    ),
    export_lines=(
        "save_dir: {key: --output_dir, value: ./output_inference}",
        "weights: {key: weights, value: ''}",
    ),
    inference_lines=(
        "use_gpu: {key: --device, values: [gpu, cpu]}",
        "mkldnn: {key: --enable_mkldnn, values: [False, True]}",
        "threads: {key: --cpu_threads, values: [1, 6]}",
        "batch_size: {key: --batch_size, values: [1]}",
        "tensorrt: {key: --use_tensorrt, values: ['null']}",
        "precision: {key: --run_mode, values: [paddle]}",
        "model_dir: {key: --model_dir, value: ''}",
        "data: {key: --image_dir, value: ./dataset/coco/test2017/}  # TODO",
        "save_log: {key: --save_log_path, value: null}",
        "benchmark: {key: --run_benchmark, value: False}",
    ),
)

PADDLEOCR = Family(
    name="paddleocr",
    train=(("tools/train.py", "tools/train.py -c {cfg} -o"),),
    eval=(("tools/eval.py", "tools/eval.py -c {cfg} -o"),),
    export=(("tools/export_model.py", "tools/export_model.py -c {cfg} -o"),),
    infer=(
        ("tools/infer/predict_det.py", "tools/infer/predict_det.py"),
        ("tools/infer/predict_rec.py", "tools/infer/predict_rec.py"),
        ("tools/infer/predict_system.py", "tools/infer/predict_system.py"),
    ),
    config_dirs=("configs",),
    config_placeholder="configs/det/{model}.yml",
    train_lines=(
        "device: {key: Global.use_gpu, values: [True, True]}",
        "autocast: {key: Global.auto_cast, values: ['null']}",
        "epochs:",
        "  key: Global.epoch_num",
        "  by_mode: {lite_train_lite_infer: 1, whole_train_whole_infer: 500}",
        "save_dir: {key: Global.save_model_dir, value: ./output/}",
        "batch_size:",
        "  key: Train.loader.batch_size_per_card",
        "  by_mode: {lite_train_lite_infer: 2, whole_train_whole_infer: 8}",
        "pretrained: {key: Global.pretrained_model, value: null}",
        "model_file: latest",
        "infer_img_dir: ./train_data/icdar2015/text_localization/ch4_test_images/  # TODO",
    ),
    export_lines=(
        "save_dir: {key: Global.save_inference_dir, value: ./output/}",
        "weights: {key: Global.checkpoints, value: ''}",
    ),
    inference_lines=(
        "use_gpu: {key: --use_gpu, values: [True, False]}",
        "mkldnn: {key: --enable_mkldnn, values: [True, False]}",
        "threads: {key: --cpu_threads, values: [1, 6]}",
        "batch_size: {key: --rec_batch_num, values: [1]}",
        "tensorrt: {key: --use_tensorrt, values: [False]}",
        "precision: {key: --precision, values: [fp32]}",
        "model_dir: {key: --det_model_dir, value: ''}  # TODO: --rec_model_dir for a recognition model",
        "data: {key: --image_dir, value: ./inference/ch_det_data_50/all-sum-510/}  # TODO",
        "save_log: {key: --save_log_path, value: null}",
        "benchmark: {key: --benchmark, value: True}",
    ),
)

PADDLESEG = Family(
    name="paddleseg",
    train=(("tools/train.py", "tools/train.py --config {cfg} --do_eval"), ("train.py", "train.py --config {cfg}")),
    eval=(("tools/val.py", "tools/val.py --config {cfg}"), ("val.py", "val.py --config {cfg}")),
    export=(("tools/export.py", "tools/export.py --config {cfg}"), ("export.py", "export.py --config {cfg}")),
    infer=(("deploy/python/infer.py", "deploy/python/infer.py"),),
    config_dirs=("configs", "test_tipc/configs"),
    config_placeholder="configs/{model}.yml",
    train_lines=(
        "device: {key: --device, values: [gpu, gpu]}",
        "autocast: {key: --precision, values: ['null']}",
        "epochs:",
        "  key: --iters",
        "  by_mode: {lite_train_lite_infer: 20, lite_train_whole_infer: 20, whole_train_whole_infer: 1000}",
        "save_dir: {key: --save_dir, value: ''}",
        "batch_size:",
        "  key: --batch_size",
        "  by_mode: {lite_train_lite_infer: 2, lite_train_whole_infer: 2, whole_train_whole_infer: 4}",
        "pretrained: {key: --model_path, value: null}",
        "model_file: best_model/model.pdparams",
        "infer_img_dir: test_tipc/data/cityscapes/cityscapes_val_5.list  # TODO",
    ),
    export_lines=(
        "save_dir: {key: --save_dir, value: ''}",
        "weights: {key: --model_path, value: ''}",
    ),
    inference_lines=(
        "use_gpu: {key: --device, values: [cpu, gpu]}",
        "mkldnn: {key: --enable_mkldnn, values: [True, False]}",
        "threads: {key: --cpu_threads, values: [1, 6]}",
        "batch_size: {key: --batch_size, values: [1]}",
        "tensorrt: {key: --use_trt, values: [False]}",
        "precision: {key: --precision, values: [fp32]}",
        "model_dir: {key: --config, value: ''}",
        "data: {key: --image_path, value: ./test_tipc/data/cityscapes/cityscapes_val_5.list}  # TODO",
        "save_log: {key: --save_log_path, value: null}",
        "benchmark: {key: --benchmark, value: True}",
    ),
)

PADDLEVIDEO = Family(
    name="paddlevideo",
    train=(("main.py", "main.py --validate -c {cfg}"),),
    eval=(("main.py", "main.py --test -c {cfg}"),),
    export=(("tools/export_model.py", "tools/export_model.py -c {cfg}"),),
    infer=(("tools/predict.py", "tools/predict.py --config {cfg}"),),
    config_dirs=("configs",),
    config_placeholder="configs/recognition/{model}.yaml",
    train_lines=(
        "device: {key: Global.use_gpu, values: ['null']}",
        "autocast: {key: Global.auto_cast, values: ['null']}",
        "epochs: {key: -o epochs, value: 2}",
        "save_dir: {key: -o output_dir, value: null}",
        "batch_size: {key: -o DATASET.batch_size, value: 2}",
        "pretrained: {key: -o MODEL.backbone.pretrained, value: null}",
    ),
    export_lines=(
        "save_dir: {key: -o, value: ./inference}",
        "weights: {key: -p, value: null}",
    ),
    inference_lines=(
        "use_gpu: {key: --use_gpu, values: [True, False]}",
        "mkldnn: {key: --enable_mkldnn, values: [False]}",
        "threads: {key: --cpu_threads, values: [1, 6]}",
        "batch_size: {key: --batch_size, values: [1]}",
        "tensorrt: {key: --use_tensorrt, values: [False]}",
        "precision: {key: --precision, values: [fp32]}",
        "model_dir: {key: --model_file, value: inference.pdmodel}",
        "data: {key: --input_file, value: ./data/example.avi}  # TODO",
        "benchmark: {key: --enable_benchmark, value: True}",
        "extra: {key: --params_file, value: inference.pdiparams}",
    ),
)

# The PaddlePaddle/models tutorial layout (seed 001): scripts at the root, no model YAML.
MODELS = Family(
    name="models",
    train=(("train.py", "train.py"),),
    eval=(("train.py", "train.py --test-only"), ("tools/eval.py", "tools/eval.py")),
    export=(("tools/export_model.py", "tools/export_model.py --model={model}"),),
    infer=(("deploy/inference_python/infer.py", "deploy/inference_python/infer.py"),),
    config_dirs=(),
    config_placeholder="",
    train_lines=(
        "device: {key: use-gpu, values: [True]}",
        "epochs:",
        "  key: --epochs",
        "  by_mode: {lite_train_lite_infer: 5, whole_train_whole_infer: 90}",
        "save_dir: {key: --output-dir, value: ./output/}",
        "batch_size:",
        "  key: --batch-size",
        "  by_mode: {lite_train_lite_infer: 4, whole_train_whole_infer: 128}",
        "pretrained: {key: --pretrained, value: null}",
        "model_file: latest.pdparams",
        "data: {key: --data-path, value: ./lite_data}  # TODO",
    ),
    export_lines=(
        "save_dir: {key: --save-inference-dir, value: ./output/{model}_infer/}",
        "weights: {key: --pretrained, value: ''}",
    ),
    inference_lines=(
        "use_gpu: {key: --use-gpu, values: [True, False]}",
        "batch_size: {key: --batch-size, values: [1]}",
        "model_dir: {key: --model-dir, value: ./output/{model}_infer/}",
        "data: {key: --img-path, value: ./images/demo.jpg}  # TODO",
        "benchmark: {key: --benchmark, value: True}",
    ),
)

FAMILIES: dict[str, Family] = {
    f.name: f for f in (PADDLEOCR, PADDLECLAS, PADDLESEG, PADDLEVIDEO, PADDLEDETECTION, MODELS)
}


def candidates(family: Family, role: str) -> tuple[Candidate, ...]:
    """The family's own candidates for `role`, then the usual names (models' root scripts take
    no -c; it only gets its own)."""
    own: tuple[Candidate, ...] = getattr(family, role)
    if family.name == "models":
        return own
    generic = {"train": _TRAIN, "eval": _EVAL, "export": _EXPORT, "infer": _INFER}[role]
    seen = {path for path, _ in own}
    return own + tuple(c for c in generic if c[0] not in seen)
