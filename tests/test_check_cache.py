"""`tipcgen check`'s cache (emit/check_cache.py): an unchanged spec with unchanged files is not
rendered again, and every change that matters is still seen."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tipcgen.cli import app
from tipcgen.emit import check_cache, render

REPO = Path(__file__).resolve().parents[1]
SPEC = "tiny_rec.yml"


@pytest.fixture
def built(tmp_path, monkeypatch):
    """A spec copied and built into tmp_path/gen, the cache in tmp_path/cache, cwd tmp_path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TIPC_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TIPC_CHECK_CACHE", raising=False)
    (tmp_path / "specs").mkdir()
    shutil.copy(REPO / "specs" / SPEC, tmp_path / "specs" / SPEC)
    assert cli("build", "specs/", "--out", "gen")[0] == 0
    return tmp_path


def cli(*args) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


def renders(monkeypatch) -> list:
    """Count the specs `check` renders (the slow path the cache saves)."""
    seen: list = []
    real = render.render_specs

    def counting(paths, lang):
        seen.extend(paths)
        return real(paths, lang)

    monkeypatch.setattr(render, "render_specs", counting)
    return seen


def test_an_unchanged_spec_is_checked_from_the_cache(built, monkeypatch):
    assert cli("check", "specs/", "--out", "gen")[0] == 0  # a clean check records it
    seen = renders(monkeypatch)
    code, out = cli("check", "specs/", "--out", "gen")
    assert code == 0 and seen == []
    files = sum(1 for p in (built / "gen").rglob("*") if p.is_file())
    assert f"tipcgen check: {files} files up to date" in out
    assert cli("check", "specs/", "--out", "gen", "--no-cache")[0] == 0 and seen == ["specs/" + SPEC]
    monkeypatch.setenv("TIPC_CHECK_CACHE", "0")
    assert cli("check", "specs/", "--out", "gen")[0] == 0 and len(seen) == 2


@pytest.mark.parametrize("change", ["edit", "delete", "stray", "spec", "code", "corrupt"])
def test_every_change_that_matters_is_still_seen(built, monkeypatch, change):
    assert cli("check", "specs/", "--out", "gen")[0] == 0
    config = next((built / "gen").rglob("train_infer_python.txt"))
    seen = renders(monkeypatch)
    if change == "edit":
        config.write_text(config.read_text() + "x\n")
    elif change == "delete":
        config.unlink()
    elif change == "stray":
        (config.parent / "left_over.txt").write_text("old\n")
    elif change == "spec":  # a change of the spec's text changes the config it generates
        spec = built / "specs" / SPEC
        spec.write_text(spec.read_text().replace("model: tiny_rec\n", "model: tiny_rec\n# edited\n", 1))
    elif change == "code":  # another tipcgen (code or templates): every key is new
        monkeypatch.setattr(check_cache, "code_digest", lambda: "another tipcgen")
    elif change == "corrupt":
        cache = next((built / "cache").glob("check-v*.json"))
        cache.write_text("{not json")
    code, out = cli("check", "specs/", "--out", "gen")
    assert seen == ["specs/" + SPEC], "the spec was not rendered again"
    if change in ("edit", "delete", "stray"):
        assert code == 1, out
        assert {"edit": "(on disk)", "delete": "missing: ", "stray": "stale: "}[change] in out
    else:  # rendered again: the files still match
        assert code == 0, out


def test_a_cache_that_cannot_be_written_changes_nothing(built, monkeypatch):
    blocker = built / "not_a_dir"
    blocker.write_text("")
    monkeypatch.setenv("TIPC_CACHE", str(blocker / "cache"))
    assert cli("check", "specs/", "--out", "gen")[0] == 0
    assert cli("check", "specs/", "--out", "gen")[0] == 0


def test_the_cache_keeps_only_states_and_keys(built):
    assert cli("check", "specs/", "--out", "gen")[0] == 0
    cache = next((built / "cache").glob("check-v*.json"))
    data = json.loads(cache.read_text())
    (entry,) = data["entries"].values()
    assert entry["model"] == "tiny_rec" and all(len(v) == 3 for v in entry["state"].values())
    assert oct(os.stat(cache).st_mode & 0o777) == "0o600"  # other users see no paths of yours


# ---- repo mode (`tipcgen check` with no SPEC, in a model repo's root)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A model repo with two specs in test_tipc/specs/, built; cwd its root."""
    root = tmp_path / "PaddleOCR"
    (root / "test_tipc/specs").mkdir(parents=True)
    for name in ("ch_PP-OCRv3_rec.yml", SPEC):
        shutil.copy(REPO / "specs" / name, root / "test_tipc/specs" / name)
    monkeypatch.chdir(root)
    monkeypatch.setenv("TIPC_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TIPC_CHECK_CACHE", raising=False)
    assert cli("build")[0] == 0
    assert cli("check")[0] == 0  # a clean check records it
    return root


def repo_renders(monkeypatch) -> list:
    """Count the repo renders `check` does (the slow path the cache saves)."""
    from tipcgen.emit import repo as emit_repo

    seen: list = []
    real = emit_repo.repo_files

    def counting(project, specs, lang=None):
        seen.extend(s.model for s in specs)
        return real(project, specs, lang)

    monkeypatch.setattr(emit_repo, "repo_files", counting)
    return seen


@pytest.mark.parametrize("how", ["touch", "rewrite-same", "replace-inode"])
def test_a_repo_spec_touched_or_saved_unchanged_is_no_miss(repo, monkeypatch, how):
    """Its bytes are in the key: a new mtime or inode of a spec (an editor's save, a checkout)
    renders nothing again; the repo's generated files' state is still compared."""
    spec = repo / "test_tipc/specs" / SPEC
    data = spec.read_bytes()
    if how == "touch":
        os.utime(spec, ns=(1, 1))
    elif how == "rewrite-same":
        spec.write_bytes(data)
        os.utime(spec, ns=(2, 2))
    else:
        spec.unlink()
        spec.write_bytes(data)
    seen = repo_renders(monkeypatch)
    code, out = cli("check")
    assert code == 0 and seen == [], out


@pytest.mark.parametrize("change", ["spec", "generated", "delete"])
def test_a_repo_change_that_matters_is_still_seen(repo, monkeypatch, change):
    seen = repo_renders(monkeypatch)
    if change == "spec":  # new bytes: a new key (the files it generates still match)
        spec = repo / "test_tipc/specs" / SPEC
        spec.write_text(spec.read_text().replace("model: tiny_rec\n", "model: tiny_rec\n# edited\n", 1))
    elif change == "generated":
        runner = repo / "test_tipc/test_train_inference_python.sh"
        runner.write_text(runner.read_text() + "# edited\n")
    else:
        next((repo / "test_tipc/configs/tiny_rec").glob("*.txt")).unlink()
    code, out = cli("check")
    assert sorted(seen) == ["ch_PP-OCRv3_rec", "tiny_rec"], "the repo was not rendered again"
    assert code == (0 if change == "spec" else 1), out


def test_an_edit_of_any_template_or_shim_changes_the_code_digest(tmp_path, monkeypatch):
    """The caches' keys hold tipcgen's code and templates: a template below templates/ (the
    harness's shims in templates/shims/) edited is a new key, so no verdict of the old shim is reused."""
    from importlib import resources

    copy = tmp_path / "templates"
    shutil.copytree(str(resources.files("tipcgen.templates")), copy)
    real_files = resources.files
    monkeypatch.setattr(resources, "files", lambda pkg: copy if pkg == "tipcgen.templates" else real_files(pkg))
    before = check_cache.code_digest()
    assert check_cache.code_digest() == before
    for rel in ("shims/recorder.sh", "prepare_lib.sh"):
        path = copy / rel
        path.write_text(path.read_text() + "# edited\n")
        after = check_cache.code_digest()
        assert after != before, rel
        before = after


@pytest.mark.parametrize("spec_name", ["tiny_rec.yml", "mobilenet_v3_small.yml"])
def test_a_cold_check_plans_each_config_once_per_mode(spec_name, tmp_path, monkeypatch):
    """Validation (what the runner refuses), lint's effect checks and the docs each read every
    train config's Plans in every mode: a cold check makes them once (plan/planner.py mode_plans),
    plus only what lint plans of its own (a config with a typo fixed, none here). A chain's suite
    is planned apart (its Plans may depend on the config's name)."""
    from collections import Counter

    from tipcgen.check import spec as check_spec
    from tipcgen.check.spec import load_spec
    from tipcgen.dialects import get_layout
    from tipcgen.emit.files import build_files
    from tipcgen.lint.checks import lint_text
    from tipcgen.lower.text import config_text
    from tipcgen.plan import planner
    from tipcgen.spec.ir import is_chain_layout

    path = tmp_path / spec_name
    shutil.copy(REPO / "specs" / spec_name, path)
    made: Counter = Counter()

    class Counted(planner.Builder):  # every Plan is made by plan_config on a Builder of its own
        def __init__(self, view, mode, *rest):
            made.update([(view.layout.name, mode)])
            super().__init__(view, mode, *rest)

    monkeypatch.setattr(planner, "Builder", Counted)
    if hasattr(planner, "forget_plans"):  # kept Plans of another test would hide the count
        planner.forget_plans()
    check_spec._planning_refusal.cache_clear()
    spec = load_spec(str(path))
    build_files(spec)
    layout = get_layout(spec.layout)
    train = [s for s in spec.suites.values() if not is_chain_layout(s.layout)]
    assert train
    for suite in train:
        # the premise: lint claims nothing of these configs that needs a Plan of another text
        found = lint_text(config_text(suite, layout), layout, "x.txt")
        assert not [f for f in found if f.rule == "TIPC001"], found
    modes = planner.runner_for(layout, spec.runner).MODES
    assert {m: made[(layout.name, m)] for m in modes} == {m: len(train) for m in modes}, made


def test_the_kept_plans_are_bounded_by_their_steps(monkeypatch):
    """A hostile spec's matrices (thousands of steps per mode) cannot make the kept Plans grow
    past their bound: the oldest go first, and a set larger than the bound is not kept at all."""
    from tipcgen.dialects import get_layout
    from tipcgen.plan import planner

    text = sorted((REPO / "tests" / "fixtures").glob("paddleclas/*.txt"))[0].read_text()
    layout = get_layout("paddleclas")
    planner.forget_plans()
    one = sum(len(p.steps) + 1 for p in planner.mode_plans(text, layout).values())
    monkeypatch.setattr(planner, "KEPT_STEPS_MAX", one * 2)
    for i in range(5):  # texts differing in a comment-free way: another model name each
        planner.mode_plans(text.replace("model_name:", f"model_name:m{i}", 1), layout)
        assert planner._KEPT_STEPS[0] <= one * 2
    assert len(planner._KEPT) == 2
    monkeypatch.setattr(planner, "KEPT_STEPS_MAX", one - 1)
    planner.forget_plans()
    planner.mode_plans(text, layout)
    assert not planner._KEPT and planner._KEPT_STEPS[0] == 0
    planner.forget_plans()
