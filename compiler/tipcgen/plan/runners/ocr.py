"""PaddleOCR's runner at the time of seed document 000 (the default for `paddleocr` and the runner
the other OCR-family dialects share until they have their own). Status lines end `!  `, as the
seed document's expected output shows them."""

from tipcgen.plan.builder import SEED_ERA
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation
from tipcgen.plan.runners.classic import plan_classic as plan
from tipcgen.plan.steps import STATUS_BANG
from tipcgen.spec.modes import MODES

TEMPLATE = "test_train_inference_python.sh.j2"
STATUS_FORMAT = STATUS_BANG
GPU_ENTRIES_BY_LENGTH = False  # gpu_list entries read by structure (see plan/runner.py)
CLASSIC = SEED_ERA  # the classic script's version it follows (plan/runner.py)

DEVIATIONS = (
    *COMMON_DEVIATIONS,
    Deviation(
        "seed-status-lines",
        "status lines end `!  `, as seed document 000's expected output shows them",
        "the seed-era script's common_func.sh ends them ` - ${log_path} ` with no log path passed "
        "(` -  `); the seed document is the requirement",
        (r"^status: trailer ' -  ' vs '!  '$",),
    ),
)

__all__ = ["CLASSIC", "DEVIATIONS", "GPU_ENTRIES_BY_LENGTH", "MODES", "STATUS_FORMAT", "TEMPLATE", "plan"]
