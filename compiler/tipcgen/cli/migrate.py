"""`tipcgen migrate`: the switch of a model repo to tipcgen, as one reviewed step."""

from __future__ import annotations

import os
from typing import Optional

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
        False, "--accept-changes", help="With --apply: write even when the report shows CHANGED commands."
    ),
    report: Optional[str] = typer.Option(None, "--report", help="Also write the report (markdown) to this file."),
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
    config x mode, print the report; exit 1 when a command would change unexplained or a config would be lost."""
    from tipcgen.cli.common import choice, seconds
    from tipcgen.dialects import LAYOUTS
    from tipcgen.fsio import write_atomic
    from tipcgen.migrate.report import report_markdown
    from tipcgen.migrate.switch import plan_migration
    from tipcgen.spec.modes import MODES

    seconds("--timeout", timeout, most=3600)
    choice("--layout", layout, ("auto", *LAYOUTS))
    modes = tuple(mode) if mode else MODES
    for m_ in modes:
        if m_ not in MODES:
            raise UsageError(f"--mode {m_!r}: modes are {', '.join(MODES)}")
    with scripts_sandbox(no_sandbox):
        m = plan_migration(root, modes=modes, timeout=timeout, configs=configs, layout=layout, runner=runner)
    text = report_markdown(m)
    echo(text, nl=False)
    if report:
        write_atomic(report, text.encode("utf-8"))
    if apply:
        if not m.ok and not accept_changes:
            echo("tipcgen migrate: nothing written: the report shows changes (--accept-changes to write)", err=True)
            raise typer.Exit(1)
        written = _apply(m)
        echo(f"tipcgen migrate: wrote {len(written)} files; `tipcgen check` in {root} now checks them", err=True)
    if not m.ok:
        raise typer.Exit(1)


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
