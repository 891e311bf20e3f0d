"""A repo's prepare.sh imported by behaviour: traced for every suite's config in every mode
(prepare_trace), typed (prepare_steps), and folded into the spec: per mode, the steps most of the
spec's configs share become its `prepare`, a config that does something else gets its own suite
`prepare` for that mode (the generated prepare.sh picks it by file name, as upstream's does).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from tipcgen.errors import Problem, SpecError, UsageError, printable
from tipcgen.importer.prepare_steps import Imported, steps_from_ops
from tipcgen.importer.prepare_trace import DEFAULT_TIMEOUT, trace_prepare
from tipcgen.script.code import code_only
from tipcgen.spec.modes import MODES, PREPARE_MODES, TRAIN_CONFIG_MODES


@dataclass
class PrepareImport:
    spec_steps: dict[str, list[dict]]  # mode -> the spec's steps
    suite_steps: dict[str, dict[str, list[dict]]]  # suite -> mode -> its own steps
    untyped: list[str] = field(default_factory=list)  # commands kept as `run` steps (distinct)
    deviations: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # (suite, mode): why its trace is not used


def config_rel(source: str, model: str, file: str) -> str:
    """The path the repo's scripts get the config as: its own below test_tipc/, when it has one."""
    norm = os.path.abspath(source).replace(os.sep, "/")
    marker = "/test_tipc/configs/"
    if marker in norm:
        return "test_tipc/configs/" + norm.split(marker, 1)[1]
    return f"test_tipc/configs/{model}/{file}"


def find_prepare(sources: list[str]) -> Optional[Path]:
    """The repo's test_tipc/prepare.sh next to configs under `<repo>/test_tipc/configs/`."""
    for source in sources:
        norm = os.path.abspath(source)
        marker = os.sep + os.path.join("test_tipc", "configs") + os.sep
        if marker in norm:
            repo = norm.split(marker, 1)[0]
            candidate = Path(repo) / "test_tipc" / "prepare.sh"
            if os.path.lexists(candidate):
                check_prepare_script(str(candidate), repo)  # a link leading out is an error, not skipped
                return candidate
    return None


def check_prepare_script(path: str, tree: Optional[str] = None) -> None:
    """A SpecError unless `path` is a regular file inside `tree` (default: its folder) that a
    prepare.sh could be: at most MAX_FILE_BYTES of text."""
    from tipcgen.inputs import MAX_FILE_BYTES, read_bytes

    data = read_bytes(path, MAX_FILE_BYTES, tree=tree, what="a prepare.sh")
    if len(data) > MAX_FILE_BYTES:
        raise SpecError([Problem(path, None, None, None, f"more than {MAX_FILE_BYTES} bytes; not a prepare.sh")])
    if b"\0" in data:
        raise SpecError([Problem(path, None, None, None, "a binary file (NUL bytes), not a prepare.sh")])


_MODE_TEST = re.compile(r"\$\{?MODE\}?\"?\s*==?\s*[\"']?([A-Za-z_][A-Za-z0-9_]*)")
# `bash test_tipc/prepare.sh CONFIG MODE` in a doc or a script (the mode may be quoted)
_MODE_CALL = re.compile(r"prepare\.sh[\"']?\s+[^\s|;&]+\s+[\"']?([A-Za-z_][A-Za-z0-9_]*)")


def repo_prepare_modes(script: Path) -> set[str]:
    """The modes a repo's prepare.sh is in use for: those it tests for (`${MODE} = "cpp_infer"`),
    and those its folder's other scripts and docs/ call it with (`prepare.sh CONFIG benchmark_train`)."""
    from tipcgen.inputs import MAX_FILE_BYTES, read_bytes

    def text(path: Path) -> str:
        return read_bytes(str(path), MAX_FILE_BYTES, tree=str(script.parent), what="a script or doc").decode(
            "utf-8", "replace"
        )

    # scripts by their code only (a comment naming a mode uses none), docs by their text
    found = set(_MODE_TEST.findall(code_only(text(script))))
    docs = script.parent / "docs"
    others = [p for p in sorted(script.parent.glob("*.sh")) if p.name != script.name]
    others += sorted(docs.rglob("*.md")) if docs.is_dir() and not docs.is_symlink() else []
    for path in others:
        if path.is_file() and not path.is_symlink():
            body = code_only(text(path)) if path.suffix == ".sh" else text(path)
            found |= {m for m in _MODE_CALL.findall(body) if m.lower() != "mode"}  # a usage line's placeholder
    return found


def train_config_modes(script: Optional[Path]) -> tuple[str, ...]:
    """The modes a train config is prepared for: MODES, and those of TRAIN_CONFIG_MODES the
    repo's prepare.sh is in use for (benchmark_train, klquant_whole_infer)."""
    used = repo_prepare_modes(script) if script is not None else set()
    return MODES + tuple(m for m in TRAIN_CONFIG_MODES if m in used)


def _refuse_if_never_ran(script: Path, traces: dict) -> None:
    """A UsageError when the script failed in every traced mode having done nothing: not a
    prepare.sh (`--prepare /etc/shadow`), or one that cannot run here; an empty `prepare` section
    would be a silent lie."""
    done = [t for t in traces.values() if not t.timed_out]
    if not done or any(t.ops or t.returncode == 0 for t in done):
        return
    first = next((line for t in done for line in t.stderr.splitlines() if line.strip()), "no output")
    raise UsageError(
        f"{script}: error: the script failed in every traced config and mode and ran no command "
        f"(first error: {printable(first[:200])}); is it the repo's test_tipc/prepare.sh? "
        "(`--prepare none` imports without it)"
    )


def import_prepare(
    script: Path,
    model: str,
    suites: dict[str, tuple[str, str, str]],
    modes: tuple[str, ...] = MODES,
    timeout: float = DEFAULT_TIMEOUT,
    jobs: int = 0,
    suite_modes: Optional[dict[str, tuple[str, ...]]] = None,
) -> PrepareImport:
    """`suites`: name -> (config source path, config text, its python). Every (suite, mode) is
    traced with `script` (its folder's other *.sh are staged beside it); `suite_modes` gives a
    suite other modes (another chain's config: its script's)."""
    own = suite_modes or {}
    tasks = [(name, mode) for name in suites for mode in own.get(name, modes)]
    modes = tuple(dict.fromkeys([*modes, *(m for ms in own.values() for m in ms)]))

    def one(task: tuple[str, str]):
        name, mode = task
        source, text, python = suites[name]
        rel = config_rel(source, model, os.path.basename(source))
        return trace_prepare(script.parent, text, rel, mode, python=python, timeout=timeout, script=script.name)

    workers = jobs or min(4, os.cpu_count() or 1)
    with ThreadPoolExecutor(workers) as pool:
        traces = dict(zip(tasks, pool.map(one, tasks)))
    _refuse_if_never_ran(script, traces)
    result = PrepareImport({}, {})
    typed: dict[tuple[str, str], Imported] = {}
    for (name, mode), trace in traces.items():
        if trace.timed_out:
            result.failures.append(f"{name} {mode}: {script} did not finish in {timeout:g} s")
            continue
        typed[(name, mode)] = imp = steps_from_ops(trace.ops)
        for kind, items in (("untyped", imp.untyped), ("deviations", imp.deviations), ("outside", imp.outside)):
            seen = getattr(result, kind)
            seen.extend(i for i in items if i not in seen)
    for mode in modes:
        lists = {name: typed[(name, mode)].steps for name in suites if (name, mode) in typed}
        if not lists:
            continue
        counts = Counter(repr(v) for v in lists.values())
        common_key = counts.most_common(1)[0][0]
        common = next(v for v in lists.values() if repr(v) == common_key)
        # a mode beyond MODES is kept even with no steps: the generated prepare.sh then takes it
        # (and does nothing), as upstream's does, rather than refusing it as unknown
        if common or (mode not in MODES and mode in PREPARE_MODES):
            result.spec_steps[mode] = common
        for name, steps in lists.items():
            if repr(steps) != common_key:
                result.suite_steps.setdefault(name, {})[mode] = steps
    return result


def _raw_prepare(script: Path, spec: Any, sources: dict, timeout: float) -> dict[str, dict[str, list[dict]]]:
    """Each verbatim config (another chain's, kept for the repo's own script) -> {each mode of its
    script (spec/modes.py: a chain's own, the train modes for PTQ) the repo's prepare.sh is in use
    for: the steps it takes for that config}, traced as a suite's are; a config whose model_name
    line is no plain name (prepare.sh dispatches on it) is left out."""
    from tipcgen.dialects import config_readers
    from tipcgen.script.lines import config_python
    from tipcgen.spec.ir import prepare_word_modes
    from tipcgen.spec.modes import serves
    from tipcgen.spec.policy import name_problem

    in_use = repo_prepare_modes(script)
    words = prepare_word_modes(spec.layout)
    out: dict[str, dict[str, list[dict]]] = {}
    for file, raw in spec.other_configs.items():
        text = raw.text()
        scripts = config_readers(text)
        modes = tuple(
            m
            for m in PREPARE_MODES
            if m in in_use and serves(m, scripts) and not name_problem(raw.model_name(m in words))
        )
        if not modes or file not in sources:
            continue
        python = config_python(text) or "python"
        try:
            found = import_prepare(
                script, spec.model, {file: (sources[file], text, python)}, modes=modes, timeout=timeout
            )
        except UsageError:  # the script ran nothing for it in any of these modes: nothing to carry
            continue
        steps = {mode: found.spec_steps[mode] for mode in modes if mode in found.spec_steps}
        if steps:
            out[file] = steps
    return out


def chain_prepare_modes(layout: str, used: Optional[set] = None) -> tuple[str, ...]:
    """The modes of a chain's script that prepare.sh prepares for: its chain modes, and the train
    modes it runs in (PaddleClas's PTQ script runs in whole_infer, prepared as
    `prepare.sh <its config> whole_infer`: the steps its own config's lines give); and its
    dialect's `prepare_modes` that the repo's prepare.sh is in use for (`used`: repo_prepare_modes;
    None: all of them)."""
    from tipcgen.dialects import get_layout
    from tipcgen.plan.planner import runner_for

    found = get_layout(layout)
    own = runner_for(found).MODES
    more = [m for m in found.dialect.prepare_modes if used is None or m in used]
    return tuple(m for m in PREPARE_MODES if m in own or m in more)


def with_prepare(spec: dict, found: PrepareImport) -> dict:
    """The imported spec's data with the prepare sections (placed after `docs`/`runner`)."""
    out: dict = {}
    for key, value in spec.items():
        if key in ("defaults", "presets", "suites", "other_configs") and "prepare" not in out and found.spec_steps:
            out["prepare"] = found.spec_steps
        out[key] = value
    if "prepare" not in out and found.spec_steps:
        out["prepare"] = found.spec_steps
    suites = out.get("suites") or {}
    for name, modes in found.suite_steps.items():
        if name in suites:
            suites[name] = {**suites[name], "prepare": modes}
    return out


def add_prepare(
    report, script: Path, timeout: float = DEFAULT_TIMEOUT, schema: str = "../generated/spec.schema.json"
) -> tuple[Any, PrepareImport]:
    """An import GroupReport with its spec's prepare sections traced from `script` (the YAML
    rewritten and verified to rebuild the configs again)."""
    import dataclasses

    from tipcgen.check.spec import load_imported_text
    from tipcgen.importer import config_origin, verify_roundtrip
    from tipcgen.importer.yaml_out import spec_yaml
    from tipcgen.script.decode import read_config

    result = report.result
    spec = load_imported_text(report.yaml, f"{report.model}.yml", config_origin(result))
    suites, chain_modes = {}, {}
    for name, suite in spec.suites.items():
        source = result.sources[suite.file]
        suites[name] = (source, read_config(source).decode("utf-8", "replace"), suite.python)
        if name in spec.chain_suites:  # prepared for by its chain's modes (upstream: `paddle2onnx_infer`)
            chain_modes[name] = chain_prepare_modes(str(suite.layout), repo_prepare_modes(script))
    modes = train_config_modes(script)
    found = import_prepare(script, spec.model, suites, modes=modes, timeout=timeout, suite_modes=chain_modes)
    raw = _raw_prepare(script, spec, result.sources, timeout)
    if not found.spec_steps and not found.suite_steps and not raw:
        return report, found
    data = with_prepare(result.spec, found)
    for file, steps in raw.items():
        data["other_configs"][file] = {**data["other_configs"][file], "prepare": steps}
    new = dataclasses.replace(result, spec=data)
    text = spec_yaml(new, new.findings, schema)
    bad = verify_roundtrip(new, text, f"{report.model}.yml")
    if bad:  # cannot happen unless prepare touched the configs: say so rather than write it
        raise AssertionError(f"{report.model}: adding prepare changed configs {bad}")
    return dataclasses.replace(report, yaml=text, result=new), found
