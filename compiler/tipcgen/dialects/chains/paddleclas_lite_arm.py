"""PaddleClas's Paddle-Lite ARM CPU chain: the line table test_lite_arm_cpu_cpp.sh reads."""

from __future__ import annotations

from typing import Optional

from tipcgen.dialects.base import Dialect, F, Layout, Signature

KEYS = (
    "runtime_device",
    "lite_arm_work_path",
    "lite_arm_so_path",
    "clas_model_file",
    "inference_cmd",
    "--num_threads_list",
    "--batch_size_list",
    "--precision_list",
)


def _detect(sig: Signature) -> Optional[str]:
    if tuple(sig.key(i) for i in range(len(KEYS))) == KEYS:
        return "headerless `runtime_device:` ... `--precision_list:` lines (PaddleClas test_lite_arm_cpu_cpp.sh)"
    return None


# PaddleClas test_lite_arm_cpu_cpp.sh: tipc_lines[0..7], each value cut by func_parser_value_lite
# (up to its next colon). No header: the first line is `runtime_device:`. The script also reads
# deploy/lite/config.txt, the predictor's own config, which it edits and pushes to the device.
PADDLECLAS_LITE_ARM = Layout(
    "paddleclas_lite_arm",
    "PaddleClas Paddle-Lite ARM CPU config (8 lines, test_lite_arm_cpu_cpp.sh)",
    (
        F("lite.runtime_device", "runtime_device"),
        F("lite.work_path", "lite_arm_work_path"),  # the device directory everything is pushed to
        F("lite.so_path", "lite_arm_so_path"),  # read by prepare, not by the script
        F("model_name", "clas_model_file"),
        F("lite.inference_cmd", "inference_cmd"),  # binary, config, image (each under the work path)
        F("lite.threads", "--num_threads_list"),
        F("lite.batch_size", "--batch_size_list"),
        F("lite.precision", "--precision_list"),
    ),
    Dialect(
        family="chain",
        title=("Paddle-Lite ARM CPU 预测测试", "Paddle-Lite ARM CPU inference test"),
        runners=("paddleclas_lite_arm",),  # plan/runners/paddleclas_lite_arm.py
        values_to_colon=True,
        script="test_lite_arm_cpu_cpp.sh",
        status_log="results.log",
        reads=(
            ("model_name", "value", "model_name"),
            ("runtime_device", "value", "lite.runtime_device"),
            ("lite_arm_work_path", "value", "lite.work_path"),
            ("inference_cmd", "value", "lite.inference_cmd"),
            ("num_threads_list", "value", "lite.threads"),
            ("batch_size_list", "value", "lite.batch_size"),
            ("precision_list", "value", "lite.precision"),
        ),
        # items of these name the log files
        log_name_roles=("lite.runtime_device", "lite.threads", "lite.batch_size", "lite.precision"),
        matrix_roles=("lite.threads", "lite.batch_size", "lite.precision"),
        command_roles=("lite.inference_cmd",),
    ),
    read_lines=8,
    detect=_detect,
)
