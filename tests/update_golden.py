"""Regenerate the golden files of the per-dialect fixtures (tests/fixtures/<folder>/).

Every legacy config `tests/fixtures/<folder>/<stem>.txt` (hand-written, with invented models) has
its expected outputs beside it. The folder says which dialect the configs are written in and which
runner they are planned and built with:

    <layout>/              the layout (a name of tipcgen.dialects.LAYOUTS, or of another chain's
                           layout, tipcgen.dialects.chains.CHAIN_LAYOUTS), its default runner
    <layout>.<runner>/     that layout with one of its other runners (e.g. paddleocr.ocr_head/):
                           the spec says `runner: <runner>`, plans use `--runner <runner>`

The golden files of `<stem>.txt`:

    <stem>.spec.yml            what `tipcgen import <stem>.txt` writes (layout auto-detected), with
                               a `runner: <runner>` line after `layout:` for a <layout>.<runner> folder
    <stem>.<mode>.plan.json    `tipcgen plan <stem>.txt --layout <layout> [--runner <runner>] --mode <mode>
                               --format json` for each mode its runner takes (a train layout: the
                               four; a chain: its own, e.g. cpp_infer), with CUDA_VISIBLE_DEVICES,
                               TIPC_NODE_IP and FLAGS_START_PORT unset
    <stem>.<script>.sh         each bash script `tipcgen build <stem>.spec.yml` writes to test_tipc/:
                               <stem>.test_train_inference_python.sh, <stem>.common_func.sh
                               and, when the config has a train_benchmark_params
                               section and the dialect (and runner) has one, <stem>.benchmark_train.sh;
                               for a chain's configs, its own script only, once per folder (the
                               first config's, e.g. <stem>.test_inference_cpp.sh): it reads its config
                               when it runs, so the others' differ in their banner only (checked).
                               Per config, not per folder: the runner's limits table names the
                               config file and every script's banner names its spec.

tests/test_dialects.py checks them. After a deliberate change of the importer, the planner or the
emitters (templates/), regenerate, then review the diff (`git diff tests/fixtures`) before
committing:

    python tests/update_golden.py                 # rewrite every golden file that changed
    python tests/update_golden.py paddleseg       # only these fixture folders (or config files)
    python tests/update_golden.py --check         # write nothing; exit 1 if anything is stale

A new dialect (or runner) is a new folder `tests/fixtures/<layout>[.<runner>]/` with a config or
two: run this script and the tests pick the folder up. Golden files whose config is gone, and
scripts a config's build no longer writes, are deleted (reported under --check). The builds are
checked to be deterministic: each spec is built twice and must give the same bytes.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Optional

# ---- the tipcgen API used here (and, through this module, by the test); update when modules move
from tipcgen.check.source import plan_source
from tipcgen.check.spec import load_spec_text
from tipcgen.dialects import LAYOUTS
from tipcgen.dialects.chains import CHAIN_LAYOUTS, chain_family, chain_of_text
from tipcgen.emit.files import build_files
from tipcgen.importer import import_group
from tipcgen.plan.registry import RUNNERS
from tipcgen.spec.modes import MODES

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The environment `tipcgen plan` reads; the golden plans are made with all of it unset.
ENV_VARS = ("CUDA_VISIBLE_DEVICES", "TIPC_NODE_IP", "FLAGS_START_PORT")
SPEC_SUFFIX = ".spec.yml"
PLAN_SUFFIX = ".plan.json"
SCRIPT_SUFFIX = ".sh"
SCRIPT_DIR = "test_tipc/"  # the build's bash scripts: test_tipc/<name>.sh (not configs/ or docs/)
# prepare.sh is the model's (its downloads), not the dialect's: tests/test_prepare.py covers it.
NOT_GOLDEN = ("prepare.sh",)
RUNNER_SEP = "."  # <layout>.<runner>
# Every layout a fixture folder may name: the train layouts and the other chains' (never one name
# for two: tests/test_dialects.py).
ALL_LAYOUTS = {**LAYOUTS, **CHAIN_LAYOUTS}


class GoldenError(Exception):
    """A fixture config tipcgen cannot import or build (the golden files cannot be made)."""


def fixture_configs(root: Path = FIXTURES) -> list[Path]:
    """Every fixture config: `<root>/<folder>/*.txt`, sorted."""
    return sorted(root.glob("*/*.txt"))


def fixture_folders(root: Path = FIXTURES) -> list[str]:
    """The names of the folders holding fixture configs."""
    return sorted({config.parent.name for config in fixture_configs(root)})


def split_folder(name: str) -> tuple[str, Optional[str]]:
    """(layout, runner or None for the layout's default) a fixture folder's name stands for."""
    layout, _, runner = name.partition(RUNNER_SEP)
    return layout, runner or None


def dialect_of(config: Path) -> str:
    """The layout a fixture config is written in: its folder's name, up to a dot."""
    return split_folder(config.parent.name)[0]


def runner_of(config: Path) -> Optional[str]:
    """The runner a fixture config is planned and built with: its folder's name after the dot,
    or None (the layout's default runner)."""
    return split_folder(config.parent.name)[1]


def folder_runner(name: str) -> str:
    """The runner a fixture folder covers (named, or its layout's default)."""
    layout, runner = split_folder(name)
    return runner or ALL_LAYOUTS[layout].dialect.runners[0]


def is_chain(config: Path) -> bool:
    """Whether a fixture config is written in another chain's layout (not a train layout)."""
    return dialect_of(config) in CHAIN_LAYOUTS


def chain_first(config: Path) -> Path:
    """The config of a chain's fixture folder whose build holds the folder's golden script."""
    return min(c for c in fixture_configs(config.parent.parent) if c.parent == config.parent)


def modes_of(config: Path) -> tuple[str, ...]:
    """The modes a fixture config is planned in: the four train modes, or its chain's own."""
    if not is_chain(config):
        return MODES
    return tuple(RUNNERS[folder_runner(config.parent.name)].MODES)


def fixture_id(config: Path) -> str:
    return f"{config.parent.name}/{config.stem}"


def spec_path(config: Path) -> Path:
    return config.with_name(config.stem + SPEC_SUFFIX)


def plan_path(config: Path, mode: str) -> Path:
    return config.with_name(f"{config.stem}.{mode}{PLAN_SUFFIX}")


def script_path(config: Path, script: str) -> Path:
    """The golden of the build's test_tipc/<script> (e.g. prepare.sh): `<stem>.<script>`."""
    return config.with_name(f"{config.stem}.{script}")


def script_owner(path: Path) -> str:
    """The config stem a golden script belongs to: `<stem>.<script>.sh` (script names have no dot)."""
    return path.name[: -len(SCRIPT_SUFFIX)].rpartition(".")[0]


def with_runner(spec_text: str, runner: Optional[str]) -> str:
    """The imported spec with `runner: <runner>` after its top-level `layout:` line."""
    if runner is None:
        return spec_text
    out, n = re.subn(r"^(layout: [^\n]*\n)", rf"\g<1>runner: {runner}\n", spec_text, count=1, flags=re.M)
    if n != 1:
        raise GoldenError(f"the imported spec has no top-level `layout:` line to put `runner: {runner}` after")
    return out


def import_spec_yaml(config: Path) -> str:
    """The spec YAML `tipcgen import CONFIG` writes (auto layout, verified to rebuild exactly),
    with the folder's runner."""
    report = import_group([str(config)], "auto", family=chain_family(dialect_of(config)) if is_chain(config) else None)
    if report.failures or report.yaml is None:
        reasons = "; ".join(f"{name}: {why}" for name, why in report.failures.items())
        raise GoldenError(f"{config}: tipcgen import fails: {reasons or 'no YAML produced'}")
    return with_runner(report.yaml, runner_of(config))


def plan_json(config: Path, mode: str, layout: Optional[str] = None, runner: Optional[str] = None) -> str:
    """`tipcgen plan CONFIG --layout L [--runner R] --mode M --format json` output, in a clean
    environment (layout and runner: the folder's unless given; a chain's config is planned as
    users plan it, without --layout: its content and name say which chain it is)."""
    plan = plan_source(
        str(config),
        mode,
        layout=layout or _plan_layout(config),
        gpuid=None,
        cuda_visible_devices=None,
        node_ip=None,
        start_port=None,
        runner=runner or runner_of(config),
        config=str(_rel(config)),  # as a script run from the repo root is given it (a table's Config word)
    )
    return plan.to_json() + "\n"  # the CLI echoes it with a newline


def _plan_layout(config: Path) -> Optional[str]:
    """--layout for a fixture's plan: its folder's train layout; for a chain's config none (its
    content and name say which chain it is), or its family where another family's table reads the
    same lines (the models tutorials' paddle2onnx: `--layout models`)."""
    if not is_chain(config):
        return dialect_of(config)
    mine = CHAIN_LAYOUTS[dialect_of(config)]
    found = chain_of_text(config.read_text(encoding="utf-8"), config.name)
    return None if found is mine else chain_family(mine.name)


def build_scripts(config: Path, spec_text: str) -> dict[Path, bytes]:
    """Golden path -> bytes of every bash script `tipcgen build` writes for the config's spec
    (`spec_text`, read as the file `<stem>.spec.yml`: the scripts' banners name it)."""
    spec = load_spec_text(spec_text, str(spec_path(config)))
    files = build_files(spec)
    only = ALL_LAYOUTS[dialect_of(config)].dialect.script if is_chain(config) else None
    scripts = {}
    for rel, data in files.items():
        name = rel[len(SCRIPT_DIR) :]
        if not rel.startswith(SCRIPT_DIR) or "/" in name or not name.endswith(SCRIPT_SUFFIX) or name in NOT_GOLDEN:
            continue
        if only is None or name == only:
            scripts[script_path(config, name)] = data
    if not scripts:
        raise GoldenError(f"{config}: the build of its spec writes no test_tipc/*.sh ({sorted(files)})")
    return scripts


def golden_scripts(config: Path, spec_text: str) -> dict[Path, bytes]:
    """build_scripts' goldens: all of them, or none for a chain's config but its folder's first."""
    if is_chain(config) and config != chain_first(config):
        return {}
    return build_scripts(config, spec_text)


def script_goldens(config: Path) -> list[Path]:
    """The golden scripts of one config that are on disk."""
    return sorted(p for p in config.parent.glob(f"*{SCRIPT_SUFFIX}") if p.is_file() and script_owner(p) == config.stem)


def expected_files(config: Path) -> dict[Path, bytes]:
    """Golden path -> expected bytes, for one fixture config."""
    spec_text = import_spec_yaml(config)
    files = {spec_path(config): spec_text.encode("utf-8")}
    for mode in modes_of(config):
        files[plan_path(config, mode)] = plan_json(config, mode).encode("utf-8")
    scripts = golden_scripts(config, spec_text)
    again = golden_scripts(config, spec_text)
    if again != scripts:
        differ = sorted(p.name for p in scripts.keys() | again.keys() if scripts.get(p) != again.get(p))
        raise GoldenError(f"{config}: two builds of its spec differ in {differ} (the build is not deterministic)")
    files.update(scripts)
    return files


def _is_golden(path: Path) -> bool:
    return path.name.endswith((SPEC_SUFFIX, PLAN_SUFFIX, SCRIPT_SUFFIX))


def golden_files(root: Path = FIXTURES) -> list[Path]:
    """Every golden file in the fixture folders (that have configs or goldens)."""
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        out.extend(sorted(p for p in folder.iterdir() if p.is_file() and _is_golden(p)))
    return out


def orphan_goldens(root: Path = FIXTURES) -> list[Path]:
    """Golden files no fixture config would produce (its config was renamed or removed). A script
    a config's build no longer writes is reported by the script test and by main(), not here."""
    wanted = set()
    stems = set()
    for config in fixture_configs(root):
        wanted.add(spec_path(config))
        wanted.update(plan_path(config, mode) for mode in modes_of(config))
        stems.add((config.parent, config.stem))
    return [
        p
        for p in golden_files(root)
        if p not in wanted and not (p.name.endswith(SCRIPT_SUFFIX) and (p.parent, script_owner(p)) in stems)
    ]


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
                f"update_golden: no fixture configs for {target!r} (folders: {', '.join(fixture_folders())})"
            )
        chosen.extend(found)
    return sorted(set(chosen))


def _rel(path: Path) -> Path:
    repo = FIXTURES.parent.parent
    return path.relative_to(repo) if repo in path.parents else path


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="fixture folders (e.g. paddleocr) or config files; default: all")
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
        for path, data in expected.items():
            old = path.read_bytes() if path.exists() else None
            if old == data:
                continue
            stale += 1
            verb = "would write" if args.check else "wrote"
            print(f"{verb} {_rel(path)} ({'new' if old is None else 'changed'})")
            if not args.check:
                path.write_bytes(data)
        for path in script_goldens(config):
            if path not in expected:
                stale += 1
                why = "the build writes no such script, or its chain folder's first config holds it"
                print(f"{'would delete' if args.check else 'deleted'} {_rel(path)} ({why})")
                if not args.check:
                    path.unlink()
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
