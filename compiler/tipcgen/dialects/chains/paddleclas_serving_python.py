"""PaddleClas's Python serving chain: the line tables test_serving_infer_python.sh reads.

One script, two line tables: a classifier's config (14 lines, one model) and PP-ShiTu's (18
lines: a detector and a feature extractor, each converted). Upstream picks the second when
model_name holds `PPShiTu`; we tell them by content (`cls_inference_model_url` on line 4), which
agrees on every corpus config. The C++ chain's configs (test_serving_infer_cpp.sh) have the same
keys: theirs say `web_service:null` (no Python web service), which every Python config names.
"""

from __future__ import annotations

from typing import Optional

from tipcgen.dialects.base import Dialect, F, H, Layout, Signature

SCRIPT = "test_serving_infer_python.sh"

# Both scripts read `awk 'NR==1, NR==19'`.
READ_LINES = 19

CLS_ROWS = (
    H("serving_params"),
    F("model_name", "model_name"),
    F("python", "python"),
    F("infer_model_url", "inference_model_url"),  # read by prepare.sh only
    F("serving.convert", "trans_model"),
    F("serving.model_dir"),
    F("serving.model_filename"),
    F("serving.params_filename"),
    F("serving.server_dir"),
    F("serving.client_dir"),
    F("serving.dir", "serving_dir"),
    F("serving.web_service", "web_service"),
    F("serving.use_gpu"),
    F("serving.client", "pipline"),  # upstream's spelling
)

SHITU_ROWS = (
    H("serving_params"),
    F("model_name", "model_name"),
    F("python", "python"),
    F("serving.cls.model_url", "cls_inference_model_url"),  # read by prepare.sh only
    F("serving.det.model_url", "det_inference_model_url"),
    F("serving.convert", "trans_model"),
    F("serving.cls.model_dir"),
    F("serving.det.model_dir"),
    F("serving.model_filename"),
    F("serving.params_filename"),
    F("serving.cls.server_dir"),
    F("serving.cls.client_dir"),
    F("serving.det.server_dir"),
    F("serving.det.client_dir"),
    F("serving.dir", "serving_dir"),
    F("serving.web_service", "web_service"),
    F("serving.use_gpu"),
    F("serving.client", "pipline"),
)

# The bash variables, named as upstream's (func_serving_cls / func_serving_rec).
CLS_READS = (
    ("model_name", "value", "model_name"),
    ("python", "value", "python"),
    ("trans_model_py", "value", "serving.convert"),
    ("infer_model_dir_key", "key", "serving.model_dir"),
    ("infer_model_dir_value", "value", "serving.model_dir"),
    ("model_filename_key", "key", "serving.model_filename"),
    ("model_filename_value", "value", "serving.model_filename"),
    ("params_filename_key", "key", "serving.params_filename"),
    ("params_filename_value", "value", "serving.params_filename"),
    ("serving_server_key", "key", "serving.server_dir"),
    ("serving_server_value", "value", "serving.server_dir"),
    ("serving_client_key", "key", "serving.client_dir"),
    ("serving_client_value", "value", "serving.client_dir"),
    ("serving_dir_value", "value", "serving.dir"),
    ("web_service_py", "value", "serving.web_service"),
    ("web_use_gpu_list", "value", "serving.use_gpu"),
    ("pipeline_py", "value", "serving.client"),
)
SHITU_READS = (
    ("model_name", "value", "model_name"),
    ("python", "value", "python"),
    ("trans_model_py", "value", "serving.convert"),
    ("cls_infer_model_dir_key", "key", "serving.cls.model_dir"),
    ("cls_infer_model_dir_value", "value", "serving.cls.model_dir"),
    ("det_infer_model_dir_key", "key", "serving.det.model_dir"),
    ("det_infer_model_dir_value", "value", "serving.det.model_dir"),
    ("model_filename_key", "key", "serving.model_filename"),
    ("model_filename_value", "value", "serving.model_filename"),
    ("params_filename_key", "key", "serving.params_filename"),
    ("params_filename_value", "value", "serving.params_filename"),
    ("cls_serving_server_key", "key", "serving.cls.server_dir"),
    ("cls_serving_server_value", "value", "serving.cls.server_dir"),
    ("cls_serving_client_key", "key", "serving.cls.client_dir"),
    ("cls_serving_client_value", "value", "serving.cls.client_dir"),
    ("det_serving_server_key", "key", "serving.det.server_dir"),
    ("det_serving_server_value", "value", "serving.det.server_dir"),
    ("det_serving_client_key", "key", "serving.det.client_dir"),
    ("det_serving_client_value", "value", "serving.det.client_dir"),
    ("serving_dir_value", "value", "serving.dir"),
    ("web_service_py", "value", "serving.web_service"),
    ("web_use_gpu_list", "value", "serving.use_gpu"),
    ("pipeline_py", "value", "serving.client"),
)


def serving_form(sig: Signature) -> Optional[tuple[str, bool]]:
    """("cls" | "shitu", whether it is a C++ config) of a serving_params config, or None."""
    if "serving_params" not in sig.headers or sig.key(1) != "model_name":
        return None
    if sig.key(3) == "inference_model_url" and sig.key(4) == "trans_model" and sig.key(11) == "web_service":
        form, web = "cls", 11
    elif sig.key(3) == "cls_inference_model_url" and sig.key(5) == "trans_model" and sig.key(15) == "web_service":
        form, web = "shitu", 15
    else:
        return None
    value = sig.lines[web].split(":", 1)[1].strip() if web < len(sig.lines) else ""
    return form, value == "null"


def _rule(form: str, cpp: bool):
    def detect(sig: Signature) -> Optional[str]:
        if serving_form(sig) != (form, cpp):
            return None
        return f"serving_params, {form} keys, web_service {'null (C++ serving)' if cpp else 'named (Python serving)'}"

    return detect


def _dialect(runner: str, script: str, status_log: str, reads: tuple, title: tuple = ()) -> Dialect:
    return Dialect(
        family="chain",
        title=title or ("Python 服务化部署测试", "Python serving test"),
        runners=(runner,),
        values_to_colon=True,
        script=script,
        status_log=status_log,
        reads=reads,
        # The client's name (up to `_client`) names log files, but which line holds it depends on
        # the table: the runner and the script check it (runner_lib's check reads the main table).
        matrix_roles=("serving.use_gpu", "serving.client"),
        command_roles=("serving.convert",),
    )


PADDLECLAS_SERVING_PYTHON = Layout(
    "paddleclas_serving_python",
    "PaddleClas Python serving config (14 lines, test_serving_infer_python.sh)",
    CLS_ROWS,
    _dialect("paddleclas_serving_python", SCRIPT, "results_serving.log", CLS_READS),
    read_lines=READ_LINES,
    detect=_rule("cls", False),
)

PADDLECLAS_SERVING_PYTHON_SHITU = Layout(
    "paddleclas_serving_python_shitu",
    "PaddleClas PP-ShiTu Python serving config (18 lines, test_serving_infer_python.sh)",
    SHITU_ROWS,
    _dialect("paddleclas_serving_python", SCRIPT, "results_serving.log", SHITU_READS),
    read_lines=READ_LINES,
    detect=_rule("shitu", False),
)
