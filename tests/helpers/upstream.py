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


def chains_dir() -> Path:
    """A family's chain configs and chain scripts kept apart from the corpus and upstream/
    (../shared/chains/<family>/{configs,scripts}: PaddleOCR's, at one commit): TIPC_CHAINS, by
    default TIPC_UPSTREAM's sibling `chains`."""
    return Path(os.environ.get("TIPC_CHAINS", upstream_dir().parent / "chains")).resolve()


# Upstream folders (compare's `repo`) whose scripts and configs are in chains_dir(): their chain
# scripts' folder and configs' folder there, and the helpers those scripts source (the family's
# upstream/ folder holds them: `source test_tipc/common_func.sh`).
CHAIN_SOURCES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "PaddleOCR/chains": ("PaddleOCR/scripts", "PaddleOCR/configs", ("PaddleOCR/head/common_func.sh",)),
}
_VIEWS: dict[str, Path] = {}


def chain_source_missing(repo: str, script: str = "") -> str:
    """Why `repo`'s chain scripts (and `script`) or configs cannot be read ("": they can)."""
    scripts, configs, helpers = CHAIN_SOURCES[repo]
    wanted = [chains_dir() / scripts / script, chains_dir() / configs]
    wanted += [upstream_dir() / helper for helper in helpers]
    absent = [str(path) for path in wanted if not path.exists()]
    return f"{repo}'s chain scripts/configs are not at {absent[0]} (TIPC_CHAINS, TIPC_UPSTREAM)" if absent else ""


def scripts_root(repo: str) -> Path:
    """The folder whose `repo` holds that upstream folder's scripts (compare's `upstream`): upstream_dir(),
    or for a CHAIN_SOURCES folder a scratch folder laid out like it, its scripts beside their helpers
    (made once per process, removed at exit; nothing is written in ../shared or the repo)."""
    if repo not in CHAIN_SOURCES:
        return upstream_dir()
    if repo not in _VIEWS:
        import atexit
        import shutil
        import tempfile

        scripts, _configs, helpers = CHAIN_SOURCES[repo]
        view = Path(tempfile.mkdtemp(prefix="tipc-chain-scripts-"))
        atexit.register(shutil.rmtree, view, True)
        shutil.copytree(chains_dir() / scripts, view / repo)
        for helper in helpers:
            shutil.copy2(upstream_dir() / helper, view / repo / Path(helper).name)
        _VIEWS[repo] = view
    return _VIEWS[repo]


def configs_root(repo: str) -> Path:
    """Where `repo`'s configs are: its corpus folder, or its configs in chains_dir()."""
    if repo in CHAIN_SOURCES:
        return chains_dir() / CHAIN_SOURCES[repo][1]
    return corpus_dir() / corpus_name(repo)


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
