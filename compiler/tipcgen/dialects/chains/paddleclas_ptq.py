"""PaddleClas's PTQ chain: test_ptq_inference_python.sh reads a train-type config (PaddleClas's
51-line table, `*_train_ptq_infer_python.txt`) and runs only its kl_quant line, then the
inference matrix on the quantized model.

Its configs cannot be told from train configs by their text: PaddleClas names them, so the rule
reads the file name (`Signature.name`, given by `tipcgen plan`/`run` and the build).
"""

from __future__ import annotations

from typing import Optional

from tipcgen.dialects.base import Dialect, Layout, Signature
from tipcgen.dialects.paddleclas import PADDLECLAS

# The file-name suffix PaddleClas gives the configs of this chain.
SUFFIX = "_train_ptq_infer_python.txt"

# The inference lists this script loops over and names its logs after.
_INFERENCE = (
    "inference.mkldnn",
    "inference.threads",
    "inference.batch_size",
    "inference.precision",
    "inference.tensorrt",
)


def _detect(sig: Signature) -> Optional[str]:
    if not sig.name.endswith(SUFFIX) or PADDLECLAS.detect is None or not PADDLECLAS.detect(sig):
        return None
    return f"a PaddleClas train-type config named `*{SUFFIX}` (test_ptq_inference_python.sh)"


# The paddleclas rows (the same line table); only the script that reads them differs.
PADDLECLAS_PTQ = Layout(
    "paddleclas_ptq",
    "PaddleClas PTQ config (51 lines, test_ptq_inference_python.sh)",
    PADDLECLAS.rows,
    Dialect(
        family="chain",
        title=("离线量化（PTQ）推理测试", "Post-training quantization (PTQ) inference test"),
        runners=("paddleclas_ptq",),  # plan/runners/paddleclas_ptq.py
        values_to_colon=True,
        script="test_ptq_inference_python.sh",
        status_log="results_python.log",
        # upstream's script takes MODE as its second argument (it names the log directory)
        mode_required=True,
        # named as in upstream's script; only the lines its steps use
        reads=(
            ("model_name", "value", "model_name"),
            ("python", "value", "python"),
            ("kl_quant_cmd_value", "value", "trainer.slot1.export"),
            ("infer_model_dir_list", "value", "whole_infer.models"),
            ("inference_py", "value", "inference.script"),
            ("use_gpu_key", "key", "inference.use_gpu"),
            ("use_gpu_list", "value", "inference.use_gpu"),
            ("use_mkldnn_key", "key", "inference.mkldnn"),
            ("use_mkldnn_list", "value", "inference.mkldnn"),
            ("cpu_threads_key", "key", "inference.threads"),
            ("cpu_threads_list", "value", "inference.threads"),
            ("batch_size_key", "key", "inference.batch_size"),
            ("batch_size_list", "value", "inference.batch_size"),
            ("use_trt_key", "key", "inference.tensorrt"),
            ("use_trt_list", "value", "inference.tensorrt"),
            ("precision_key", "key", "inference.precision"),
            ("precision_list", "value", "inference.precision"),
            ("infer_model_key", "key", "inference.model_dir"),
            ("image_dir_key", "key", "inference.data"),
            ("infer_img_dir", "value", "inference.data"),
            ("benchmark_key", "key", "inference.benchmark"),
            ("benchmark_value", "value", "inference.benchmark"),
            ("infer_key1", "key", "inference.extra"),
            ("infer_value1", "value", "inference.extra"),
        ),
        log_name_roles=_INFERENCE,
        matrix_roles=("inference.use_gpu", *_INFERENCE),
    ),
    read_lines=PADDLECLAS.read_lines,
    section_headers=PADDLECLAS.section_headers,
    detect=_detect,
)
