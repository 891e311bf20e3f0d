"""PaddleClas's dynamic-to-static chain: the line table test_train_dy2static_python.sh reads."""

from __future__ import annotations

from typing import Optional

from tipcgen.dialects.base import SEP, Dialect, F, Layout, Row, Signature, header

# Section names the corpus uses; the script itself takes any header (it cuts the name out).
SECTIONS = ("base_train", "amp_train")


def _detect(sig: Signature) -> Optional[str]:
    from tipcgen.script.lines import header_name

    first = header_name(sig.lines[0]) if sig.lines else None
    if first in SECTIONS and sig.key(1) == "model_name" and sig.key(14) == "trainer":
        return f"a `{first}` section with `model_name:` and `trainer:` (PaddleClas test_train_dy2static_python.sh)"
    return None


# One section of a dy2static config: a train-like block of 22 lines that the script copies into a
# config of its own for test_train_inference_python.sh (the config holds one or two sections,
# `base_train` and `amp_train`, each this table). The script reads lines[1] only; the rest reaches
# the nested train runner as it is, except gpu_list (forced to 0), line 16 (the train command,
# `-o Global.print_batch_step=1` appended) and line 15 (`trainer:to_static_train` for the second run).
PADDLECLAS_DY2STATIC = Layout(
    "paddleclas_dy2static",
    "PaddleClas dynamic-to-static config (22-line sections, test_train_dy2static_python.sh)",
    (
        # The train lines' keys are the repo's own (PaddleClas `-o Global.device`, PaddleSeg
        # `--precision`, PaddleVideo `-o epochs`, tiny_rec `Global.use_gpu`): not fixed here.
        # `=== base_train ===` (or ` amp_train `): the name between blanks, as the corpus writes it
        Row("header", text=header(" base_train "), name="base_train", lint_keys=("amp_train",)),
        F("model_name", "model_name"),
        F("python", "python"),
        F("dy2static.gpu_list", "gpu_list"),
        F("dy2static.device"),
        F("dy2static.autocast"),
        F("dy2static.epochs"),
        F("dy2static.save_dir"),
        F("dy2static.batch_size"),
        F("dy2static.pretrained"),
        F("dy2static.model_file", "train_model_name"),
        F("dy2static.infer_img_dir"),
        F("dy2static.train_param1"),
        SEP,
        F("dy2static.trainer", "trainer"),
        F("dy2static.train"),  # norm_train or amp_train
        F("dy2static.pact", "pact_train"),
        F("dy2static.fpgm", "fpgm_train"),
        F("dy2static.distill", "distill_train"),
        F("dy2static.to_static"),  # to_static_train (null:null in some)
        F("dy2static.train_param2"),
        SEP,
    ),
    Dialect(
        family="chain",
        title=("动转静训练测试", "Dynamic-to-static training test"),
        runners=("paddleclas_dy2static",),  # plan/runners/dy2static.py (PADDLECLAS)
        values_to_colon=True,
        script="test_train_dy2static_python.sh",
        status_log="results_python.log",
        command_roles=("dy2static.to_static", "dy2static.train"),
        reads=(("model_name", "value", "model_name"), ("python", "value", "python")),
        extra_files=(("compare_loss.py", "compare_loss.py.j2"),),
    ),
    read_lines=22,
    detect=_detect,
)
