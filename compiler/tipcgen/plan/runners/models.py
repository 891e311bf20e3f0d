"""The PaddlePaddle/models tutorial runner (mobilenetv3_prod Step6, seed document 001)."""

from tipcgen.plan.model import STATUS_BANG
from tipcgen.plan.planner import plan_classic as plan
from tipcgen.plan.runners import COMMON_DEVIATIONS
from tipcgen.spec.modes import MODES

TEMPLATE = "test_train_inference_python.sh.j2"
STATUS_FORMAT = STATUS_BANG

DEVIATIONS = COMMON_DEVIATIONS

__all__ = ["DEVIATIONS", "MODES", "STATUS_FORMAT", "TEMPLATE", "plan"]
