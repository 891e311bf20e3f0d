"""Many runs of the upstream oracle (helpers/upstream.py) at once, for a runner's or a chain's
upstream tests: `oracle(repo, runs)` compares (config, mode, gpuid, fail[, options]) runs on 2
threads into a `Tally` (runs, identical, faithful, the unfaithful ones described, which deviation
explained which configs and how many runs; options: compare's, e.g. the chain layout);
`compare_text` compares a config's text written where the upstream scripts expect a config."""

from __future__ import annotations

import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from helpers.sweep import examples
from helpers.upstream import CHAIN_SOURCES, chain_source_missing, compare, scripts_root, upstream_dir


@dataclass
class Tally:
    """Runs compared, identical and faithful; which deviations explained which configs."""

    runs: int = 0
    identical: int = 0
    faithful: int = 0
    unfaithful: list = field(default_factory=list)
    configs_by_deviation: dict = field(default_factory=lambda: defaultdict(set))
    runs_by_deviation: Counter = field(default_factory=Counter)
    diffs: list = field(default_factory=list)  # (run, diff), in the order of the runs

    def add(self, config: Path, diff) -> None:
        self.runs += 1
        self.identical += diff.identical
        if diff.unexplained():
            self.unfaithful.append(diff.describe()[:1500])
            return
        self.faithful += 1
        for name in diff.explained_by():
            self.configs_by_deviation[name].add(config)
            self.runs_by_deviation[name] += 1

    def report(self, title: str) -> str:
        lines = [f"{title}: {self.runs} runs, {self.identical} identical, {self.faithful} faithful"]
        lines += [f"  {name}: {len(c)} configs" for name, c in sorted(self.configs_by_deviation.items())]
        return "\n".join(lines)


def oracle(repo: str, runs: list, workers: int = 2, **options) -> Tally:
    """Compare (config, mode, gpuid, fail[, per-run options]) runs of `repo` with upstream on
    `workers` threads; `options` (and a run's own): compare's (chain=, quant_made=)."""
    scripts = scripts_root(repo)
    tally = Tally()

    def one(run):
        config, mode, gpuid, fail, *own = run
        kw = {**options, **(own[0] if own else {})}
        return run, compare(config, repo, mode, gpuid=gpuid, fail=fail, upstream=scripts, **kw)

    with ThreadPoolExecutor(workers) as pool:
        for run, diff in pool.map(one, runs):
            tally.add(run[0], diff)
            tally.diffs.append((run, diff))
    return tally


def need_upstream(script: str, repo: str = "PaddleClas") -> Path:
    """The upstream scripts' folder (../shared/upstream, TIPC_UPSTREAM; a CHAIN_SOURCES folder's:
    scripts_root's, from ../shared/chains), or a skip naming where `repo`'s `script` was looked for."""
    import pytest

    if repo in CHAIN_SOURCES:
        missing = chain_source_missing(repo, script)
        if missing:
            pytest.skip(missing)
        return scripts_root(repo)
    where = upstream_dir()
    if not (where / repo / script).is_file():
        pytest.skip(f"the upstream scripts are not at {where}")
    return where


def compare_text(repo: str, config: Path, text: str, mode: str, gpuid: Optional[str] = None, **options):
    """Upstream and the Plan on `text` as `config` (written to a scratch directory named after
    the config's own, where upstream's scripts expect it); `options`: compare's (chain=)."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / config.parent.name).mkdir()
        path = Path(tmp, config.parent.name, config.name)
        path.write_text(text, encoding="utf-8")
        return compare(path, repo, mode, gpuid=gpuid, upstream=scripts_root(repo), **options)


def replace_values(text: str, changes: dict) -> str:
    """The config's non-empty lines with the values of lines `changes` names replaced (keys kept)."""
    lines = [line for line in text.split("\n") if line]
    for index, value in changes.items():
        if index < len(lines):
            lines[index] = lines[index].split(":", 1)[0] + ":" + value
    return "\n".join(lines) + "\n"


# Mutated configs each repo's hypothesis test compares with upstream (a CI-time budget; each is a
# real run of the upstream script under the recording shims): 200 under TIPC_FULL_SWEEP.
MUTATION_EXAMPLES = examples(200, 5)


def check_mutations(
    repo: str, configs: list, values: dict, runs: list, examples: int = MUTATION_EXAMPLES, most: int = 7
) -> Tally:
    """Hypothesis: `examples` corpus configs with 1..`most` of their lines given other values
    (`values`: line index -> candidates), each in one of `runs` ((mode, gpuid) pairs), compared
    with upstream: every difference must be explained by a deviation. Returns the tally."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    tally = Tally()

    @st.composite
    def mutated(draw):
        picked = draw(st.sets(st.sampled_from(sorted(values)), min_size=1, max_size=most))
        return (
            draw(st.sampled_from(configs)),
            {i: draw(st.sampled_from(values[i])) for i in sorted(picked)},
            draw(st.sampled_from(runs)),
        )

    @settings(max_examples=examples, deadline=None)
    @given(mutated())
    def check(example):
        config, changes, (mode, gpuid) = example
        diff = compare_text(repo, config, replace_values(config.read_text(encoding="utf-8"), changes), mode, gpuid)
        tally.add(config, diff)
        assert not diff.unexplained(), f"{config.name} {changes} {mode} {gpuid}: {diff.describe()[:2000]}"

    check()
    return tally
