"""Trust, second pass: inputs a pull request can commit (symbolic links in every input
position, file names that forge output lines, configs lint used to pass but the runner refuses, a
spec whose step matrix explodes). Each case goes through the real CLI in a fresh process.

The rule under test (tipcgen/inputs.py, docs/untrusted.md): a file is read only when its
real path lies inside the directory tree it was given in (a directory argument; for a file
argument, the directory holding it)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from conftest import SPECS
from helpers.machine import bound
from test_cli_safety import CONFIG, MODE, refused, snapshot, tipcgen_all

SECRET = "s3cr3t-token-of-the-ci-machine"
GENERATED_CONFIG = SPECS.parent / "generated/tiny_rec" / CONFIG


@pytest.fixture
def secret(tmp_path) -> Path:
    """A file outside every tree a command is given: what a link in a PR would point at."""
    d = tmp_path / "outside"
    d.mkdir()
    path = d / "shadow"
    path.write_text(f"root:{SECRET}:19000:0:99999:7:::\n")
    path.chmod(0o640)
    return path


@pytest.fixture
def repo(tmp_path, secret) -> Path:
    """A model repo whose test_tipc/ holds real configs, a spec, and links leading out."""
    root = tmp_path / "repo"
    cfg = root / "test_tipc/configs/tiny_rec"
    cfg.mkdir(parents=True)
    shutil.copy(GENERATED_CONFIG, cfg / "train_infer_python.txt")
    (root / "specs").mkdir()
    shutil.copy(SPECS / "tiny_rec.yml", root / "specs/tiny_rec.yml")
    return root


def no_secret(*procs) -> None:
    for proc in procs:
        assert SECRET not in proc.stdout + proc.stderr


def test_a_config_linked_out_of_its_directory_is_read_by_no_command(repo, secret):
    cfg = repo / "test_tipc/configs/tiny_rec"
    link = cfg / "x_train_infer_python.txt"
    link.symlink_to(secret)
    rel = "test_tipc/configs/tiny_rec/x_train_infer_python.txt"
    before = snapshot(repo)
    procs = tipcgen_all(
        [
            ("import", rel, "--out", "specs_new"),
            ("import", "test_tipc/configs", "--out", "specs_new"),
            ("import", "--report", "test_tipc/configs"),
            ("lint", rel),
            ("lint", "test_tipc/configs"),
            ("plan", rel, "--mode", MODE),
            ("run", rel, "--mode", MODE, "--dry-run"),
            ("doctor", rel),
            ("prepare", rel, "--mode", MODE, "--offline", "--spec", "specs/tiny_rec.yml"),
        ],
        cwd=repo,
    )
    for proc in procs:
        msg = refused(proc, "x_train_infer_python.txt", "symbolic link")
        assert str(secret) in msg  # names where the link leads, never what is there
    no_secret(*procs)
    assert snapshot(repo) == before  # nothing written: no spec, no output directory


def test_a_spec_linked_out_of_its_directory_is_refused(repo, secret, tmp_path):
    evil = tmp_path / "outside" / "evil.yml"
    evil.write_text((SPECS / "tiny_rec.yml").read_text().replace("model: tiny_rec", "model: evil"))
    (repo / "specs/evil.yml").symlink_to(evil)
    procs = tipcgen_all(
        [
            ("validate", "specs/evil.yml"),
            ("build", "specs/evil.yml", "--out", "out"),
            ("check", "specs/"),
            ("build", "specs/", "--out", "out"),
            ("lint", "specs/evil.yml"),
            ("plan", "specs/evil.yml", "--mode", MODE),
        ],
        cwd=repo,
    )
    for proc in procs:
        refused(proc, "evil.yml", "outside")
    assert not (repo / "out").exists()


def test_links_that_stay_inside_the_tree_are_followed(repo):
    cfg = repo / "test_tipc/configs/tiny_rec"
    (cfg / "train_infer_python_latest.txt").symlink_to("train_infer_python.txt")
    other = repo / "test_tipc/configs/other"
    other.mkdir()
    (other / "train_infer_python.txt").symlink_to("../tiny_rec/train_infer_python.txt")
    lint_dir, lint_file, plan, plan_sibling = tipcgen_all(
        [
            ("lint", "test_tipc/configs"),
            ("lint", "test_tipc/configs/tiny_rec/train_infer_python_latest.txt"),
            ("plan", "test_tipc/configs/tiny_rec/train_infer_python_latest.txt", "--mode", MODE),
            # A file argument's tree is the directory holding it: a link to a sibling directory
            # leaves it, even though both are below test_tipc/configs.
            ("plan", "test_tipc/configs/other/train_infer_python.txt", "--mode", MODE),
        ],
        cwd=repo,
    )
    assert lint_dir.returncode == 0, lint_dir.stdout + lint_dir.stderr
    assert "other/train_infer_python.txt" not in lint_dir.stderr
    assert lint_file.returncode == 0, lint_file.stderr
    assert plan.returncode == 0 and "tools/train.py" in plan.stdout, plan.stderr
    refused(plan_sibling, "other/train_infer_python.txt", "name the directory holding both")


def test_a_directory_link_leading_out_is_not_walked(repo, secret):
    (repo / "test_tipc/configs/stolen").symlink_to(secret.parent, target_is_directory=True)
    (secret.parent / "a_train_infer_python.txt").write_text(GENERATED_CONFIG.read_text().replace("tiny_rec", SECRET))
    lint, report = tipcgen_all([("lint", "test_tipc/configs"), ("import", "--report", "test_tipc/configs")], cwd=repo)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert report.returncode == 0, report.stdout + report.stderr
    assert "1/1 configs round-trip" in report.stdout
    no_secret(lint, report)


def test_a_link_to_a_fifo_or_device_inside_the_tree_does_not_block(repo):
    cfg = repo / "test_tipc/configs/tiny_rec"
    os.mkfifo(cfg / "pipe.fifo")
    (cfg / "p_train_infer_python.txt").symlink_to("pipe.fifo")
    start = time.monotonic()
    lint, plan = tipcgen_all(
        [
            ("lint", "test_tipc/configs"),
            ("plan", "test_tipc/configs/tiny_rec/p_train_infer_python.txt", "--mode", MODE),
        ],
        cwd=repo,
    )
    assert time.monotonic() - start < bound(8)
    for proc in (lint, plan):
        refused(proc, "p_train_infer_python.txt", "named pipe")


def test_a_symlink_loop_is_one_clean_error(repo):
    cfg = repo / "test_tipc/configs/tiny_rec"
    (cfg / "a_train_infer_python.txt").symlink_to("b_train_infer_python.txt")
    (cfg / "b_train_infer_python.txt").symlink_to("a_train_infer_python.txt")
    for proc in tipcgen_all(
        [("lint", "test_tipc/configs/tiny_rec/a_train_infer_python.txt"), ("lint", "test_tipc/configs")], cwd=repo
    ):
        refused(proc, "a_train_infer_python.txt")


def test_file_names_cannot_forge_lint_or_error_lines(repo):
    cfg = repo / "test_tipc/configs/tiny_rec"
    forged = "a\n0 error(s), 0 warning(s), 0 note(s)\n\x1b]0;owned\x07b_train_infer_python.txt"
    text = GENERATED_CONFIG.read_text().replace("model_name:tiny_rec", "model_name:../x")
    (cfg / forged).write_text(text)
    lint, plan = tipcgen_all(
        [("lint", "test_tipc/configs"), ("plan", f"test_tipc/configs/tiny_rec/{forged}", "--mode", MODE)],
        cwd=repo,
    )
    assert lint.returncode == 1
    for proc in (lint, plan):
        out = proc.stdout + proc.stderr
        assert "\x1b" not in out and "\x07" not in out
        assert "\\x0a0 error(s)" in out
    assert lint.stdout.splitlines()[-1].startswith(("1 error(s)", "2 error(s)"))
    assert sum(line.startswith("0 error(s)") for line in lint.stdout.splitlines()) == 0


def test_lint_refuses_what_plan_run_and_the_bash_refuse(repo):
    cfg = repo / "test_tipc/configs/tiny_rec"
    text = GENERATED_CONFIG.read_text()
    (cfg / "train_infer_python.txt").write_text(text.replace("model_name:tiny_rec", "model_name:../../x"))
    lint, plan = tipcgen_all(
        [("lint", "test_tipc/configs"), ("plan", "test_tipc/configs/tiny_rec/train_infer_python.txt", "--mode", MODE)],
        cwd=repo,
    )
    assert lint.returncode == 1
    assert "train_infer_python.txt:2: error: TIPC025 runner-refuses: model_name '../../x'" in lint.stdout
    refused(plan, "model_name '../../x'")


def _blowup_spec() -> str:
    """tiny_rec with a 4,096-combination inference matrix in each of 256 suites."""
    text = (SPECS / "tiny_rec.yml").read_text().split("\nsuites:")[0]
    many = ", ".join(str(i) for i in range(1, 17))
    for old, new in (
        ("threads: {key: --cpu_threads, values: [2]}", f"threads: {{key: --cpu_threads, values: [{many}]}}"),
        (
            "batch_size: {key: --rec_batch_num, values: [1, 6]}",
            f"batch_size: {{key: --rec_batch_num, values: [{many}]}}",
        ),
        ("mkldnn: {key: --enable_mkldnn, values: [False]}", "mkldnn: {key: --enable_mkldnn, values: [True, False]}"),
        ("precision: {key: --precision, values: [fp32]}", "precision: {key: --precision, values: [fp32, fp16]}"),
        ("autocast: {key: Global.auto_cast, values: [fp32]}", "autocast: {key: Global.auto_cast, values: [fp32, amp]}"),
    ):
        assert old in text
        text = text.replace(old, new)
    suites = "".join(f"  s{i}:\n    file: train_infer_python_{i}.txt\n    topology: [cpu]\n" for i in range(256))
    return text + "\nsuites:\n" + suites


def test_a_spec_whose_steps_explode_is_refused_fast_with_the_number(tmp_path):
    (tmp_path / "blowup.yml").write_text(_blowup_spec())
    start = time.monotonic()
    validate, build = tipcgen_all([("validate", "blowup.yml"), ("build", "blowup.yml", "--out", "out")], cwd=tmp_path)
    took = time.monotonic() - start
    for proc in (validate, build):
        msg = refused(proc, "blowup.yml", "16384")
        assert "step combinations" in msg
        assert len(msg.splitlines()) <= 3  # one problem, not one per suite
    assert not (tmp_path / "out").exists()
    assert took < bound(15), took
