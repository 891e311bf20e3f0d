"""A whole scratch model repo made like the real one, from ../shared: every script, helper and doc of
the repo's test_tipc/ (upstream/<Repo>/), its .gitignore (root.gitignore), and every corpus config of
the repo at its own path in the repo (MANIFEST.tsv's repo_path, nested folders kept)."""

from __future__ import annotations

import csv
import os
import re
import shutil
from pathlib import Path

from helpers.upstream import corpus_dir, upstream_dir

FAMILIES = ("PaddleClas", "PaddleDetection", "PaddleSeg", "PaddleVideo")


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


def whole_repo(dest: Path, repo: str, configs: int = 0, sample: bool = False) -> Path:
    """`dest` made into `repo`'s checkout (its test_tipc/ and .gitignore); `configs`: at most this
    many configs per config folder (0: all); `sample`: only one config of each kind (`kinds`)."""
    wanted = kinds(repo) if sample else None
    upstream = upstream_dir() / repo
    tipc = dest / "test_tipc"
    tipc.mkdir(parents=True)
    for path in sorted(upstream.iterdir()):
        if path.name == "root.gitignore":
            shutil.copyfile(path, dest / ".gitignore")
        elif path.is_dir():
            shutil.copytree(path, tipc / path.name)
        else:
            shutil.copy2(path, tipc / path.name)
    per_folder: dict = {}
    with open(corpus_dir() / "MANIFEST.tsv", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if not row["corpus_path"].startswith(repo + "/") or not row["repo_path"].startswith("test_tipc/configs/"):
                continue
            folder = os.path.dirname(row["repo_path"])
            per_folder[folder] = per_folder.get(folder, 0) + 1
            if (configs and per_folder[folder] > configs) or (wanted is not None and row["repo_path"] not in wanted):
                continue
            target = dest / row["repo_path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(corpus_dir() / row["corpus_path"], target)
    return dest
