"""Switching a model repo: import its test_tipc/ (configs and prepare.sh), build the new tree in
memory, and run the repo's own scripts and ours side by side on every train config x mode.

    m = plan_migration("path/to/PaddleClas")
    m.rows          # [Row]: config x mode, runner and prepare verdicts
    m.files         # the new test_tipc/ (repo-relative path -> bytes), specs included

Nothing here writes into the repo: `tipcgen migrate --apply` (cli/migrate.py) does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Optional

from tipcgen.emit.prepare import spec_modes
from tipcgen.errors import TipcError, UsageError
from tipcgen.fsio import write_atomic
from tipcgen.importer.prepare_import import repo_prepare_modes
from tipcgen.inputs import MAX_FILE_BYTES, read_bytes
from tipcgen.sandbox import DEFAULT_TIMEOUT
from tipcgen.spec.modes import CHAIN_MODES, MODES

SCHEMA = "../spec.schema.json"  # from test_tipc/specs/ to the schema the repo build writes


@dataclass(frozen=True)
class RowDifference:
    """One difference of a run (a differing command, a command one side only runs, logs, status
    lines; or prepare.sh's), with both sides as the oracle saw them."""

    side: str  # "runner" (the repo's script vs our Plan) | "prepare" (its prepare.sh vs ours)
    aspect: str  # the oracle's: commands | logs | status | plan | upstream | prepare
    category: str  # the edit's shape, the same across runs and configs (what the summary collapses)
    detail: str  # what exactly differs (for commands: both argv lines)
    deviation: str = ""  # the named deviation that explains it; "": unexplained

    @property
    def sides(self) -> tuple[Optional[str], Optional[str]]:
        """(upstream's command, ours) of a command difference; None for a side without one."""
        up: Optional[str] = None
        ours: Optional[str] = None
        for line in self.detail.split("\n")[1:]:
            key, _, text = line.strip().partition(":")
            if key in ("upstream", "plan"):
                shown = None if text.strip() == "<none>" else text.strip()
                up, ours = (shown, ours) if key == "upstream" else (up, shown)
        return up, ours


@dataclass
class Row:
    config: str  # repo-relative
    mode: str
    runner: str  # identical | faithful | CHANGED
    runner_detail: str  # deviations, or the first unexplained difference (and how many more)
    prepare: str
    prepare_detail: str
    script: str = "test_train_inference_python.sh"  # the repo's script the runner column compares
    differences: list = field(default_factory=list)  # [RowDifference]: every one, in the oracle's order
    commands: int = -1  # commands the repo's script ran (-1: not counted)


def _diff_row(diff: Any, deviation: Callable[[Any], str] = lambda d: d) -> tuple[str, str, list]:
    """(verdict, detail, [RowDifference]) of an oracle Diff; `deviation` names each deviation as
    the report lists it (a chain's are prefixed with its script)."""
    found = [
        RowDifference("runner", d.aspect, d.category, d.detail, deviation(diff.deviation_of(d)) if diff.plan else "")
        for d in diff.differences
    ]
    if diff.identical:
        return "identical", "", found
    if diff.faithful:
        return "faithful", ", ".join(deviation(n) for n in diff.explained_by()), found
    unexplained = [d for d in found if not d.deviation]
    more = f" (+{len(unexplained) - 1} more)" if len(unexplained) > 1 else ""
    first, *rest = unexplained[0].detail.split("\n")
    return "CHANGED", "\n".join([first + more, *rest]), found


@dataclass
class Migration:
    root: str
    layout: str
    runner: Optional[str]
    specs: dict[str, str]  # repo-relative spec path -> YAML text
    files: dict[str, bytes]  # the new test_tipc/ (specs included), repo-relative
    rows: list[Row] = field(default_factory=list)
    not_imported: dict[str, str] = field(default_factory=dict)  # config -> why
    sources: dict[tuple[str, str], str] = field(default_factory=dict)  # (model, file) -> the repo's config
    untyped: dict[str, list[str]] = field(default_factory=dict)  # model -> prepare commands kept as `run`
    deviations: dict[str, str] = field(default_factory=dict)  # name -> what/why
    replaced: list[str] = field(default_factory=list)  # files of the repo the new tree rewrites
    added: list[str] = field(default_factory=list)  # files it adds
    # Other chains' configs (dialects/chains/) x their mode: the repo's chain script vs our Plan
    # (Row.runner; Row.prepare "not compared").
    chain_rows: list[Row] = field(default_factory=list)
    # Modes the repo's prepare.sh is in use for (it tests for them; its scripts and docs call it
    # with them) that the generated prepare.sh does not take: the migration is not ready.
    prepare_modes_lost: list[str] = field(default_factory=list)
    # prepare.sh in the modes a train config is prepared for besides the runner's (benchmark_train,
    # klquant_whole_infer): the repo's against ours per config (runner "not compared").
    prepare_rows: list[Row] = field(default_factory=list)
    # The whole-tree oracle (migrate/entrypoints.py): every entry point of the old test_tipc/, run
    # before and after the switch; and every config of the tree not compared there, with why.
    entries: list = field(default_factory=list)  # [EntryRow]
    configs_kept: dict[str, str] = field(default_factory=dict)  # config -> why kept verbatim, not run
    # Files of the new tree the repo's .gitignore hides (a clone would lack them: `check` fails
    # there), and the `!/path` lines `--apply` appends to test_tipc/.gitignore to show them again.
    gitignore_hidden: list[str] = field(default_factory=list)
    gitignore: list[str] = field(default_factory=list)
    # A kept script that sources a script the switch replaces (PaddleClas's jeston script sources
    # the train runner, runs it and calls its functions): the old script is kept beside it under
    # test_tipc/legacy/ and the `source` line points there. kept script -> the copy it sources.
    sourced_kept: dict[str, str] = field(default_factory=dict)
    # The runner modes `--mode` left out: no row and no entry point was run in them.
    modes_left_out: list[str] = field(default_factory=list)

    @property
    def changed(self) -> list[Row]:
        return [r for r in (*self.rows, *self.chain_rows, *self.prepare_rows) if "CHANGED" in (r.runner, r.prepare)]

    @property
    def entries_changed(self) -> list:
        return [e for e in self.entries if e.verdict == "CHANGED"]

    @property
    def ok(self) -> bool:
        return not self.changed and not self.not_imported and not self.prepare_modes_lost and not self.entries_changed


def _repo_parts(root: str, configs: Optional[str] = None) -> tuple[Path, Path, Optional[Path], Path]:
    """(test_tipc/, its runner, its prepare.sh or None, the configs folder), or a UsageError. A repo
    without prepare.sh is migrated all the same: only its runner is compared (nothing to trace)."""
    base = Path(root)
    tipc = base / "test_tipc"
    runner, prepare = tipc / "test_train_inference_python.sh", tipc / "prepare.sh"
    if not base.is_dir():
        raise UsageError(f"{root}: no such directory")
    if not tipc.is_dir():
        raise UsageError(f"{root} is not a model repo root: it has no test_tipc/ (run migrate in the repo's root)")
    if not runner.is_file():
        raise UsageError(f"{runner}: missing; migrate compares the repo's own runner with the generated one")
    folder = tipc / "configs" if configs is None else _configs_folder(base, configs)
    if not folder.is_dir():
        raise UsageError(f"{folder}: missing; migrate imports the repo's configs (--configs DIR names another folder)")
    if (base / "test_tipc" / ".tipcgen.manifest").exists():
        raise UsageError(f"{root}: already switched (test_tipc/.tipcgen.manifest exists); use `tipcgen build`/`check`")
    return tipc, runner, prepare if prepare.is_file() else None, folder


def _configs_folder(base: Path, configs: str) -> Path:
    """--configs DIR: a folder inside the repo, relative to its root (a link leading out: refused)."""
    from tipcgen.inputs import resolve_inside

    norm = os.path.normpath(configs)
    if os.path.isabs(configs) or norm == ".." or norm.startswith(".." + os.sep):
        raise UsageError(f"--configs {configs}: must be a folder inside the repo, relative to its root")
    try:
        resolve_inside(str(base / norm), str(base))
    except TipcError:
        raise UsageError(f"--configs {configs}: leads outside the repo (a symbolic link on the way)") from None
    if not norm.startswith("test_tipc" + os.sep):
        raise UsageError(
            f"--configs {configs}: must be a folder inside test_tipc/ (tipcgen writes and owns files only there);"
            " a repo inside the repo (PaddleSeg's contrib/PanopticSeg/) is migrated from its own root"
        )
    return base / norm


@dataclass
class _Imported:
    """The repo's configs imported, folder by folder, each spec with its traced prepare steps."""

    specs_text: dict[str, str] = field(default_factory=dict)
    not_imported: dict[str, str] = field(default_factory=dict)
    untyped: dict[str, list[str]] = field(default_factory=dict)
    sources: dict[tuple[str, str], str] = field(default_factory=dict)
    loaded: list = field(default_factory=list)
    reports: list = field(default_factory=list)

    def failed(self, root: str, report: Any) -> bool:
        for name, why in report.failures.items():
            self.not_imported[_rel(root, os.path.join(report.directory, name))] = why
        return bool(report.failures) or report.yaml is None or report.result is None

    def run(
        self,
        root: str,
        groups: dict,
        layout: str,
        prepare_script: Optional[Path],
        timeout: float,
        progress: Optional[Callable[[int, int], None]] = None,
    ) -> None:
        """`progress(done, total)` after each model's import (its prepare.sh traced: the long part)."""
        from tipcgen.check.spec import load_imported_text
        from tipcgen.importer import config_origin, distinct_models, import_groups, repo_family
        from tipcgen.importer.prepare_import import add_prepare
        from tipcgen.importer.yaml_out import spec_yaml

        reports = import_groups(list(groups.values()), layout)
        family = repo_family(reports)
        imported = [(r, paths) for r, paths in zip(reports, groups.values()) if not self.failed(root, r)]
        # two folders importing as one model name: as `tipcgen import` does, `<parent folder>_<model>`
        models = distinct_models(imported, layout, family)
        for done, report in enumerate(models):
            if progress is not None:
                progress(done, len(models))
            if self.failed(root, report):
                continue
            _keep_folder(root, report)
            _name_devices(root, report)
            report.yaml = spec_yaml(report.result, report.result.findings, SCHEMA)
            if prepare_script is not None:  # without one, the specs' prepare stays empty: nothing to trace
                report, found = add_prepare(report, prepare_script, timeout=timeout, schema=SCHEMA)
                if found.untyped:
                    self.untyped[str(report.model)] = found.untyped
                for failure in found.failures:
                    self.not_imported.setdefault(f"{report.model}: prepare", failure)
            rel = f"test_tipc/specs/{report.model}.yml"
            if rel in self.specs_text:  # a clash even as <folder>_<model>: named, never merged
                raise UsageError(f"two config folders import as model {report.model!r} even as <folder>_<model>")
            self.specs_text[rel] = report.yaml
            self.reports.append((rel, report))
            self.sources.update({(str(report.model), f): p for f, p in report.result.sources.items()})
            self.loaded.append(load_imported_text(report.yaml, rel, config_origin(report.result)))
        if progress is not None:
            progress(len(models), len(models))


def _keep_folder(root: str, report: Any) -> None:
    """A folder other than test_tipc/configs/<model> (a nested one, configs/rotate/fcosr/; one
    renamed apart; one of --configs) is named in the spec (`configs:`), so the new tree writes the
    configs where they are, not copies beside them."""
    folder = _rel(root, report.directory)
    if folder == f"test_tipc/configs/{report.model}":
        return
    report.result.spec = _after_layout(report.result.spec, "configs", folder)


def _name_devices(root: str, report: Any) -> None:
    """The device wrappers the repo has (test_train_inference_python_npu.sh, _xpu.sh) for the
    spec's layout are named in the spec (`devices:`): the build writes ours in their place, which
    rewrite a copy of the config instead of the checkout (dialects/devices.py). A wrapper that is
    a link, or a device the layout has no record of, is left as the repo has it."""
    from tipcgen.dialects.devices import devices_of

    layout = report.result.spec.get("layout")
    devices = [d.device for d in devices_of(str(layout)) if _regular(os.path.join(root, "test_tipc", d.script))]
    if devices:
        report.result.spec = _after_layout(report.result.spec, "devices", devices)


def _regular(path: str) -> bool:
    """A regular file, not a link (lstat: nothing is read through a link)."""
    import stat

    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _after_layout(spec: dict, key: str, value: Any) -> dict:
    """`spec` with `key: value` right after its `layout:` (where an imported spec names it)."""
    out: dict = {}
    for k, v in spec.items():
        if k != key:
            out[k] = v
        if k == "layout":
            out[key] = value
    return out


def _chosen_runner(
    runner: Optional[str], tipc: Path, imp: _Imported, layout: str, spec_runner: Optional[str], timeout: float
) -> Optional[str]:
    """--runner (checked against the layout's runners), else the one following the repo's script best."""
    from tipcgen.dialects import get_layout

    if runner is None:
        return _which_runner(tipc, imp.loaded, imp.sources, layout, spec_runner, timeout)
    runners = get_layout(layout).dialect.runners
    if runner not in runners:
        raise UsageError(f"--runner {runner}: layout {layout}'s runners are " + ", ".join(runners))
    return None if runner == runners[0] else runner


def plan_migration(
    root: str,
    modes: tuple[str, ...] = MODES,
    jobs: int = 0,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Optional[Callable[[int, int], None]] = None,
    configs: Optional[str] = None,
    layout: str = "auto",
    runner: Optional[str] = None,
    environ: Optional[Mapping] = None,
    importing: Optional[Callable[[int, int], None]] = None,
) -> Migration:
    """`jobs`: runs compared at once (0: the cores); `progress(done, total)` after each run,
    `importing(done, total)` after each model imported (before any run);
    `layout`: as `tipcgen import --layout` (auto: detected per config); `runner`: one of the
    layout's runners, instead of the one that follows the repo's script best; `environ`: the
    environment whose run cache the whole-tree comparison uses (None: it runs everything)."""
    from tipcgen.emit.repo import repo_files, repo_runner
    from tipcgen.importer import config_groups
    from tipcgen.project import Project

    tipc, _runner_script, prepare_script, folder = _repo_parts(root, configs)
    groups = config_groups([str(folder)])
    if not groups:
        raise UsageError(f"{folder}: no .txt configs")
    imp = _Imported()
    imp.run(root, groups, layout, prepare_script, timeout, importing)
    if not imp.loaded:
        raise UsageError(f"{folder}: no config could be imported: " + "; ".join(imp.not_imported.values()))
    loaded, specs_text = imp.loaded, imp.specs_text
    main_layout, main_runner = repo_runner(loaded)
    chosen = _chosen_runner(runner, tipc, imp, main_layout, main_runner, timeout)
    if chosen != main_runner:  # the repo's script is another version: every spec names its runner
        loaded = _with_runner(root, imp.reports, chosen, specs_text)
        main_runner = chosen
    project = Project(root=root, specs="test_tipc/specs", lang="zh", settings=None)
    files = repo_files(project, loaded)
    files.update({rel: text.encode("utf-8") for rel, text in specs_text.items()})
    m = Migration(
        root, main_layout, main_runner, specs_text, dict(sorted(files.items())), [], imp.not_imported, imp.sources,
        imp.untyped,
    )  # fmt: skip
    _file_changes(m)
    _keep_sourced(m)
    tally = _Tally(progress, len(modes) * sum(len(s.train_suites) for s in loaded) + len(_chained(m, loaded)))
    _compare_all(m, loaded, tipc, prepare_script, modes, jobs, timeout, tally)
    _compare_chains(m, loaded, tipc, prepare_script, timeout, jobs, tally)
    if prepare_script is not None:
        _compare_prepare_modes(m, loaded, prepare_script, jobs, timeout)
        m.prepare_modes_lost = sorted(repo_prepare_modes(prepare_script) - set(spec_modes(loaded)))
    _account(m, loaded, [p for paths in groups.values() for p in paths], tipc)
    from tipcgen.migrate.gitignore import ignored_files

    hidden = ignored_files(root, list(m.files))
    m.gitignore_hidden, m.gitignore = hidden.files, hidden.lines
    for rel in hidden.stuck:  # not shown again even by the lines: named, never silently lost
        m.not_imported[rel] = "the repo's .gitignore hides it, and no `!` line in test_tipc/.gitignore shows it"
    m.modes_left_out = [mode for mode in MODES if mode not in modes]
    _compare_entries(m, jobs, timeout, tally, environ)
    return m


def _compare_entries(
    m: Migration, jobs: int, timeout: float, tally: Optional[_Tally] = None, environ: Optional[Mapping] = None
) -> None:
    """The whole-tree oracle (entrypoints.py): every entry point of the old test_tipc/ before and
    after the switch; generated scripts' differences held to the verdicts found above."""
    from tipcgen.migrate.entrypoints import FOREIGN, TRAIN_RUNNER, UNTESTED, Covered, compare_entries

    covered = Covered({(r.script, r.config, r.mode): (r.runner, r.runner_detail) for r in (*m.rows, *m.chain_rows)})
    covered.verdicts.update(
        {
            ("prepare.sh", r.config, r.mode): (r.prepare, r.prepare_detail)
            for r in (*m.rows, *m.chain_rows, *m.prepare_rows)
            if r.prepare != "not compared"
        }
    )
    for config, why in m.configs_kept.items():
        covered.keep(config, why)
    covered.deviations = _script_deviations(m)
    changed = {rel: m.files[rel] for rel in (*m.replaced, *m.added)}
    before = (tally.done, tally.total) if tally is not None else (0, 0)

    def progress(done: int, total: int) -> None:  # the runs above, then the entry points'
        if tally is not None and tally.progress is not None:
            tally.progress(before[0] + done, before[1] + total)

    m.entries = compare_entries(
        m.root, changed, covered, jobs=jobs, timeout=timeout, progress=progress, left_out=frozenset(m.modes_left_out),
        environ=environ,
    )  # fmt: skip
    # A train config the runner's modes above ran nothing on (a KL config: `trainer:null`, read in
    # PaddleDetection's klquant_whole_infer alone) is compared when the whole tree's runner ran
    # commands on it in a mode the script and the docs take, and both trees agreed.
    runner = f"test_tipc/{TRAIN_RUNNER}"
    for e in m.entries:
        same = e.verdict in ("identical", "faithful") and e.before_commands > 0 and e.after_commands > 0
        config = e.entry.config or ""
        if same and e.entry.script == runner and m.not_imported.get(config) == SILENT:
            del m.not_imported[config]
    if "test_tipc/prepare.sh" in changed:
        _prepare_entries(m, jobs, timeout)
    for name, what, why in (FOREIGN, UNTESTED):  # the deviations the whole-tree oracle names itself
        if any(e.detail == name for e in m.entries):
            m.deviations[name] = f"{what} ({why})"


def _script_deviations(m: Migration) -> dict:
    """Each script the switch generates (by basename) -> the Deviation records of its Plan: the
    train runner's (the spec's runner), benchmark_train.sh's, each chain table's."""
    from tipcgen.dialects import get_layout
    from tipcgen.dialects.chains import CHAIN_LAYOUTS
    from tipcgen.plan.benchmark_train import DEVIATIONS as BENCH_DEVIATIONS
    from tipcgen.plan.planner import runner_for

    found: dict = {}
    if m.layout:
        layout = get_layout(m.layout)
        found[layout.dialect.script] = tuple(runner_for(layout, m.runner or None).DEVIATIONS)
    found["benchmark_train.sh"] = tuple(BENCH_DEVIATIONS)
    from tipcgen.dialects.devices import DEVICE_DEVIATIONS, devices_of

    for record in devices_of(m.layout):  # the device wrappers (they run the runner: its deviations come with it)
        found[record.script] = tuple(DEVICE_DEVIATIONS)
    for layout in CHAIN_LAYOUTS.values():
        more = tuple(runner_for(layout).DEVIATIONS)
        found[layout.dialect.script] = found.get(layout.dialect.script, ()) + more
    return found


def _prepare_entries(m: Migration, jobs: int, timeout: float) -> None:
    """prepare.sh's entry points on configs and modes the rows above did not compare (a config
    kept verbatim for the repo's own chain script, a mode of another kind): the commands differ by
    construction (our fetches are cached and checked), so they are judged as every prepare.sh row
    is, by the effects differential (prepare_diff) and its named deviations, not by command text."""
    import tempfile

    from tipcgen.importer.prepare_steps import DEVIATIONS
    from tipcgen.migrate.prepare_diff import compare_prepare
    from tipcgen.script.lines import config_python

    prepare_script = Path(m.root, "test_tipc", "prepare.sh")
    todo = [
        e
        for e in m.entries
        if e.entry.script == "test_tipc/prepare.sh" and e.verdict == "CHANGED" and e.entry.config and e.entry.mode
    ]
    if not todo:
        return

    def one(row: Any, ours: Path) -> None:
        config, mode = row.entry.config, row.entry.mode
        text = read_bytes(str(Path(m.root, config)), tree=m.root, what="a config").decode("utf-8", "replace")
        p = compare_prepare(prepare_script, ours, text, config, mode, config_python(text) or "", timeout=timeout)
        if p.error or p.diff.verdict == "CHANGED":
            first = f"; upstream {p.diff.first[0]}, ours {p.diff.first[1]}" if p.diff.first else ""
            row.detail += f" (effects differential: {p.error or 'CHANGED'}{first})"
            return
        row.verdict = "faithful" if p.diff.verdict == "faithful" else "identical"
        row.detail = ", ".join(p.diff.deviations) or "the same effects (downloads, extractions, files)"
        for name in p.diff.deviations:
            if name in DEVIATIONS:
                m.deviations[f"prepare: {name}"] = DEVIATIONS[name]

    with tempfile.TemporaryDirectory(prefix="tipcgen-migrate-") as tmp:
        ours = _our_scripts(m, tmp)
        with ThreadPoolExecutor(jobs or min(4, os.cpu_count() or 1)) as pool:
            list(pool.map(lambda r: one(r, ours), todo))


SILENT = (
    "a train config whose runs compared no command in any mode (the repo's runner and ours ran"
    " nothing: no `trainer:` line it acts on?): a migration that tests nothing is not ready"
)


def _account(m: Migration, specs: list, configs: list[str], tipc: Path) -> None:
    """Every config of the tree is compared (with at least one command run), kept verbatim with
    the repo's own script that reads it, or lost (`not_imported`, with why): a train config whose
    runs ran nothing is never ready, and neither is a config no script is left to read."""
    from tipcgen.dialects.chains import chain_of_text

    ran: dict[str, int] = {}
    for row in m.rows:
        ran[row.config] = ran.get(row.config, 0) + max(row.commands, 0)
    chained = {row.config for row in m.chain_rows}
    for spec in specs:
        for file, raw in spec.other_configs.items():
            source = m.sources.get((spec.model, file))
            if source is None:
                continue
            rel = _rel(m.root, source)
            chain = chain_of_text(raw.text(), file, spec.layout)
            if rel in chained:
                continue
            why = _kept_why(m, tipc, file, raw, chain)
            if why is not None:
                m.configs_kept[rel] = why
    for path in configs:
        rel = _rel(m.root, path)
        if rel in m.not_imported or rel in m.configs_kept or rel in chained:
            continue
        if rel in ran:
            if ran[rel] == 0:
                m.not_imported[rel] = SILENT
            continue
        m.not_imported[rel] = _lost_why(m, path)


def _kept_why(m: Migration, tipc: Path, file: str, raw: Any, chain: Any) -> Optional[str]:
    """Why a verbatim config no tipcgen runner runs is kept as it is (None: it is lost): the repo's
    own script of its section still reads it, or no script of the repo ever did."""
    from tipcgen.dialects.chains import SECTION_SCRIPTS, chain_family, first_section

    section = first_section(raw.text())
    scripts = SECTION_SCRIPTS.get(section, ())
    readers = [s for s in scripts if (tipc / s).is_file() and f"test_tipc/{s}" not in m.files]
    # serving_params: the C++ or the Python script, as the file's name says
    readers.sort(key=lambda s: s.rsplit("_", 1)[-1].removesuffix(".sh") not in file)
    if readers and raw.own_script and chain is not None:
        return (
            f"kept verbatim: it fits {chain.name}'s line table, but {chain_family(chain.name)}'s runner is"
            f" not its family's ({m.layout}); the repo's own {readers[0]} still runs it"
        )
    if readers:
        return (
            f"kept verbatim: no tipcgen runner types its `{section}` section; the repo's own "
            f"{readers[0]} (kept as it is) still reads it"
        )
    if scripts and not any(f"test_tipc/{s}" in m.files for s in scripts):
        return (
            f"kept verbatim: its `{section}` section is read by {scripts[0]}, which the repo does not have:"
            " nothing runs it, before or after the switch"
        )
    return None  # its reader is replaced by the new tree, or no script is known to read it


def _lost_why(m: Migration, path: str) -> str:
    from tipcgen.dialects.chains import SECTION_SCRIPTS, first_section

    text = read_bytes(path, tree=m.root, what="a config").decode("utf-8", "replace")
    section = first_section(text)
    replaced = [s for s in SECTION_SCRIPTS.get(section, ()) if f"test_tipc/{s}" in m.files]
    if replaced:
        return (
            f"neither compared nor kept: its `{section}` section is read by {replaced[0]}, which the new tree"
            " replaces, but no layout types it (a `trainer:` line missing?): it would run untested"
        )
    return (
        "neither compared nor kept: no script of the repo is known to read its first section"
        f" `{section or '(empty)'}`, and no layout types it"
    )


def _compare_prepare_modes(m: Migration, specs: list, prepare_script: Path, jobs: int, timeout: float) -> None:
    """Every train config in each mode beyond the runner's its prepare.sh is prepared for
    (train_config_modes: benchmark_train, ...): the repo's prepare.sh against ours."""
    import tempfile

    from tipcgen.importer.prepare_import import train_config_modes
    from tipcgen.importer.prepare_steps import DEVIATIONS
    from tipcgen.migrate.prepare_diff import compare_prepare

    extra = [mode for mode in train_config_modes(prepare_script) if mode not in MODES]
    tasks = [
        (Path(m.sources[(spec.model, suite.file)]), suite.python, mode)
        for spec in specs
        for suite in spec.train_suites.values()
        for mode in extra
    ]
    if not tasks:
        return

    def one(task: tuple[Path, str, str], ours: Path) -> Row:
        source, python, mode = task
        rel = _rel(m.root, str(source))
        text = read_bytes(str(source), tree=m.root, what="a config").decode("utf-8", "replace")
        p = compare_prepare(prepare_script, ours, text, rel, mode, python, timeout=timeout)
        detail = p.error or (
            f"upstream {p.diff.first[0]}, ours {p.diff.first[1]}" if p.diff.first else ", ".join(p.diff.deviations)
        )
        return Row(rel, mode, "not compared", "", p.diff.verdict, detail, "prepare.sh")

    with tempfile.TemporaryDirectory(prefix="tipcgen-migrate-") as tmp:
        ours = _our_scripts(m, tmp)
        with ThreadPoolExecutor(jobs or min(4, os.cpu_count() or 1)) as pool:
            m.prepare_rows = list(pool.map(lambda t: one(t, ours), tasks))
    for row in m.prepare_rows:
        for name in row.prepare_detail.split(", ") if row.prepare == "faithful" else ():
            if name in DEVIATIONS:
                m.deviations[f"prepare: {name}"] = DEVIATIONS[name]


class _Tally:
    """Runs compared so far, told to `progress` (from the thread that waits on the workers)."""

    def __init__(self, progress: Optional[Callable[[int, int], None]], total: int) -> None:
        self.progress, self.total, self.done = progress, total, 0
        self.tick(0)

    def tick(self, n: int = 1) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(self.done, self.total)


def _workers(jobs: int) -> int:
    return jobs if jobs > 0 else os.cpu_count() or 1


def _chained(m: Migration, specs: list) -> list:
    """(spec, file, layout, source) of each config of another chain: typed chain suites, and
    configs of a chain still kept verbatim (those whose chain or source is unknown left out)."""
    from tipcgen.dialects import get_layout
    from tipcgen.dialects.chains import chain_of_text

    out = []
    for spec in specs:
        chained: list[tuple[str, Optional[Any]]] = [
            (s.file, get_layout(str(s.layout))) for s in spec.chain_suites.values()
        ]
        chained += [
            (file, None if raw.own_script else chain_of_text(raw.text(), file, spec.layout))
            for file, raw in spec.other_configs.items()
        ]  # (another family's chain, `own_script`: kept with the repo's script, _account)
        for file, layout in sorted(chained, key=lambda item: item[0]):
            source = m.sources.get((spec.model, file))
            if layout is not None and source is not None:
                out.append((spec, file, layout, source))
    return out


def _compare_chains(
    m: Migration, specs: list, tipc: Path, prepare_script: Optional[Path], timeout: float, jobs: int = 0, tally=None
) -> None:
    """Each config of another chain that tipcgen now runs (its script is in the new tree), against
    the repo's own script for that chain; and, for a mode prepare.sh has a branch for
    (`paddle2onnx_infer`), the repo's prepare.sh against ours."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tipcgen-migrate-") as tmp:
        ours = _our_scripts(m, tmp)
        has_prepare = (ours / "prepare.sh").is_file()
        _compare_chain_configs(m, specs, tipc, prepare_script, ours if has_prepare else None, timeout, jobs, tally)


def _compare_chain_configs(
    m: Migration,
    specs: list,
    tipc: Path,
    prepare_script: Optional[Path],
    ours: Optional[Path],
    timeout: float,
    jobs: int = 0,
    tally: Optional[_Tally] = None,
) -> None:
    from tipcgen.plan.planner import runner_for

    tasks = _chained(m, specs)
    for _spec, _file, layout, _source in tasks:
        script = layout.dialect.script
        for dev in runner_for(layout).DEVIATIONS:
            m.deviations[f"{script}: {dev.name}"] = f"{dev.what} ({dev.why})"

    def one(task: tuple) -> Row:
        return _chain_row(m, tipc, prepare_script, ours, timeout, task[2], task[3])

    m.chain_rows += _run_all(one, tasks, jobs, tally)


def _run_all(fn: Callable[[Any], Row], tasks: list, jobs: int, tally: Optional[_Tally]) -> list:
    """fn over tasks in `jobs` threads (each run is a sandboxed bash: the threads wait on it), the
    rows in the tasks' order; the tally told as each finishes, whichever it is."""
    rows: list = [None] * len(tasks)
    with ThreadPoolExecutor(_workers(jobs)) as pool:
        futures = {pool.submit(fn, task): i for i, task in enumerate(tasks)}
        for future in as_completed(futures):
            rows[futures[future]] = future.result()
            if tally is not None:
                tally.tick()
    return rows


def _chain_row(
    m: Migration,
    tipc: Path,
    prepare_script: Optional[Path],
    ours: Optional[Path],
    timeout: float,
    layout: Any,
    source: str,
) -> Row:
    """One chain config, in its chain's first mode: the repo's script (recorded) vs our Plan."""
    from tipcgen.migrate.oracle import chain_run_options, compare, family_of, run_upstream, step_dirs
    from tipcgen.plan.planner import runner_for

    family = family_of(m.layout, m.runner)
    module = runner_for(layout)
    script = layout.dialect.script
    mode, rel = module.MODES[0], _rel(m.root, source)
    if not (tipc / script).is_file():
        return Row(rel, mode, "new", f"the repo has no {script}", "not compared", "", script)
    # a checkout has the directories the script `cd`s to; the scratch copy gets them too
    run = run_upstream(
        tipc, Path(source), mode, timeout=timeout, repo=family, dirs=step_dirs(source, mode, None),
        **chain_run_options(layout.name),
    )  # fmt: skip
    diff = compare(Path(source), family, mode, run=run, chain=layout.name, timeout=timeout)

    def named(name: str) -> str:
        return f"{script}: {name}" if name else ""

    verdict, detail, found = _diff_row(diff, named)
    p_verdict, p_detail = _chain_prepare(m, prepare_script, ours, Path(source), mode, layout, timeout)
    found += _prepare_differences(p_verdict, p_detail)
    return Row(rel, mode, verdict, detail, p_verdict, p_detail, script, found)


def _chain_prepare(
    m: Migration,
    prepare_script: Optional[Path],
    ours: Optional[Path],
    source: Path,
    mode: str,
    layout: Any,
    timeout: float,
) -> tuple:
    """(verdict, detail) of the repo's prepare.sh against ours for a chain config's mode (its
    `layout` reads the config's python, as the chain's script does)."""
    from tipcgen.importer.prepare_steps import DEVIATIONS
    from tipcgen.lower.configview import ConfigView
    from tipcgen.migrate.prepare_diff import compare_prepare

    if ours is None or mode not in CHAIN_MODES or prepare_script is None:
        return "not compared", ""
    text = read_bytes(str(source), tree=m.root, what="a config").decode("utf-8", "replace")
    python = ConfigView.parse(text, layout).value("python") or "python"  # (a chain without the line: none)
    p = compare_prepare(prepare_script, ours, text, _rel(m.root, str(source)), mode, python, timeout=timeout)
    if p.error:
        return p.diff.verdict, p.error
    if p.diff.first is not None:
        return p.diff.verdict, f"upstream {p.diff.first[0]}, ours {p.diff.first[1]}"
    for name in p.diff.deviations:
        if name in DEVIATIONS:
            m.deviations[f"prepare: {name}"] = DEVIATIONS[name]
    return p.diff.verdict, ", ".join(p.diff.deviations)


def _our_scripts(m: Migration, tmp: str) -> Path:
    """The new tree's scripts written into the scratch `tmp` (through the write gate): its test_tipc/."""
    for rel, data in m.files.items():
        if rel.startswith("test_tipc/") and rel.endswith(".sh"):
            path = Path(tmp) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(str(path), data)
    return Path(tmp) / "test_tipc"


def _repo_bytes(m: Migration, path: Path) -> Optional[bytes]:
    """A repo file's bytes, read inside the repo; None (so: replaced) for a link leading out, a
    FIFO or a device."""
    try:
        return read_bytes(str(path), MAX_FILE_BYTES, tree=m.root, what="a repo file")
    except TipcError:
        return None


# `source test_tipc/X.sh` / `. ./test_tipc/X.sh` on a line of its own (arguments or not).
_SOURCE = re.compile(rb"^([ \t]*(?:source|\.)[ \t]+(?:\./)?test_tipc/)([\w.-]+\.sh)([ \t].*)?$", re.M)
LEGACY = "test_tipc/legacy"


def _keep_sourced(m: Migration) -> None:
    """A script the switch keeps that sources one it replaces (not a library: the generated
    common_func.sh keeps upstream's functions) would run the generated one inside itself, which
    exits at its end and defines none of the old one's functions: the old script is kept as
    test_tipc/legacy/<name> and the kept script's `source` line points there (sourced_kept)."""
    from tipcgen.migrate.entrypoints import old_tree

    tree, _configs = old_tree(Path(m.root))
    replaced = {rel for rel in m.replaced if rel.endswith(".sh") and not rel.endswith("/common_func.sh")}
    for rel, data in sorted(tree.items()):
        if not rel.endswith(".sh") or rel in m.files:
            continue
        names = {match.group(2).decode() for match in _SOURCE.finditer(data)}
        hit = sorted(n for n in names if f"test_tipc/{n}" in replaced)
        if not hit:
            continue
        for name in hit:
            legacy = f"{LEGACY}/{name}"
            m.files[legacy] = tree[f"test_tipc/{name}"]
            if legacy not in m.added:
                m.added.append(legacy)
            m.sourced_kept[rel] = legacy
        m.files[rel] = _SOURCE.sub(partial(_pointed, hit=hit), data)
        m.replaced.append(rel)


def _pointed(match: re.Match[bytes], hit: list) -> bytes:
    """A `source` line of the kept script, pointing at test_tipc/legacy/ when it names a hit."""
    name = match.group(2).decode()
    if name not in hit:
        return match.group(0)
    return match.group(1).replace(b"./test_tipc/", b"test_tipc/") + f"legacy/{name}".encode() + (match.group(3) or b"")


def _file_changes(m: Migration) -> None:
    """Which files of the new tree the repo lacks (added) or has otherwise (replaced)."""
    for rel, data in m.files.items():
        path = Path(m.root, *rel.split("/"))
        if not os.path.lexists(path):
            m.added.append(rel)
        elif _repo_bytes(m, path) != data:
            m.replaced.append(rel)


def _with_runner(root: str, reports: list, runner: Optional[str], specs_text: dict) -> list:
    """Every imported spec with `runner:` after its layout, its YAML in `specs_text` redone."""
    from tipcgen.check.spec import load_imported_text
    from tipcgen.importer import config_origin
    from tipcgen.importer.yaml_out import spec_yaml

    loaded = []
    for rel, report in reports:
        report.result.spec = _after_layout(report.result.spec, "runner", runner)
        specs_text[rel] = spec_yaml(report.result, report.result.findings, SCHEMA)
        loaded.append(load_imported_text(specs_text[rel], rel, config_origin(report.result)))
    return loaded


def _which_runner(
    tipc: Path, specs: list, sources: dict, layout: str, runner: Optional[str], timeout: float
) -> Optional[str]:
    """The one of the layout's runners that follows the repo's own script best: each is compared
    with it on the first train config (lite_train_lite_infer); the fewest unexplained differences
    win, the spec's (or the dialect's default) on a tie."""
    from tipcgen.dialects import get_layout
    from tipcgen.migrate.oracle import compare, family_of, run_upstream

    runners = get_layout(layout).dialect.runners
    first = next(((s, suite) for s in specs for suite in s.train_suites.values()), None)
    if len(runners) < 2 or runner is not None or first is None:
        return runner
    spec, suite = first
    source = Path(sources[(spec.model, suite.file)])
    scores = []
    for candidate in runners:
        family = family_of(layout, candidate)
        run = run_upstream(tipc, source, "lite_train_lite_infer", timeout=timeout, repo=family)
        diff = compare(
            source, family, "lite_train_lite_infer", layout=layout, runner=candidate, run=run, timeout=timeout
        )
        scores.append((len(diff.unexplained()), candidate != runners[0], candidate))
    best = min(scores)[2]
    return None if best == runners[0] else best


def _rel(root: str, path: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


def _compare_all(
    m: Migration, specs: list, tipc: Path, prepare_script: Optional[Path], modes, jobs: int, timeout: float, tally=None
) -> None:
    import tempfile

    from tipcgen.dialects import get_layout
    from tipcgen.importer.prepare_steps import DEVIATIONS
    from tipcgen.migrate.oracle import family_of
    from tipcgen.plan.planner import runner_for

    family = family_of(m.layout, m.runner)
    for dev in runner_for(get_layout(m.layout), m.runner).DEVIATIONS:
        m.deviations[dev.name] = f"{dev.what} ({dev.why})"
    tasks = [
        (Path(m.sources[(spec.model, suite.file)]), suite.python, mode)
        for spec in specs
        for suite in spec.train_suites.values()
        for mode in modes
    ]
    with tempfile.TemporaryDirectory(prefix="tipcgen-migrate-") as tmp:
        ours = _our_scripts(m, tmp)
        side = _Sides(m, family, tipc, ours, prepare_script, timeout)
        m.rows = _run_all(side.compare, tasks, jobs, tally)
    for row in m.rows:
        for name in row.prepare_detail.split(", ") if row.prepare == "faithful" else ():
            if name in DEVIATIONS:
                m.deviations[f"prepare: {name}"] = DEVIATIONS[name]


@dataclass
class _Sides:
    """One config x mode: the repo's runner (recorded) vs our Plan, its prepare.sh vs ours."""

    m: Migration
    family: str
    tipc: Path
    ours: Path
    prepare_script: Optional[Path]
    timeout: float

    def compare(self, task: tuple[Path, str, str]) -> Row:
        from tipcgen.migrate.oracle import compare, run_upstream
        from tipcgen.migrate.prepare_diff import compare_prepare

        source, python, mode = task
        rel = _rel(self.m.root, str(source))
        run = run_upstream(self.tipc, source, mode, timeout=self.timeout, repo=self.family)
        diff = compare(
            source, self.family, mode, layout=self.m.layout, runner=self.m.runner, run=run, timeout=self.timeout
        )
        r_verdict, r_detail, found = _diff_row(diff)
        if self.prepare_script is None:
            no_prepare = ("not compared", "the repo has no prepare.sh")
            return Row(rel, mode, r_verdict, r_detail, *no_prepare, differences=found, commands=len(run.commands))
        text = read_bytes(str(source), tree=self.m.root, what="a config").decode("utf-8", "replace")
        p = compare_prepare(self.prepare_script, self.ours, text, rel, mode, python, timeout=self.timeout)
        if p.error:
            p_detail = p.error
        elif p.diff.first is not None:
            p_detail = f"upstream {p.diff.first[0]}, ours {p.diff.first[1]}"
        else:
            p_detail = ", ".join(p.diff.deviations)
        found += _prepare_differences(p.diff.verdict, p_detail)
        verdicts = (r_verdict, r_detail, p.diff.verdict, p_detail)
        return Row(rel, mode, *verdicts, differences=found, commands=len(run.commands))


def _prepare_differences(verdict: str, detail: str) -> list:
    """prepare.sh's difference of a row (its first: the effects differential names one)."""
    if verdict != "CHANGED":
        return []
    category = re.sub(r"\d+", "N", detail.split("\n")[0])[:160]
    return [RowDifference("prepare", "prepare", f"prepare.sh: {category}", detail)]
