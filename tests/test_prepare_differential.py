"""Each repo's own prepare.sh against the generated one, on its corpus configs in the 4 modes: the
same downloads, extractions, links, removals, installs and commands (identical), or different only
by a named deviation (faithful). Corpus tier; a stratified sample of each repo's config folders
(TIPC_FULL_SWEEP=1: all; benchmarks/prepare_fidelity.py prints the full table)."""

from __future__ import annotations

import pytest

from conftest import corpus_dir
from helpers.prepare_oracle import PREPARE, differential
from helpers.sweep import every_kth
from helpers.upstream import upstream_dir

pytestmark = [pytest.mark.corpus, pytest.mark.sandbox]


@pytest.mark.parametrize("repo", sorted(PREPARE))
def test_the_generated_prepare_does_what_the_repos_own_does(repo):
    corpus, upstream = corpus_dir(), upstream_dir()
    if not (corpus / repo).is_dir() or not (upstream / PREPARE[repo]).is_file():
        pytest.skip(f"{repo}: corpus or upstream prepare.sh absent")
    k = {"PaddleClas": 48, "PaddleDetection": 12, "PaddleSeg": 8, "PaddleVideo": 3}.get(repo)
    sample = (lambda groups: every_kth(groups, k, 5 % k)) if k else None
    tally = differential(corpus, upstream, repo, sample)
    assert tally.groups and tally.runs, f"{repo}: nothing compared"
    assert not tally.changed, f"{repo}: {len(tally.changed)} unexplained: {tally.changed[:3]}"
    assert tally.counts["identical"] + tally.counts["faithful"] == tally.runs
