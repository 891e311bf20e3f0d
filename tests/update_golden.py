"""Regenerate the golden files of the per-dialect fixtures (tests/fixtures/<layout>/).

Every legacy config `tests/fixtures/<layout>/<stem>.txt` (hand-written, with invented models;
the folder name is the layout) has its expected outputs beside it:

    <stem>.spec.yml            what `tipcgen import <stem>.txt` writes (layout auto-detected)
    <stem>.<mode>.plan.json    `tipcgen plan <stem>.txt --layout <layout> --mode <mode> --format json`
                               for each of the four modes, with CUDA_VISIBLE_DEVICES,
                               TIPC_NODE_IP and FLAGS_START_PORT unset

tests/test_dialects.py checks them. After a deliberate change of the importer or the
planner, regenerate, then review the diff (`git diff tests/fixtures`) before committing:

    python tests/update_golden.py                 # rewrite every golden file that changed
    python tests/update_golden.py paddleseg       # only these layout folders (or config files)
    python tests/update_golden.py --check         # write nothing; exit 1 if anything is stale

A new dialect is a new folder `tests/fixtures/<layout>/` with a config or two: run this script
and the test picks the folder up. Golden files whose config is gone are deleted (reported
under --check).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tipcgen.check.source import plan_source

# ---- the tipcgen API used here (and, through this module, by the test); update when modules move
from tipcgen.importer import import_group
from tipcgen.spec.modes import MODES

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The environment `tipcgen plan` reads; the golden plans are made with all of it unset.
ENV_VARS = ("CUDA_VISIBLE_DEVICES", "TIPC_NODE_IP", "FLAGS_START_PORT")
SPEC_SUFFIX = ".spec.yml"
PLAN_SUFFIX = ".plan.json"


class GoldenError(Exception):
    """A fixture config tipcgen cannot import (the golden files cannot be made)."""


def fixture_configs(root: Path = FIXTURES) -> list[Path]:
    """Every fixture config: `<root>/<layout>/*.txt`, sorted."""
    return sorted(root.glob("*/*.txt"))


def dialect_of(config: Path) -> str:
    """The layout a fixture config is written in: the name of its folder."""
    return config.parent.name


def spec_path(config: Path) -> Path:
    return config.with_name(config.stem + SPEC_SUFFIX)


def plan_path(config: Path, mode: str) -> Path:
    return config.with_name(f"{config.stem}.{mode}{PLAN_SUFFIX}")


def import_spec_yaml(config: Path) -> str:
    """The spec YAML `tipcgen import CONFIG` writes (auto layout, verified to rebuild exactly)."""
    report = import_group([str(config)], "auto")
    if report.failures or report.yaml is None:
        reasons = "; ".join(f"{name}: {why}" for name, why in report.failures.items())
        raise GoldenError(f"{config}: tipcgen import fails: {reasons or 'no YAML produced'}")
    return report.yaml


def plan_json(config: Path, mode: str, layout: str | None = None) -> str:
    """`tipcgen plan CONFIG --layout L --mode M --format json` output, in a clean environment."""
    plan = plan_source(
        str(config),
        mode,
        layout=layout or dialect_of(config),
        gpuid=None,
        cuda_visible_devices=None,
        node_ip=None,
        start_port=None,
    )
    return plan.to_json() + "\n"  # the CLI echoes it with a newline


def expected_files(config: Path) -> dict[Path, str]:
    """Golden path -> expected text, for one fixture config."""
    files = {spec_path(config): import_spec_yaml(config)}
    for mode in MODES:
        files[plan_path(config, mode)] = plan_json(config, mode)
    return files


def golden_files(root: Path = FIXTURES) -> list[Path]:
    """Every golden file in the fixture folders (that have configs or goldens)."""
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        out.extend(sorted(p for p in folder.iterdir() if p.name.endswith(SPEC_SUFFIX) or p.name.endswith(PLAN_SUFFIX)))
    return out


def orphan_goldens(root: Path = FIXTURES) -> list[Path]:
    """Golden files no fixture config would produce (its config was renamed or removed)."""
    wanted = set()
    for config in fixture_configs(root):
        wanted.add(spec_path(config))
        wanted.update(plan_path(config, mode) for mode in MODES)
    return [p for p in golden_files(root) if p not in wanted]


def _selected(targets: list[str]) -> list[Path]:
    configs = fixture_configs()
    if not targets:
        return configs
    chosen = []
    for target in targets:
        path = Path(target)
        if path.suffix == ".txt" and path.is_file():
            chosen.append(path.resolve())
            continue
        folder = path.resolve() if path.is_dir() else FIXTURES / target
        found = [c for c in configs if c.parent == folder]
        if not found:
            raise SystemExit(
                f"update_golden: no fixture configs for {target!r} "
                f"(folders: {', '.join(sorted({dialect_of(c) for c in configs}))})"
            )
        chosen.extend(found)
    return sorted(set(chosen))


def _rel(path: Path) -> Path:
    repo = FIXTURES.parent.parent
    return path.relative_to(repo) if repo in path.parents else path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="layout folders (e.g. paddleocr) or config files; default: all")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a golden file is stale")
    args = parser.parse_args(argv)
    for var in ENV_VARS:  # plan_source gets them explicitly as None; this keeps any future reader honest
        os.environ.pop(var, None)

    stale = 0
    configs = _selected(args.targets)
    errors = 0
    for config in configs:
        try:
            expected = expected_files(config)
        except Exception as exc:  # report every broken fixture, not just the first
            errors += 1
            print(f"error: {_rel(config)}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        for path, text in expected.items():
            old = path.read_bytes().decode("utf-8") if path.exists() else None
            if old == text:
                continue
            stale += 1
            verb = "would write" if args.check else "wrote"
            print(f"{verb} {_rel(path)} ({'new' if old is None else 'changed'})")
            if not args.check:
                path.write_bytes(text.encode("utf-8"))
    if not args.targets:
        for path in orphan_goldens():
            stale += 1
            print(f"{'would delete' if args.check else 'deleted'} {_rel(path)} (its config is gone)")
            if not args.check:
                path.unlink()
    print(
        f"{len(configs)} fixture config(s), {stale} golden file(s) {'stale' if args.check else 'updated'}",
        file=sys.stderr,
    )
    if errors:
        print(
            f"{errors} fixture config(s) could not be processed (their golden files were left alone)", file=sys.stderr
        )
        return 2
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
