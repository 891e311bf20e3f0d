"""CLI commands for prepare: `tipcgen prepare` and `tipcgen hash` (registered on the main app)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tipcgen.cli.common import app, echo, mode_option
from tipcgen.errors import UsageError


def _model_name(spec, source: str, suite: Optional[str], spec_path: Optional[str]) -> tuple[str, Optional[str]]:
    """(the model name prepare runs for, its suite): a suite's, or the one a legacy CONFIG names
    (with --spec; its suite is the one with its file name, as prepare.sh picks)."""
    from tipcgen.dialects import get_layout
    from tipcgen.inputs import read_text
    from tipcgen.lower.configview import ConfigView

    if spec_path is None:
        from tipcgen.check.spec import pick_suite

        name = pick_suite(spec, suite, source)
        return spec.suites[name].model_name, name
    if suite is not None:
        raise UsageError("--suite chooses a suite of a spec; with a CONFIG the config names the model")
    view = ConfigView.parse(read_text(source), get_layout(spec.layout))
    model_name = view.value("model_name")
    if model_name not in spec.model_names():
        raise UsageError(
            f"prepare: {source} names model {model_name!r}; {spec.source} knows: {', '.join(spec.model_names())}"
        )
    return model_name, spec.suite_of_file(Path(source).name)


@app.command()
def prepare(
    source: str = typer.Argument(..., help="A spec, or a legacy config .txt together with --spec."),
    mode: str = mode_option(),
    suite: Optional[str] = typer.Option(None, "--suite", help="Suite of the spec (default: the first)."),
    spec: Optional[str] = typer.Option(None, "--spec", help="The spec a legacy CONFIG was built from."),
    offline: bool = typer.Option(False, "--offline", help="Use only the cache (as TIPC_OFFLINE=1)."),
    cache: Optional[str] = typer.Option(
        None, "--cache", help="Cache directory (default $TIPC_CACHE or ~/.cache/tipcgen)."
    ),
    root: str = typer.Option(".", "--root", help="The model repo root (default: the current directory)."),
):
    """Fetch what MODE needs, like `bash test_tipc/prepare.sh CONFIG MODE` (same cache and files)."""
    from tipcgen.check.spec import load_spec
    from tipcgen.run.prepare import Options, run_prepare

    if spec is None and not source.endswith((".yml", ".yaml")):
        raise UsageError(f"{source}: a legacy config needs --spec SPEC (the spec it was built from)")
    loaded = load_spec(spec if spec is not None else source)
    model_name, suite_name = _model_name(loaded, source, suite, spec)
    opts = Options.from_env(offline=True if offline else None, cache=Path(cache) if cache else None)
    if not Path(root).is_dir():
        raise UsageError(f"--root {root}: no such directory")
    from tipcgen.emit.prepare import spec_modes

    modes = spec_modes([loaded])  # the modes the generated prepare.sh takes, and no other
    if mode not in modes:
        raise UsageError(f"prepare: unknown MODE {mode!r}; modes are {', '.join(modes)}")
    steps = loaded.prepare_for(suite_name, mode) if suite_name else list(loaded.prepare.get(mode, []))
    run_prepare({mode: steps}, mode, opts, Path(root), label=model_name)


@app.command("hash")
def hash_(targets: list[str] = typer.Argument(..., help="Files or http(s) URLs.")):
    """Print the sha256 and size of files or URLs, ready to paste into a spec's prepare step."""
    from tipcgen.run.prepare import Options, hash_target

    opts = Options.from_env()
    results = []
    for target in targets:
        results.append((target, *hash_target(target, opts)))
    for target, sha, size in results:
        if len(targets) > 1:
            echo(f"# {target}")
        echo(f"sha256: {sha}")
        echo(f"size: {size}")
