"""Generated docs: seed 000's structure, expected lines computed from the Plan, zh by default, en on request."""

from __future__ import annotations

from conftest import SPECS
from tipcgen.check.spec import load_spec
from tipcgen.dialects import get_layout
from tipcgen.emit.files import build_files
from tipcgen.lower.text import config_text
from tipcgen.plan.planner import plan_config


def _doc(spec_file, suite, lang="zh"):
    spec = load_spec(str(SPECS / spec_file))
    files = build_files(spec, lang)
    s = spec.suites[suite]
    return spec, s, files[f"test_tipc/docs/{s.doc_name(suite)}"].decode()


def test_fleet_doc_has_seed_structure_and_computed_lines():
    spec, suite, doc = _doc("ch_PP-OCRv3_rec.yml", "fleet")
    for heading in (
        "## 1. 测试结论汇总",
        "## 2. 测试流程",
        "修改配置文件",
        "准备数据",
        "FLAGS_START_PORT",
        "输出结果",
        "需要在所有的节点上均运行",
    ):
        assert heading in doc
    assert "| PP-OCRv3 | ch_PP-OCRv3_rec | 分布式训练 |" in doc.replace("  ", " ")
    assert "gpu_list:192.168.0.1,192.168.0.2;0,1" in doc
    layout = get_layout(spec.layout)
    plan = plan_config(config_text(suite, layout), layout, "lite_train_lite_infer")
    for step in plan.steps:
        assert " " + plan.status_line(step, True).rstrip() in doc
    assert f"共 {len(plan.steps)} 条" in doc
    assert "rec_inference.tar" in doc and "未校验" in doc  # what prepare fetches, and that it is unchecked


def test_models_fleet_doc_does_not_repeat_seed_001_stale_lines():
    _, _, doc = _doc("mobilenet_v3_small.yml", "fleet")
    assert "./log/mobilenet_v3_small" not in doc
    assert "fleet_train_gpus_0,1_autocast_False_nodes_2.log --epochs=5   --batch-size=4!" in doc


def test_english_on_request():
    _, _, doc = _doc("ch_PP-OCRv3_rec.yml", "normal", "en")
    assert "## 1. Summary" in doc and "测试" not in doc
    assert "| PP-OCRv3 | PPOCRv3_ocr_rec | normal training | normal training |" in doc.replace("  ", " ")


def test_the_autolog_report_is_shown_where_inference_runs_with_benchmark_on():
    """Seed 000 shows what `--benchmark=True` prints; the docs show its shape (AutoLog's sections,
    values left as `<...>`: they are the machine's), and only where the inference steps pass it."""
    from tipcgen.check.spec import load_spec_text

    _, _, fleet = _doc("ch_PP-OCRv3_rec.yml", "fleet")
    assert "--benchmark=True" in fleet and "AutoLog" in fleet
    for section in ("Env info", "Paddle info", "Conf info", "Model info", "Data info", "Perf info"):
        assert f" {section} " in fleet
    text = (SPECS / "ch_PP-OCRv3_rec.yml").read_text()
    off = text.replace("benchmark: {key: --benchmark, value: True}", "benchmark: {key: --benchmark, value: False}")
    assert off != text
    spec = load_spec_text(off, str(SPECS / "ch_PP-OCRv3_rec.yml"))
    doc = build_files(spec)[f"test_tipc/docs/{spec.suites['fleet'].doc_name('fleet')}"].decode()
    assert "--benchmark=False" in doc and "AutoLog" not in doc
