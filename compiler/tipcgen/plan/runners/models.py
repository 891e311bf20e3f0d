"""The PaddlePaddle/models tutorial runner (mobilenetv3_prod Step6, seed document 001)."""

from tipcgen.plan.builder import SEED_ERA
from tipcgen.plan.runner import COMMON_DEVIATIONS
from tipcgen.plan.runners.classic import plan_classic as plan
from tipcgen.plan.steps import STATUS_BANG
from tipcgen.spec.modes import MODES

TEMPLATE = "test_train_inference_python.sh.j2"
STATUS_FORMAT = STATUS_BANG
GPU_ENTRIES_BY_LENGTH = False  # gpu_list entries read by structure (see plan/runner.py)
CLASSIC = SEED_ERA  # the classic script's version it follows (plan/runner.py)

DEVIATIONS = COMMON_DEVIATIONS

__all__ = ["CLASSIC", "DEVIATIONS", "GPU_ENTRIES_BY_LENGTH", "MODES", "STATUS_FORMAT", "TEMPLATE", "plan"]
