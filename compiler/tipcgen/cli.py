"""The `tipcgen` command line. Thin: parse arguments, call the core, print, choose the exit code.

Exit codes: 0 ok, 1 a check/lint/run found something, 2 bad input (with a located message).
"""

from __future__ import annotations

import functools
import glob
import math
import os
import sys
from typing import List, Optional

import typer

from . import __version__
from .errors import TipcError, UsageError


def _fail(exc: TipcError) -> None:
    typer.echo(str(exc), err=True)
    raise typer.Exit(exc.exit_code)


def _clean_errors(func):
    """Run a command; a TipcError, or an OSError naming a path (a file where a directory is
    wanted, /proc, a symlink loop, an unreadable file...), becomes one message and exit 2.
    An OSError naming no path is not the user's input: it keeps its traceback."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except TipcError as exc:
            _fail(exc)
        except OSError as exc:
            if exc.filename is None:
                raise
            from .fsio import path_error

            _fail(path_error(exc))

    return wrapper


class _App(typer.Typer):
    def command(self, *args, **kwargs):
        register = super().command(*args, **kwargs)

        def decorator(func):
            register(_clean_errors(func))
            return func

        return decorator


app = _App(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
           help="Compile typed TIPC specs into PaddlePaddle's legacy test suites.")


def seconds(option: str, value: float, zero: bool = False) -> float:
    """A finite number of seconds (positive, or also 0 when `zero`), or a UsageError."""
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        raise UsageError(f"{option} must be a {'non-negative' if zero else 'positive'} number of seconds, "
                         f"not {value:g}")
    return value


def choice(option: str, value: str, allowed: tuple) -> str:
    """`value` when it is one of `allowed`, or a UsageError (never a silent default)."""
    if value not in allowed:
        which = " or ".join(allowed) if len(allowed) <= 2 else "one of " + ", ".join(allowed)
        raise UsageError(f"{option} must be {which}, not {value!r}")
    return value


def out_dir(option: str, value: str) -> str:
    if not value:
        raise UsageError(f"{option} must name a directory")
    return value


def _expand(paths: List[str]) -> List[str]:
    """Spec paths; a directory means every *.yml / *.yaml in it (sorted)."""
    out: List[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(glob.glob(os.path.join(p, "*.yml")) + glob.glob(os.path.join(p, "*.yaml")))
            if not found:
                raise UsageError(f"{p}: no *.yml specs in this directory")
            out.extend(found)
        else:
            out.append(p)
    return out


def _load_all(paths: List[str]):
    from .errors import SpecError
    from .load import load_spec

    specs, problems = [], []
    for path in _expand(paths):
        try:
            specs.append(load_spec(path))
        except SpecError as exc:
            problems.extend(exc.problems)
    if problems:
        raise SpecError(problems)
    seen = {}
    for spec in specs:
        if spec.model in seen:
            raise UsageError(f"{spec.source} and {seen[spec.model]} both describe model {spec.model!r}")
        seen[spec.model] = spec.source
    return specs


def _render_all(paths: List[str], lang: str):
    from .emit import build_files

    choice("--lang", lang, ("zh", "en"))
    return [(spec, build_files(spec, lang)) for spec in _load_all(paths)]


@app.command()
def build(specs: List[str] = typer.Argument(..., help="Spec files or directories of specs."),
          out: str = typer.Option("generated", "--out", "-o", help="Output directory."),
          lang: str = typer.Option("zh", "--lang", help="Docs language: zh (default) or en."),
          wait: float = typer.Option(10.0, "--wait", help="Seconds to wait for another build writing into "
                                     "OUT to finish before giving up.")):
    """Compile specs into OUT/<model>/test_tipc/ (configs, scripts, docs)."""
    from .fsio import BuildLock, check_destinations, remove_leftover_temps, stale_files, write_atomic

    out_dir("--out", out)
    seconds("--wait", wait, zero=True)
    rendered = _render_all(specs, lang)  # everything validated and rendered before any write
    with BuildLock(out, wait):
        roots = [check_destinations(out, spec.model, files) for spec, files in rendered]
        for (spec, files), root in zip(rendered, roots):
            for path in remove_leftover_temps(root):
                typer.echo(f"  removed {path}, a temp file left by an interrupted build", err=True)
            changed = sum(write_atomic(os.path.join(root, rel), data) for rel, data in files.items())
            typer.echo(f"{spec.source}: {len(files)} files in {root}/ ({changed} changed)")
            for path in stale_files(root, files):
                typer.echo(f"  warning: {path} is not generated by this spec any more", err=True)


@app.command()
def check(specs: List[str] = typer.Argument(..., help="Spec files or directories of specs."),
          out: str = typer.Option("generated", "--out", "-o", help="Directory the specs were built into."),
          lang: str = typer.Option("zh", "--lang", help="Docs language the tree was built with.")):
    """Exit 1 (with a unified diff) when a generated file is missing, differs or is stale."""
    from .fsio import diff_tree, leftover_temps, stale_files

    out_dir("--out", out)
    rendered = _render_all(specs, lang)
    bad = 0
    for spec, files in rendered:
        root = os.path.join(out, spec.model)
        for chunk in diff_tree(root, files):
            typer.echo(chunk, nl=False)
            bad += 1
        for path in stale_files(root, files):
            typer.echo(f"stale: {path} (not generated by {spec.source})")
            bad += 1
        for path in leftover_temps(root):
            typer.echo(f"note: {path} is a temp file left by an interrupted build; `tipcgen build` removes it",
                       err=True)
    if bad:
        typer.echo(f"tipcgen check: {bad} file(s) out of date; run `tipcgen build {' '.join(specs)}"
                   f"{'' if out == 'generated' else ' --out ' + out}`", err=True)
        raise typer.Exit(1)
    typer.echo(f"tipcgen check: {sum(len(f) for _, f in rendered)} files up to date")


@app.command()
def validate(specs: List[str] = typer.Argument(..., help="Spec files or directories of specs.")):
    """Validate specs: every problem as file:line:col with the field; exit 2 if any."""
    from .emit import check_suites, config_files

    loaded = _load_all(specs)
    for spec in loaded:
        check_suites(spec, config_files(spec))  # what the generated runner would refuse
    for spec in loaded:
        typer.echo(f"{spec.source}: ok ({len(spec.suites)} suites: {', '.join(spec.suites)})")


@app.command()
def schema(out: Optional[str] = typer.Option(None, "--out", "-o", help="Write to this file instead of stdout.")):
    """Print the JSON Schema of spec files."""
    from .schema import schema_text

    data = schema_text()
    if out:
        from .fsio import write_atomic

        write_atomic(out, data.encode("utf-8"))
    else:
        sys.stdout.write(data)


@app.command()
def plan(source: str = typer.Argument(..., help="A spec (with --suite) or a legacy config .txt."),
         mode: str = typer.Option("lite_train_lite_infer", "--mode", "-m"),
         suite: Optional[str] = typer.Option(None, "--suite", help="Suite of a spec (default: the first)."),
         layout: Optional[str] = typer.Option(None, "--layout", help="Layout of a legacy config."),
         gpuid: Optional[str] = typer.Option(None, "--gpuid", help="GPUID argument (whole_infer)."),
         fmt: str = typer.Option("text", "--format", help="text or json")):
    """Print the steps a config runs in MODE (argv, CUDA_VISIBLE_DEVICES, log)."""
    from .planning import plan_source

    choice("--format", fmt, ("text", "json"))
    result = plan_source(source, mode, suite=suite, layout=layout, gpuid=gpuid,
                         cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
                         node_ip=os.environ.get("TIPC_NODE_IP"), start_port=os.environ.get("FLAGS_START_PORT"))
    if fmt == "json":
        typer.echo(result.to_json())
        return
    for step in result.steps:
        cvd = step.cuda_visible_devices
        env = f"CUDA_VISIBLE_DEVICES={cvd} " if cvd is not None else ""
        typer.echo(f"[{step.index}] {step.kind:<6} {env}{' '.join(step.argv or ('<unsplittable>',))}")
        if step.log:
            typer.echo(f"         log: {step.log}")
    typer.echo(f"{len(result.steps)} steps; status lines -> {result.status_log}")


@app.command()
def version():
    """Print the tipcgen version."""
    typer.echo(__version__)


# Commands kept in their own modules register themselves on `app`.
from . import commands_prepare  # noqa: E402,F401  (prepare, hash)
from . import commands_run  # noqa: E402,F401  (run)
from . import commands_import  # noqa: E402,F401  (import, lint)


def main() -> None:
    app()


if __name__ == "__main__":
    # `python -m tipcgen.cli`: run the module proper, where commands_* register their commands
    # (this file, run as __main__, is a second copy of it with an app of its own).
    from tipcgen.cli import main as _main

    _main()
