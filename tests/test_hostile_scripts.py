"""Hostile configs against the generated bash (test_train_inference_python.sh, benchmark_train.sh)
and `tipcgen run`/`plan`: a config or a committed symbolic link must not run code the config does
not show as a command, nor carry a write out of the repo, nor drive the terminal.

Each refusal is checked where a user meets it: the real generated bash (exit 2, one `tipc:` line
naming the file and what is wrong, nothing run, nothing written), the Plan (`plan_config`,
`plan_benchmark`: a UsageError) and the CLI (`python -m tipcgen.cli run|plan|lint`)."""

from __future__ import annotations

import functools
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import REPO, Recorder, run_bash
from helpers.bench_oracle import our_files
from helpers.cli import run_cli
from helpers.configs import variant
from tipcgen.check.lint_paths import lint_config
from tipcgen.cli.common import step_shell
from tipcgen.dialects import get_layout
from tipcgen.emit.files import runner_script
from tipcgen.errors import UsageError
from tipcgen.plan.benchmark_train import plan_benchmark
from tipcgen.plan.planner import plan_config
from tipcgen.run.executor import run_plan

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MODE = "lite_train_lite_infer"
SEG = FIXTURES / "paddleseg" / "train_infer_python.txt"
OCR = FIXTURES / "paddleocr" / "train_infer_python.txt"
CLS = FIXTURES / "paddleclas" / "toy_cls_b_train_amp_infer_python.txt"
DET = FIXTURES / "paddledetection" / "toydet_tiny_8e_demo_train_infer_python.txt"
CONFIG = "test_tipc/configs/m/c.txt"  # where each test puts its config, below the repo root


def tipcgen(*args, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd, env=env, timeout=30)


def tipcgen_all(calls: list, cwd: Path, env: dict | None = None) -> list:
    """Independent CLI calls at once (each a fresh process), their results in order."""
    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(lambda args: tipcgen(*args, cwd=cwd, env=env), calls))


def refused(proc: subprocess.CompletedProcess, *words: str, code: int = 2) -> str:
    """A clean refusal: the exit code, no traceback, each of `words` in stderr."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == code, out
    assert "Traceback" not in out, out
    for word in words:
        assert word in proc.stderr, (word, proc.stderr)
    return proc.stderr


def snapshot(*roots: Path) -> dict:
    """Every path below the roots (links not followed) -> its kind and content or target."""
    out = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                path = Path(dirpath) / name
                if path.is_symlink():
                    out[str(path)] = ("link", os.readlink(path))
                elif path.is_dir():
                    out[str(path)] = ("dir",)
                else:
                    out[str(path)] = ("file", path.read_bytes())
    return out


@functools.cache
def _scripts(dialect: str, runner: str | None = None, bench: bool = False) -> tuple:
    """(name, bytes) of the generated test_tipc/ scripts of a dialect (benchmark_train.sh too)."""
    if bench:
        return tuple(our_files(dialect).items())
    script, common = runner_script(get_layout(dialect), "hostile scripts test", runner)
    return (("test_train_inference_python.sh", script.encode()), ("common_func.sh", common.encode()))


def _repo(tmp_path: Path, text: str, dialect: str, runner: str | None = None, bench: bool = False) -> Path:
    """A model repo: test_tipc/ with the dialect's scripts and `text` at CONFIG."""
    repo = tmp_path / "repo"
    (repo / "test_tipc").mkdir(parents=True)
    for name, content in _scripts(dialect, runner, bench):
        (repo / "test_tipc" / name).write_bytes(content)
    (repo / CONFIG).parent.mkdir(parents=True)
    (repo / CONFIG).write_text(text)
    return repo


@pytest.fixture
def outside(tmp_path) -> Path:
    """A directory outside the repo that must never change."""
    d = tmp_path / "outside"
    d.mkdir()
    (d / "keep.txt").write_text("keep")
    return d


def _recorder(tmp_path: Path) -> tuple[Recorder, dict]:
    rec = Recorder(tmp_path / "rec")
    for name in ("python", "python3", "python3.7", "python3.10"):
        rec.install(name)
    env = {k: v for k, v in rec.env().items() if not k.startswith(("BENCHMARK_", "TIPC_NODE_IP"))}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env["TMPDIR"] = str(tmp_path / "tmp")
    return rec, env


# ---------------------------------------------------------------------------------------------
# benchmark_train.sh: the section's flags, the names of its logs, its status lines

SECTION = "===========================train_benchmark_params==========================\n"


def _bench_text(flags: str = "FLAGS_cudnn_exhaustive_search=1", batch: str = "2", base: Path = SEG, **lines) -> str:
    text = base.read_text()
    for key, value in lines.items():
        text = "\n".join(f"{key}:{value}" if line.split(":", 1)[0] == key else line for line in text.split("\n"))
    if SECTION.strip() in text:  # the fixture has one: its flags line
        return text.replace("flags:null", f"flags:{flags}")
    return (
        text.rstrip("\n") + "\n" + SECTION + f"batch_size:{batch}\nfp_items:fp32\nepoch:1\n"
        + "--profiler_options:batch_range=[10,20];state=GPU\n" + f"flags:{flags}\n"
    )  # fmt: skip


def _bench(repo: Path, env: dict, *params: str) -> subprocess.CompletedProcess:
    return run_bash(repo / "test_tipc/benchmark_train.sh", [CONFIG, "benchmark_train", *params], repo, env, timeout=30)


REFUSED_FLAGS = {
    "bash_env": "BASH_ENV=$(touch {pwned})",  # the case: the inner bash expands and sources it
    "env": "ENV=$(touch {pwned})",
    "ld_preload": "LD_PRELOAD={pwned}.so",
    "path": "PATH={pwned}",
    "pythonpath": "PYTHONPATH={pwned}",
    "prompt_command": "PROMPT_COMMAND=touch {pwned}",
    "shellopts": "SHELLOPTS=xtrace",
    "ps4": "PS4=$(touch {pwned})",
    "dash": "FOO-BAR=1",
    "digit": "1X=1",
    "empty_name": "=1",
    "second_item": "FLAGS_cudnn_exhaustive_search=1;BASH_ENV=$(touch {pwned})",
    "leading_blank": " BASH_ENV=$(touch {pwned})",
    "lowercase_flags": "flags_x=1",
}


@pytest.mark.parametrize("name", sorted(REFUSED_FLAGS))
def test_benchmark_refuses_flags_that_are_not_paddle_flags_in_bash_plan_and_lint(tmp_path, name):
    pwned = tmp_path / "PWNED"
    flags = REFUSED_FLAGS[name].format(pwned=pwned)
    text = _bench_text(flags)
    repo = _repo(tmp_path, text, "paddleseg", bench=True)
    rec, env = _recorder(tmp_path)
    before = snapshot(tmp_path)
    bad = flags.split(";")[-1].lstrip()
    err = refused(_bench(repo, env, "dynamic_bs2_fp32_DP_N1C1"), CONFIG, f"'{bad.split('=')[0]}'")
    assert len(err.strip().splitlines()) == 1 and "FLAGS_" in err
    assert rec.records() == [] and not pwned.exists(), "nothing ran"
    assert snapshot(tmp_path) == before, "nothing was written"
    with pytest.raises(UsageError, match="only Paddle's FLAGS_"):
        plan_benchmark(text, "paddleseg", "dynamic_bs2_fp32_DP_N1C1", source=CONFIG)
    findings = [f for f in lint_config(str(repo / CONFIG), "paddleseg") if f.rule == "TIPC023"]
    assert findings and findings[0].severity == "error" and "FLAGS_" in findings[0].message


def test_lint_cli_reports_a_refused_flag_as_tipc023(tmp_path):
    repo = _repo(tmp_path, _bench_text("BASH_ENV=/tmp/x"), "paddleseg", bench=True)
    proc = tipcgen("lint", CONFIG, "--layout", "paddleseg", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if "TIPC023" in x)
    assert line.startswith(f"{CONFIG}:") and "error" in line and "BASH_ENV" in line


def test_a_spec_exporting_another_variable_fails_validation(tmp_path):
    """A spec's benchmark section is checked by the same rule (TIPC023), at its own line."""
    from tipcgen.check.spec import load_spec
    from tipcgen.errors import SpecError

    spec = (REPO / "specs" / "ch_PP-OCRv3_rec.yml").read_text()
    anchor = '      random_infer_input: "[{float32,[3,48,320]}]"\n'
    assert anchor in spec
    section = (
        "    train_benchmark_params:\n      batch_size: 8\n      fp_items: fp32\n      flags: LD_PRELOAD=/tmp/x.so\n"
    )
    path = tmp_path / "ch_PP-OCRv3_rec.yml"
    path.write_text(spec.replace(anchor, anchor + section))
    with pytest.raises(SpecError) as err:
        load_spec(str(path))
    assert "TIPC023" in str(err.value) and "LD_PRELOAD" in str(err.value) and "flags" in str(err.value)


ENV_STUB = """#!/usr/bin/env bash
env | grep '^FLAGS_' >>"$FLAGS_SEEN"
"""


def test_benchmark_flag_values_are_exported_literally_never_evaluated(tmp_path):
    """`$(...)`, backticks, `$VAR` and globs in a value reach the process as they are written."""
    pwned = tmp_path / "PWNED"
    flags = f"FLAGS_a=$(touch {pwned});FLAGS_b=`touch {pwned}`;FLAGS_c=$HOME;FLAGS_d=*; FLAGS_e=1"
    text = _bench_text(flags)
    repo = _repo(tmp_path, text, "paddleseg", bench=True)
    _rec, env = _recorder(tmp_path)
    (tmp_path / "rec" / "bin" / "python").write_text(ENV_STUB)  # the copy's interpreter (line 3)
    env["FLAGS_SEEN"] = str(tmp_path / "flags.seen")
    proc = _bench(repo, env, "dynamic_bs2_fp32_DP_N1C1")
    assert proc.returncode == 0, proc.stderr
    assert not pwned.exists()
    seen = set((tmp_path / "flags.seen").read_text().splitlines())
    want = {f"FLAGS_a=$(touch {pwned})", f"FLAGS_b=`touch {pwned}`", "FLAGS_c=$HOME", "FLAGS_d=*", "FLAGS_e=1"}
    assert want <= seen, seen
    bp = plan_benchmark(text, "paddleseg", "dynamic_bs2_fp32_DP_N1C1")
    assert {f"{k}={v}" for k, v in bp.env} == want


def test_benchmark_refuses_a_model_name_with_a_slash_before_writing_outside(tmp_path):
    """The issue's case: with a committed train_log/<repo>_a directory, `a/../../../escaped`
    resolved the log to beside the repo."""
    text = _bench_text(model_name="a/../../../escaped")
    repo = _repo(tmp_path, text, "paddleseg", bench=True)
    (repo / "train_log" / "repo_a").mkdir(parents=True)
    rec, env = _recorder(tmp_path)
    before = snapshot(tmp_path)
    refused(_bench(repo, env, "dynamic_bs2_fp32_DP_N1C1"), CONFIG, "model_name", "one plain name")
    assert snapshot(tmp_path) == before and rec.records() == []
    with pytest.raises(UsageError, match="model_name"):
        plan_benchmark(text, "paddleseg", "dynamic_bs2_fp32_DP_N1C1", source=CONFIG)


@pytest.mark.parametrize(("lines", "says"), [({"model_name": ".."}, "model_name"), ({"batch": "2/x|4"}, "'2/x'")])
def test_benchmark_refuses_other_log_names_that_leave_their_directory(tmp_path, lines, says):
    batch = lines.pop("batch", "2")
    text = _bench_text(batch=batch, **lines)
    repo = _repo(tmp_path, text, "paddleseg", bench=True)
    rec, env = _recorder(tmp_path)
    before = snapshot(tmp_path)
    refused(_bench(repo, env), CONFIG, says)
    assert snapshot(tmp_path) == before and rec.records() == []
    with pytest.raises(UsageError, match="names log files|model_name"):
        plan_benchmark(text, "paddleseg", source=CONFIG)


@pytest.mark.parametrize("link", ["train_log", "benchmark_log", "index", "profiling_log"])
def test_benchmark_refuses_a_committed_log_directory_linked_outside(tmp_path, outside, link):
    repo = _repo(tmp_path, _bench_text(), "paddleseg", bench=True)
    (repo / link).symlink_to(outside)
    rec, env = _recorder(tmp_path)
    before = snapshot(tmp_path)
    refused(_bench(repo, env, "dynamic_bs2_fp32_DP_N1C1"), str(outside), "outside")
    assert snapshot(tmp_path) == before and rec.records() == []


def test_benchmark_refuses_a_log_file_linked_outside_inside_its_directory(tmp_path, outside):
    repo = _repo(tmp_path, _bench_text(), "paddleseg", bench=True)
    (repo / "train_log").mkdir()
    (repo / "train_log" / "repo_toy_seg_a_bs2_fp32_DP_N1C1_log").symlink_to(outside / "keep.txt")
    rec, env = _recorder(tmp_path)
    refused(_bench(repo, env, "dynamic_bs2_fp32_DP_N1C1"), "outside")
    assert (outside / "keep.txt").read_text() == "keep" and rec.records() == []


def test_benchmark_does_not_rewrite_a_dataset_file_linked_outside(tmp_path, outside):
    """PaddleDetection's script rewrites configs/datasets/*.yml in place: not through a link."""
    text = _bench_text(base=DET)
    assert "flags:FLAGS_cudnn_exhaustive_search=1" in text
    repo = _repo(tmp_path, text, "paddledetection", bench=True)
    target = outside / "coco.yml"
    target.write_text("".join(f"line{i}\n" for i in range(12)))
    (repo / "configs" / "datasets").mkdir(parents=True)
    (repo / "configs" / "datasets" / "coco_detection.yml").symlink_to(target)
    rec, env = _recorder(tmp_path)
    before = snapshot(tmp_path)
    refused(_bench(repo, env, "dynamic_bs2_fp32_DP_N1C1"), "coco_detection.yml", "outside")
    assert snapshot(tmp_path) == before and rec.records() == []


def test_benchmark_status_lines_print_an_escape_in_the_config_as_text(tmp_path):
    """The issue's case: `echo -e` turned a `\\x1b]0;...` in model_name into a real escape
    sequence (a terminal title) in results.log and on the terminal."""
    model = r"m\x1b]0;pwned\x07\033[2J"
    repo = _repo(tmp_path, _bench_text(model_name=model), "paddleseg", bench=True)
    _rec, env = _recorder(tmp_path)
    proc = _bench(repo, env, "dynamic_bs2_fp32_DP_N1C8")  # several GPUs: the status line names the model
    assert proc.returncode == 0, proc.stderr
    results = (repo / "benchmark_log" / "results.log").read_bytes()
    [line] = results.splitlines()
    # only the colour codes of the template (upstream's status_check) are escape bytes
    assert line.startswith(b"\x1b[33m ") and line.endswith(b"\x1b[0m") and line.count(b"\x1b") == 2, line
    assert model.encode() in line
    assert b"\x1b" not in re.sub(rb"\x1b\[(33|0)m", b"", proc.stdout.encode()), "the terminal gets no other escape"


# ---------------------------------------------------------------------------------------------
# the runner and `tipcgen run`: writes stay in the repo as paths resolve


def _run_both(
    repo: Path, env: dict, mode: str = MODE, dialect: str = "paddleocr", runner: str | None = None, *, plan=False
):
    """The bash, `tipcgen run` (and `tipcgen plan`) on CONFIG; at once when `plan` (a refusal:
    nothing runs), else one after the other (both write the same logs)."""
    args = ["--layout", dialect] + (["--runner", runner] if runner else [])
    script = repo / "test_tipc/test_train_inference_python.sh"
    if not plan:
        bash = run_bash(script, [CONFIG, mode], repo, env, timeout=30)
        return bash, tipcgen("run", CONFIG, "--mode", mode, *args, cwd=repo, env=env)
    with ThreadPoolExecutor(3) as pool:
        bash = pool.submit(run_bash, script, [CONFIG, mode], repo, env, 30)
        run = pool.submit(tipcgen, "run", CONFIG, "--mode", mode, *args, cwd=repo, env=env)
        shown = pool.submit(tipcgen, "plan", CONFIG, "--mode", mode, *args, cwd=repo, env=env)
        return bash.result(), run.result(), shown.result()


def test_runner_and_run_refuse_a_committed_output_directory_linked_outside(tmp_path, outside):
    repo = _repo(tmp_path, OCR.read_text(), "paddleocr")
    (repo / "test_tipc" / "output").symlink_to(outside)
    rec, env = _recorder(tmp_path)
    before = snapshot(tmp_path)
    bash, run, plan = _run_both(repo, env, plan=True)
    for proc in (bash, run):
        refused(proc, "test_tipc/output/toy_det_a", str(outside), "outside")
    assert plan.returncode == 0, plan.stderr  # a plan writes nothing: it only shows the steps
    assert snapshot(tmp_path) == before and rec.records() == []


def test_runner_and_run_refuse_a_save_directory_linked_outside(tmp_path, outside):
    """A trainer's save directory (below the log directory) committed as a link: refused before
    anything runs, as it would carry the saved model out of the repo."""
    repo = _repo(tmp_path, OCR.read_text(), "paddleocr")
    plan = plan_config(OCR.read_text(), get_layout("paddleocr"), MODE)
    save = next(a.split("=", 1)[1] for a in plan.steps[0].argv if a.startswith("Global.save_model_dir="))
    (repo / save).parent.mkdir(parents=True)
    (repo / save).symlink_to(outside)
    rec, env = _recorder(tmp_path)
    before = snapshot(tmp_path)
    bash = run_bash(repo / "test_tipc/test_train_inference_python.sh", [CONFIG, MODE], repo, env, timeout=30)
    refused(bash, Path(save).name, "outside")
    with pytest.raises(UsageError, match="outside"):
        run_plan(plan, cwd=str(repo), timeout=5)
    assert snapshot(tmp_path) == before and rec.records() == []


def test_a_log_beside_the_log_directory_linked_outside_fails_its_step_only(tmp_path, outside):
    """ocr_head's whole_infer export log is `<LOG_PATH>_export_0.log`, beside the log directory:
    a committed link there fails that step (not written), in the bash and in `tipcgen run`."""
    text = OCR.read_text().replace("infer_export:null", "infer_export:tools/export_model.py -c a.yml -o")
    repo = _repo(tmp_path, text, "paddleocr", runner="ocr_head")
    (repo / "test_tipc/output/toy_det_a").mkdir(parents=True)
    (repo / "test_tipc/output/toy_det_a/whole_infer_export_0.log").symlink_to(outside / "keep.txt")
    _rec, env = _recorder(tmp_path)
    bash, run = _run_both(repo, env, "whole_infer", runner="ocr_head")
    for proc in (bash, run):
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "whole_infer_export_0.log" in proc.stderr + proc.stdout and "outside" in proc.stderr + proc.stdout
    assert (outside / "keep.txt").read_text() == "keep" and sorted(os.listdir(outside)) == ["keep.txt"]
    status = (repo / "test_tipc/output/toy_det_a/whole_infer/results_python.log").read_text()
    assert status.count("Run failed") == 2 and "Run successfully" in status  # the export, in both


def _kl_config(tmp_path: Path, infer_model: str) -> str:
    return variant(tmp_path, CLS, "kl", infer_model=infer_model).read_text()


def test_paddleclas_whole_infer_refuses_an_infer_model_linked_outside(tmp_path, outside):
    """The issue's case: infer_model was checked as text only, so through an in-repo link its
    `ln -s` made inference.* links outside the repo."""
    (outside / "quant_post_static_model").mkdir()
    repo = _repo(tmp_path, _kl_config(tmp_path, "./models/q/"), "paddleclas")
    (repo / "models").mkdir()
    (repo / "models" / "q").symlink_to(outside)
    rec, env = _recorder(tmp_path)
    before = snapshot(tmp_path)
    bash, run, plan = _run_both(repo, env, "whole_infer", "paddleclas", plan=True)
    for proc in (bash, run, plan):
        refused(proc, "quant_post_static_model", str(outside), "outside")
    assert snapshot(tmp_path) == before and rec.records() == []


def test_paddleclas_whole_infer_links_are_not_made_through_a_link_in_the_quant_directory(tmp_path, outside):
    """A chain: infer_model through in-repo links (accepted: it stays inside), and in it a
    committed inference.pdmodel linked to an outside directory: `ln -s` would make
    outside/model.pdmodel; the script's `ln -sn` does not enter it."""
    repo = _repo(tmp_path, _kl_config(tmp_path, "./a/"), "paddleclas")
    real = repo / "real" / "quant_post_static_model"
    real.mkdir(parents=True)
    (repo / "b").symlink_to("real")
    (repo / "a").symlink_to("b")
    (real / "inference.pdmodel").symlink_to(outside)
    (repo / "deploy").mkdir()  # where inference runs (upstream: cd ../../deploy from there)
    rec, env = _recorder(tmp_path)
    bash = run_bash(repo / "test_tipc/test_train_inference_python.sh", [CONFIG, "whole_infer"], repo, env, timeout=30)
    assert bash.returncode == 0, bash.stderr
    assert sorted(os.listdir(outside)) == ["keep.txt"], "nothing was linked outside"
    assert os.readlink(real / "inference.pdiparams") == "model.pdiparams"  # the other link is made
    assert rec.records(), "the chain stays inside the repo: the steps ran"


def test_a_step_directory_linked_outside_fails_its_steps(tmp_path, outside):
    """PaddleClas infers from deploy/: committed as a link out of the repo, those steps fail unrun
    (bash and executor alike), the others run."""
    text = CLS.read_text()
    repo = _repo(tmp_path, text, "paddleclas")
    (repo / "deploy").symlink_to(outside)
    rec, env = _recorder(tmp_path)
    bash = run_bash(repo / "test_tipc/test_train_inference_python.sh", [CONFIG, MODE], repo, env, timeout=30)
    assert bash.returncode == 1 and "deploy" in bash.stderr and "outside" in bash.stderr, bash.stderr
    assert rec.records() and all(r["cwd"] == str(repo) for r in rec.records()), "nothing ran in deploy/"
    plan = plan_config(text, get_layout("paddleclas"), MODE, root=str(repo))
    results = run_plan(plan, cwd=str(repo), timeout=5, environ=env)
    infer = [r for r in results if r.step.cwd == "deploy" and r.status != "skipped"]
    assert infer and all(r.status == "failed" and "outside" in (r.reason or "") for r in infer)
    assert sorted(os.listdir(outside)) == ["keep.txt"]


# ---------------------------------------------------------------------------------------------
# control characters: refused by the bash and the Plan alike


@pytest.mark.parametrize(
    ("name", "char", "says"),
    [("cr", "\r", "carriage return"), ("c1_csi", "\u009b", "control character"),
     ("bidi_override", "\u202e", "control character"), ("line_separator", "\u2028", "control character"),
     ("isolate", "\u2066", "control character")],
)  # fmt: skip
def test_runner_and_plan_refuse_cr_c1_and_bidi_characters(tmp_path, name, char, says):
    text = OCR.read_text().replace("Global.print_batch_step=1", f"Global.print_batch_step=1{char}x")
    repo = _repo(tmp_path, text, "paddleocr")
    rec, env = _recorder(tmp_path)
    before = snapshot(tmp_path)
    bash = run_bash(repo / "test_tipc/test_train_inference_python.sh", [CONFIG, MODE], repo, env, timeout=30)
    refused(bash, CONFIG, "line 16", says)
    with pytest.raises(UsageError, match=f"line 16: .*{says}"):
        plan_config(text, get_layout("paddleocr"), MODE, source=CONFIG)
    assert snapshot(tmp_path) == before and rec.records() == []


def test_run_and_plan_cli_refuse_a_cr_with_one_clean_line(tmp_path):
    repo = _repo(tmp_path, OCR.read_text().replace("model_name:toy_det_a", "model_name:toy\rOK"), "paddleocr")
    before = snapshot(tmp_path)
    for proc in tipcgen_all([["run", CONFIG, "--mode", MODE], ["plan", CONFIG]], repo):
        err = refused(proc, CONFIG, "line 2", "carriage return")
        assert "\r" not in proc.stdout + err and len(err.strip().splitlines()) == 1
    assert snapshot(tmp_path) == before


# ---------------------------------------------------------------------------------------------
# what `tipcgen run` prints: paste-safe commands, no terminal control from a config or a log


def test_dry_run_lines_run_exactly_the_planned_argv_when_pasted(tmp_path):
    """The issue's case: `--dry-run` printed `$(touch ...)` unquoted, so pasting the line ran it.
    Each printed line, given to a real bash, runs the Plan's argv and nothing else."""
    pwned = tmp_path / "PWNED"
    value = f'-o Global.a=$(touch {pwned}) Global.b=`touch {pwned}` "Global.c=x;y|z" Global.d=*  "Global.e=\tt"'
    text = OCR.read_text().replace("-o Global.print_batch_step=1", value)
    repo = _repo(tmp_path, text, "paddleocr")
    rec, env = _recorder(tmp_path)
    proc = tipcgen("run", CONFIG, "--mode", MODE, "--dry-run", cwd=repo, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    plan = plan_config(text, get_layout("paddleocr"), MODE)
    assert len(lines) == len(plan.steps) and any("Global.a=" in line for line in lines)
    assert all("\t" not in line for line in lines), "a tab is written $'\\t'"
    (repo / plan.log_dir).mkdir(parents=True)  # the redirects' directory, as a run makes it
    for line in lines:
        subprocess.run(["bash", "-c", line], cwd=repo, env=env, check=False, timeout=10)
    assert not pwned.exists(), "pasting a dry-run line ran a value's command substitution"
    assert [r["argv"] for r in rec.records()] == [list(s.argv[1:]) for s in plan.steps]
    train = plan.steps[0].argv
    assert "Global.a=$(touch" in train and "Global.c=x;y|z" in train and "Global.e=\tt" in train


def test_a_python_line_that_is_a_shell_runs_as_written_and_is_shown(tmp_path):
    """`python:bash -c` is not refused for a legacy config (a spec's policy refuses it): the
    config runs the programs it names, and plan/--dry-run show them, quoted."""
    text = OCR.read_text().replace("python:python3.7", "python:bash -c")
    plan = plan_config(text, get_layout("paddleocr"), MODE)
    assert plan.steps[0].argv[:3] == ("bash", "-c", "tools/train.py")
    assert step_shell(plan.steps[0], {}).startswith("bash -c tools/train.py -c configs/det/toy_det_a.yml")


FAILING = r"""#!/usr/bin/env bash
if [[ $* == *export_model.py* ]]; then
    printf 'boom \033]0;pwned\007\033[2J\r\n'
    exit 1
fi
"""


def test_run_prints_no_escape_sequence_from_a_failing_steps_log(tmp_path):
    """`tipcgen run` shows a failed step's last log lines without their control characters, and
    prints none of its own (a step without a log writes to the terminal itself, as in the bash)."""
    repo = _repo(tmp_path, OCR.read_text(), "paddleocr")
    _rec, env = _recorder(tmp_path)
    stub = tmp_path / "rec" / "bin" / "python3.7"
    stub.write_text(FAILING)
    proc = tipcgen("run", CONFIG, "--mode", MODE, cwd=repo, env=env)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout + proc.stderr
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert "boom" in out and "pwned" in out and "Traceback" not in out  # the tail is shown
