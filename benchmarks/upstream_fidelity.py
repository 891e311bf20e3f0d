#!/usr/bin/env python3
"""How faithfully each dialect runs what its repo's own script runs: the REAL upstream
test_train_inference_python.sh (../shared/upstream/<repo>/) against our Plan, on the corpus's
train-type configs, in the 4 modes plus whole_infer with a GPUID (tests/helpers/upstream.py).

    python benchmarks/upstream_fidelity.py [--all | --sample N] [--repo NAME ...] [--workers 2]
                                           [--json FILE] [--show K]

Prints, per upstream folder: configs x modes compared, how many are identical (commands: argv,
CUDA_VISIBLE_DEVICES and cwd of every step; fully: also the log files and results_python.log) and
faithful (every difference explained by a deliberate deviation of the runner, which are listed
with the runs and configs they explain),
the top categories of the first difference of each run (the first differing argv element
patterns), the top categories per aspect (commands, logs, status lines), and timing.
PaddleDetection has no dialect yet: its table shows what upstream ran (commands and status lines
per run) and, for orientation only, how it differs from the paddleocr dialect, the one `detect()`
reads its configs with today (--det-layout none turns that off).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))

from helpers.upstream import MODES, REPOS, compare, corpus_dir, train_configs, upstream_dir  # noqa: E402

GPUID = "1"
LABELS = [*MODES, f"whole_infer {GPUID}"]


def _sample(items: list, n: int) -> list:
    if n <= 0 or len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def _one(case):
    repo, config, mode, gpuid = case
    layout = None
    if REPOS[repo] is None and ARGS.det_layout != "none":
        layout = ARGS.det_layout
    t0 = time.perf_counter()
    try:
        diff = compare(config, repo, mode, gpuid=gpuid, fail=ARGS.fail, timeout=ARGS.timeout, layout=layout)
    except Exception as exc:  # a harness error is a result too, not a crash of the whole table
        return case, None, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0
    return case, diff, None, time.perf_counter() - t0


def _table(repo: str, results: list, wall: float, show: int) -> list:
    out = []
    configs = {r[0][1] for r in results}
    n = len(results)
    errors = [r for r in results if r[1] is None]
    diffs = [r[1] for r in results if r[1] is not None]
    up_time = sum(d.upstream.elapsed for d in diffs)
    out.append(f"== {repo}  (dialect: {REPOS[repo] or 'none: upstream only'})")
    out.append(
        f"   {len(configs)} configs x {len(LABELS)} modes = {n} runs; {wall:.1f} s wall, "
        f"upstream {up_time / max(1, len(diffs)):.2f} s/run; timeouts {sum(d.upstream.timed_out for d in diffs)}, "
        f"harness errors {len(errors)}"
    )
    for case, _d, err, _t in errors[:3]:
        out.append(f"   harness error: {case[1]} {case[2]}: {err}")
    if REPOS[repo] is None:
        out.extend(_upstream_only(results))
        if ARGS.det_layout == "none":
            return out
        out.append(f"   read with the {ARGS.det_layout} dialect (no PaddleDetection dialect yet; orientation only):")
    out.extend(_compared(results, show))
    example = next((d for d in diffs if d.first), None)
    if example:
        out.append("   example: " + example.describe().split("\n")[0][:300])
    return out


def _upstream_only(results: list) -> list:
    """What upstream ran, per mode (for a repo without a dialect)."""
    out = []
    by_mode = defaultdict(list)
    for case, d, _e, _t in results:
        if d is not None:
            by_mode[case[2] + (f" {case[3]}" if case[3] else "")].append(d.upstream)
    out.append(f"   {'mode':<26}{'runs':>6}{'cmds/run':>10}{'status/run':>12}{'no status log':>15}")
    for label in LABELS:
        ups = by_mode.get(label, [])
        if ups:
            out.append(
                f"   {label:<26}{len(ups):>6}{sum(len(u.commands) for u in ups) / len(ups):>10.1f}"
                f"{sum(len(u.status_lines) for u in ups) / len(ups):>12.1f}{sum(not u.status_logs for u in ups):>15}"
            )
    return out


def _compared(results: list, show: int) -> list:
    out = []
    diffs = [r[1] for r in results if r[1] is not None]
    out.append(
        f"   {'mode':<26}{'runs':>6}{'cmd-identical':>15}{'identical':>11}{'faithful':>10}   top unexplained difference"
    )
    by_mode = defaultdict(list)
    for case, d, _e, _t in results:
        if d is not None:
            by_mode[case[2] + (f" {case[3]}" if case[3] else "")].append(d)
    for label in LABELS:
        ds = by_mode.get(label, [])
        if not ds:
            continue
        first = Counter(d.unexplained()[0].category for d in ds if d.unexplained())
        top = first.most_common(1)[0] if first else ("-", 0)
        out.append(
            f"   {label:<26}{len(ds):>6}{sum(d.commands_identical for d in ds):>15}{sum(d.identical for d in ds):>11}"
            f"{sum(d.faithful for d in ds):>10}   {top[1]}x {top[0][:90]}"
        )
    total = len(diffs)
    out.append(
        f"   {'all':<26}{total:>6}{sum(d.commands_identical for d in diffs):>15}{sum(d.identical for d in diffs):>11}"
        f"{sum(d.faithful for d in diffs):>10}"
    )
    out.extend(_deviations(results))
    first = Counter(d.first.category for d in diffs if d.first)
    out.append(f"   first differences (top {show} of {len(first)} categories, by runs):")
    for cat, k in first.most_common(show):
        out.append(f"     {k:>5}  {cat}")
    items = Counter(i for d in diffs for x in d.differences if x.aspect == "commands" for i in set(x.items))
    if items:
        out.append(f"   first differing step, argv elements only one side has (top {show}, by runs):")
        for item, k in items.most_common(show):
            out.append(f"     {k:>5}  {item}")
    for aspect in ("commands", "logs", "status"):
        cats = Counter(x.category for d in diffs for x in d.differences if x.aspect == aspect)
        if cats:
            runs = sum(bool(d.aspect(aspect)) for d in diffs)
            out.append(f"   {aspect}: {runs} runs differ; top categories:")
            for cat, k in cats.most_common(min(show, 4)):
                out.append(f"     {k:>5}  {cat}")
    notes = sum(any("absolute" in n for n in d.notes) for d in diffs)
    if notes:
        out.append(f"   normalised: {notes} runs wrote the absolute repo root (compared as `.`)")
    return out


def _deviations(results: list) -> list:
    """Per deliberate deviation: the runs and the corpus configs whose differences it explains."""
    runs: Counter = Counter()
    configs: dict = defaultdict(set)
    for case, d, _e, _t in results:
        if d is not None:
            for name in d.explained_by():
                runs[name] += 1
                configs[name].add(case[1])
    if not runs:
        return []
    out = ["   deliberate deviations (runs / configs they explain a difference of):"]
    for name, k in runs.most_common():
        out.append(f"     {k:>5} runs {len(configs[name]):>5} configs  {name}")
        DEVIATION_COUNTS[(results[0][0][0], name)] = len(configs[name])
    return out


DEVIATION_COUNTS: dict = {}


def _markdown(records: list) -> str:
    """README's two tables: runs compared / identical / faithful per upstream folder, and every
    runner's deviations with the corpus configs whose runs they explain."""
    from helpers.upstream import RUNNERS
    from tipcgen.dialects import NAMES, get_layout
    from tipcgen.plan.planner import runner_for

    lines = ["| upstream script | runner | configs | runs | identical | faithful |", "|---|---|---|---|---|---|"]
    for repo in dict.fromkeys(r["repo"] for r in records):
        rs = [r for r in records if r["repo"] == repo]
        layout = REPOS[repo]
        runner = RUNNERS.get(repo) or (get_layout(layout).dialect.runners[0] if layout else "-")
        lines.append(
            f"| {repo} | `{runner}` | {len({r['config'] for r in rs})} | {len(rs)} | "
            f"{sum(r['identical'] for r in rs)} | {sum(r['faithful'] for r in rs)} |"
        )
    lines += ["", "| runners | deviation | what we do | why | corpus configs it explains |", "|---|---|---|---|---|"]
    rows: dict = {}  # (name, what, why) -> [runners], counts: one row for a deviation runners share
    for name in NAMES:
        default = get_layout(name).dialect.runners[0]
        for runner in get_layout(name).dialect.runners:
            repos = [repo for repo in REPOS if REPOS[repo] == name and RUNNERS.get(repo, default) == runner]
            for dev in runner_for(get_layout(name), runner).DEVIATIONS:
                row = rows.setdefault((dev.name, dev.what, dev.why), ([], [0]))
                row[0].append(f"`{runner}`")
                row[1][0] += sum(DEVIATION_COUNTS.get((repo, dev.name), 0) for repo in repos)
    for (name, what, why), (runners, (n,)) in rows.items():
        cells = [", ".join(runners), f"`{name}`", what, why, str(n) if n else "- (needs a failing step)"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="every train-type config (default: a sample)")
    parser.add_argument("--sample", type=int, default=8, help="configs per repo without --all (default 8)")
    parser.add_argument("--repo", action="append", choices=list(REPOS), help="only these upstream folders")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120, help="bound on one upstream run, seconds")
    parser.add_argument("--show", type=int, default=8, help="categories listed per repo")
    parser.add_argument("--json", help="write every run's differences to this file")
    parser.add_argument("--det-layout", default="paddleocr", help="dialect to read PaddleDetection with, or none")
    parser.add_argument("--fail", help="the recording interpreter fails commands with this in an argument")
    parser.add_argument("--markdown", help="write README's fidelity and deviation tables to this file")
    ARGS = parser.parse_args()

    corpus, upstream = corpus_dir(), upstream_dir()
    if not (corpus / "MANIFEST.tsv").is_file() or not upstream.is_dir():
        print(f"needs the corpus ({corpus}) and the upstream scripts ({upstream})", file=sys.stderr)
        return 2
    cases_by_repo = {}
    for repo in ARGS.repo or list(REPOS):
        configs = train_configs(corpus, repo)
        configs = configs if ARGS.all else _sample(configs, ARGS.sample)
        cases_by_repo[repo] = [
            (repo, str(c), m, g) for c in configs for m, g in [(m, None) for m in MODES] + [("whole_infer", GPUID)]
        ]
    print(
        f"upstream fidelity: {sum(len(c) for c in cases_by_repo.values())} runs, {ARGS.workers} workers, "
        f"{'all configs' if ARGS.all else f'sample of {ARGS.sample} configs per repo'}"
    )
    records = []
    t_all = time.perf_counter()
    with ThreadPoolExecutor(ARGS.workers) as pool:
        for repo, cases in cases_by_repo.items():
            t0 = time.perf_counter()
            results = list(pool.map(_one, cases))
            print("\n".join(_table(repo, results, time.perf_counter() - t0, ARGS.show)), flush=True)
            print()
            for case, d, err, t in results:
                records.append(
                    {
                        "repo": repo,
                        "config": os.path.relpath(case[1], corpus),
                        "mode": case[2],
                        "gpuid": case[3],
                        "seconds": round(t, 3),
                        "error": err,
                        "identical": bool(d and d.identical),
                        "commands_identical": bool(d and d.commands_identical),
                        "faithful": bool(d and d.faithful),
                        "differences": [vars(x) for x in d.differences] if d else [],
                        "notes": d.notes if d else [],
                        "upstream_commands": len(d.upstream.commands) if d else None,
                    }
                )
    print(f"total {time.perf_counter() - t_all:.1f} s")
    if ARGS.markdown:
        Path(ARGS.markdown).write_text(_markdown(records), encoding="utf-8")
    if DEVIATION_COUNTS:
        print("\ndeliberate deviations, corpus configs each touches (README table):")
        for (repo, name), k in sorted(DEVIATION_COUNTS.items()):
            print(f"  {repo:<20} {name:<32} {k}")
    if ARGS.json:
        Path(ARGS.json).write_text(json.dumps(records, indent=1, ensure_ascii=False))
    return 0


ARGS: argparse.Namespace

if __name__ == "__main__":
    raise SystemExit(main())
