"""`tipcgen new`: in a scratch repo of each family (the family's real test_tipc/ scripts from
../shared/upstream, a fake tools/ tree and the model's YAML), the starter spec it writes is accepted
by validate, plan, run --dry-run, build and check; it never replaces a spec without --force, never
asks a script for input, never follows a link out of the repo, and a refusal writes nothing."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.cli import run_cli

MODE = "lite_train_lite_infer"

# family -> (its upstream folder, the model, the files of its fake tree, what the starter must name)
LAYOUTS = {
    "paddleocr": (
        "PaddleOCR/head",
        "ch_PP-OCRv3_det",
        ["tools/train.py", "tools/eval.py", "tools/export_model.py", "tools/infer/predict_det.py",
         "configs/det/ch_PP-OCRv3_det.yml", "configs/rec/ch_PP-OCRv3_rec.yml"],
        ["tools/train.py -c configs/det/ch_PP-OCRv3_det.yml", "tools/infer/predict_det.py"],
    ),
    "paddleclas": (
        "PaddleClas",
        "ResNet50",
        ["tools/train.py", "tools/eval.py", "tools/export_model.py", "deploy/python/predict_cls.py",
         "ppcls/configs/ImageNet/ResNet/ResNet50.yaml", "ppcls/configs/ImageNet/ResNet/ResNet50_vd.yaml"],
        ["tools/train.py -c ppcls/configs/ImageNet/ResNet/ResNet50.yaml", "python/predict_cls.py"],
    ),
    "paddleseg": (
        "PaddleSeg",
        "pp_liteseg_stdc1",
        ["tools/train.py", "tools/val.py", "tools/export.py", "deploy/python/infer.py",
         "configs/pp_liteseg/pp_liteseg_stdc1_cityscapes_1024x512_scale0.5_160k.yml"],
        ["tools/val.py --config configs/pp_liteseg/pp_liteseg_stdc1_cityscapes_1024x512_scale0.5_160k.yml"],
    ),
    "paddlevideo": (
        "PaddleVideo",
        "pptsm",
        ["main.py", "tools/export_model.py", "tools/predict.py",
         "configs/recognition/pptsm/pptsm_k400_frames_uniform.yaml"],
        ["main.py --validate -c configs/recognition/pptsm/pptsm_k400_frames_uniform.yaml"],
    ),
    "paddledetection": (
        "PaddleDetection",
        "ppyolo_mbv3_large_coco",
        ["tools/train.py", "tools/eval.py", "tools/export_model.py", "deploy/python/infer.py",
         "configs/ppyolo/ppyolo_mbv3_large_coco.yml"],
        ["tools/export_model.py -c configs/ppyolo/ppyolo_mbv3_large_coco.yml -o", "deploy/python/infer.py"],
    ),
    "models": (
        "models",
        "mobilenet_v3_small",
        ["train.py", "tools/export_model.py", "deploy/inference_python/infer.py"],
        ["train.py", "tools/export_model.py --model=mobilenet_v3_small", "deploy/inference_python/infer.py"],
    ),
}  # fmt: skip


def test_every_dialect_has_a_starter_family_and_a_layout_here():
    from tipcgen.dialects import LAYOUTS as DIALECTS
    from tipcgen.new.families import FAMILIES

    assert set(FAMILIES) == set(DIALECTS) == set(LAYOUTS)


@pytest.fixture(scope="module")
def upstream() -> Path:
    from conftest import corpus_dir

    path = Path(os.environ.get("TIPC_UPSTREAM", corpus_dir().parent / "upstream"))
    if not (path / "PaddleClas").is_dir():
        if os.environ.get("TIPC_REQUIRE_CORPUS"):
            pytest.fail(f"TIPC_REQUIRE_CORPUS is set but the upstream scripts are missing at {path}")
        pytest.skip(f"upstream scripts not found at {path} (set TIPC_UPSTREAM)")
    return path


def scratch_repo(upstream: Path, family: str, dest: Path) -> tuple[Path, str]:
    """A repo of `family` without a suite for its model: the family's own test_tipc/ scripts, an
    empty tools/ tree of the family's entry points and the model's YAML."""
    folder, model, files, _ = LAYOUTS[family]
    shutil.copytree(upstream / folder, dest / "test_tipc")
    for rel in files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text("# a stand-in\n")
    return dest, model


def tipcgen(*args, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd, timeout=timeout)


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    return proc.stdout


def refused(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    for word in words:
        assert word in proc.stderr, (word, proc.stderr)
    return proc.stderr


def tree(root: Path) -> dict:
    """Every path below `root` (links not followed) -> its content or link target."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            out[str(path.relative_to(root))] = "-> " + os.readlink(path)
        elif path.is_file():
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


@pytest.mark.parametrize("family", sorted(LAYOUTS))
def test_a_starter_of_each_family_validates_plans_dry_runs_and_builds(upstream, tmp_path, family):
    repo, model = scratch_repo(upstream, family, tmp_path / "repo")
    out = ok(tipcgen("new", model, "--family", family, cwd=repo))
    spec = repo / "test_tipc" / "specs" / f"{model}.yml"
    assert out.strip() == os.path.join(".", "test_tipc", "specs", f"{model}.yml")
    text = spec.read_text(encoding="utf-8")
    assert f"layout: {family}" in text and "TODO" in text and text.startswith("# ")
    for expected in LAYOUTS[family][3]:  # found in the tree, not the family's placeholder
        assert expected in text, expected
    ok(tipcgen("validate", "test_tipc/specs", cwd=repo))
    plan = ok(tipcgen("plan", spec, "--mode", MODE, cwd=repo))
    assert " train " in plan and " infer " in plan, plan
    dry = ok(tipcgen("run", spec, "--mode", MODE, "--dry-run", cwd=repo))
    assert LAYOUTS[family][3][0].split()[0] in dry
    assert not (repo / "test_tipc" / "output").exists()  # a dry run runs and writes nothing
    built = tmp_path / "built"
    ok(tipcgen("build", "test_tipc/specs", "--out", built, cwd=repo))
    suite = built / model / "test_tipc"
    assert (suite / "configs" / model / "train_infer_python.txt").is_file()
    for script in suite.glob("*.sh"):
        assert subprocess.run(["bash", "-n", script]).returncode == 0, script
    ok(tipcgen("check", "test_tipc/specs", "--out", built, cwd=repo))


def test_what_is_not_in_the_tree_is_the_familys_usual_entry_marked_todo(upstream, tmp_path):
    repo, _ = scratch_repo(upstream, "paddleseg", tmp_path / "repo")
    shutil.rmtree(repo / "tools")
    shutil.rmtree(repo / "configs")
    shutil.rmtree(repo / "deploy")
    proc = tipcgen("new", "bisenet", "--family", "paddleseg", "--lang", "en", cwd=repo)
    ok(proc)
    text = (repo / "test_tipc/specs/bisenet.yml").read_text(encoding="utf-8")
    assert 'train: "tools/train.py --config configs/bisenet.yml --do_eval"' in text
    assert text.count("TODO: no such entry point in the repo") == 4
    assert "TODO: no YAML config of this model was found" in text
    assert "not found: TODO in the spec" in proc.stderr
    ok(tipcgen("validate", "test_tipc/specs/bisenet.yml", cwd=repo))


def test_comments_follow_lang_then_the_repos_settings_then_zh(upstream, tmp_path):
    repo, model = scratch_repo(upstream, "paddleclas", tmp_path / "repo")
    ok(tipcgen("new", model, "--family", "paddleclas", cwd=repo))
    assert "由 `tipcgen new` 生成" in (repo / f"test_tipc/specs/{model}.yml").read_text(encoding="utf-8")
    (repo / "tipcgen.yml").write_text("specs: tipc_specs\nlang: en\n")
    ok(tipcgen("new", model, "--family", "paddleclas", cwd=repo))
    assert "written by `tipcgen new`" in (repo / f"tipc_specs/{model}.yml").read_text(encoding="utf-8")


def test_an_existing_spec_is_not_replaced_without_force(upstream, tmp_path):
    repo, model = scratch_repo(upstream, "paddleocr", tmp_path / "repo")
    spec = repo / "test_tipc/specs" / f"{model}.yml"
    spec.parent.mkdir(parents=True)
    spec.write_text("my own work\n")
    refused(tipcgen("new", model, "--family", "paddleocr", cwd=repo), "exists", "--force")
    assert spec.read_text() == "my own work\n"
    ok(tipcgen("new", model, "--family", "paddleocr", "--force", cwd=repo))
    assert "layout: paddleocr" in spec.read_text(encoding="utf-8")
    assert [p.name for p in spec.parent.iterdir()] == [spec.name]  # no temp file left beside it


def test_without_a_terminal_a_missing_name_or_family_is_an_error_not_a_prompt(upstream, tmp_path):
    repo, model = scratch_repo(upstream, "paddleclas", tmp_path / "repo")
    before = tree(repo)
    for args in ((), (model,), ("--family", "paddleclas")):
        started = time.monotonic()
        err = refused(tipcgen("new", *args, cwd=repo, timeout=20), "stdin is not a terminal")
        assert time.monotonic() - started < 15, "waited for input"
        assert err.startswith("MODEL is missing" if not args or args[0] == "--family" else "--family is missing")
    assert tree(repo) == before


def test_on_a_terminal_it_asks_for_the_name_and_the_family(upstream, tmp_path):
    repo, model = scratch_repo(upstream, "paddleclas", tmp_path / "repo")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tipcgen.cli", "new"], cwd=repo, stdin=follower, stdout=follower, stderr=follower
    )
    os.close(follower)
    shown = b""
    answers = [f"{model}\n".encode(), b"paddleclas\n"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
            if answers and shown.rstrip().endswith(b":"):
                os.write(leader, answers.pop(0))
        elif proc.poll() is not None:
            break
    os.close(leader)
    assert proc.wait(10) == 0, shown
    assert b"Model name:" in shown and b"Family (" in shown, shown
    assert "layout: paddleclas" in (repo / f"test_tipc/specs/{model}.yml").read_text(encoding="utf-8")


def test_a_link_leaving_the_repo_is_neither_read_nor_used(upstream, tmp_path):
    """Entry points, the model's YAML and a config folder that are links to outside the repo: the
    starter names them and keeps the placeholders (or the next match inside the repo)."""
    repo, model = scratch_repo(upstream, "paddleclas", tmp_path / "repo")
    outside = tmp_path / "outside"
    (outside / "ImageNet").mkdir(parents=True)
    (outside / "train.py").write_text("# outside\n")  # regular files: taken, were the link followed
    (outside / "ResNet50.yaml").write_text("# outside\n")
    os.mkfifo(outside / "ImageNet/ResNet50.yaml")  # opened, it would hang the command
    (repo / "tools/train.py").unlink()
    (repo / "tools/train.py").symlink_to(outside / "train.py")
    cfg = repo / "ppcls/configs/ImageNet/ResNet/ResNet50.yaml"
    cfg.unlink()
    cfg.symlink_to(outside / "ResNet50.yaml")
    (repo / "configs").symlink_to(outside, target_is_directory=True)
    proc = tipcgen("new", model, "--family", "paddleclas", "--lang", "en", cwd=repo, timeout=30)
    ok(proc)
    text = (repo / f"test_tipc/specs/{model}.yml").read_text(encoding="utf-8")
    assert "# Note: tools/train.py: a symbolic link leading out of the repo; not used" in text
    assert "ppcls/configs/ImageNet/ResNet/ResNet50.yaml: a symbolic link leading out of the repo" in text
    assert "# Note: configs/: a symbolic link leading out of the repo; not looked in" in text
    # the model's YAML falls back to the next match inside the repo; train.py to the placeholder
    assert "ppcls/configs/ImageNet/ResNet/ResNet50_vd.yaml (found in the repo)" in text
    assert "TODO: no such entry point in the repo" in text
    assert "note: tools/train.py: a symbolic link leading out of the repo" in proc.stderr


def test_a_link_inside_the_repo_is_followed(upstream, tmp_path):
    repo, model = scratch_repo(upstream, "paddledetection", tmp_path / "repo")
    (repo / "tools/train.py").unlink()
    (repo / "tools/real_train.py").write_text("# the real one\n")
    (repo / "tools/train.py").symlink_to("real_train.py")
    ok(tipcgen("new", model, "--family", "paddledetection", "--lang", "en", cwd=repo))
    text = (repo / f"test_tipc/specs/{model}.yml").read_text(encoding="utf-8")
    assert "Entry point tools/train.py (found in the repo)" in text and "Note:" not in text


def test_a_specs_folder_leading_out_of_the_repo_is_refused(upstream, tmp_path):
    repo, model = scratch_repo(upstream, "paddleocr", tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "test_tipc/specs").symlink_to(outside, target_is_directory=True)
    refused(tipcgen("new", model, "--family", "paddleocr", cwd=repo), "outside the repo")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("../evil", "--family", "paddleocr"), ["MODEL", "a model name is"]),
        (("a b", "--family", "paddleocr"), ["MODEL"]),
        (("x\x1b[2Jy", "--family", "paddleocr"), ["MODEL"]),
        (("-", "--family", "paddleocr"), ["MODEL"]),
        (("m" * 101, "--family", "paddleocr"), ["MODEL"]),
        (("m", "--family", "PaddleOCR2"), ["--family", "paddleclas"]),
        (("m", "--family", "paddleocr", "--lang", "fr"), ["--lang", "zh or en"]),
        (("m", "--family", "paddleocr", "--repo", "no/such/dir"), ["--repo", "not a directory"]),
    ],
    ids=["traversal", "space", "escape", "dash", "long", "family", "lang", "repo"],
)
def test_bad_input_is_one_clear_refusal_and_writes_nothing(upstream, tmp_path, args, words):
    repo, _ = scratch_repo(upstream, "paddleocr", tmp_path / "repo")
    before = tree(repo)
    err = refused(tipcgen("new", *args, cwd=repo), *words)
    assert "\x1b" not in err and len(err.strip().splitlines()) == 1, err
    assert tree(repo) == before


def test_a_non_regular_entry_point_is_not_taken(upstream, tmp_path):
    """A FIFO or a directory where a script should be: not an entry point (and never opened)."""
    repo, model = scratch_repo(upstream, "paddleocr", tmp_path / "repo")
    (repo / "tools/train.py").unlink()
    os.mkfifo(repo / "tools/train.py")
    (repo / "tools/eval.py").unlink()
    (repo / "tools/eval.py").mkdir()
    ok(tipcgen("new", model, "--family", "paddleocr", "--lang", "en", cwd=repo, timeout=30))
    text = (repo / f"test_tipc/specs/{model}.yml").read_text(encoding="utf-8")
    assert text.count("TODO: no such entry point in the repo") == 2
    assert "Entry point tools/export_model.py (found in the repo)" in text


def test_a_link_at_the_spec_path_is_refused_even_with_force(upstream, tmp_path):
    repo, model = scratch_repo(upstream, "paddleocr", tmp_path / "repo")
    victim = tmp_path / "victim.yml"
    victim.write_text("precious\n")
    (repo / "test_tipc/specs").mkdir()
    (repo / f"test_tipc/specs/{model}.yml").symlink_to(victim)
    refused(tipcgen("new", model, "--family", "paddleocr", "--force", cwd=repo))
    assert victim.read_text() == "precious\n"
