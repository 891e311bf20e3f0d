"""`tipcgen migrate` on whole scratch repos of each family (every script, helper and doc of the repo's
test_tipc/, its .gitignore, one config of each kind, nested folders kept), the whole-tree oracle's
verdicts held to what a maintainer sees: every entry script is run, the report says ready only when
no entry point changes, every differing command of every changed one is in the report, and the
switched tree --apply writes is the one the oracle ran."""

from __future__ import annotations

import os
import subprocess

import pytest

from helpers.cli import invoke_in
from helpers.upstream import corpus_dir
from helpers.whole_repo import FAMILIES, available, whole_repo
from tipcgen.migrate.entrypoints import old_tree, scripts_of

pytestmark = [pytest.mark.corpus, pytest.mark.sandbox, pytest.mark.slow]
# The second tier runs one family (its time); TIPC_FULL_SWEEP=1 all four.
SWEEP = FAMILIES if os.environ.get("TIPC_FULL_SWEEP") else ("PaddleSeg",)


@pytest.mark.parametrize("repo", SWEEP)
def test_every_entry_point_is_run_and_every_change_is_in_the_report(tmp_path, repo):
    if not available(repo):
        if os.environ.get("TIPC_REQUIRE_CORPUS"):
            pytest.fail(f"TIPC_REQUIRE_CORPUS is set but {repo}'s corpus or upstream scripts are missing")
        pytest.skip(f"{repo}: corpus or upstream scripts absent (../shared)")
    root = whole_repo(tmp_path / repo, repo, sample=True)
    tree, configs = old_tree(root)
    # --mode leaves the other train modes out: a script that takes only those is not compared
    left_out = {"lite_train_whole_infer", "whole_train_whole_infer", "whole_infer"}
    entry_scripts = {i.script for i in scripts_of(root, tree) if not i.modes or set(i.modes) - left_out}
    result = invoke_in(root, "migrate", "--mode", "lite_train_lite_infer", "--report", str(tmp_path / "r.md"))
    report = (tmp_path / "r.md").read_text()
    assert "## Every entry point of the old test_tipc/, before and after" in report, result.output
    assert "`whole_infer` (left out by `--mode`)" in " ".join(report.split())
    table = report.split("### Every entry point", 1)[1].split("\n## ", 1)[0]
    seen = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `test_tipc/")}
    assert len(table.splitlines()) > len(entry_scripts), table
    assert seen == entry_scripts, "every script of the old tree that is not only sourced is an entry point"
    changed = [line for line in table.splitlines() if "| CHANGED" in line]
    ready = "Migration: ready." in report
    assert ready == (not changed and result.exit_code == 0), (len(changed), result.exit_code)
    if changed:
        assert result.exit_code == 1 and "### Changed entry points" in report
    # every prepare.sh mode in use survives, on every config the old tree's scripts read (the
    # verbatim chain configs' included): judged by its effects, as prepare.sh's rows are
    assert not [line for line in changed if line.startswith("| `test_tipc/prepare.sh`")], changed
    # a script sourcing common_func.sh kept, and the generated common_func.sh: the functions it calls work
    for line in table.splitlines():
        if line.startswith("| `test_tipc/test_paddle2onnx.sh`"):
            assert "/ 127 |" not in line, line
    # each family's whole tree switches with nothing changed but named deviations: the report is
    # ready, a plain --apply writes it, and the switched repo is what its specs build
    assert ready and result.exit_code == 0, [line[:300] for line in changed]
    if repo == "PaddleSeg":
        _another_familys_chain_configs_are_kept(root)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    applied = invoke_in(root, "migrate", "--mode", "lite_train_lite_infer", "--apply")
    assert applied.exit_code == 0, applied.output[-2000:]
    # written from the report's verdicts (the cache)
    assert "inputs unchanged since the last report" in applied.output, applied.output[-2000:]
    checked = invoke_in(root, "check")
    assert checked.exit_code == 0, checked.output[-2000:]
    if repo == "PaddleSeg":
        # the root's `*.manifest` hid tipcgen's ownership record: the line --apply wrote shows it to git
        assert "!/.tipcgen.manifest\n" in (root / "test_tipc/.gitignore").read_text()
        listed = subprocess.run(
            ["git", "-c", "core.excludesFile=", "ls-files", "--others", "--exclude-standard", "test_tipc"],
            cwd=root, capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        assert "test_tipc/.tipcgen.manifest" in listed and "test_tipc/spec.schema.json" in listed
        folder = "test_tipc/configs/deeplabv3p_resnet50"
        assert (root / f"{folder}/train_dy2static_python.txt").read_bytes() == (
            corpus_dir() / "PaddleSeg/deeplabv3p_resnet50/train_dy2static_python.txt"
        ).read_bytes()


def _another_familys_chain_configs_are_kept(root) -> None:
    """PaddleSeg's shapes, on the Migration the report above left in the verdict cache: its
    dy2static config (PaddleClas's lines) is typed by PaddleSeg's own dy2static layout and its
    script generated; its serving configs are its own serving tables' (their scripts generated); the root
    .gitignore's `*.manifest` is answered."""
    from tipcgen.migrate import cache
    from tipcgen.migrate.report import report_markdown
    from tipcgen.sandbox import DEFAULT_TIMEOUT

    modes = ("lite_train_lite_infer",)
    key = cache.input_key(str(root), cache.options(modes, DEFAULT_TIMEOUT, True, None, "auto", None))
    m = cache.load(dict(os.environ), key, str(root))
    assert m is not None, "the report leaves its Migration in the verdict cache"
    folder = "test_tipc/configs/deeplabv3p_resnet50"
    assert f"{folder}/train_dy2static_python.txt" not in m.configs_kept
    assert "test_tipc/test_train_dy2static_python.sh" in m.files
    assert any(r.config.endswith("dy2static_python.txt") for r in m.chain_rows)
    for kind in ("python", "cpp"):
        assert f"{folder}/model_linux_gpu_normal_normal_serving_{kind}_linux_gpu_cpu.txt" not in m.configs_kept
        assert f"test_tipc/test_serving_infer_{kind}.sh" in m.files
    # every run compared identical or faithful; entry points that would change are named one by one
    assert m.rows and all(r.commands > 0 for r in m.rows) and not m.changed, m.changed
    assert all(e.differences for e in m.entries_changed)
    # --mode lite_train_lite_infer: no row and no entry point in the runner modes it left out
    # (a chain's own modes still run), and the report says which were not compared
    assert m.modes_left_out == ["lite_train_whole_infer", "whole_train_whole_infer", "whole_infer"]
    assert not {e.entry.mode for e in m.entries} & set(m.modes_left_out)
    assert {e.entry.mode for e in m.entries} > {"lite_train_lite_infer", None}
    assert "`whole_infer` (left out by `--mode`)" in " ".join(report_markdown(m).split())
    # the root's `*.manifest` hides tipcgen's ownership record: one verified line shows it
    assert m.gitignore_hidden == ["test_tipc/.tipcgen.manifest"] and m.gitignore == ["!/.tipcgen.manifest"]
