"""`tipcgen migrate`: the switch of a model repo to tipcgen, as one reviewed step."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Optional, TextIO

import typer

from tipcgen.cli.common import NO_SANDBOX_HELP, app, echo, scripts_sandbox
from tipcgen.errors import UsageError
from tipcgen.sandbox import DEFAULT_TIMEOUT


@app.command()
def migrate(
    root: str = typer.Argument(".", help="The model repo root (holding test_tipc/ with the repo's own scripts)."),
    apply: bool = typer.Option(
        False, "--apply", help="Write test_tipc/specs/ and the new test_tipc/ (only when nothing changes unexplained)."
    ),
    accept_changes: bool = typer.Option(
        False, "--accept-changes", help="With --apply: write even when the report shows CHANGED commands (exit 0)."
    ),
    report: Optional[str] = typer.Option(None, "--report", help="Also write the report (markdown) to this file."),
    json_out: Optional[str] = typer.Option(
        None, "--json", help="Also write the report as JSON (every row, difference, entry point, file) to this file."
    ),
    fmt: str = typer.Option("markdown", "--format", help="What to print: markdown (the report) or json."),
    mode: Optional[list[str]] = typer.Option(None, "--mode", help="Compare only these modes (repeatable)."),
    timeout: float = typer.Option(
        DEFAULT_TIMEOUT, "--timeout", help="Seconds one run of a repo's script may take (then all it started dies)."
    ),
    no_sandbox: bool = typer.Option(False, "--no-sandbox", help=NO_SANDBOX_HELP),
    configs: Optional[str] = typer.Option(
        None, "--configs", help="The repo's config folder, relative to its root (default: test_tipc/configs)."
    ),
    layout: str = typer.Option("auto", "--layout", help="auto or a layout name (as `tipcgen import --layout`)."),
    runner: Optional[str] = typer.Option(
        None, "--runner", help="One of the layout's runners (default: the one that follows the repo's script best)."
    ),
):
    """Import the repo's configs and prepare.sh, run its scripts and the generated ones side by side on every
    config x mode, print the report; exit 1 when a command would change unexplained or a config would be lost
    (with --apply --accept-changes: 0 once written). Workers: TIPC_JOBS (default: the cores); the verdicts
    are cached (TIPC_MIGRATE_CACHE=0: not), so --apply after a report of the same tree runs nothing again."""
    from tipcgen.cli.common import choice, seconds
    from tipcgen.dialects import LAYOUTS
    from tipcgen.fsio import write_atomic
    from tipcgen.migrate import cache
    from tipcgen.migrate.report import report_json, report_markdown
    from tipcgen.migrate.switch import plan_migration
    from tipcgen.spec.modes import MODES

    seconds("--timeout", timeout, most=3600)
    choice("--layout", layout, ("auto", *LAYOUTS))
    modes = tuple(mode) if mode else MODES
    for m_ in modes:
        if m_ not in MODES:
            raise UsageError(f"--mode {m_!r}: modes are {', '.join(MODES)}")
    if fmt not in ("markdown", "json"):
        raise UsageError(f"--format {fmt!r}: formats are markdown, json")
    jobs = migrate_jobs(os.environ)
    options = cache.options(modes, timeout, not no_sandbox, configs, layout, runner)
    key = cache.input_key(root, options) if _is_repo(root) else None
    m = cache.load(os.environ, key, root)
    if m is not None:
        echo(
            f"tipcgen migrate: inputs unchanged since the last report: its verdicts reused ({str(key)[:12]})", err=True
        )
    else:
        progress = Progress(sys.stderr, jobs)
        with scripts_sandbox(no_sandbox):  # (a sandbox that cannot be made: refused before any progress)
            progress.begin()
            m = plan_migration(
                root, modes=modes, jobs=jobs, timeout=timeout, progress=progress, configs=configs, layout=layout,
                runner=runner, environ=os.environ, importing=progress.importing,
            )  # fmt: skip
        progress.done()
        cache.store(os.environ, key, m)
    text = report_markdown(m)
    data = json.dumps(report_json(m), indent=1, ensure_ascii=True) + "\n"  # control characters as \u escapes
    echo(text if fmt == "markdown" else data, nl=False)
    if report:
        write_atomic(report, text.encode("utf-8"))
    if json_out:
        write_atomic(json_out, data.encode("ascii"))
    if apply:
        if not m.ok and not accept_changes:
            echo("tipcgen migrate: nothing written: the report shows changes (--accept-changes to write)", err=True)
            raise typer.Exit(1)
        written = _apply(m)
        echo(f"tipcgen migrate: wrote {len(written)} files; `tipcgen check` in {root} now checks them", err=True)
        if not m.ok:  # written as asked: the changes it accepted are in the report
            echo("tipcgen migrate: written with the CHANGED commands of the report (--accept-changes)", err=True)
        return
    if not m.ok:
        raise typer.Exit(1)


def _is_repo(root: str) -> bool:
    return os.path.isdir(os.path.join(root, "test_tipc"))


def migrate_jobs(environ) -> int:
    """Workers comparing runs side by side: TIPC_JOBS, else the cores (each run is a sandboxed bash)."""
    from tipcgen.emit.render import MAX_JOBS

    raw = environ.get("TIPC_JOBS", "")
    if not raw:
        return os.cpu_count() or 1
    if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= MAX_JOBS):
        raise UsageError(f"TIPC_JOBS={raw!r}: give a whole number of worker processes from 1 to {MAX_JOBS}")
    return int(raw)


class Progress:
    """How far the comparison is, on stderr: a bar redrawn in place on a terminal; otherwise (a CI
    log, a pipe) a line at each 10 %, so a log shows it is alive without thousands of lines."""

    WIDTH = 30

    def __init__(self, stream: TextIO, jobs: int = 0) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.jobs = jobs
        self.shown = -1  # the last tenth written (not a terminal)
        self.quarters = 0  # the last fourth of the import written (not a terminal)
        self.drawn = False
        self.start = time.monotonic()
        self.compared: Optional[float] = None  # when the comparisons began (the import done)
        self.total = 0

    def begin(self) -> None:
        """The import starts (its prepare.sh traces come first, and take a while): said on a
        terminal only, on the line the bar takes over; off one, an error stays one paragraph."""
        if self.tty:
            self.stream.write("tipcgen migrate: importing the configs and tracing prepare.sh in each mode ...")
            self.stream.flush()

    def importing(self, done: int, total: int) -> None:
        """A model imported (the traces of a whole family tree take minutes): on a terminal the
        count on the "importing" line; otherwise a line at each fourth, from the first model on."""
        if total <= 0 or self.compared is not None:
            return
        elapsed = time.monotonic() - self.start
        if self.tty:
            self.stream.write(
                f"\r\x1b[Ktipcgen migrate: importing the configs and tracing prepare.sh: {done}/{total} models,"
                f" {elapsed:.0f} s"
            )
        elif done and 4 * done // total > self.quarters:
            self.quarters = 4 * done // total
            self.stream.write(f"tipcgen migrate: imported {done} of {total} models ({elapsed:.0f} s)\n")
        self.stream.flush()

    def __call__(self, done: int, total: int) -> None:
        if self.compared is None:
            self.compared = time.monotonic()
            clear = "\r\x1b[K" if self.tty else ""  # the terminal's "importing" line, replaced
            self.stream.write(f"{clear}tipcgen migrate: imported in {self.compared - self.start:.1f} s; comparing\n")
        if total <= 0:
            self.total = total
            return
        pct = 100 * done // total
        if total != self.total:  # a later phase (the entry points) grew the total: count its tenths anew
            self.shown = min(self.shown, pct // 10)
        self.total = total
        elapsed = time.monotonic() - self.compared
        if self.tty:
            filled = self.WIDTH * done // total
            bar = "#" * filled + "." * (self.WIDTH - filled)
            self.stream.write(f"\rtipcgen migrate: [{bar}] {pct:3d}% {done}/{total} runs, {elapsed:.0f} s")
            self.drawn = True
        elif pct // 10 > self.shown:
            self.shown = pct // 10
            self.stream.write(f"tipcgen migrate: {pct}% ({done}/{total} runs compared, {elapsed:.0f} s)\n")
        self.stream.flush()

    def done(self) -> None:
        if self.drawn:
            self.stream.write("\n")
        now = time.monotonic()
        if self.compared is not None:
            self.stream.write(
                f"tipcgen migrate: {self.total} runs compared in {now - self.compared:.1f} s"
                f" ({self.jobs or os.cpu_count() or 1} workers); {now - self.start:.1f} s in all\n"
            )
        self.stream.flush()


def _apply(m) -> list[str]:
    """Write the specs and the new test_tipc/ into the repo; on any failure, restore every file as
    it was and remove the new ones. Returns the paths written."""
    from tipcgen.fsio import check_tree, write_atomic
    from tipcgen.inputs import read_bytes
    from tipcgen.migrate.gitignore import TIPC_GITIGNORE, with_lines

    files = dict(m.files)
    if m.gitignore:  # the repo's .gitignore hides generated files: shown again, after the root's rules
        own = os.path.join(m.root, *TIPC_GITIGNORE.split("/"))
        kept = read_bytes(own, 1 << 20, tree=m.root, what="a .gitignore") if os.path.lexists(own) else b""
        files[TIPC_GITIGNORE] = with_lines(kept, m.gitignore)
    check_tree(m.root, files)
    before: dict[str, Optional[bytes]] = {}
    for rel in files:
        path = os.path.join(m.root, *rel.split("/"))
        # what --apply replaces, kept to restore it on failure (check_tree refused links, FIFOs, devices)
        before[rel] = read_bytes(path, 1 << 26, tree=m.root, what="a repo file") if os.path.lexists(path) else None
    written: list[str] = []
    try:
        from tipcgen.project import MANIFEST

        for rel in [r for r in files if r != MANIFEST] + [MANIFEST]:
            write_atomic(os.path.join(m.root, *rel.split("/")), files[rel])
            written.append(rel)
    except BaseException:
        for rel in written:
            path = os.path.join(m.root, *rel.split("/"))
            old = before[rel]
            if old is None:
                os.unlink(path)
            else:
                write_atomic(path, old)
        raise
    return written
