"""The upstream oracle of the tests: tipcgen.migrate.oracle (the recording harness, part of the
package: `tipcgen migrate` uses it too) with the paths of ../shared."""

from __future__ import annotations

import os
from pathlib import Path

from tipcgen.migrate.oracle import *  # noqa: F403 (the tests import the harness from here)
from tipcgen.migrate.oracle import _recorded_argv, _records, _snapshot, _write_exe  # noqa: F401
from tipcgen.migrate.oracle import compare as _compare

REPO = Path(__file__).resolve().parents[2]


def upstream_dir() -> Path:
    return Path(os.environ.get("TIPC_UPSTREAM", REPO.parent / "shared" / "upstream")).resolve()


def corpus_dir() -> Path:
    return Path(os.environ.get("TIPC_CORPUS", REPO.parent / "shared" / "corpus")).resolve()


def compare(config, repo, mode, gpuid=None, fail=None, *, upstream=None, **kw):  # noqa: D103
    return _compare(
        config, repo, mode, gpuid, fail, upstream=upstream if upstream is not None else upstream_dir(), **kw
    )
