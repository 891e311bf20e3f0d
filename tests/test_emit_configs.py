"""Emit: the specs in specs/ compile to the upstream configs byte for byte."""

from __future__ import annotations

import pytest

from conftest import SPECS
from tipcgen.check.spec import load_spec
from tipcgen.emit.files import build_files

CASES = [
    (
        "ch_PP-OCRv3_rec.yml",
        "fleet",
        "PaddleOCR/ch_PP-OCRv3_rec/train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu.txt",
    ),
    ("ch_PP-OCRv3_rec.yml", "normal", "PaddleOCR/ch_PP-OCRv3_rec/train_infer_python.txt"),
    (
        "mobilenet_v3_small.yml",
        "fleet",
        "models/tutorials/mobilenetv3_prod/Step6/mobilenet_v3_small/train_fleet_infer_python.txt",
    ),
    (
        "mobilenet_v3_small.yml",
        "normal",
        "models/tutorials/mobilenetv3_prod/Step6/mobilenet_v3_small/train_infer_python.txt",
    ),
]


@pytest.mark.parametrize("spec_file,suite,upstream", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_suite_compiles_to_upstream_bytes(corpus, spec_file, suite, upstream):
    spec = load_spec(str(SPECS / spec_file))
    files = build_files(spec)
    path = f"test_tipc/configs/{spec.model}/{spec.suites[suite].file}"
    want = (corpus / upstream).read_bytes()
    assert files[path] == want


def test_every_spec_in_repo_builds_both_languages():
    for spec_path in sorted(SPECS.glob("*.yml")):
        spec = load_spec(str(spec_path))
        zh, en = build_files(spec, "zh"), build_files(spec, "en")
        assert set(zh) == set(en)
        configs = [p for p in zh if p.endswith(".txt")]
        assert all(zh[p] == en[p] for p in configs), "configs must not depend on the docs language"
