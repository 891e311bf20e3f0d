"""The package's shape: no import cycles, typer only in cli/, a light CLI start-up, and every
stage package importable on its own in a fresh interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
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


def _top_level_imports(module: str, path: Path) -> set[str]:
    """tipcgen modules `module` imports when it is imported (function-local imports run later)."""
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If):  # `if TYPE_CHECKING:` blocks do not run
            continue
        for sub in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) else ():
            if isinstance(sub, ast.ImportFrom) and sub.module and sub.level == 0:
                if sub.module.startswith("tipcgen"):
                    found.add(sub.module)
                    for alias in sub.names:  # `from tipcgen.cli import build` imports a module
                        candidate = f"{sub.module}.{alias.name}"
                        if candidate in MODULES:
                            found.add(candidate)
            elif isinstance(sub, ast.ImportFrom) and sub.level:
                raise AssertionError(f"{path}: relative import; the package uses absolute imports")
            elif isinstance(sub, ast.Import):
                found.update(a.name for a in sub.names if a.name.startswith("tipcgen"))
    # importing a.b.c first imports its packages a and a.b
    closure = set()
    for name in found:
        parts = name.split(".")
        closure.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    closure.discard(module)
    return {m for m in closure if m in MODULES and not module.startswith(m + ".")}


def test_no_import_cycles():
    graph = {m: _top_level_imports(m, p) for m, p in MODULES.items()}
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


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_imports_first_in_a_fresh_interpreter(module):
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


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
    found = {".".join(("tipcgen", *init.parent.relative_to(PKG).parts)) for init in PKG.rglob("__init__.py")}
    assert found | {"tipcgen.templates"} == listed, (
        f"missing: {found - listed}; stale: {listed - found - {'tipcgen.templates'}}"
    )
