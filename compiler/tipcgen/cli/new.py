"""`tipcgen new`: a commented starter spec for a model that has no TIPC suite yet."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from tipcgen.cli.common import app, echo
from tipcgen.errors import UsageError
from tipcgen.new.families import FAMILIES

FAMILY_HELP = f"The repo's family (layout): {', '.join(FAMILIES)}."


def _ask(what: str, given: Optional[str], prompt: str) -> str:
    """`given`, else a prompt when a person is at the terminal; a script (stdin not a tty) gets an
    error instead of a prompt that would wait for input that never comes."""
    if given:
        return given
    if not sys.stdin.isatty():
        raise UsageError(
            f"{what} is missing and stdin is not a terminal, so it cannot be asked for: pass it"
            " (`tipcgen new MODEL --family FAMILY`)"
        )
    return str(typer.prompt(prompt))


@app.command()
def new(
    model: Optional[str] = typer.Argument(None, help="The model's name (its spec is <specs>/<MODEL>.yml)."),
    family: Optional[str] = typer.Option(None, "--family", "-f", help=FAMILY_HELP),
    repo: str = typer.Option(
        ".", "--repo", help="The model repo's root (its tree is where entry points are looked for)."
    ),
    out: Optional[str] = typer.Option(
        None,
        "--out",
        "-o",
        help="The spec file to write (default: <repo>/test_tipc/specs/MODEL.yml or tipcgen.yml's specs).",
    ),
    lang: Optional[str] = typer.Option(
        None, "--lang", help="Language of the comments: zh or en (default: tipcgen.yml's, else zh)."
    ),
    force: bool = typer.Option(False, "--force", help="Replace an existing spec file."),
):
    """Write a commented starter spec for MODEL of a FAMILY repo: entry points and the model's YAML found in
    the repo's tree, the rest as TODO placeholders. Asks for MODEL and --family on a terminal when not given."""
    from tipcgen.new.starter import check_model, family_of, new_spec

    name = check_model(_ask("MODEL", model, "Model name"))
    chosen = family_of(_ask("--family", family, f"Family ({', '.join(FAMILIES)})"))
    path, found = new_spec(name, chosen.name, repo, out, lang, force)
    for role, (_text, where) in found.entries.items():
        echo(f"  {role:<6} {where or 'not found: TODO in the spec'}", err=True)
    if chosen.config_dirs:
        echo(f"  config {found.config or 'not found: TODO in the spec'}", err=True)
    for note in found.notes:
        echo(f"  note: {note}", err=True)
    echo(path)
