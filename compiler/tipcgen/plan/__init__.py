"""The Plan: the ordered steps a config implies for a mode (see planner.py).

model.py holds what a Plan is (Step, Plan, skip_reason), checks.py what the runner refuses
before planning, planner.py how a config becomes steps. `plan_source` (source.py, spec or
config file in) is imported from tipcgen.plan.source: it loads specs.
"""

from tipcgen.plan.checks import CONTROL, MAX_MATRIX, check_bytes, check_view
from tipcgen.plan.model import Plan, Step, skip_reason
from tipcgen.plan.planner import AMP_FLAGS, CPU_PROCS, gpu_entry, plan_config

__all__ = [
    "AMP_FLAGS",
    "CONTROL",
    "CPU_PROCS",
    "MAX_MATRIX",
    "Plan",
    "Step",
    "check_bytes",
    "check_view",
    "gpu_entry",
    "plan_config",
    "skip_reason",
]
