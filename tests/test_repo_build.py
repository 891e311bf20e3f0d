"""`tipcgen build` / `check` with no SPEC, in a model repo's root: one test_tipc/ for every spec."""

from __future__ import annotations

import os
import shutil
import subprocess

from conftest import SPECS
from helpers.cli import invoke_in

OCR_SPECS = ("ch_PP-OCRv3_rec.yml", "tiny_rec.yml")  # two paddleocr specs: one repo


def _repo(tmp_path, names=OCR_SPECS):
    root = tmp_path / "PaddleOCR"
    (root / "test_tipc/specs").mkdir(parents=True)
    for name in names:
        shutil.copy(SPECS / name, root / "test_tipc/specs" / name)
    return root


_invoke = invoke_in


def _tree(root):
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "specs" not in p.parts and p.name != ".tipcgen.lock"
    }


def test_a_repo_build_writes_one_runner_one_prepare_and_every_models_configs(tmp_path):
    root = _repo(tmp_path)
    result = _invoke(root, "build")
    assert result.exit_code == 0, result.output
    tree = _tree(root)
    assert [p for p in tree if p.endswith(".sh")] == [
        "test_tipc/common_func.sh",
        "test_tipc/prepare.sh",
        "test_tipc/test_paddle2onnx.sh",  # tiny_rec's paddle2onnx suite
        "test_tipc/test_train_dy2static_python.sh",  # tiny_rec's spec carries a dy2static config
        "test_tipc/test_train_inference_python.sh",
    ]
    assert "test_tipc/compare_loss.py" in tree  # what that chain script runs
    models = sorted({p.split("/")[2] for p in tree if p.startswith("test_tipc/configs/")})
    assert models == ["ch_PP-OCRv3_rec", "tiny_rec"]
    assert {p.split("/")[2] for p in tree if p.startswith("test_tipc/docs/")} == set(models)
    manifest = tree["test_tipc/.tipcgen.manifest"].decode()
    assert sorted(line.split("  ")[1] for line in manifest.splitlines() if not line.startswith("#")) == sorted(
        p for p in tree if p != "test_tipc/.tipcgen.manifest"
    )
    # a second build changes nothing, byte for byte, whatever marks the repo's root (.git or none)
    (root / ".git").mkdir()
    again = _invoke(root, "build")
    assert "(0 changed)" in again.output and _tree(root) == tree


def test_the_one_prepare_sh_dispatches_on_model_name_and_refuses_others(tmp_path):
    root = _repo(tmp_path)
    assert _invoke(root, "build").exit_code == 0
    configs = sorted((root / "test_tipc/configs/tiny_rec").glob("*train*.txt"))
    env = dict(os.environ, TIPC_OFFLINE="1", TIPC_CACHE=str(tmp_path / "cache"))
    onnx = "test_tipc/configs/tiny_rec/tiny_rec_paddle2onnx_python_linux_cpu.txt"
    ran = subprocess.run(
        ["bash", "test_tipc/prepare.sh", onnx, "lite_train_lite_infer"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    # the paddle2onnx chain's config is prepared in its own mode: in a training mode, refused by name
    assert ran.returncode == 2 and "a config of test_tipc/test_paddle2onnx.sh" in ran.stderr, ran.stderr
    ran = subprocess.run(
        ["bash", "test_tipc/prepare.sh", str(configs[0].relative_to(root)), "lite_train_lite_infer"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    # tiny_rec's own artifact is what is missing offline, not ch_PP-OCRv3_rec's
    assert ran.returncode == 1 and "tiny_rec_data.tar" in ran.stderr and "icdar2015" not in ran.stderr, ran.stderr
    other = root / "test_tipc/configs/tiny_rec/other.txt"
    other.write_text(configs[0].read_text().replace("model_name:tiny_rec", "model_name:someone_else"))
    ran = subprocess.run(
        ["bash", "test_tipc/prepare.sh", "test_tipc/configs/tiny_rec/other.txt", "lite_train_lite_infer"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 2 and "someone_else" in ran.stderr and "tiny_rec" in ran.stderr


def test_check_in_the_root_is_clean_then_fails_with_a_diff_after_an_edit(tmp_path):
    root = _repo(tmp_path)
    assert _invoke(root, "build").exit_code == 0
    assert _invoke(root, "check", "--no-cache").exit_code == 0
    spec = root / "test_tipc/specs/tiny_rec.yml"
    spec.write_text(spec.read_text().replace("algorithm: CRNN", "algorithm: CRNN-edited", 1))
    result = _invoke(root, "check", "--no-cache")
    assert result.exit_code == 1 and "--- " in result.output and "+++ " in result.output
    assert "tipcgen build" in result.output


def test_hand_written_files_are_never_replaced_without_adopt_nor_removed(tmp_path):
    root = _repo(tmp_path)
    tipc = root / "test_tipc"
    (tipc / "prepare.sh").write_text("#!/bin/bash\n# the repo's own\n")
    (tipc / "test_serving_infer_python.sh").write_text("# another chain, not ours\n")
    result = _invoke(root, "build")
    assert result.exit_code == 2 and "test_tipc/prepare.sh" in result.output and "--adopt" in result.output
    assert (tipc / "prepare.sh").read_text().endswith("the repo's own\n")
    assert not (tipc / "test_train_inference_python.sh").exists(), "nothing is written when one file conflicts"
    assert _invoke(root, "build", "--adopt").exit_code == 0
    assert "tipcgen" in (tipc / "prepare.sh").read_text()
    assert (tipc / "test_serving_infer_python.sh").read_text() == "# another chain, not ours\n"
    # a spec removed: its files go, unless edited by hand since
    (root / "test_tipc/specs/tiny_rec.yml").unlink()
    edited = next((tipc / "configs/tiny_rec").glob("*.txt"))
    edited.write_text(edited.read_text() + "# local note\n")
    result = _invoke(root, "build")
    assert result.exit_code == 0, result.output
    assert not (tipc / "docs/tiny_rec").exists() or not any((tipc / "docs/tiny_rec").iterdir())
    assert edited.exists() and "edited by hand" in result.output
    assert (tipc / "test_serving_infer_python.sh").exists()
    check = _invoke(root, "check", "--no-cache")
    assert check.exit_code == 0, check.output  # an edited leftover is no longer ours: not stale


def test_specs_of_two_families_are_refused_naming_the_odd_one(tmp_path):
    root = _repo(tmp_path, OCR_SPECS + ("mobilenet_v3_small.yml",))
    result = _invoke(root, "build")
    assert result.exit_code == 2
    assert "mobilenet_v3_small.yml" in result.output and "layout models" in result.output
    assert not (root / "test_tipc/prepare.sh").exists()


def test_settings_name_the_specs_folder_and_bad_settings_are_located(tmp_path):
    root = tmp_path / "repo"
    (root / "tipc_specs").mkdir(parents=True)
    shutil.copy(SPECS / "tiny_rec.yml", root / "tipc_specs")
    (root / "tipcgen.yml").write_text("specs: tipc_specs\nlang: en\n")
    result = _invoke(root, "build")
    assert result.exit_code == 0, result.output
    assert (root / "test_tipc/configs/tiny_rec").is_dir()
    doc = next((root / "test_tipc/docs/tiny_rec").glob("*.md")).read_text()
    assert "Generated by tipcgen" in doc and "测试" not in doc  # lang: en
    (root / "tipcgen.yml").write_text("specs: tipc_specs\nspecz: x\n")
    result = _invoke(root, "build")
    assert result.exit_code == 2 and "tipcgen.yml:2:1" in result.output and "specz" in result.output
    (root / "tipcgen.yml").write_text("specs: ../elsewhere\n")
    result = _invoke(root, "check")
    assert result.exit_code == 2 and "inside the repo" in result.output


def test_no_spec_outside_a_repo_root_says_what_to_do(tmp_path):
    result = _invoke(tmp_path, "check")
    assert result.exit_code == 2 and "not a model repo root" in result.output


def test_a_forged_ownership_record_cannot_remove_a_file_outside_the_repo(tmp_path):
    import hashlib

    root = _repo(tmp_path)
    assert _invoke(root, "build").exit_code == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "precious.txt"
    victim.write_text("keep me\n")
    (root / "test_tipc/escape").symlink_to(outside)
    manifest = root / "test_tipc/.tipcgen.manifest"
    digest = hashlib.sha256(victim.read_bytes()).hexdigest()
    manifest.write_text(manifest.read_text() + f"{digest}  test_tipc/escape/precious.txt\n")
    result = _invoke(root, "build")
    assert result.exit_code == 2 and "outside" in result.output
    assert victim.read_text() == "keep me\n"
