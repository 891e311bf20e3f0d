"""Context for the generated docs: tables and expected output computed from the Spec and its Plan."""

from __future__ import annotations

from typing import Optional

from tipcgen.dialects import Layout, get_layout
from tipcgen.emit.docs_lang import translator
from tipcgen.emit.prepare import describe_steps
from tipcgen.lower.text import config_text
from tipcgen.plan.builder import gpu_entry
from tipcgen.plan.planner import mode_plans, runner_for
from tipcgen.spec.ir import Spec
from tipcgen.spec.modes import MODES
from tipcgen.spec.policy import text

# Topology kinds in the order the training table lists them.
_KINDS = ("cpu", "cpu_procs", "single", "multi", "cpu_nodes", "multinode")


def doc_context(
    spec: Spec,
    suite_name: str,
    layout: Layout,
    lang: str,
    banner: str,
    source: str,
    results: Optional[list[dict]] = None,
) -> dict:
    suite = spec.suites[suite_name]
    layout = get_layout(spec.suite_layout(suite_name))
    cfg_text = config_text(suite, layout)
    config_path = spec.config_path(suite.file)
    kinds = []
    for target in suite.topology or ():
        kind = gpu_entry(target.entry())[0]
        if kind not in kinds:
            kinds.append(kind)
    kinds.sort(key=_KINDS.index)

    devices = suite.inference_devices  # what the matrix runs (load checks docs.inference_devices agrees)
    batches = [text(v) for v in (suite.inference.batch_size.values if suite.inference.batch_size else [])]

    runner = runner_for(layout, spec.runner)
    plans = mode_plans(cfg_text, layout, spec.runner)
    lite = plans["lite_train_lite_infer"]
    expected = [" " + lite.status_line(step, True).rstrip() for step in lite.steps]
    counts = []
    for mode, plan in plans.items():
        per_kind = {k: sum(1 for s in plan.steps if s.kind == k) for k in ("train", "eval", "export", "infer")}
        counts.append((mode, len(plan.steps), per_kind))
    fleet = suite.is_fleet
    multinode = [t for t in suite.topology or () if t.nodes > 1]
    ips = multinode[0].ips if multinode else []
    return dict(
        tr=translator(lang),
        banner=banner,
        source=source,
        spec=spec,
        suite=suite,
        layout=layout,
        fleet=fleet,
        config_path=config_path,
        algorithm=spec.docs.algorithm or spec.model,
        model_name=suite.model_name,
        train_kinds=kinds,
        devices=devices,
        batches="/".join(batches) if batches else "-",
        gpu_list_example=multinode[0].entry() if multinode else suite.gpu_list,
        ips=ips,
        ips_code=[f"`{ip}`" for ip in ips],
        prepare={mode: describe_steps(spec.prepare_for(suite_name, mode), lang) for mode in MODES},
        expected=expected,
        counts=counts,
        log_dir=lite.log_dir,
        status_log=lite.status_log,
        step_logs=sorted({s.log for s in lite.steps if s.log})[:3],
        # inference with --benchmark=True: the log holds AutoLog's report; the docs show its shape
        autolog=any(a.endswith("benchmark=True") for s in lite.steps if s.kind == "infer" for a in (s.argv or ())),
        # A runner that tells gpu_list entries apart by length, as its upstream script does, says so.
        gpu_by_structure=not runner.GPU_ENTRIES_BY_LENGTH,
        bench_report=bench_report(suite.model_name, results, lang),
    )


def bench_report(model_name: str, results: Optional[list[dict]], lang: str) -> str:
    """The speed-up section of `tipcgen build --results` for this model's records ('' without)."""
    from tipcgen.emit.bench_report import section

    mine = [r for r in results or [] if r.get("model") == model_name]
    return section(mine, lang, level=3) if mine else ""
