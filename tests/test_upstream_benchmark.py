"""Generated benchmark_train.sh against each repo's REAL one (tests/helpers/bench_oracle.py): on
every corpus config with a `train_benchmark_params` section (found through MANIFEST.tsv, not a
pinned count), the two scripts run the same interpreter commands (argv, CUDA_VISIBLE_DEVICES, cwd)
with the same log names and results.log lines; each difference is one of the documented
deviations (tipcgen.plan.benchmark_train.DEVIATIONS, and the inner runner's). Our script also agrees
with `plan_benchmark`, the Plan `tipcgen bench` reads."""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers.bench_oracle import compare_bench
from helpers.sweep import by_shape, full_sweep
from helpers.upstream import upstream_dir
from tipcgen.dialects import detect
from tipcgen.emit.files import has_benchmark_section
from tipcgen.plan.benchmark_train import BENCH
from tipcgen.script.lines import split_lines

pytestmark = pytest.mark.corpus

# PARAMS each config is run with: the section's own lists (no PARAMS) and, in turn, one of these
# (one GPU with the profiler run, several GPUs, several nodes, dynamic-to-static, a null precision).
PARAMS = (
    "dynamic_bs8_fp32_DP_N1C1",
    "dynamic_bs16_fp16_DP_N1C8",
    "dynamicTostatic_bs8_fp32_DP_N1C1",
    "dynamic_bs4_null_DP_N4C32",
    "dynamicTostatic",
)


@pytest.fixture(scope="module")
def upstream() -> Path:
    path = upstream_dir()
    if not (path / "PaddleClas" / "benchmark_train.sh").is_file():
        if os.environ.get("TIPC_REQUIRE_CORPUS"):
            pytest.fail(f"TIPC_REQUIRE_CORPUS is set but the upstream scripts are missing at {path}")
        pytest.skip(f"upstream scripts not found at {path} (set TIPC_UPSTREAM to ../shared/upstream)")
    return path


def _bench_configs(corpus: Path) -> list:
    """(config, dialect) of every manifest config with the section, for dialects that have a
    benchmark_train.sh upstream."""
    out = []
    for row in (corpus / "MANIFEST.tsv").read_text().splitlines()[1:]:
        path = corpus / row.split("\t")[0]
        text = path.read_bytes().decode("utf-8", "replace")
        if not has_benchmark_section(text):
            continue
        dialect, _why = detect(split_lines(text))
        if dialect in BENCH and BENCH[dialect].runner is None:
            out.append((path, dialect))
    return sorted(out)


def test_every_corpus_benchmark_config_runs_what_upstream_runs(corpus, upstream):
    configs = _bench_configs(corpus)
    repos = {row.split("\t")[1] for row in (corpus / "MANIFEST.tsv").read_text().splitlines()[1:]}
    assert configs, "no corpus config has a train_benchmark_params section"
    # every dialect whose repo ships a benchmark_train.sh and has such configs is covered
    assert {d for _p, d in configs} >= {"paddleclas", "paddleseg", "paddlevideo", "paddledetection"}, repos
    # a config of each shape: every other one with one of PARAMS in turn, every third as it is
    # (TIPC_FULL_SWEEP=1: every config, both ways)
    configs = by_shape(configs, lambda c: c[0])
    plain = configs if full_sweep() else configs[::3]
    cases = [(p, d, "") for p, d in plain] + [
        (p, d, PARAMS[n % len(PARAMS)]) for n, (p, d) in enumerate(configs) if full_sweep() or n % 2 == 0
    ]

    with ThreadPoolExecutor(2) as pool:
        diffs = list(pool.map(lambda c: compare_bench(*c), cases))

    by_dialect = defaultdict(Counter)
    deviations = defaultdict(set)
    for diff in diffs:
        tally = by_dialect[diff.dialect]
        tally["runs"] += 1
        tally["identical"] += diff.identical
        tally["faithful"] += diff.faithful
        tally["commands"] += len(diff.ours.commands)
        for name in diff.explained_by():
            deviations[name].add(diff.config)
    print()
    for dialect, tally in sorted(by_dialect.items()):
        print(f"{dialect}: {dict(tally)}")
    for name, paths in sorted(deviations.items()):
        print(f"  {name}: {len(paths)} configs")
    unfaithful = [d.describe() for d in diffs if not d.faithful]
    assert not unfaithful, f"{len(unfaithful)} of {len(diffs)} runs unfaithful:\n" + "\n".join(unfaithful[:12])
    # the runs did run something: the upstream side recorded its trainers and analyses
    # The comparison is not vacuous: in most runs of each dialect upstream recorded the probe, a
    # trainer and an analysis (PaddleClas's bare `dynamicTostatic` and a trainer list without the
    # section's model type run no trainer, on both sides).
    for dialect in by_dialect:
        runs = [d for d in diffs if d.dialect == dialect]
        busy = [d for d in runs if len(d.upstream.commands) >= 3]
        assert len(busy) >= 0.8 * len(runs), (dialect, len(busy), len(runs))


# PaddleOCR's corpus configs have no section: PP-OCRv3's normal config with one in the shape
# PaddleOCR's own benchmark configs use (batch sizes, precisions, epochs, profiler, flags).
OCR_SECTION = """===========================train_benchmark_params==========================
batch_size:64|128
fp_items:fp32|fp16
epoch:1
--profiler_options:batch_range=[10,20];state=GPU;tracer_option=Default;profile_path=model.profile
flags:FLAGS_eager_delete_tensor_gb=0.0;FLAGS_fraction_of_gpu_memory_to_use=0.98;FLAGS_conv_workspace_size_limit=4096
"""


@pytest.mark.parametrize(
    "params", ["", "dynamic_bs64_fp16_DP_N1C1", "dynamic_bs128_fp32_DP_N1C8", "dynamic_bs8_fp32_DP_N2C16"]
)
def test_paddleocr_head_benchmark_runs_what_upstream_runs(corpus, upstream, tmp_path, params):
    base = corpus / "PaddleOCR" / "ch_PP-OCRv3_rec" / "train_infer_python.txt"
    config = tmp_path / "ch_PP-OCRv3_rec" / "train_infer_python.txt"
    config.parent.mkdir()
    config.write_text(base.read_text().rstrip("\n") + "\n" + OCR_SECTION)
    diff = compare_bench(config, "paddleocr", params)
    assert diff.faithful, diff.describe()
    assert len(diff.upstream.commands) >= 3, diff.describe()


@pytest.mark.parametrize("dialect", sorted(BENCH))
def test_model_branch_and_commit_come_from_git_where_upstreams_script_exports_them(upstream, dialect):
    """The benchmark tooling reads model_branch and model_commit: ours exports them from `git` where
    the repo's own benchmark_train.sh does (BenchDialect.git_env), and only there."""
    from helpers.bench_oracle import our_files
    from tipcgen.script.code import code_only

    theirs_path = upstream / BENCH[dialect].upstream / "benchmark_train.sh"
    assert theirs_path.is_file(), theirs_path
    theirs = code_only(theirs_path.read_text(encoding="utf-8", errors="replace"))
    ours = code_only(our_files(dialect)["benchmark_train.sh"].decode())
    for call in ("git symbolic-ref HEAD", "git log"):
        assert (call in ours) == (call in theirs) == BENCH[dialect].git_env, (dialect, call)
