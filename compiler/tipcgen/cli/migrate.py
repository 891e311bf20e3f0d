"""`tipcgen migrate`: the switch of a model repo to tipcgen, as one reviewed step."""

from __future__ import annotations

from typing import Optional

import typer

from tipcgen.cli.common import app
from tipcgen.errors import UsageError


@app.command()
def migrate(
    root: str = typer.Argument(".", help="The model repo root (holding test_tipc/ with the repo's own scripts)."),
    apply: bool = typer.Option(
        False, "--apply", help="Write test_tipc/specs/ and the new test_tipc/ (only when nothing changes unexplained)."
    ),
    accept_changes: bool = typer.Option(
        False, "--accept-changes", help="With --apply: write even when the report shows CHANGED commands."
    ),
    report: Optional[str] = typer.Option(None, "--report", help="Also write the report (markdown) to this file."),
    mode: Optional[list[str]] = typer.Option(None, "--mode", help="Compare only these modes (repeatable)."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds one run of a repo's script may take."),
):
    """Import the repo's configs and prepare.sh, run its scripts and the generated ones side by side on every
    config x mode, print the report; exit 1 when a command would change unexplained or a config would be lost."""
    from tipcgen.cli.common import seconds
    from tipcgen.fsio import write_atomic
    from tipcgen.migrate.report import report_markdown
    from tipcgen.migrate.switch import apply_migration, plan_migration
    from tipcgen.spec.modes import MODES

    seconds("--timeout", timeout, most=3600)
    modes = tuple(mode) if mode else MODES
    for m_ in modes:
        if m_ not in MODES:
            raise UsageError(f"--mode {m_!r}: modes are {', '.join(MODES)}")
    m = plan_migration(root, modes=modes, timeout=timeout)
    text = report_markdown(m)
    typer.echo(text, nl=False)
    if report:
        write_atomic(report, text.encode("utf-8"))
    if apply:
        if not m.ok and not accept_changes:
            typer.echo(
                "tipcgen migrate: nothing written: the report shows changes (--accept-changes to write)", err=True
            )
            raise typer.Exit(1)
        written = apply_migration(m)
        typer.echo(f"tipcgen migrate: wrote {len(written)} files; `tipcgen check` in {root} now checks them", err=True)
    if not m.ok:
        raise typer.Exit(1)
