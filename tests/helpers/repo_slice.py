"""A scratch model repo made like the real one: the repo's own scripts (../shared/upstream/<repo>)
in test_tipc/, some of its corpus config folders in test_tipc/configs/."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from helpers.upstream import corpus_dir, upstream_dir

# Corpus folders of each slice: train configs with and without amp, and (PaddleClas) a folder of
# chain configs only (PP-ShiTu: cpp/serving/paddle2onnx, kept verbatim).
SLICES = {
    "PaddleClas": ("AlexNet", "CAE", "PP-ShiTu"),
    "PaddleDetection": ("ttfnet", "tood"),
    "PaddleOCR": ("ch_PP-OCRv3_rec",),
}
# Where each repo's scripts are in ../shared/upstream (PaddleOCR: today's, not the seed-era ones).
SCRIPTS = {"PaddleOCR": "PaddleOCR/head"}


def repo_slice(tmp_path: Path, repo: str) -> Path:
    corpus, upstream = corpus_dir() / repo, upstream_dir() / SCRIPTS.get(repo, repo)
    if not corpus.is_dir() or not (upstream / "prepare.sh").is_file():
        if os.environ.get("TIPC_REQUIRE_CORPUS"):
            pytest.fail(f"TIPC_REQUIRE_CORPUS is set but {corpus} or {upstream}/prepare.sh is missing")
        pytest.skip(f"{repo}: corpus or upstream scripts absent (../shared)")
    root = tmp_path / repo
    (root / "test_tipc" / "configs").mkdir(parents=True)
    for script in upstream.glob("*.sh"):
        shutil.copy(script, root / "test_tipc" / script.name)
    for folder in SLICES[repo]:
        shutil.copytree(corpus / folder, root / "test_tipc" / "configs" / folder)
    return root
