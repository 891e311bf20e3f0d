"""The dynamic-to-static chain (PaddleClas's test_train_dy2static_python.sh): what is its own.

Each section of the config becomes a train config of its own, trained twice by the repo's
test_train_inference_python.sh (dygraph, then `trainer:to_static_train`), and the two loss curves
are compared by our test_tipc/compare_loss.py. Its toy configs, their Plans and its generated
script are the golden harness's (tests/fixtures/paddleclas_dy2static/, tests/test_dialects.py:
bash = Plan, a recorder standing in for the nested runner, each step failing). Here: the mode
given is honoured, a section name that leaves the log directory is refused, compare_loss.py, the
built chain with a stand-in trainer, the corpus tier against the real script with the same
recorder, and the paddle tier for real on the bundled tiny_rec example, passing and with a broken
to_static path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers.cli import TIPCGEN, invoke_in
from helpers.configs import fixture_text
from helpers.difftest import Case, Harness
from helpers.oracle_runs import need_upstream, oracle
from tipcgen.dialects import signature
from tipcgen.dialects.chains import PADDLECLAS_DY2STATIC, chain_family, chain_layout
from tipcgen.dialects.chains.paddleseg_dy2static import PADDLESEG_DY2STATIC
from tipcgen.dialects.chains.paddlevideo_dy2static import PADDLEVIDEO_DY2STATIC
from tipcgen.plan.planner import plan_config
from tipcgen.plan.runners.dy2static import MODES
from tipcgen.script.lines import split_lines

LAYOUT = PADDLECLAS_DY2STATIC.name
MODE = "lite_train_lite_infer"
REPO = Path(__file__).resolve().parents[1]


# A toy model of our own, shaped like PaddleClas's dy2static configs (two sections): the harness's.
TOY = fixture_text(LAYOUT, "toy_train_dy2static_python.txt")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "configs" / f"{name}_train_dy2static_python.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def test_a_train_config_is_not_this_chains():
    assert chain_layout(signature(split_lines(TOY.replace(" base_train ", "train_params", 1)))) is None


def test_the_mode_given_is_honoured():
    """Upstream overwrites MODE with lite_train_lite_infer; we run the one given."""
    plan = plan_config(TOY, PADDLECLAS_DY2STATIC, "whole_train_whole_infer")
    assert plan.steps[0].argv[-1] == "whole_train_whole_infer"
    assert plan.log_dir == "./test_tipc/output/ToyNet/whole_train_whole_infer"
    assert "whole_infer" not in MODES  # nothing is trained there: no curve to compare


def test_cli_plans_it_and_refuses_a_section_name_that_leaves_the_log_directory(tmp_path):
    path = _write(tmp_path, "toy", TOY)
    res = invoke_in(tmp_path, "plan", str(path), "--mode", MODE, "--format", "json")
    assert res.exit_code == 0, res.output
    steps = json.loads(res.output)["steps"]
    assert [s["kind"] for s in steps] == ["train", "train", "compare"] * 2
    assert steps[0]["writes_status"] is False and "writes_status" not in steps[2]
    res = invoke_in(tmp_path, "plan", str(path), "--mode", "whole_infer")
    assert res.exit_code == 2 and "lite_train_lite_infer" in res.output
    bad = _write(tmp_path, "bad", TOY.replace(" amp_train ", " ../amp ", 1))
    res = invoke_in(tmp_path, "plan", str(bad), "--mode", MODE)
    assert res.exit_code == 2 and "the section on line 23 is named '../amp'" in res.output


def test_a_section_named_out_of_its_folder_and_the_mode_given_run_as_planned(tmp_path):
    cases = [Case(str(_write(tmp_path, "whole", TOY)), LAYOUT, "whole_train_whole_infer")]
    cases.append(Case(str(_write(tmp_path, "slash", TOY.replace(" amp_train ", " a/b ", 1))), LAYOUT, MODE))
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, "\n".join(mismatches)


def _compare_loss(tmp_path: Path, dygraph: str, to_static: str, *args: str) -> subprocess.CompletedProcess:
    from tipcgen.emit.files import render

    script = tmp_path / "compare_loss.py"
    script.write_text(render("compare_loss.py.j2", banner="test"))
    (tmp_path / "dy.txt").write_text(dygraph)
    (tmp_path / "st.txt").write_text(to_static)
    argv = [sys.executable, str(script), str(tmp_path / "dy.txt"), str(tmp_path / "st.txt"), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def test_compare_loss_passes_within_the_tolerance_and_says_why_it_fails(tmp_path):
    clas = "[Train][Epoch 1/2][Iter: {i}/3]lr: 0.1, top1: 0.0, CELoss: {x}, loss: {x}, batch_cost: 0.1 s\n"
    curve = [6.90834, 6.5, 6.25]
    dy = "".join(clas.format(i=i, x=x) for i, x in enumerate(curve))
    res = _compare_loss(tmp_path, dy, dy.replace("6.25,", "6.2501,"))
    assert res.returncode == 0 and "OK: 3 losses agree within 0.001" in res.stdout, res.stdout
    res = _compare_loss(tmp_path, dy, dy.replace("6.25,", "6.4,"))
    assert res.returncode == 4 and "loss 3 differs: dygraph 6.25, to_static 6.4" in res.stdout, res.stdout
    assert _compare_loss(tmp_path, dy, dy.replace("6.25,", "6.4,"), "--rtol", "0.1").returncode == 0
    assert _compare_loss(tmp_path, "no losses\n", dy).returncode == 1
    assert _compare_loss(tmp_path, dy, "Traceback ...\n").returncode == 2
    res = _compare_loss(tmp_path, dy, dy + "final loss: 6.25 first epoch loss: 6.9\n")
    assert res.returncode == 3 and "3 vs 5 losses" in res.stdout
    assert _compare_loss(tmp_path, dy, dy.replace("6.25,", "nan,")).returncode == 4


def test_build_emits_the_chain_and_it_runs_with_the_generated_train_runner(tmp_path):
    """tiny_rec's spec carries a dy2static config: the build emits the chain script and
    compare_loss.py; run from the tree with a stand-in trainer (it prints a loss curve, broken
    on the to_static run when asked), through the generated train runner."""
    res = invoke_in(tmp_path, "build", str(REPO / "specs" / "tiny_rec.yml"), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    root = tmp_path / "gen" / "tiny_rec"
    assert (root / "test_tipc" / "compare_loss.py").is_file()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(
        "#!/usr/bin/env bash\n"
        f'if [[ $1 == test_tipc/compare_loss.py ]]; then exec "{sys.executable}" "$@"; fi\n'
        'shift_loss=0\nif [[ " $* " == *" Global.to_static=True "* && -n ${BREAK_TO_STATIC:-} ]]; then shift_loss=1; fi\n'
        'for x in 9 7 5; do echo "epoch: [1/1], global_step: 1, loss: $((x + shift_loss)).5, ips: 1"; done\n'
    )
    (bin_dir / "python3").chmod(0o755)
    config = "test_tipc/configs/tiny_rec/train_dy2static_python.txt"
    status = root / "test_tipc/output/tiny_rec/lite_train_lite_infer/results_python.log"
    for broken in ("", "1"):
        env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", BREAK_TO_STATIC=broken)
        env.pop("CUDA_VISIBLE_DEVICES", None)
        run = subprocess.run(
            ["bash", "test_tipc/test_train_dy2static_python.sh", config],
            cwd=root, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        lines = status.read_text().splitlines()
        status.unlink()
        # the nested runner's two train lines, then ours for the comparison
        assert len(lines) == 3 and "Global.to_static=True" in lines[1], lines
        if broken:
            assert (
                run.returncode == 1
                and "Run failed with command - tiny_rec - python3 test_tipc/compare_loss.py" in lines[2]
            )
        else:
            assert run.returncode == 0, run.stdout + run.stderr
            assert "Run successfully with command - tiny_rec - python3 test_tipc/compare_loss.py" in lines[2]


@pytest.mark.corpus
def test_every_paddleclas_dy2static_config_is_faithful_to_the_real_script(corpus, tmp_path):
    """Every corpus config of the chain x our modes x (passing, the to_static runs failing): the
    real test_train_dy2static_python.sh (its nested train runner a recorder) and our Plan agree,
    every difference a named deviation; and our generated script agrees with the Plan."""
    need_upstream("test_train_dy2static_python.sh")
    configs = sorted(
        p for p in (corpus / "PaddleClas").rglob("*.txt")
        if chain_layout(signature(split_lines(p.read_bytes().decode("utf-8", "replace")))) is PADDLECLAS_DY2STATIC
    )  # fmt: skip
    # every config the TIPC naming calls a dy2static one, and no other (derived: the corpus grows)
    assert configs == sorted((corpus / "PaddleClas").rglob("*_train_dy2static_python.txt")), configs
    fails = (None, "trainer:to_static_train")
    tally = oracle("PaddleClas", [(c, m, None, f) for c in configs for m in MODES for f in fails], chain=LAYOUT)
    print(tally.report("dy2static oracle"))
    assert not tally.unfaithful, "\n".join(tally.unfaithful[:5])
    # the sections' configs and the nested runs match upstream's byte for byte in lite mode
    lite = [d for (_c, mode, _g, _f), d in tally.diffs if mode == MODE]
    assert len(lite) == 2 * len(configs) and not any(
        x.category.startswith("train") for d in lite for x in d.differences
    )
    assert tally.runs_by_deviation["dy2static-mode"] == 4 * len(configs)  # the two other modes x 2
    cases = [Case(str(c), LAYOUT, MODE, fail=f) for c in configs for f in fails]
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, "\n".join(mismatches[:5])


# The other families' scripts: (repo, layout, what fails their to-static run)
FAMILIES = [
    ("PaddleSeg", PADDLESEG_DY2STATIC, "to_static_training=True"),
    ("PaddleVideo", PADDLEVIDEO_DY2STATIC, "to_static=True"),
]


@pytest.mark.corpus
@pytest.mark.parametrize("repo, layout, fail", FAMILIES, ids=[f[1].name for f in FAMILIES])
def test_every_dy2static_config_of_another_family_is_faithful_to_its_own_script(corpus, tmp_path, repo, layout, fail):
    """PaddleSeg's and PaddleVideo's dy2static configs have PaddleClas's lines, but their scripts
    add no print-step flag and make the second run to-static their own way (PaddleVideo's also
    evals a garbled last line: dy2static-custom-cmd). Every corpus config imports as that family's
    suite byte for byte; x our modes x (passing, the to-static run failing) against the family's
    real script (its nested train runner a recorder); and our generated script against the Plan."""
    need_upstream(layout.dialect.script, repo=repo)
    family = chain_family(layout.name)
    configs = sorted(
        p for p in (corpus / repo).rglob("*.txt")
        if chain_layout(signature(split_lines(p.read_bytes().decode("utf-8", "replace"))), family) is layout
    )  # fmt: skip
    assert configs, f"no {layout.name} config in the corpus"
    from tipcgen.importer import import_group

    for config in configs:
        report = import_group([str(config)], family=family)  # typed as this family's, rebuilt byte for byte
        assert not report.failures and report.layouts[config.name] == layout.name, report.failures
    tally = oracle(repo, [(c, m, None, f) for c in configs for m in MODES for f in (None, fail)], chain=layout.name)
    print(tally.report(f"{layout.name} oracle"))
    assert not tally.unfaithful, "\n".join(tally.unfaithful[:5])
    # the sections' configs and the nested runs match upstream's byte for byte in lite mode
    lite = [d for (_c, mode, _g, _f), d in tally.diffs if mode == MODE]
    assert lite and not any(x.category.startswith("train") for d in lite for x in d.differences)
    cases = [Case(str(c), layout.name, MODE, fail=f) for c in configs for f in (None, fail)]
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, "\n".join(mismatches[:5])


# ---- a real run: the bundled tiny_rec example, trained dygraph and through paddle.jit.to_static

EXAMPLE = REPO / "examples" / "tiny_rec"
# `tipcgen` through the interpreter running the tests (no reliance on a PATH shim).
# The to_static path broken on purpose: the converted model starts from other classifier weights.
BREAK = """        model = paddle.jit.to_static(model)
        net.fc.weight.set_value(net.fc.weight * 1.5)
"""


def _real(cmd: list, cwd: Path, env: dict, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run in a session of its own; on a timeout its whole group is killed."""
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, _ = proc.communicate()
        pytest.fail(f"timed out after {timeout} s: {cmd}\n{out[-3000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, "")


@pytest.mark.paddle
@pytest.mark.slow
def test_tiny_rec_dy2static_for_real_through_the_script_and_tipcgen_run(tmp_path):
    """The generated chain script and `tipcgen run` train tiny_rec twice for real (CPU), and the
    losses agree; with the to_static path broken the comparison fails: exit 1 and a failed
    status line naming compare_loss.py."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(f'#!/usr/bin/env bash\nexec "{sys.executable}" "$@"\n')
    (bin_dir / "python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "TIPC_STEP_TIMEOUT")}
    env.update(PATH=f"{bin_dir}:{env['PATH']}", PYTHONDONTWRITEBYTECODE="1")
    probe = _real([sys.executable, "-c", "import paddle"], tmp_path, env)
    if probe.returncode != 0:
        pytest.skip(f"`import paddle` fails with {sys.executable}: {probe.stdout.strip().splitlines()[-1:]}")
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", "train_data", "inference", "output"))
    made = _real(
        [sys.executable, "tools/make_data.py", "--out", ".", "--train", "48", "--eval", "8", "--infer", "2"], repo, env
    )
    assert made.returncode == 0, made.stdout
    built = invoke_in(tmp_path, "build", str(REPO / "specs" / "tiny_rec.yml"), "--out", str(tmp_path / "gen"))
    assert built.exit_code == 0, built.output
    shutil.copytree(tmp_path / "gen" / "tiny_rec" / "test_tipc", repo / "test_tipc")
    config = "test_tipc/configs/tiny_rec/train_dy2static_python.txt"
    runs = {
        "script": ["bash", "test_tipc/test_train_dy2static_python.sh", config],
        "tipcgen run": TIPCGEN + ["run", config, "--mode", MODE],
    }
    # Each way in a copy of its own, both at once (the runs take seconds each, mostly paddle's start).
    repos = {how: tmp_path / how.replace(" ", "_") for how in runs}
    for copy in repos.values():
        shutil.copytree(repo, copy)
    for broken in (False, True):
        if broken:
            for copy in repos.values():
                train = copy / "tools" / "train.py"
                train.write_text(train.read_text().replace("        model = paddle.jit.to_static(model)\n", BREAK))
        t0 = time.monotonic()
        with ThreadPoolExecutor(2) as pool:
            results = dict(zip(runs, pool.map(lambda how: _real(runs[how], repos[how], env), runs)))
        seconds = time.monotonic() - t0
        for how, res in results.items():
            logs = repos[how] / "test_tipc" / "output" / "tiny_rec" / MODE
            status = (logs / "results_python.log").read_text().splitlines()
            verdict = (logs / "base_train_diff_log.txt").read_text()
            dygraph = (logs / "base_train_python_train_infer_dygraph_output.txt").read_text()
            static = (logs / "base_train_python_train_infer_dy2static_output.txt").read_text()
            shutil.rmtree(repos[how] / "test_tipc" / "output")
            assert "to_static: training through paddle.jit.to_static" in static and "to_static:" not in dygraph
            # the nested runner's two train lines (both passed), then the comparison's
            assert len(status) == 3 and all("Run successfully" in line for line in status[:2]), status
            if broken:
                assert res.returncode == 1, (how, res.stdout[-3000:])
                assert "Run failed with command - tiny_rec - python3 test_tipc/compare_loss.py" in status[2]
                assert "FAILED: loss 1 differs" in verdict, verdict
            else:
                assert res.returncode == 0, (how, res.stdout[-3000:])
                assert "Run successfully with command - tiny_rec - python3 test_tipc/compare_loss.py" in status[2]
                assert "OK: " in verdict and " losses agree within 0.001" in verdict, verdict
            print(
                f"dy2static real run ({how}, {'broken' if broken else 'passing'}, both {seconds:.1f} s): {verdict.splitlines()[-1]}"
            )
