"""The `tipcgen` command line: thin commands over the core (parse options, call, print, exit code).

`common` creates the app; each command module registers its commands on it when imported here, so
no module imports this package back (no cycle). Heavy libraries (jinja2, ruamel, httpx, paddle)
are imported inside the commands that need them, keeping `tipcgen --help` fast.
"""

from __future__ import annotations

from tipcgen.cli import (  # noqa: F401  (register their commands)
    bench,
    build,
    doctor,
    fleet,
    import_lint,
    migrate,
    new,
    plan,
    prepare,
    run,
    status,
)
from tipcgen.cli.common import app

__all__ = ["app", "main"]


def main() -> None:
    app()
