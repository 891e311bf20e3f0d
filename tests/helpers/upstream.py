"""The upstream oracle of the tests: tipcgen.migrate.oracle (the recording harness, part of the
package: `tipcgen migrate` uses it too) with the paths of ../shared."""

from __future__ import annotations

import os
from pathlib import Path

from tipcgen.migrate.oracle import *  # noqa: F403 (the tests import the harness from here)
from tipcgen.migrate.oracle import compare as _compare
from tipcgen.migrate.oracle import corpus_name, recorded_argv, records, snapshot, write_exe  # noqa: F401

REPO = Path(__file__).resolve().parents[2]


def upstream_dir() -> Path:
    return Path(os.environ.get("TIPC_UPSTREAM", REPO.parent / "shared" / "upstream")).resolve()


def corpus_dir() -> Path:
    return Path(os.environ.get("TIPC_CORPUS", REPO.parent / "shared" / "corpus")).resolve()


def compare(config, repo, mode, gpuid=None, fail=None, *, upstream=None, **kw):  # noqa: D103
    return _compare(
        config, repo, mode, gpuid, fail, upstream=upstream if upstream is not None else upstream_dir(), **kw
    )


def train_configs(corpus: Path, repo: str) -> list[Path]:
    """The train-type configs (what test_train_inference_python.sh reads) of a repo's corpus folder
    (`repo`: an upstream folder, e.g. PaddleOCR/seed-era)."""
    from tipcgen.dialects import detect
    from tipcgen.errors import TipcError
    from tipcgen.inputs import read_bytes
    from tipcgen.script.lines import split_lines

    out = []
    for path in sorted((corpus / corpus_name(repo)).rglob("*.txt")):
        try:
            text = read_bytes(str(path), tree=str(corpus), what="a corpus config").decode("utf-8")
        except (UnicodeDecodeError, TipcError):
            continue
        name, _why = detect(split_lines(text))
        if name is not None:
            out.append(path)
    return out
