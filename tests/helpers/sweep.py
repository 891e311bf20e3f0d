"""How much of a config x mode matrix a corpus test runs in CI's second tier.

Each run of a repo's script under the recorders costs about a hundred process starts, so CI's
time is the number of runs. By default a sweep runs:
- one config of each SHAPE (`by_shape`): configs whose text is the same once the model's name
  and every number are set aside differ only in names a script passes on as data (PaddleClas's
  500+ train configs are about 220 shapes); the first config of each shape, in sorted order;
- each of those in ONE of its runs, rotating through them (`rotate`: config n gets run n mod k),
  so every mode and GPUID variant of a sweep runs on about 1/k of each repo's shapes;
- property tests with a third to a fifth of their examples (`examples`).
The selection is the same on every machine. `TIPC_FULL_SWEEP=1` runs the whole matrix: every
config, every run, every example (benchmarks/upstream_fidelity.py --all prints the full fidelity
tables from it too)."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

_NUMBER = re.compile(r"\d+")


def full_sweep() -> bool:
    return os.environ.get("TIPC_FULL_SWEEP", "") not in ("", "0")


def rotate(n: int, runs: Sequence[T], per: int = 1) -> list[T]:
    """The runs config number `n` gets: all of them under TIPC_FULL_SWEEP, else `per` of them, in
    turn (config n the (n*per)-th and the next)."""
    if full_sweep():
        return list(runs)
    return [runs[(n * per + i) % len(runs)] for i in range(min(per, len(runs)))]


def every_kth(items: Sequence[T], k: int, offset: int = 0) -> list[T]:
    """A stratified sample (every k-th, from `offset`) for a repeated pass; all of them under
    TIPC_FULL_SWEEP."""
    return list(items) if full_sweep() else list(items[offset::k])


def examples(full: int, share: int = 3) -> int:
    """A property test's example count: `full` under TIPC_FULL_SWEEP, else a `share`-th of it."""
    return full if full_sweep() else max(1, full // share)


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{5,}")
# a value word naming a file or folder: set aside but for its extension and the words in it that
# the repo's scripts test for (`*GeneralRecognition*`, `=~ "pdparams"`)
_PATHLIKE = re.compile(r"[^\s=:,;|\[\]{}'\"]*/[^\s=:,;|\[\]{}'\"]*")


@functools.cache
def _script_words(repo: str) -> frozenset:
    """The words (6+ characters) of the repo's own scripts: the names they branch on are among them."""
    from helpers.upstream import upstream_dir

    words: set = set()
    for script in sorted((upstream_dir() / repo).rglob("*.sh")):
        words |= set(_WORD.findall(script.read_bytes().decode("utf-8", "replace")))
    return frozenset(words)


def shape(path: Path) -> str:
    """A config's text with its model's name (unless it holds a word the repo's scripts branch
    on), its paths (but for their extension and such words) and every number set aside, and the
    corpus folder it is in (a repo's configs are never one shape with another repo's)."""
    repo = path.parent.parent.name
    words = _script_words(repo)
    text = path.read_bytes().decode("utf-8", "replace")
    lines = text.replace("\r\n", "\n").split("\n")
    name = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model_name:")), "")
    if (
        name
        and not any(w in words for w in _WORD.findall(name.replace("-", "_")))
        and not any(w in name for w in words if len(w) >= 8)
    ):
        text = text.replace(name, "\0MODEL\0")

    def pathlike(match: re.Match) -> str:
        token = match.group(0)
        kept = sorted({w for w in _WORD.findall(token) if w in words})
        return f"\0PATH{kept}{os.path.splitext(token)[1]}\0"

    return f"{repo}\n{_NUMBER.sub('9', _PATHLIKE.sub(pathlike, text))}"


def by_shape(items: Sequence[T], path: Callable[[T], Path] = Path) -> list[T]:
    """The first item (in the given order) of each config shape; all of them under TIPC_FULL_SWEEP."""
    if full_sweep():
        return list(items)
    seen: set = set()
    out = []
    for item in items:
        key = shape(Path(path(item)))
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
