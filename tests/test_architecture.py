"""The package's shape: the stages as a rank table every import obeys (module level, in functions,
under `if`), no import cycles, typer only in cli/, a light CLI start-up, and every module importable
on its own in a fresh interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
import types
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "compiler" / "tipcgen"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] == "__main__":
            continue
        out[".".join(parts)] = path
    return out


MODULES = _modules()


# The stages, lowest first: a module may import only modules of its own rank or below. Each
# folder is one stage; the use cases (importer, the executors, the CLI) sit above what they use.
RANKS = (
    ("tipcgen", "tipcgen.errors", "tipcgen.escape"),  # the package itself; one error hierarchy; the escapers
    # the gates: bounded reads of untrusted inputs (and the bounded YAML parser); atomic writes, the lock
    ("tipcgen.inputs", "tipcgen.fsio", "tipcgen.spec.yamlpos", "tipcgen.spec.yamlcore"),
    ("tipcgen.sandbox",),  # the one way a repo's own scripts run (migrate, import --prepare)
    ("tipcgen.project",),  # a model repo: where its specs are, what tipcgen owns in its test_tipc/
    ("tipcgen.script",),  # how upstream bash reads config text
    ("tipcgen.dialects",),  # the registry: line tables, detection, per-family data
    ("tipcgen.spec",),  # YAML -> typed Spec
    ("tipcgen.lower",),  # Spec -> config text; ConfigView
    ("tipcgen.plan",),  # config -> steps (runners, benchmark runs)
    ("tipcgen.lint",),  # config -> findings
    ("tipcgen.check",),  # validation in one place; loading an input for a command
    ("tipcgen.emit",),  # files, docs, report rendering
    ("tipcgen.importer",),  # legacy configs -> specs (bench reads a legacy config through it)
    ("tipcgen.run",),  # the executor, prepare, doctor
    ("tipcgen.fleet", "tipcgen.bench"),  # several nodes; benchmark runs
    ("tipcgen.results",),  # records of all three over time: PR summaries, the status page
    ("tipcgen.migrate",),  # switching a repo: its scripts and ours side by side
    ("tipcgen.new",),  # a starter spec for a model without a suite: families, the spec checks, the write gate
    ("tipcgen.cli",),
)


def rank_of(module: str) -> int:
    best = None
    for rank, stages in enumerate(RANKS):
        for stage in stages:
            if (module == stage or module.startswith(stage + ".")) and (best is None or len(stage) > len(best[1])):
                best = (rank, stage)
    assert best is not None, f"{module} is in no stage of RANKS: add its package"
    return best[0]


def every_import(module: str, source: str, filename: str = "<test>") -> list[tuple[int, str]]:
    """(line, tipcgen module) of every import in `source`: module level, inside functions and
    classes, under `if` (TYPE_CHECKING too) and `try` alike."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{filename}:{node.lineno}: relative import; the package uses absolute imports")
            if node.module and node.module.split(".")[0] == "tipcgen":
                found.append((node.lineno, node.module))
                for alias in node.names:  # `from tipcgen.cli import build` imports a module
                    if f"{node.module}.{alias.name}" in MODULES:
                        found.append((node.lineno, f"{node.module}.{alias.name}"))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "tipcgen"]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module",
            "__import__",
        ):
            raise AssertionError(f"{filename}:{node.lineno}: a dynamic import; register modules statically")
    return found


def upward_imports(module: str, source: str, filename: str = "<test>") -> list[str]:
    mine = rank_of(module)
    return [
        f"{filename}:{line}: {module} (rank {mine}) imports {target} (rank {rank_of(target)})"
        for line, target in every_import(module, source, filename)
        if rank_of(target) > mine
    ]


def test_every_import_points_down_the_rank_table():
    bad = [line for module, path in MODULES.items() for line in upward_imports(module, path.read_text(), str(path))]
    assert not bad, "imports pointing up the stages:\n" + "\n".join(bad)


def test_contributing_lists_every_stage_in_the_rank_tables_order():
    """CONTRIBUTING's tree is the map a contributor adds code by: every stage of RANKS, in its
    order (a stage it lacks, or one listed above what imports it, is a false map)."""
    import re

    text = (PKG.parents[1] / "CONTRIBUTING.md").read_text(encoding="utf-8")
    tree = text.split("compiler/tipcgen/\n", 1)[1].split("```", 1)[0]
    heads = [m.group(1) for m in re.finditer(r"^  ((?:\w+(?:\.py|/) ?)+)\s", tree, re.M)]  # "fleet/ bench/"
    listed = [name for head in heads for name in re.findall(r"(\w+)(?:\.py|/)", head)]
    names = {f"tipcgen.{name}" for name in listed}
    stages = [s for rank in RANKS for s in rank if s != "tipcgen" and s.count(".") == 1]
    assert set(stages) <= names, f"stages CONTRIBUTING does not list: {sorted(set(stages) - names)}"
    order = [rank_of(f"tipcgen.{name}") for name in listed if f"tipcgen.{name}" in MODULES]
    assert order == sorted(order), f"CONTRIBUTING lists stages out of the rank order: {listed}"


def test_every_module_has_a_rank():
    for module in MODULES:
        rank_of(module)


def test_an_upward_import_inside_a_function_is_found():
    source = "def f():\n    if True:\n        from tipcgen.cli.build import app\n    return app\n"
    assert upward_imports("tipcgen.spec.load", source) == [
        f"<test>:3: tipcgen.spec.load (rank {rank_of('tipcgen.spec.load')}) imports tipcgen.cli.build"
        f" (rank {rank_of('tipcgen.cli.build')})"
    ]
    typing_only = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tipcgen.plan.steps import Plan\n"
    assert upward_imports("tipcgen.lower.text", typing_only)
    with pytest.raises(AssertionError, match="dynamic import"):
        every_import("tipcgen.plan.planner", "from importlib import import_module\nimport_module('tipcgen.x')\n")


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        deps = {t for _, t in every_import(module, path.read_text(), str(path)) if t in MODULES and t != module}
        graph[module] = {d for d in deps if not module.startswith(d + ".")}  # a package's own parent runs first
    return graph


def test_no_import_cycles_counting_every_import():
    graph = _graph()
    visiting: list[str] = []
    done: set[str] = set()

    def visit(node: str) -> None:
        if node in done:
            return
        if node in visiting:
            cycle = [*visiting[visiting.index(node) :], node]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        visiting.append(node)
        for dep in sorted(graph[node]):
            visit(dep)
        visiting.pop()
        done.add(node)

    for module in sorted(graph):
        visit(module)


def test_the_runner_registry_holds_every_dialects_runners():
    from tipcgen.dialects import LAYOUTS
    from tipcgen.dialects.chains import CHAIN_LAYOUTS
    from tipcgen.plan.registry import RUNNERS

    named = {runner for layout in (*LAYOUTS.values(), *CHAIN_LAYOUTS.values()) for runner in layout.dialect.runners}
    assert named == set(RUNNERS)
    files = {p.stem for p in (PKG / "plan" / "runners").glob("*.py")} - {"__init__", "classic", "table"}
    tables = {layout.dialect.runners[0] for layout in CHAIN_LAYOUTS.values() if layout.dialect.table}
    # a runner is a module of its name, or a value of a module shared by families (dy2static.PADDLESEG
    # is `paddleseg_dy2static`)
    stems = {
        name: (r.__name__ if isinstance(r, types.ModuleType) else type(r).__module__).rsplit(".", 1)[-1]
        for name, r in RUNNERS.items()
        if name not in tables
    }
    assert all(name == stem or name.endswith(f"_{stem}") for name, stem in stems.items()), stems
    assert files == set(stems.values()), "a runner module that is not registered (or the reverse)"
    assert all(len(layout.dialect.runners) == 1 for layout in CHAIN_LAYOUTS.values() if layout.dialect.table)


# One interpreter imports the libraries tipcgen uses (none of tipcgen), then forks a child per
# module that imports that module first: what an import cycle inside tipcgen would break, without
# paying the libraries' imports 200 times. The child's error text comes back on its own line.
_FIRST_IMPORTS = r"""
import os, sys, traceback
import jinja2, pydantic, ruamel.yaml, typer, yaml  # noqa: F401  (third-party: not what is tested)
assert not [m for m in sys.modules if m.split(".")[0] == "tipcgen"]
for module in sys.argv[1:]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            __import__(module)
            os.write(w, b"ok")
        except BaseException:
            os.write(w, traceback.format_exc().encode()[-4000:])
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        said = f.read().decode()
    os.waitpid(pid, 0)
    print(module, repr(said))
"""


@pytest.fixture(scope="module")
def first_imports() -> dict[str, str]:
    proc = subprocess.run(
        [sys.executable, "-c", _FIRST_IMPORTS, *sorted(MODULES)], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    return {line.split(" ", 1)[0]: ast.literal_eval(line.split(" ", 1)[1]) for line in proc.stdout.splitlines()}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_imports_first_in_a_fresh_interpreter(module, first_imports):
    assert first_imports[module] == "ok", first_imports[module]


def test_only_the_cli_imports_typer():
    for module, path in MODULES.items():
        if module.startswith("tipcgen.cli"):
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n.split(".")[0] == "typer" for n in names), f"{module} imports typer"


def test_cli_start_up_imports_no_heavy_library():
    code = "import sys, tipcgen.cli; print(' '.join(sorted(sys.modules)))"
    loaded = set(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    )
    heavy = {"paddle", "httpx", "jinja2", "ruamel", "ruamel.yaml", "rich", "pydantic"}
    assert not heavy & loaded, f"`import tipcgen.cli` loads {sorted(heavy & loaded)}"


def test_the_wheel_lists_every_package():
    """pyproject's explicit package list ships in the wheel: a package missing there imports in an
    editable checkout but not in an installed tipcgen."""
    import re

    text = (PKG.parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^packages = \[(.*?)\]", text, re.S | re.M)
    assert block is not None
    listed = set(re.findall(r'"([\w.]+)"', block.group(1)))
    # every folder holding a module (a folder without __init__.py is a namespace package: it imports
    # in a checkout, but setuptools leaves it out of the wheel unless listed)
    found = {".".join(("tipcgen", *mod.parent.relative_to(PKG).parts)) for mod in PKG.rglob("*.py")}
    assert found | {"tipcgen.templates"} == listed, (
        f"missing: {found - listed}; stale: {listed - found - {'tipcgen.templates'}}"
    )
