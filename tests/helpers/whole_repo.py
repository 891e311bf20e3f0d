"""A whole scratch model repo made like the real one, from ../shared: every script, helper and doc of
the repo's test_tipc/ (upstream/<Repo>/), its .gitignore (root.gitignore), and every corpus config of
the repo at its own path in the repo (MANIFEST.tsv's repo_path, nested folders kept)."""

from __future__ import annotations

import csv
import importlib.util
import os
import re
from pathlib import Path

from helpers.upstream import corpus_dir, upstream_dir

FAMILIES = ("PaddleClas", "PaddleDetection", "PaddleSeg", "PaddleVideo")
REPO = Path(__file__).resolve().parents[2]


def available(repo: str) -> bool:
    return (corpus_dir() / "MANIFEST.tsv").is_file() and (upstream_dir() / repo / "prepare.sh").is_file()


# The kind of a config, by its name from the first word naming a chain or a train variant on.
_KIND = re.compile(r"(?:train|model|infer|paddle2onnx|serving|ptq|pact|kl|fleet|amp|cpp|lite|jeston|dy2static).*")


def kinds(repo: str) -> set:
    """The repo-relative paths of one config of each kind (and one in a nested folder), sorted
    first: a sample with every shape of config the repo's scripts read."""
    chosen: dict = {}
    nested = None
    with open(corpus_dir() / "MANIFEST.tsv", newline="") as f:
        for row in sorted(csv.DictReader(f, delimiter="\t"), key=lambda r: r["repo_path"]):
            path = row["repo_path"]
            if not row["corpus_path"].startswith(repo + "/") or not path.startswith("test_tipc/configs/"):
                continue
            name = os.path.basename(path)
            found = _KIND.search(name)
            chosen.setdefault(found.group(0) if found else name, path)
            if nested is None and path.count("/") > 3:
                nested = path
    return set(chosen.values()) | ({nested} if nested else set())


def _builder():
    """benchmarks/migrate_repo.py's build_repo: one way to lay out a whole scratch repo."""
    spec = importlib.util.spec_from_file_location("migrate_repo", REPO / "benchmarks" / "migrate_repo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_repo


def whole_repo(dest: Path, repo: str, configs: int = 0, sample: bool = False) -> Path:
    """`dest` made into `repo`'s checkout (its test_tipc/ and .gitignore); `configs`: at most this
    many configs per config folder (0: all); `sample`: only one config of each kind (`kinds`)."""
    wanted = kinds(repo) if sample else None
    per_folder: dict = {}

    def keep(row: dict) -> bool:
        folder = os.path.dirname(row["repo_path"])
        per_folder[folder] = per_folder.get(folder, 0) + 1
        return not (configs and per_folder[folder] > configs) and (wanted is None or row["repo_path"] in wanted)

    _builder()(dest, repo, corpus_dir().parent, keep=keep, upstream_base=upstream_dir(), corpus=corpus_dir())
    return dest
