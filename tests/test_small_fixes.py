"""Small defects a new user met (issue 22, point 3), each pinned by a test that failed before."""

from __future__ import annotations

from tipcgen.fleet.run import _before_the_suite
from tipcgen.fleet.session import NodeRun


def _prep(returncode=None, stopped=None) -> NodeRun:
    run = NodeRun(node=None, argv=[], token="t", out_path="")  # type: ignore[arg-type]
    run.returncode, run.stopped = returncode, stopped
    return run


def test_a_node_stopped_because_another_failed_in_prepare_is_stopped_not_failed():
    reason = "prepare: node 127.0.0.2 failed (exit 1)"
    assert _before_the_suite(_prep(1), reason) == ("failed", "prepare failed on this node (exit 1)")
    state, why = _before_the_suite(_prep(None, stopped="node 127.0.0.2 failed (exit 1)"), reason)
    assert state == "stopped" and why.startswith("stopped during prepare: node 127.0.0.2 failed")
    state, why = _before_the_suite(_prep(0), reason)
    assert state == "stopped" and "prepare passed here" in why


def test_progress_lines_and_the_summary_table_number_steps_alike():
    import io

    from rich.console import Console

    from conftest import REPO
    from tipcgen.check.source import plan_source
    from tipcgen.cli.run import _event_printer, _results_table
    from tipcgen.run.executor import StepResult

    config = REPO / "tests/fixtures/paddleclas/toy_cls_a_train_infer_python.txt"
    plan = plan_source(str(config), "lite_train_lite_infer")
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    first = plan.steps[0]
    _event_printer(console, plan)("end", first, StepResult(first, "passed", 0, 1.0))
    console.print(_results_table(plan, [StepResult(s, "passed", 0, 1.0) for s in plan.steps]))
    text = out.getvalue()
    progress = text.splitlines()[0]
    assert progress.lstrip().startswith(f"[ 1/{len(plan.steps)}]") or progress.startswith(f"[1/{len(plan.steps)}]")
    rows = [line for line in text.splitlines() if " train " in line and "passed" in line][1:]
    assert rows and rows[0].split()[1] == "1", rows[0]  # the table's first step is 1 too


def test_the_bench_table_keeps_every_run_name_whole_in_a_narrow_log():
    import io

    from rich.console import Console

    from tipcgen.cli.bench import _summary

    names = [f"tiny_rec_normal_sp_bs{bs}_fp32_dp1_{i}" for i, bs in enumerate((8, 16, 32))]
    record = dict(status="passed", ips=1.0, trainer_samples_per_s=1.0, step_time=0.1, convergence_value=0.5)
    out = io.StringIO()
    _summary([dict(record, run_id=n, peak_rss_mb=100.0) for n in names], Console(file=out, width=80, color_system=None))
    rows: list[str] = []
    for line in out.getvalue().splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) > 1:
            if cells[1]:  # a row starts where its status is
                rows.append("")
            rows[-1] += cells[0]
    assert rows == names, out.getvalue()
