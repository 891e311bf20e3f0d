"""The PaddlePaddle/models tutorial (mobilenetv3_prod Step6): a 32-line layout and its own runner
(no autocast line, no trainer slots; seed document 001's layout).
"""

from __future__ import annotations

from typing import Optional

from tipcgen.dialects.base import COMMON_READS, SEP, Dialect, F, H, Layout, Signature

MODELS_RUNNER = Dialect(
    runners=("models",),
    family="models",
    autocast_constant="False",
    multinode_env_first_gpu=True,
    amp_trainer="amp_train",
    # the tutorial's C++ config gives its name as `model_name NAME` (layout models_cpp_binary)
    prepare_word_modes=("cpp_infer",),
    reads=(
        *COMMON_READS,
        ("save_infer_dir", "value", "export.save_dir"),
        ("infer_model_dir", "value", "whole_infer.models"),
        ("infer_export", "value", "whole_infer.exports"),
    ),
    log_name_roles=("gpu_list", "train.run", "inference.batch_size"),
    matrix_roles=("gpu_list", "train.run", "inference.use_gpu", "inference.batch_size"),
)


def _detect(sig: Signature) -> Optional[str]:
    if sig.trainer == 12 and len(sig.lines) <= 40:
        return "`trainer:` on line 12 (models tutorial)"
    return None


# The `models` repo tutorial layout (train_infer_python.txt / train_fleet_infer_python.txt, 32 lines).
MODELS = Layout(
    name="models",
    description="PaddlePaddle/models tutorial train-type config (32 lines)",
    rows=(
        H("train_params"),
        F("model_name", "model_name"),
        F("python", "python"),
        F("gpu_list", "gpu_list"),
        F("train.device"),
        F("train.epochs"),
        F("train.save_dir"),
        F("train.batch_size"),
        F("train.pretrained"),
        F("train.model_file", "train_model_name"),
        F("train.data"),
        SEP,
        F("train.run", "trainer"),
        F("trainer.norm.train"),
        SEP,
        H("eval_params"),
        F("eval.command", "eval"),
        SEP,
        H("infer_params"),
        F("export.save_dir"),
        F("export.weights"),
        F("trainer.norm.export"),
        SEP,
        F("whole_infer.models", "train_model"),
        F("whole_infer.exports", "infer_export"),
        SEP,
        F("inference.script", "inference"),
        F("inference.use_gpu"),
        F("inference.batch_size"),
        F("inference.model_dir"),
        F("inference.data"),
        F("inference.benchmark"),
    ),
    dialect=MODELS_RUNNER,
    read_lines=32,
    detect=_detect,
)
