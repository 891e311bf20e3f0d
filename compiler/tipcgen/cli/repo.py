"""`tipcgen build` / `check` with no SPEC: a model repo's specs into its own test_tipc/."""

from __future__ import annotations

import os
from typing import Optional

import typer

from tipcgen.cli.common import choice, echo
from tipcgen.errors import UsageError, printable


def _render(project, lang: Optional[str]):
    from tipcgen.check.spec import load_specs
    from tipcgen.emit.repo import repo_files
    from tipcgen.inputs import spec_paths

    if lang is not None:
        choice("--lang", lang, ("zh", "en"))
    if not os.path.isdir(project.specs_dir):
        raise UsageError(
            f"{project.specs_dir}: no such folder; put the repo's specs there (`tipcgen migrate` or "
            "`tipcgen import test_tipc/configs --out test_tipc/specs`) or name their folder in tipcgen.yml"
        )
    paths = spec_paths([project.specs_dir])
    return project, paths, repo_files(project, load_specs(paths), lang)


def build_repo(root: str, lang: Optional[str], adopt: bool, wait: float) -> None:
    from tipcgen.fsio import BuildLock, check_tree, remove_leftover_temps, write_atomic
    from tipcgen.project import MANIFEST, TIPC, load_project, plan_writes

    project, _paths, files = _render(load_project(root), lang)
    plan = plan_writes(root, files, adopt)
    # what is written and what is removed: never through a link leading out of the repo (the
    # ownership record comes with the repo, so from a pull request too)
    check_tree(root, [*files, *plan.remove, *plan.kept])
    if plan.conflicts or plan.edited:
        raise UsageError(_refusal(plan.conflicts, plan.edited))
    tipc = os.path.join(root, TIPC)
    os.makedirs(tipc, exist_ok=True)
    with BuildLock(tipc, wait):
        for path in remove_leftover_temps(tipc):
            echo(printable(f"  removed {path}, a temp file left by an interrupted build"), err=True)
        # the ownership record last: a build killed on the way leaves files the next one adopts
        order = [rel for rel in files if rel != MANIFEST] + [MANIFEST]
        changed = sum(write_atomic(os.path.join(root, *rel.split("/")), files[rel]) for rel in order)
        for rel in plan.remove:
            os.unlink(os.path.join(root, *rel.split("/")))
            echo(printable(f"  removed {rel} (generated before, no spec generates it now)"))
        for rel in plan.kept:
            echo(printable(f"  warning: {rel} is no longer generated but was edited by hand; left in place"), err=True)
        for rel in plan.unclaimed:
            echo(
                printable(
                    f"  warning: {rel} is no longer generated; the manifest claims it, but it lacks tipcgen's"
                    " banner (not a file tipcgen wrote); left in place: delete it by hand if it is not yours"
                ),
                err=True,
            )
    echo(f"{project.specs}/: {len(files)} files in {os.path.join(root, TIPC)}/ ({changed} changed)")


def _listed(rels: list[str]) -> str:
    # one paragraph (a message's newlines are escaped): the names, comma-separated
    return ", ".join(rels[:20]) + (f" ... and {len(rels) - 20} more" if len(rels) > 20 else "")


def _refusal(conflicts: list[str], edited: list[str]) -> str:
    from tipcgen.project import TIPC

    parts = []
    if conflicts:
        parts.append(
            f"{len(conflicts)} file(s) in {TIPC}/ were not written by tipcgen and differ from what it would write: "
            + _listed(conflicts)
        )
    if edited:
        parts.append(
            f"{len(edited)} file(s) in {TIPC}/ are listed in .tipcgen.manifest, but their bytes are not what tipcgen"
            " wrote there (edited by hand since, or the manifest line was not written by tipcgen): " + _listed(edited)
        )
    return (
        "; ".join(parts) + ". Nothing was written. `tipcgen migrate` shows what replacing them changes; "
        "`tipcgen build --adopt` replaces them; or delete them by hand and build again"
    )


def check_repo(root: str, lang: Optional[str], no_cache: bool) -> None:
    from tipcgen.emit.check_cache import CheckCache
    from tipcgen.fsio import diff_tree
    from tipcgen.inputs import spec_paths
    from tipcgen.project import TIPC, load_project, read_manifest

    project = load_project(root)
    cache = CheckCache.load(os.environ, enabled=not no_cache)
    paths = spec_paths([project.specs_dir]) if os.path.isdir(project.specs_dir) else []
    key = cache.repo_key(paths, project.settings, lang or project.lang, root) if paths else None
    entry = cache.hit(key, root)
    if entry is not None:
        echo(f"tipcgen check: {entry.get('files', 0)} files up to date")
        return
    project, paths, files = _render(project, lang)
    bad = 0
    for chunk in diff_tree(root, files):
        echo(chunk, nl=False)
        bad += 1
    for rel in sorted(read_manifest(root)):
        if rel not in files and os.path.lexists(os.path.join(root, *rel.split("/"))):
            echo(printable(f"stale: {rel} (tipcgen generated it; no spec does now)"))
            bad += 1
    if bad:
        echo(f"tipcgen check: {bad} file(s) in {TIPC}/ out of date; run `tipcgen build` in the repo root", err=True)
        raise typer.Exit(1)
    cache.record(key, os.path.basename(os.path.abspath(root)) or "repo", len(files), root, repo=True)
    cache.save()
    echo(f"tipcgen check: {len(files)} files up to date")
