"""CLI commands `tipcgen import` and `tipcgen lint` (registered on the main app)."""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Optional

import typer

from tipcgen.cli.common import NO_SANDBOX_HELP, app, choice, echo, out_dir, scripts_sandbox, seconds
from tipcgen.errors import UsageError, printable
from tipcgen.sandbox import DEFAULT_TIMEOUT


def _spec_file_name(name: Optional[str], out: str) -> str:
    """The spec file for model `name`: one plain file name inside `out`, or a UsageError."""
    if (
        not name
        or "/" in name
        or "\\" in name
        or name in (".", "..")
        or name.startswith(".")
        or any(ord(c) < 0x20 for c in name)
    ):
        raise UsageError(
            f"model name {name!r} does not make a plain file name; refusing to write outside {out}/ (pass --model NAME)"
        )
    return os.path.join(out, f"{name}.yml")


def _check_import_options(
    configs: list[str], layout: str, out: str, model: Optional[str], report: bool, fmt: str
) -> None:
    from tipcgen.dialects import LAYOUTS

    choice("--format", fmt, ("text", "json"))
    choice("--layout", layout, ("auto", "raw", *LAYOUTS))
    if fmt != "text" and not report:
        raise UsageError("--format chooses the --report format; add --report")
    out_dir("--out", out)
    if model is not None:
        _spec_file_name(model, out)
    for path in configs:
        if not os.path.lexists(path):
            raise UsageError(f"{path}: no such file or directory")


@app.command("import")
def import_(
    configs: list[str] = typer.Argument(..., help="Legacy config .txt files or folders of them."),
    layout: str = typer.Option("auto", "--layout", help="auto, raw or a layout name."),
    out: str = typer.Option("specs", "--out", "-o", help="Directory for the spec files."),
    model: Optional[str] = typer.Option(None, "--model", help="Spec model name (one directory only)."),
    report: bool = typer.Option(False, "--report", help="Only report what round-trips; write nothing."),
    fmt: str = typer.Option("text", "--format", help="Report format: text or json."),
    prepare: str = typer.Option(
        "auto",
        "--prepare",
        help="The repo's prepare.sh, traced for every config and mode into the specs' `prepare` sections;"
        " auto: test_tipc/prepare.sh of the repo the configs are in; none: leave `prepare` empty.",
    ),
    schema: str = typer.Option(
        "../generated/spec.schema.json",
        "--schema",
        help="What the specs' `$schema` line points at (in a repo: ../spec.schema.json).",
    ),
    timeout: float = typer.Option(
        DEFAULT_TIMEOUT,
        "--timeout",
        help="Seconds one run of the repo's prepare.sh (per config and mode) may take (then all it started is killed).",
    ),
    no_sandbox: bool = typer.Option(False, "--no-sandbox", help=NO_SANDBOX_HELP),
):
    """Import legacy configs into specs: one spec per model directory, verified to rebuild byte for byte."""
    from tipcgen.fsio import write_atomic
    from tipcgen.importer import config_groups, distinct_models, import_groups, repo_family

    seconds("--timeout", timeout, most=3600)
    _check_import_options(configs, layout, out, model, report, fmt)
    groups = config_groups(configs)
    if not groups:
        raise UsageError("no .txt configs found")
    if model and len(groups) > 1:
        raise UsageError("--model names one spec; these configs are in several directories")
    reports = import_groups(list(groups.values()), layout, model)
    if report:
        _print_report(reports, fmt)
        raise typer.Exit(0 if all(not r.failures for r in reports) else 1)
    # A bad config costs only itself: its directory's other configs are imported without it.
    skipped: dict = {}
    family = repo_family(reports)
    kept = [_without_bad_files(r, paths, layout, model, skipped, family) for r, paths in zip(reports, groups.values())]
    reports = distinct_models([k for k in kept if k is not None], layout, family)
    reports = _with_prepare(reports, prepare, schema, timeout, no_sandbox)
    paths = [_spec_file_name(r.model, out) for r in reports]  # every name checked before anything is written
    for r, path in zip(reports, paths):
        assert r.yaml is not None  # only reports without failures reach here
        write_atomic(path, r.yaml.encode("utf-8"))
        layouts = ", ".join(sorted(set(r.layouts.values())))
        echo(printable(f"{path}: {r.files} config(s) from {r.directory} ({layouts})"))
    for file, reason in skipped.items():
        echo(printable(f"{file}: error: {reason}"), err=True)
    if skipped and not paths:
        echo("tipcgen import: nothing written (no config round-trips exactly)", err=True)
        raise typer.Exit(2)
    if skipped:
        echo(
            f"tipcgen import: skipped {len(skipped)} config(s) that do not round-trip exactly; "
            f"wrote {len(paths)} spec(s)",
            err=True,
        )
        raise typer.Exit(1)


def _with_prepare(reports: list, prepare: str, schema: str, timeout: float, no_sandbox: bool) -> list:
    """Each report with its spec's `prepare` traced from the repo's prepare.sh (see --prepare), in
    the sandbox (or for real: --no-sandbox); nothing runs without a script."""
    import contextlib
    from pathlib import Path

    from tipcgen.importer.prepare_import import check_prepare_script, find_prepare

    if prepare == "none":
        script = None
    elif prepare == "auto":
        script = find_prepare([p for r in reports for p in (r.result.sources.values() if r.result else ())])
        if script is None:
            echo(
                "warning: no test_tipc/prepare.sh next to these configs: the specs' `prepare` sections are empty"
                " (their prepare.sh fetches nothing); give the repo's script with --prepare PATH",
                err=True,
            )
    else:
        script = Path(prepare)
        if not os.path.lexists(script):
            raise UsageError(f"--prepare {prepare}: no such file")
        check_prepare_script(prepare)  # a regular text file inside its folder (a link leading out: no)
    out = []
    with scripts_sandbox(no_sandbox) if script is not None else contextlib.nullcontext():
        for r in reports:
            out.append(_one_prepare(r, script, schema, timeout))
    return out


def _one_prepare(r, script, schema: str, timeout: float):
    """One report with its `$schema` line, and its prepare sections when there is a script."""
    import dataclasses

    from tipcgen.importer.prepare_import import add_prepare
    from tipcgen.importer.yaml_out import spec_yaml

    if schema != "../generated/spec.schema.json" and r.result is not None:
        r = dataclasses.replace(r, yaml=spec_yaml(r.result, r.result.findings, schema))
    if script is None or r.result is None or not r.result.spec.get("suites"):
        return r
    r, found = add_prepare(r, script, timeout=timeout, schema=schema)
    for failure in found.failures:
        echo(printable(f"{r.model}: warning: prepare: {failure}"), err=True)
    if found.untyped:
        echo(
            printable(
                f"{r.model}: prepare: {len(found.untyped)} command(s) kept as `run` steps (review them): "
                + "; ".join(found.untyped[:5])
                + (" ..." if len(found.untyped) > 5 else "")
            ),
            err=True,
        )
    return r


def _without_bad_files(report, paths: list, layout: str, model: Optional[str], skipped: dict, family=None):
    """(report, its configs) when it has no failures; else the directory imported without its bad
    configs (each found by importing it alone), which go to `skipped` with their reason; None when
    none is left."""
    from tipcgen.importer import import_group

    if not report.failures:
        return report, paths
    good = []
    for path in paths:
        alone = import_group([path], layout, model)
        if alone.failures:
            skipped[path] = next(iter(alone.failures.values()))
        else:
            good.append(path)
    if not good:
        return None
    again = import_group(good, layout, model, family)
    if again.failures:  # fine alone, not together: skip the directory, naming why
        for name, reason in again.failures.items():
            skipped[os.path.join(again.directory, name)] = reason
        return None
    return again, good


def _print_report(reports, fmt: str) -> None:
    total = sum(r.files for r in reports)
    exact = sum(r.exact for r in reports)
    by_layout = Counter(k for r in reports for k in r.layouts.values())
    if fmt == "json":
        echo(
            json.dumps(
                {
                    "files": total,
                    "exact": exact,
                    "rate": exact / total if total else 1.0,
                    "layouts": dict(sorted(by_layout.items())),
                    "failures": {os.path.join(r.directory, f): why for r in reports for f, why in r.failures.items()},
                },
                indent=2,
            ),
            json=True,
        )
        return
    echo(
        f"{exact}/{total} configs round-trip exactly ({100 * exact / total if total else 100:.1f} %) "
        f"in {len(reports)} model directories"
    )
    echo(printable("layouts: " + ", ".join(f"{k} {v}" for k, v in sorted(by_layout.items()))))
    for r in reports:
        for name, why in r.failures.items():
            echo(printable(f"  not exact: {os.path.join(r.directory, name)}: {why}"))


@app.command()
def lint(
    paths: list[str] = typer.Argument(..., help="Config .txt files, spec .yml files, or folders."),
    layout: str = typer.Option("auto", "--layout", help="Layout of the configs (auto or a name)."),
    fmt: str = typer.Option("text", "--format", help="text or json"),
    baseline: Optional[str] = typer.Option(
        None, "--baseline", help="Accepted findings (written by --write-baseline): only new ones are reported."
    ),
    write_baseline: Optional[str] = typer.Option(
        None, "--write-baseline", help="Write every current finding to this file as accepted, and exit 0."
    ),
):
    """Report defects in legacy configs and specs; exit 1 when an error-level finding exists."""
    from tipcgen.check.lint_paths import _walk, lint_paths
    from tipcgen.dialects import LAYOUTS
    from tipcgen.lint.rules import ERROR, findings_json

    choice("--format", fmt, ("text", "json"))
    choice("--layout", layout, ("auto", *LAYOUTS))
    if baseline and write_baseline:
        raise UsageError("--baseline reads accepted findings, --write-baseline writes them: give one")
    if not _walk(paths):
        raise UsageError(f"{' '.join(paths)}: no config .txt or spec .yml files to lint")
    findings = lint_paths(paths, layout)
    if write_baseline:
        from tipcgen.fsio import write_atomic
        from tipcgen.lint.baseline import baseline_text

        write_atomic(write_baseline, baseline_text(findings, write_baseline).encode("utf-8"))
        echo(f"{write_baseline}: {len(findings)} finding(s) accepted; `tipcgen lint --baseline {write_baseline}`")
        raise typer.Exit(0)
    accepted = fixed = 0
    if baseline:
        from tipcgen.lint.baseline import apply_baseline, read_baseline

        findings, accepted, fixed = apply_baseline(findings, read_baseline(baseline), baseline)
    if fmt == "json":
        echo(findings_json(findings), json=True)
    else:
        for f in findings:
            echo(f.render())
        counts = Counter(f.severity for f in findings)
        new = "new " if baseline else ""
        echo(f"{counts['error']} {new}error(s), {counts['warning']} {new}warning(s), {counts['info']} {new}note(s)")
        if baseline:
            echo(f"{accepted} baselined finding(s) remain in {baseline}; {fixed} fixed since it was written")
    raise typer.Exit(1 if any(f.severity == ERROR for f in findings) else 0)
