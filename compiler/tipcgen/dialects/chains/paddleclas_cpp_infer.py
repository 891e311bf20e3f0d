"""PaddleClas's C++ inference chain: the line table test_inference_cpp.sh reads."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, H, Layout

# PaddleClas test_inference_cpp.sh: `awk 'NR==1, NR==19'`, lines[1..18]. Lines 5 and 6 (the
# models' URLs) are read by prepare.sh only; line 16 (benchmark) is read but unused (the script
# passes `--benchmark True`); line 18 exists in the shitu configs only.
PADDLECLAS_CPP_INFER = Layout(
    "paddleclas_cpp_infer",
    "PaddleClas C++ inference config (19 lines, test_inference_cpp.sh)",
    (
        H("cpp_infer_params"),
        F("model_name", "model_name"),
        F("cpp.type", "cpp_infer_type"),
        F("cpp.model_dir", "cls_inference_model_dir", lint_keys=("feature_inference_model_dir",)),  # PP-ShiTu's
        F("cpp.det_model_dir", "det_inference_model_dir"),
        F("infer_model_url", "cls_inference_url"),
        F("cpp.det_model_url", "det_inference_url"),
        F("cpp.quant", "infer_quant"),
        F("cpp.infer.command", "inference_cmd"),
        F("cpp.infer.use_gpu", "use_gpu"),
        F("cpp.infer.mkldnn", "enable_mkldnn"),
        F("cpp.infer.threads", "cpu_threads"),
        F("cpp.infer.batch_size", "batch_size"),
        F("cpp.infer.tensorrt", "use_tensorrt"),
        F("cpp.infer.precision", "precision"),
        F("cpp.infer.data"),  # image_dir (cls) or data_dir (shitu)
        F("cpp.infer.benchmark", "benchmark"),
        F("cpp.generate_yaml", "generate_yaml_cmd"),
        F("cpp.transform_index"),  # shitu only: transform_index_cmd
    ),
    Dialect(
        family="chain",
        title=("C++ 预测测试", "C++ inference test"),
        runners=("paddleclas_cpp_infer",),  # plan/runners/paddleclas_cpp_infer.py
        values_to_colon=True,
        script="test_inference_cpp.sh",
        status_log="results_cpp.log",
        gpuid_arg=True,
        # named as in upstream's script
        reads=(
            ("model_name", "value", "model_name"),
            ("cpp_infer_type", "value", "cpp.type"),
            ("cpp_infer_model_dir", "value", "cpp.model_dir"),
            ("cpp_det_infer_model_dir", "value", "cpp.det_model_dir"),
            ("cpp_infer_is_quant", "value", "cpp.quant"),
            ("inference_cmd", "value", "cpp.infer.command"),
            ("cpp_use_gpu_list", "value", "cpp.infer.use_gpu"),
            ("cpp_use_mkldnn_list", "value", "cpp.infer.mkldnn"),
            ("cpp_cpu_threads_list", "value", "cpp.infer.threads"),
            ("cpp_batch_size_list", "value", "cpp.infer.batch_size"),
            ("cpp_use_trt_list", "value", "cpp.infer.tensorrt"),
            ("cpp_precision_list", "value", "cpp.infer.precision"),
            ("cpp_image_dir_value", "value", "cpp.infer.data"),
            ("generate_yaml_cmd", "value", "cpp.generate_yaml"),
            ("transform_index_cmd", "value", "cpp.transform_index"),
        ),
        # the items of these name the log files
        log_name_roles=(
            "cpp.infer.mkldnn",
            "cpp.infer.threads",
            "cpp.infer.batch_size",
            "cpp.infer.tensorrt",
            "cpp.infer.precision",
        ),
        command_roles=("cpp.generate_yaml", "cpp.infer.command", "cpp.transform_index"),
        matrix_roles=(
            "cpp.model_dir",
            "cpp.infer.use_gpu",
            "cpp.infer.mkldnn",
            "cpp.infer.threads",
            "cpp.infer.batch_size",
            "cpp.infer.tensorrt",
            "cpp.infer.precision",
        ),
    ),
    read_lines=19,
    optional_rows=1,  # transform_index_cmd: PP-ShiTu configs only
    detect=lambda sig: (
        "cpp_infer_params with `cpp_infer_type:` on line 3 (PaddleClas test_inference_cpp.sh)"
        if "cpp_infer_params" in sig.headers and sig.key(2) == "cpp_infer_type"
        else None
    ),
)
