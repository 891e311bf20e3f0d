"""PaddleDetection: the OCR-family layout (51 lines, `trainer:` on line 14) with Detection's own keys
and a whole_infer block of its own: `kl_quant_export` on line 35, `##` on 36, `infer_mode` on 37.

Import and lint only, for now. The runner is the family's (`OCR_RUNNER` with `--gpus`, as
upstream's `paddle.distributed.launch --gpus=`), so `plan`, `run` and the generated bash do NOT
yet follow PaddleDetection's test_train_inference_python.sh; its planner behaviour is a later
task. What that script does differently (read from it, `utils_func.sh` beside it):

- it reads the whole file (`cat`), and a `to_static_train` trainer from the line after the
  `to_static_train_benchmark_params` header; it knows a `klquant_whole_infer` mode, and
  `benchmark_train` adds `TrainReader.shuffle=False --enable_ce=True`;
- training adds `log_iter=1`, `filename=<model_name>` and, on one GPU or the CPU,
  `LearningRate.base_lr=0.0001`; runs under `timeout 5m`; log names end in `_nodes_<n>`;
  `train.device` is passed whole to every gpu_list entry (not one value per entry), but the
  inference loop reuses its `use_gpu` variable, so later trainers of an entry train with the
  last inference device; autocast `amp`/`fp16` become `--amp amp_level=O1|O2`;
  CUDA_VISIBLE_DEVICES is unset after each run's inference;
- eval and export get `weights=<save_log>/<model_name>/<trained_model_name>` and export
  `filename=<model_name>`; when line 34's key is `export_onnx` it also exports with
  `export_onnx=True`; inference reads the model from `<save_log>/<model_name>`, on the CPU
  without a precision loop or `--run_mode`, and its logs are named `python_infer_<dev>_gpus_<gpu>_...`;
- whole_infer / klquant_whole_infer loop over `infer_mode` (line 37: trainer names norm, pact,
  fpgm, distill or kl_quant, the last exported with line 35's `kl_quant_export`) paired with
  `infer_quant` (line 38), exporting `weights:` (line 28) before each inference.

The Spec has no fields yet for `kl_quant_export` (line 35) and `infer_mode` (line 37). Their
rows keep a role only so that the table has one there (`export.model_url`, which no runner
reads, and the family's `whole_infer.exports`) with the fixed key `null`: a spec that sets
nothing writes `null:null` there (the script then reads `null`: no kl_quant export, no
whole_infer run), while Detection's own lines never match the key, so the importer keeps lines
35 and 37 (and `infer_quant` on 38, whose list pairs with `infer_mode`) verbatim in
`trivia.line_overrides`, byte for byte; `lint_keys` make lint accept Detection's keys there.
The planner task replaces these two rows with real fields.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from tipcgen.dialects.base import SEP, F, H, Signature, header, variant
from tipcgen.dialects.paddleocr import OCR_RUNNER, PADDLEOCR

# Keys no other repo's train config uses (checked over the whole corpus). `trained_model_name` is
# the layout's fixed key on line 10, so a config built from a spec that leaves lines 35 and 37
# alone is still told apart.
_DETECTION_KEYS = ("trained_model_name", "kl_quant_export", "infer_mode")


def _detect(sig: Signature) -> Optional[str]:
    if sig.trainer != 14:
        return None
    keys = set(sig.keys[:40])
    found = [f"`{k}`" for k in _DETECTION_KEYS if k in keys]
    if found:
        return f"`trainer:` on line 14 and {' / '.join(found)} (PaddleDetection)"
    return None


# Index -> row, where PaddleDetection differs from PaddleOCR's table. `lint_keys` are the keys
# every corpus config carries on that line: lint reports a line shifted onto or off them.
_CHANGES = {
    4: F("train.device", lint_keys=("use_gpu",)),
    5: F("train.autocast", lint_keys=("auto_cast",)),
    6: F("train.epochs", lint_keys=("epoch",)),
    7: F("train.save_dir", lint_keys=("save_dir",)),
    8: F("train.batch_size", lint_keys=("TrainReader.batch_size",)),
    9: F("train.pretrained", lint_keys=("pretrain_weights",)),
    10: F("train.model_file", "trained_model_name"),
    # train_param_key1/value1: `filename:null` (the script adds `filename=<model_name>` itself)
    12: F("train.extra", lint_keys=("filename",)),
    22: H("eval_params"),  # no trailing space, unlike PaddleOCR's
    27: F("export.save_dir", lint_keys=("--output_dir",)),
    28: F("export.weights", lint_keys=("weights",)),
    # line 34: export2, or export_onnx (the script then also exports ONNX): the slot's export_name
    35: F("export.model_url", "null", lint_keys=("kl_quant_export",)),  # no field yet: see above
    36: SEP,
    37: F("whole_infer.exports", "null", lint_keys=("infer_mode",)),  # no field yet: see above
    40: F("inference.use_gpu", lint_keys=("--device",)),
    41: F("inference.mkldnn", lint_keys=("--enable_mkldnn",)),
    42: F("inference.threads", lint_keys=("--cpu_threads",)),
    43: F("inference.batch_size", lint_keys=("--batch_size",)),
    44: F("inference.tensorrt", lint_keys=("--use_tensorrt",)),
    45: F("inference.precision", lint_keys=("--run_mode",)),
    46: F("inference.model_dir", lint_keys=("--model_dir",)),
    47: F("inference.data", lint_keys=("--image_dir", "--video_file")),
    48: F("inference.save_log", lint_keys=("--save_log_path",)),
    49: F("inference.benchmark", lint_keys=("--run_benchmark",)),
    50: F("inference.extra", lint_keys=("--trt_max_shape",)),
}

PADDLEDETECTION = replace(
    variant(
        PADDLEOCR,
        "paddledetection",
        "PaddleDetection train-type config (51 lines)",
        OCR_RUNNER,
        _CHANGES,
        detect=_detect,
    ),
    # Detection writes this benchmark header with 27 `=` on the right (the family default is 26).
    section_headers={"infer_benchmark_params": header("infer_benchmark_params")},
)
