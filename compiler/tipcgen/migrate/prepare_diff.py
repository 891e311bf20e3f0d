"""The prepare.sh differential: the repo's own prepare.sh (traced, importer.prepare_trace) and the
generated one (its TIPC_PREPARE_PLAN=1 listing) for one config and mode, as effects compared by
importer.prepare_steps.compare_effects: identical, faithful (named deviations) or CHANGED."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from tipcgen.fsio import copy_file, write_text
from tipcgen.importer.prepare_steps import EffectDiff, compare_effects, plan_effects, upstream_effects
from tipcgen.importer.prepare_trace import DEFAULT_TIMEOUT, trace_prepare
from tipcgen.sandbox import sandboxed_run


@dataclass
class PrepareRow:
    config: str  # the config's path relative to the repo root
    mode: str
    diff: EffectDiff
    error: Optional[str] = None  # a side that could not be run (then diff is CHANGED)


def plan_lines(tipc: Path, config_text: str, config_rel: str, mode: str, timeout: float = DEFAULT_TIMEOUT) -> list[str]:
    """The generated prepare.sh's TIPC_PREPARE_PLAN=1 lines for a config and mode (`tipc`: the
    generated test_tipc/ folder)."""
    with tempfile.TemporaryDirectory(prefix="tipcgen-plan-") as tmp:
        repo = Path(tmp) / "repo"
        (repo / "test_tipc").mkdir(parents=True)
        for name in ("prepare.sh", "common_func.sh"):
            copy_file(str(tipc / name), str(repo / "test_tipc" / name), tree=str(tipc))
        dest = repo.joinpath(*config_rel.split("/"))
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_text(str(dest), config_text)
        env = {"TIPC_PREPARE_PLAN": "1", "TIPC_CACHE": str(Path(tmp) / "cache")}
        argv = ["bash", "test_tipc/prepare.sh", config_rel, mode]
        ran = sandboxed_run(argv, scratch=Path(tmp), cwd=repo, env=env, timeout=timeout)
        if ran.timed_out:
            raise RuntimeError(f"generated prepare.sh did not finish in {timeout:g} s")
        if ran.returncode != 0:
            raise RuntimeError(f"generated prepare.sh exited {ran.returncode}: {ran.tail('stderr').strip()[-300:]}")
        if ran.dropped:
            raise RuntimeError(f"generated prepare.sh listed more than {len(ran.stdout)} bytes")
        return ran.stdout.decode("utf-8", "replace").splitlines()


def compare_prepare(
    upstream: Path,
    ours: Path,
    config_text: str,
    config_rel: str,
    mode: str,
    python: str = "",
    timeout: float = DEFAULT_TIMEOUT,
) -> PrepareRow:
    """`upstream`: the repo's prepare.sh; `ours`: the generated test_tipc/ folder; `timeout`:
    seconds each of the two runs may take."""
    try:
        trace = trace_prepare(
            upstream.parent, config_text, config_rel, mode, python=python, timeout=timeout, script=upstream.name
        )
        if trace.timed_out:
            raise RuntimeError(f"{upstream} did not finish in {timeout:g} s")
        mine = plan_lines(ours, config_text, config_rel, mode, timeout=timeout)
    except (RuntimeError, OSError) as exc:
        return PrepareRow(config_rel, mode, EffectDiff("CHANGED", []), str(exc))
    return PrepareRow(config_rel, mode, compare_effects(upstream_effects(trace.ops), plan_effects(mine)))
