"""Repo shapes `tipcgen migrate` meets in the corpus: no prepare.sh, configs elsewhere, two folders
of one model name, configs nothing runs, and the repo's own .gitignore hiding generated files.
Scratch repos of the real scripts, configs and .gitignore files. (Another family's chain configs and
the root .gitignore's `*.manifest`: PaddleSeg's whole tree, tests/test_migrate_whole.py.)"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.cli import invoke_in
from helpers.upstream import corpus_dir, upstream_dir
from tipcgen.migrate.gitignore import ignore_line


def _marked(test):
    """A test over the real scripts: corpus and sandbox (the fast tier leaves it out)."""
    return pytest.mark.corpus(pytest.mark.sandbox(test))


LITE = ("--mode", "lite_train_lite_infer")


def _scratch(tmp_path: Path, repo: str, folders: tuple, prepare: bool = True) -> Path:
    corpus, upstream = corpus_dir() / repo, upstream_dir() / repo
    if not (upstream / "test_train_inference_python.sh").is_file():
        pytest.skip(f"{repo}: upstream scripts absent (../shared)")
    root = tmp_path / repo
    (root / "test_tipc" / "configs").mkdir(parents=True)
    for script in upstream.glob("*.sh"):
        if prepare or script.name != "prepare.sh":
            shutil.copy(script, root / "test_tipc" / script.name)
    shutil.copy(upstream / "root.gitignore", root / ".gitignore")
    for folder in folders:
        shutil.copytree(corpus / folder, root / "test_tipc" / "configs" / folder)
    return root


def _plan(root: Path, **kw):
    """The Migration `migrate --mode lite_train_lite_infer` computes, left in the verdict cache as
    that report leaves it: a later `migrate ... --apply` of the same tree writes from it."""
    import os

    from tipcgen import sandbox
    from tipcgen.migrate import cache
    from tipcgen.migrate.switch import plan_migration
    from tipcgen.sandbox import DEFAULT_TIMEOUT

    sandbox.require()
    modes = ("lite_train_lite_infer",)
    key = cache.input_key(
        str(root), cache.options(modes, DEFAULT_TIMEOUT, True, kw.get("configs"), kw.get("layout", "auto"), None)
    )
    m = plan_migration(str(root), modes=modes, **kw)
    cache.store(os.environ, key, m)
    return m


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", "core.excludesFile=", *args], cwd=root, capture_output=True, text=True)


@_marked
def test_no_prepare_sh_odd_configs_and_two_folders_of_one_model(tmp_path):
    root = _scratch(tmp_path, "PaddleDetection", ("ttfnet",), prepare=False)
    configs = root / "test_tipc/configs"
    source = next((configs / "ttfnet").glob("*train_infer_python.txt"))
    text = source.read_text()
    (configs / "odd").mkdir()
    (configs / "odd/notrainer_train_infer_python.txt").write_text(
        "".join(line for line in text.splitlines(True) if not line.startswith("trainer:"))
    )
    (configs / "odd/pre_train_infer_python.txt").write_text(text.replace("train_params", "pre_train_params", 1))
    (configs / "rotate/ttfnet").mkdir(parents=True)
    shutil.copy(source, configs / "rotate/ttfnet" / source.name)
    m = _plan(root)
    # without prepare.sh the runner alone is compared
    assert {(r.runner, r.prepare) for r in m.rows} == {("identical", "not compared")}, m.rows
    assert {r.prepare_detail for r in m.rows} == {"the repo has no prepare.sh"}
    # as `tipcgen import` names them: each <parent folder>_<model>
    assert {"test_tipc/specs/configs_ttfnet.yml", "test_tipc/specs/rotate_ttfnet.yml"} <= set(m.specs), m.specs
    assert "test_tipc/specs/ttfnet.yml" not in m.specs
    # nothing runs these: lost, never "ready"
    lost = m.not_imported
    assert (
        "test_train_inference_python.sh, which the new tree replaces"
        in lost["test_tipc/configs/odd/notrainer_train_infer_python.txt"]
    )
    assert "`pre_train_params`" in lost["test_tipc/configs/odd/pre_train_infer_python.txt"]
    assert not m.ok
    # PaddleDetection's `*.json` hides the spec schema
    assert m.gitignore == ["!/spec.schema.json"]
    result = invoke_in(root, "migrate", *LITE)
    assert result.exit_code == 1, result.output


@_marked
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--layout", "nosuch"), "--layout"),
        (("--runner", "nosuch"), "--runner nosuch: layout paddledetection's runners are"),
        (("--configs", "../elsewhere"), "--configs ../elsewhere: must be a folder inside the repo"),
        (("--configs", "/tmp"), "must be a folder inside the repo"),
        (("--configs", "test_tipc/nosuch"), "nosuch: missing"),
        (("--configs", "tipc_configs"), "must be a folder inside test_tipc/"),
        (("--configs", "lnk"), "leads outside the repo"),
    ],
)
def test_bad_migrate_options_exit_2_naming_them(tmp_path, args, says):
    root = _scratch(tmp_path, "PaddleDetection", ("ttfnet",))
    (root / "lnk").symlink_to(tmp_path)
    result = invoke_in(root, "migrate", *LITE, *args)
    assert result.exit_code == 2 and says in result.output, result.output
    assert "Traceback" not in result.output


@_marked
def test_configs_elsewhere_are_imported_from_there(tmp_path):
    root = _scratch(tmp_path, "PaddleDetection", ())
    shutil.copytree(corpus_dir() / "PaddleDetection/ttfnet", root / "test_tipc/config/ttfnet")
    m = _plan(root, configs="test_tipc/config")
    configs = [f"test_tipc/config/ttfnet/{p.name}" for p in sorted((root / "test_tipc/config/ttfnet").glob("*.txt"))]
    assert [r.config for r in m.rows] == configs and not m.changed and not m.not_imported
    assert set(configs) <= set(m.files) and not [f for f in m.files if f.startswith("test_tipc/configs/")]
    assert "configs: test_tipc/config/ttfnet\n" in m.specs["test_tipc/specs/ttfnet.yml"]


HOSTILE = ["a*b.txt", "q?.txt", "[x].txt", "#hash.txt", "!bang.txt", "trail .txt", "back\\slash.txt", "a b.json"]


def test_ignore_lines_re_include_exactly_their_file(tmp_path):
    """Each line shows its own file again and no other, whatever gitignore reads in its name."""
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("*\n!*/\n")
    tipc = tmp_path / "test_tipc"
    tipc.mkdir()
    for name in HOSTILE:
        (tipc / name).write_text("x")
    (tipc / "ab.txt").write_text("x")  # what `a*b.txt` as a pattern would show too
    (tipc / "q1.txt").write_text("x")
    (tipc / ".gitignore").write_text("".join(ignore_line(n) + "\n" for n in HOSTILE))
    shown = set(_git(tmp_path, "ls-files", "--others", "--exclude-standard", "-z").stdout.split("\0")) - {""}
    assert shown == {f"test_tipc/{n}" for n in HOSTILE}


@_marked
def test_nested_config_folders_keep_their_paths(tmp_path):
    """PaddleDetection's configs/rotate/fcosr/ and configs/ppyoloe/ppyoloe+/: the new tree writes
    (and owns) the configs where they are, and `check` finds them there again."""
    # the nested folders only (their parents' 18 configs add time, not a shape)
    root = _scratch(tmp_path, "PaddleDetection", ("rotate/fcosr", "rotate/ppyoloe_r", "ppyoloe/ppyoloe+"))
    before = {p.relative_to(root).as_posix(): p.read_bytes() for p in (root / "test_tipc/configs").rglob("*.txt")}
    assert "test_tipc/configs/rotate/fcosr/fcosr_x50_3x_spine_coco_train_infer_python.txt" in before
    applied = invoke_in(root, "migrate", "--apply", "--accept-changes", *LITE)
    assert applied.exit_code == 0, applied.output
    after = {p.relative_to(root).as_posix(): p.read_bytes() for p in (root / "test_tipc/configs").rglob("*.txt")}
    assert after == before  # no flattened copy beside them, every byte kept
    owned = (root / "test_tipc/.tipcgen.manifest").read_text()
    assert all(f"  {rel}\n" in owned for rel in before), owned
    assert "configs: test_tipc/configs/rotate/fcosr\n" in (root / "test_tipc/specs/fcosr.yml").read_text()
    check = invoke_in(root, "check", "--no-cache")
    assert check.exit_code == 0, check.output


@pytest.mark.parametrize(
    "folder",
    ["../elsewhere", "/abs", "a b", "a/*/b", "a//b", "a/./b", "-x/y", "a/../b", "a/b/", "a\\b", "é/x", "tipc/x"]
    + ["test_tipc", "test_tipc/", "test_tipc/../x", "test_tipc/a b", "test_tipc/a?"],
)
def test_a_spec_configs_folder_is_plain_names_only(tmp_path, folder):
    from tipcgen.check.spec import load_imported_text
    from tipcgen.errors import SpecError

    text = (Path(__file__).parent.parent / "specs" / "mobilenet_v3_small.yml").read_text()
    edited = text.replace("\nlayout:", f"\nconfigs: {folder!r}\nlayout:", 1)
    assert edited != text
    with pytest.raises(SpecError, match="configs"):
        load_imported_text(edited.replace("'", '"') if "\\" in folder else edited, "spec.yml", "here")


@_marked
def test_a_train_config_whose_runs_run_nothing_is_never_ready(tmp_path):
    """`trainer:null`: the repo's runner and ours both run no command: identical, and lost."""
    root = _scratch(tmp_path, "PaddleDetection", ("ttfnet",))
    config = next((root / "test_tipc/configs/ttfnet").glob("*.txt"))
    text = config.read_text()
    assert "\ntrainer:norm_train\n" in text
    config.write_text(text.replace("\ntrainer:norm_train\n", "\ntrainer:null\n"))
    m = _plan(root)
    rel = config.relative_to(root).as_posix()
    assert [(r.config, r.runner, r.commands) for r in m.rows] == [(rel, "identical", 0)]
    assert "compared no command" in m.not_imported[rel] and not m.ok
    result = invoke_in(root, "migrate", *LITE)
    assert result.exit_code == 1 and "NOT ready" in result.output, result.output


@_marked
def test_a_train_config_run_only_in_a_mode_beyond_the_compared_ones_is_compared_there(tmp_path):
    """PaddleDetection's KL configs (`trainer:null`, `infer_mode:kl_quant`): its runner runs them in
    `klquant_whole_infer` alone. The whole-tree oracle runs them there: compared, not lost."""
    from tipcgen.migrate.entrypoints import TRAIN_RUNNER

    root = _scratch(tmp_path, "PaddleDetection", ())
    name = "ppyolo_r50vd_dcn_1x_coco_KL_train_infer_python.txt"
    (root / "test_tipc/configs/ppyolo").mkdir()
    shutil.copy(corpus_dir() / "PaddleDetection/ppyolo" / name, root / "test_tipc/configs/ppyolo" / name)
    rel = f"test_tipc/configs/ppyolo/{name}"
    m = _plan(root)
    assert [(r.config, r.commands) for r in m.rows] == [(rel, 0)], "the runner's lite mode runs nothing of it"
    (kl,) = [e for e in m.entries if e.entry == type(e.entry)(f"test_tipc/{TRAIN_RUNNER}", rel, "klquant_whole_infer")]
    assert kl.verdict == "identical" and kl.before_commands == kl.after_commands > 0, kl
    assert rel not in m.not_imported, m.not_imported


@_marked
def test_a_kept_script_sourcing_the_runner_keeps_running_the_repos_own(tmp_path):
    """PaddleClas's jeston script sources the train runner (runs it, then calls its func_inference):
    the repo's runner is kept as test_tipc/legacy/ for it, its `source` line points there, and every
    entry point of it runs as before."""
    root = _scratch(tmp_path, "PaddleClas", ("AlexNet",))
    old_runner = (root / "test_tipc" / "test_train_inference_python.sh").read_bytes()
    m = _plan(root)
    jeston = "test_tipc/test_inference_jeston.sh"
    assert m.sourced_kept == {jeston: "test_tipc/legacy/test_train_inference_python.sh"}
    assert m.files["test_tipc/legacy/test_train_inference_python.sh"] == old_runner
    assert b"\nsource test_tipc/legacy/test_train_inference_python.sh\n" in m.files[jeston]
    assert b"\nsource test_tipc/common_func.sh\n" in m.files[jeston], "a library's source line is left"
    rows = [e for e in m.entries if e.entry.script == jeston]
    assert rows and not [e for e in rows if e.verdict == "CHANGED"], [(e.entry, e.differences) for e in rows]


@_marked
def test_the_repos_device_wrappers_become_typed_devices_that_leave_the_checkout_alone(tmp_path):
    """PaddleDetection's _npu.sh/_xpu.sh `sed -i` the config, YAMLs and runner in the checkout (and
    the NPU one fetches an annotation file): the specs name the devices, the switched tree's
    wrappers are the generated ones, and each wrapper entry point runs what it ran before but the
    named device deviations."""
    root = _scratch(tmp_path, "PaddleDetection", ("ttfnet",))
    m = _plan(root)
    (spec,) = m.specs.values()
    assert "\ndevices: [npu, xpu]\n" in spec, spec[:400]
    rows = {}
    for device in ("npu", "xpu"):
        script = f"test_tipc/test_train_inference_python_{device}.sh"
        assert script in m.replaced and b"never edits the checkout" in m.files[script]
        rows[device] = [e for e in m.entries if e.entry.script == script]
        assert rows[device] and not [e for e in rows[device] if e.verdict == "CHANGED"], [
            (e.entry, e.differences) for e in rows[device] if e.verdict == "CHANGED"
        ]
    assert any("device-no-annotation-download" in e.detail for e in rows["npu"]), [e.detail for e in rows["npu"]]
    result = invoke_in(root, "migrate", *LITE, "--apply", "--accept-changes")  # a one-model scratch: modes lost
    assert result.exit_code == 0, result.output
    assert (root / "test_tipc/test_train_inference_python_npu.sh").read_bytes() == m.files[
        "test_tipc/test_train_inference_python_npu.sh"
    ]
    # run for real (python3.9 a recorder): the NPU commands run, the checkout's files stay as they were
    config = next((root / "test_tipc/configs/ttfnet").glob("*train_infer*.txt"))
    before = {p: p.read_bytes() for p in (config, root / "test_tipc/test_train_inference_python.sh")}
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python3.9").write_text('#!/bin/bash\necho "$*" >>"$TIPC_LOG"\n')
    (fake / "python3.9").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "TIPC_LOG": str(tmp_path / "log")}
    rel = config.relative_to(root).as_posix()
    ran = subprocess.run(["bash", "test_tipc/test_train_inference_python_npu.sh", rel, "lite_train_lite_infer"],
                         cwd=root, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    log = (tmp_path / "log").read_text()
    assert "tools/train.py" in log and "use_npu=True" in log and "--device=npu" in log, log[:1000]
    assert {p: p.read_bytes() for p in before} == before, "the checkout is not edited"
