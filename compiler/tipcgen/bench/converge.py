"""The convergence verdict: did the metric reach its target within N epochs or iterations?

The curve comes from the run's log (bench/parse.py). For a metric with per-epoch summaries
(the tiny_rec trainer's `epoch: i/n, loss: x` lines, the mean over the epoch) those are used,
being what "the loss after epoch i" means; otherwise every logged value of the metric, with
the step or epoch it was logged at. Points past the limit do not count. PASS when the best
value is at or beyond `target` give or take `tolerance` (below it for `direction: min`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tipcgen.bench.parse import TrainLog
from tipcgen.spec.bench_section import Convergence


@dataclass(frozen=True)
class Point:
    at: int  # epoch or step, as `unit` says
    value: float


@dataclass(frozen=True)
class Verdict:
    passed: bool
    metric: str
    target: float
    direction: str
    tolerance: float
    unit: str  # epoch | step
    limit: int
    curve: tuple[Point, ...]
    best: Optional[Point]
    reached: Optional[Point]  # the first point meeting the target

    @property
    def word(self) -> str:
        return "PASS" if self.passed else "FAIL"

    def message(self) -> str:
        sign = "<=" if self.direction == "min" else ">="
        goal = f"{self.metric} {sign} {self.target:g}" + (f" (tolerance {self.tolerance:g})" if self.tolerance else "")
        within = f"within {self.limit} {self.unit}s"
        if self.best is None:
            return f"convergence FAIL: {goal} {within}: the log has no `{self.metric}:` values"
        best = f"best value {self.best.value:g} at {self.unit} {self.best.at}"
        if self.passed and self.reached is not None:
            return (
                f"convergence PASS: {goal} {within}: reached {self.reached.value:g} at {self.unit} "
                f"{self.reached.at}; {best}"
            )
        return f"convergence FAIL: {goal} not reached {within}: {best}"

    def curve_lines(self) -> list[str]:
        """The curve as text, one point a line, the reached point marked."""
        width = len(str(self.curve[-1].at)) if self.curve else 1
        out = []
        for p in self.curve:
            mark = "  <- target reached" if p == self.reached else ""
            out.append(f"  {self.unit} {p.at:>{width}}  {self.metric} {p.value:.6g}{mark}")
        return out

    def to_json(self) -> dict:
        from tipcgen.bench.records import thin

        return {
            "verdict": self.word,
            "metric": self.metric,
            "target": self.target,
            "direction": self.direction,
            "tolerance": self.tolerance,
            "within": {f"{self.unit}s": self.limit},
            "best_value": self.best.value if self.best else None,
            f"best_{self.unit}": self.best.at if self.best else None,
            f"reached_{self.unit}": self.reached.at if self.reached else None,
            "curve": thin([[p.at, p.value] for p in self.curve]),
        }


def curve(log: TrainLog, metric: str, unit: str) -> list[Point]:
    """The metric's points in log order, by epoch (summaries first) or by step."""
    if metric == "loss" and unit == "epoch" and log.epochs:
        return [Point(e.epoch, e.loss) for e in log.epochs]
    if metric == "loss" and unit == "step":
        return [
            Point(r.step if r.step is not None else i + 1, r.loss) for i, r in enumerate(log.ips) if r.loss is not None
        ]
    points = []
    for i, (epoch, step, value) in enumerate(log.metrics.get(metric, [])):
        at = epoch if unit == "epoch" else step
        points.append(Point(at if at is not None else i + 1, value))
    return points


def judge(conv: Convergence, log: TrainLog) -> Verdict:
    unit = "epoch" if conv.within.epochs is not None else "step"
    limit = int(conv.within.epochs if conv.within.epochs is not None else conv.within.iters or 0)
    points = tuple(p for p in curve(log, conv.metric, unit) if p.at <= limit)
    lower = conv.direction == "min"

    def meets(p: Point) -> bool:
        return p.value <= conv.target + conv.tolerance if lower else p.value >= conv.target - conv.tolerance

    best = (min if lower else max)(points, key=lambda p: p.value) if points else None
    reached = next((p for p in points if meets(p)), None)
    return Verdict(
        passed=reached is not None,
        metric=conv.metric,
        target=conv.target,
        direction=conv.direction,
        tolerance=conv.tolerance,
        unit=unit,
        limit=limit,
        curve=points,
        best=best,
        reached=reached,
    )
