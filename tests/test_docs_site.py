"""The docs site (mkdocs.yml, docs/): the generated reference pages are the code's (a stale page fails
here and stops the build), every page is in both languages with the same examples, and the site
builds with warnings as errors (`mkdocs build --strict`, second tier: a broken link, a page left
out of the nav or a stale reference page each fail it)."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.doc_examples import blocks
from helpers.tools import require

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def _docs_reference():
    spec = importlib.util.spec_from_file_location("docs_reference", REPO / "scripts" / "docs_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_pages_are_what_the_code_gives():
    ref = _docs_reference()
    assert ref.stale() == [], "run `python scripts/docs_reference.py`"
    made = ref.pages()
    # Each page holds what it is generated from: every command, every spec object, every deviation.
    from tipcgen.plan.registry import RUNNERS
    from tipcgen.spec.schema import spec_schema

    cli = made[ref.OUT / "cli.md"]
    for name in ("build", "run", "migrate", "fleet", "import", "lint", "validate", "schema"):
        assert f"## `tipcgen {name}`" in cli
    spec = made[ref.OUT / "spec.zh.md"]
    assert all(f"## {name}\n" in spec for name in spec_schema()["$defs"])
    devs = made[ref.OUT / "deviations.md"]
    for runner in RUNNERS.values():
        assert all(f"| `{d.name}` |" in devs for d in runner.DEVIATIONS)


def test_a_stale_reference_page_is_named(tmp_path, monkeypatch):
    """Hostile: a hand edit, a deleted page, and a code change the page has not followed."""
    ref = _docs_reference()
    out = tmp_path / "reference"
    shutil.copytree(ref.OUT, out)
    monkeypatch.setattr(ref, "OUT", out)
    monkeypatch.setattr(ref, "ROOT", tmp_path)
    assert ref.stale() == []
    (out / "cli.md").write_text((out / "cli.md").read_text() + "\nhand-written line\n")
    (out / "spec.zh.md").unlink()
    assert ref.stale() == ["reference/cli.md", "reference/spec.zh.md"]
    ref.main([])
    assert ref.stale() == []
    from tipcgen.plan.registry import RUNNERS

    runner = RUNNERS["paddleclas"]  # a module: its records are module constants
    added = dataclasses.replace(runner.DEVIATIONS[0], name="a-new-deviation")
    monkeypatch.setattr(runner, "DEVIATIONS", (*runner.DEVIATIONS, added))
    assert ref.stale() == ["reference/deviations.md", "reference/deviations.zh.md"]
    assert ref.main(["--check"]) == 1


def _pages(lang: str) -> set[str]:
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    zh = {p[: -len(".zh.md")] for p in pages if p.endswith(".zh.md")}
    en = {p[: -len(".md")] for p in pages if not p.endswith(".zh.md")}
    return zh if lang == "zh" else en


def test_every_page_is_in_both_languages_with_the_same_examples():
    assert _pages("zh") == _pages("en")
    for stem in _pages("en"):
        en, zh = DOCS / f"{stem}.md", DOCS / f"{stem}.zh.md"
        # the same commands, the same markers: a reader of either language runs the same thing
        pairs = [(b.commands, b.cwd, b.exits, b.contains, b.not_run, b.needs) for b in blocks(en)]
        assert pairs == [(b.commands, b.cwd, b.exits, b.contains, b.not_run, b.needs) for b in blocks(zh)], stem
        # each page links to its other language (the hook turns that line into the theme's switch)
        assert f"]({Path(stem).name}.zh.md)" in en.read_text(encoding="utf-8"), en
        assert f"]({Path(stem).name}.md)" in zh.read_text(encoding="utf-8"), zh


def _nav_pages() -> set[str]:
    return set(re.findall(r"^\s*- (?:[\w ]+: )?([\w/.-]+\.md)$", (REPO / "mkdocs.yml").read_text(), re.M))


def test_every_page_is_in_the_nav():
    assert _nav_pages() == {f"{stem}.md" for stem in _pages("en") if stem != "index"} | {"index.md"}


def _build(root: Path) -> subprocess.CompletedProcess:
    require("" if importlib.util.find_spec("mkdocs") else "mkdocs is not installed (pip install -e '.[docs]')")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(root / "site")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"},
    )


def _site_copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy(REPO / "mkdocs.yml", root)
    shutil.copytree(DOCS, root / "docs")
    shutil.copytree(REPO / "scripts", root / "scripts")
    return root


@pytest.mark.slow
def test_the_site_builds_strictly_in_both_languages(tmp_path):
    root = _site_copy(tmp_path)
    proc = _build(root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = root / "site"
    for page in ("", "getting-started/", "reference/spec/", "reference/cli/", "migrate/", "multinode/"):
        zh = (site / page / "index.html").read_text(encoding="utf-8")
        en = (site / "en" / page / "index.html").read_text(encoding="utf-8")
        assert 'lang="zh"' in zh and 'lang="en"' in en, page
    assert "快速开始" in (site / "getting-started" / "index.html").read_text(encoding="utf-8")
    assert "Getting started" in (site / "en" / "getting-started" / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize(
    "breakage",
    ["broken link", "page left out of the nav", "stale reference page", "missing anchor"],
)
def test_a_broken_site_fails_the_strict_build(tmp_path, breakage):
    root = _site_copy(tmp_path)
    docs = root / "docs"
    if breakage == "broken link":
        page = docs / "migrate.md"
        page.write_text(page.read_text(encoding="utf-8") + "\nSee [gone](no-such-page.md).\n", encoding="utf-8")
    elif breakage == "page left out of the nav":
        (docs / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
    elif breakage == "stale reference page":
        page = docs / "reference" / "cli.md"
        page.write_text(page.read_text(encoding="utf-8").replace("tipcgen build", "tipcgen bild", 1), encoding="utf-8")
    else:
        page = docs / "index.md"
        page.write_text(page.read_text(encoding="utf-8") + "\n[x](migrate.md#no-such-anchor)\n", encoding="utf-8")
    proc = _build(root)
    assert proc.returncode != 0, f"{breakage}: the strict build passed\n{proc.stdout}{proc.stderr}"
    # the build names what is wrong
    said = {
        "broken link": "no-such-page.md",
        "page left out of the nav": "orphan.md",
        "stale reference page": "stale generated reference pages: docs/reference/cli.md",
        "missing anchor": "no-such-anchor",
    }[breakage]
    assert said in proc.stderr, proc.stderr[-2000:]


def test_the_readme_is_short_and_its_links_resolve():
    """README.md stays an entry page (<= 200 lines: what tipcgen is, set-up, the three uses); the
    facts live in docs/. Each relative link of it names a file of the repo, anchors included."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert len(local) >= 15, local
    assert [link for link in local if not (REPO / link).is_file()] == []
    # the issue 31 row the lead keeps: how to migrate a repo
    assert "Migrating a repo" in text and "(docs/migrate.md)" in text


def test_the_setup_commands_are_what_ci_runs():
    """The README's two set-up commands (and their copy in Getting started) install extras that
    .ci/run installs on its fresh machine, and its test command is CI's fast tier, so CI running
    green means the README's commands work."""
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    ci_extras = set(re.search(r'pip install --quiet -e "\.\[([\w,]+)\]"', ci).group(1).split(","))
    for page in (REPO / "README.md", DOCS / "getting-started.md", DOCS / "getting-started.zh.md"):
        setup = next(b for b in blocks(page) if "pip install" in b.text and "pytest" in b.text)
        install, test = setup.commands
        assert set(re.search(r'"\.\[([\w,]+)\]"', install).group(1).split(",")) <= ci_extras, page
        assert "tipcgen build specs/ch_PP-OCRv3_rec.yml" in install, page
        assert test == "python3 -m pytest -q" and "\npython3 -m pytest -q\n" in ci, page
