"""Rendering many specs at once (`build` and `check`): in worker processes from PARALLEL_MIN specs
on, each spec's problems collected, two specs of one model refused."""

from __future__ import annotations

import os
from dataclasses import dataclass

from tipcgen.check.spec import load_spec
from tipcgen.emit.files import build_files
from tipcgen.errors import SpecError, UsageError
from tipcgen.inputs import spec_paths

MAX_JOBS = 64  # TIPC_JOBS: worker processes of build/check


# From this many specs on, `build` and `check` load and render them in worker processes (one
# per core, at most 4): a pre-commit hook over a repo's specs should feel instant.
PARALLEL_MIN = 8


def render_specs(paths: list[str], lang: str) -> list:
    """[(spec's SpecRef, {path: text})] of every spec, in the order given; all specs' problems at once."""
    files = spec_paths(paths)
    results = _map_specs(files, lang)
    problems = [p for r in results if isinstance(r, SpecError) for p in r.problems]
    if problems:
        raise SpecError(problems)
    rendered = [r for r in results if not isinstance(r, SpecError)]
    seen: dict[str, str] = {}
    for spec, _ in rendered:
        if spec.model in seen:
            raise UsageError(f"{spec.source} and {seen[spec.model]} both describe model {spec.model!r}")
        seen[spec.model] = spec.source
    return rendered


def _map_specs(files: list[str], lang: str) -> list:
    """_load_and_render over `files`, in workers when there are many (TIPC_JOBS=1: never)."""
    import multiprocessing

    jobs = min(4, os.cpu_count() or 1)
    raw = os.environ.get("TIPC_JOBS", "")
    if raw:
        if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= MAX_JOBS):
            raise UsageError(f"TIPC_JOBS={raw!r}: give a whole number of worker processes from 1 to {MAX_JOBS}")
        jobs = int(raw)
    if len(files) < PARALLEL_MIN or jobs < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [_load_and_render(f, lang) for f in files]
    from concurrent.futures import ProcessPoolExecutor

    # fork: the workers start with everything this process imported (a fresh interpreter would
    # spend longer importing than rendering)
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(_load_and_render, files, [lang] * len(files), chunksize=4))


def _load_and_render(path: str, lang: str):
    """(the spec's name and path, its files), or the SpecError of a spec with problems (returned:
    all are reported)."""
    try:
        spec = load_spec(path)
    except SpecError as exc:
        return exc
    # what build and check use of the spec: sending the whole Spec back costs more than rendering
    return SpecRef(spec.model, spec.source), build_files(spec, lang)


@dataclass(frozen=True)
class SpecRef:
    model: str
    source: str


# Options several commands share, defined once so their names and help cannot drift apart.
