"""CLI command `tipcgen status`: a directory of run records -> a static status page."""

from __future__ import annotations

import os

import typer

from tipcgen.cli.common import LANG_OPT, app, choice, echo, out_dir
from tipcgen.errors import UsageError, printable
from tipcgen.results.page import BASE_RUNS, DEFAULT_THRESHOLD, MIN_HISTORY


@app.command()
def status(
    records: list[str] = typer.Argument(
        ..., help="Run records (JSON reports of run, fleet, bench) or directories holding them, at any depth."
    ),
    out: str = typer.Option("status_site", "--out", "-o", help="Directory for the page (index.html)."),
    lang: str = LANG_OPT,
    threshold: float = typer.Option(
        DEFAULT_THRESHOLD,
        "--threshold",
        help=f"Flag a benchmark run whose value is off the median of its {BASE_RUNS} previous runs by more than "
        f"this fraction (0.1: 10 %); a run is judged once it has {MIN_HISTORY} earlier runs. Pick it above the "
        "machine's run-to-run noise (README).",
    ),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when a record was skipped or a run regressed."),
):
    """A static status page (one HTML file per language, inline CSS and SVG, no server): the
    latest state of every model x chain x mode x step, what newly fails or passes since the
    previous run, and per-benchmark trends of throughput, speed-up and efficiency with the runs
    beyond --threshold flagged. Records that cannot be read are listed and left out."""
    from tipcgen.fsio import check_tree, write_atomic
    from tipcgen.results.history import load_history
    from tipcgen.results.page import page_contexts, render_page

    choice("--lang", lang, ("zh", "en"))
    out_dir("--out", out)
    if not 0 < threshold < 1:
        raise UsageError(f"--threshold must be a fraction between 0 and 1 (0.05 for 5 %), not {threshold:g}")
    for path in records:
        if not os.path.exists(path):
            raise UsageError(f"{printable(path)}: no such file or directory")
    runs, problems = load_history(records)
    os.makedirs(out, exist_ok=True)
    pages: dict[str, bytes] = {}
    contexts = page_contexts(runs, problems, threshold, out)
    for each, ctx in contexts.items():
        pages[f"index.{each}.html"] = render_page(ctx).encode("utf-8")
    flagged = [f for f in contexts[lang]["flagged"] if f["flag"] == "regressed"]
    pages["index.html"] = pages[f"index.{lang}.html"]
    check_tree(out, list(pages))  # a link, FIFO or device at any page: refused before the first write
    for name, data in pages.items():
        write_atomic(os.path.join(out, name), data)
    for problem in problems:
        echo(f"tipc status: {problem}", err=True)
    echo(
        f"wrote {os.path.join(out, 'index.html')} ({len(pages['index.html'])} bytes): {len(runs)} runs, "
        f"{len(problems)} records skipped, {len(flagged)} regressed"
    )
    if strict and (problems or flagged):
        raise typer.Exit(1)
