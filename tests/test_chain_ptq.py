"""PaddleClas's PTQ chain (test_ptq_inference_python.sh, dialects/chains/paddleclas_ptq.py): what is
its own. Its configs have the train table (`*_train_ptq_infer_python.txt`): only their file name
tells them apart, so detection reads it when the caller knows it (`tipcgen plan`/`run`, the build)
and every other detection result stays what it was. Its toy configs, their Plans (the kl_quant
line, then the inference matrix on the quantized model from deploy/) and its generated script are
the golden harness's (tests/fixtures/paddleclas_ptq/, tests/test_dialects.py: bash = Plan with
each step failing). Here: detection by name, the CLI's choices, the corpus tier against the real
script with recording shims, and a real run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.cli import invoke_in
from helpers.configs import fixture_text
from helpers.difftest import Case, Harness
from helpers.oracle_runs import need_upstream, oracle
from tipcgen.dialects import detect, get_layout, signature
from tipcgen.dialects.chains import PADDLECLAS_PTQ, chain_layout, chain_of_text
from tipcgen.script.lines import split_lines

LAYOUT = PADDLECLAS_PTQ.name
MODE = "whole_infer"
NAME = "ToyNet_train_ptq_infer_python.txt"
QUANT = "slim/quant_post_static.py"  # what makes the kl_quant step fail in the recorder

# A toy model of our own, shaped like PaddleClas's PTQ configs (the 51-line train table): the harness's.
TOY = fixture_text(LAYOUT, "toy_train_ptq_infer_python.txt")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "configs" / f"{name}_train_ptq_infer_python.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def test_the_chain_is_told_by_its_file_name_only():
    lines = split_lines(TOY)
    assert chain_layout(signature(lines, NAME)) is PADDLECLAS_PTQ
    assert chain_of_text(TOY, NAME) is PADDLECLAS_PTQ and get_layout(LAYOUT) is PADDLECLAS_PTQ
    # without its name, or under a train config's name, it is PaddleClas's train config
    assert chain_of_text(TOY) is None and chain_of_text(TOY, "ToyNet_train_infer_python.txt") is None
    assert detect(lines)[0] == "paddleclas"
    # the name alone is not enough: another repo's train table under that name is not this chain
    ocr = (Path(__file__).parent / "fixtures" / "paddleocr" / "train_infer_python.txt").read_text()
    assert chain_of_text(ocr, NAME) is None


def test_detection_elsewhere_is_unchanged(corpus):
    """Every train config of the corpus keeps its dialect, and no config but PaddleClas's
    `*_train_ptq_infer_python.txt` is taken for this chain, whatever its name."""
    found = []
    for path in sorted(corpus.rglob("*.txt")):
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        lines = split_lines(text)
        layout = chain_of_text(text, path.name)
        if layout is PADDLECLAS_PTQ:
            found.append(path)
            assert detect(lines)[0] == "paddleclas", path
        assert chain_of_text(text) is not PADDLECLAS_PTQ, path  # the name is what decides
    ptq = sorted(p for p in (corpus / "PaddleClas").rglob("*_train_ptq_infer_python.txt"))
    assert found == ptq and ptq


def test_cli_plans_a_ptq_config_by_its_name_and_layout_overrides(tmp_path):
    path = _write(tmp_path, "toy", TOY)
    res = invoke_in(tmp_path, "plan", str(path), "--mode", MODE, "--format", "json")
    assert res.exit_code == 0, res.output
    steps = json.loads(res.output)["steps"]
    assert [s["kind"] for s in steps] == ["export"] + ["infer"] * 5
    # --layout paddleclas plans it as the train script would (its whole_infer: same kl_quant, other logs)
    res = invoke_in(tmp_path, "plan", str(path), "--mode", MODE, "--layout", "paddleclas", "--format", "json")
    assert res.exit_code == 0, res.output
    assert "python_infer_cpu_gpus_0" in res.output and "infer_cpu_usemkldnn" not in res.output
    res = invoke_in(tmp_path, "plan", str(path), "--mode", "lite_train_lite_infer")
    assert res.exit_code == 2 and "whole_infer" in res.output
    # the same text under a train config's name stays a train config
    train = tmp_path / "ToyNet_train_infer_python.txt"
    train.write_text(TOY)
    res = invoke_in(tmp_path, "plan", str(train), "--mode", "lite_train_lite_infer", "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["steps"][0]["kind"] == "train"


@pytest.mark.corpus
def test_every_ptq_config_is_faithful_to_the_real_script(corpus, tmp_path):
    """Every corpus PTQ config x whole_infer x (passing, the quantization failing after making its
    directory, failing before, the inference failing): the real test_ptq_inference_python.sh and
    our Plan agree, every difference a named deviation; our generated script agrees with the Plan."""
    need_upstream("test_ptq_inference_python.sh")
    configs = sorted(p for p in (corpus / "PaddleClas").rglob("*.txt") if chain_of_text(p.read_text(), p.name))
    configs = [p for p in configs if chain_of_text(p.read_text(), p.name) is PADDLECLAS_PTQ]
    assert configs, "no PaddleClas PTQ config in the corpus"
    runs = [(None, True), (QUANT, True), (QUANT, False), ("predict_", True)]
    tally = oracle("PaddleClas", [(c, MODE, None, f, {"quant_made": made}) for c in configs for f, made in runs],
                   chain=LAYOUT)  # fmt: skip
    print(tally.report("ptq oracle"))
    assert not tally.unfaithful, "\n".join(tally.unfaithful[:5])
    for (_c, _m, _g, fail, _o), d in tally.diffs:
        assert d.plan is not None and len(d.upstream.commands) >= 2, d.describe()
        assert fail is not None or not d.differences, d.describe()  # a passing run is identical
    assert dict(tally.runs_by_deviation) == {"infer-from-deploy": len(configs)}  # the only one the oracle can see
    cases = [Case(str(c), LAYOUT, MODE, fail=f) for c in configs for f in (None, QUANT)]
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, "\n".join(mismatches[:5])


@pytest.mark.paddle
@pytest.mark.slow
def test_tiny_rec_ptq_runs_for_real_and_fails_cleanly(tmp_path):
    """The bundled example's PTQ config (examples/tiny_rec/configs/, carried by a copy of
    specs/tiny_rec.yml), for real on the CPU: the generated
    test_ptq_inference_python.sh and `tipcgen run` quantize a trained tiny_rec with Paddle's PTQ
    API and run the predictor on the int8 model; with broken weights both exit 1 and the
    quantization's status line says `Run failed`."""
    import importlib.util
    import sys

    from helpers.tools import require

    require("" if importlib.util.find_spec("paddle") else "paddle is not installed (the paddle extra)")
    tipcgen = (sys.executable, "-c", "import sys; sys.argv[0] = 'tipcgen'; from tipcgen.cli import main; main()")
    repo_root = Path(__file__).resolve().parents[1]
    repo = tmp_path / "repo"
    shutil.copytree(repo_root / "examples" / "tiny_rec", repo, ignore=shutil.ignore_patterns("__pycache__", "output"))
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # `python3` in the config

    def sh(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)

    data = sh(sys.executable, "tools/make_data.py", "--out", ".", "--train", "48", "--eval", "32", "--infer", "4")
    assert data.returncode == 0, data.stdout + data.stderr
    train = sh(sys.executable, "tools/train.py", "-c", "configs/tiny_rec.yml", "-o", "Global.use_gpu=False",
               "Global.save_model_dir=./output/tiny_rec", "Global.epoch_num=1")  # fmt: skip
    assert train.returncode == 0, train.stdout[-2000:] + train.stderr[-2000:]
    # specs/tiny_rec.yml with the example's PTQ config carried verbatim (`other_configs`)
    ptq = (repo_root / "examples" / "tiny_rec" / "configs" / "tiny_rec_train_ptq_infer_python.txt").read_text()
    spec = tmp_path / "specs" / "tiny_rec.yml"
    spec.parent.mkdir()
    entry = "".join(f"      - {json.dumps(line)}\n" for line in ptq.splitlines())
    base = (repo_root / "specs" / "tiny_rec.yml").read_text()
    assert base.rstrip("\n").split("\n")[-1].startswith("      - "), "other_configs must stay the spec's last key"
    head = "" if "\nother_configs:\n" in base else "other_configs:\n"
    spec.write_text(base + f"{head}  tiny_rec_train_ptq_infer_python.txt:\n    lines:\n{entry}")
    res = invoke_in(tmp_path, "build", str(spec), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    shutil.copytree(tmp_path / "gen" / "tiny_rec" / "test_tipc", repo / "test_tipc")
    config = "test_tipc/configs/tiny_rec/tiny_rec_train_ptq_infer_python.txt"
    # The generated script runs in this copy, `tipcgen run` in a second one, at the same time (on
    # a busy machine the runs wait on paddle's import more than they compute).
    other = tmp_path / "repo2"
    shutil.copytree(repo, other, symlinks=True)
    legs = (
        (repo, ("bash", "test_tipc/test_ptq_inference_python.sh", config, MODE)),
        (other, (*tipcgen, "run", config, "--mode", MODE)),
    )

    def run_both(code: int) -> list:
        """Both legs' status lines, each leg having exited `code`."""
        procs = [
            subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for cwd, argv in legs
        ]
        out = []
        for (cwd, _argv), proc in zip(legs, procs):
            output = proc.communicate(timeout=60)[0]
            assert proc.returncode == code, output[-3000:]
            out.append(
                (cwd / "test_tipc" / "output" / "tiny_rec" / MODE / "results_python.log").read_text().splitlines()
            )
        return out

    for cwd, lines in zip((repo, other), run_both(0)):
        assert len(lines) == 2 and all("Run successfully with command - tiny_rec - " in x for x in lines), lines
        assert "tools/quant_post_static.py" in lines[0]
        assert "--rec_model_dir=.././tiny_rec_infer//quant_post_static_model" in lines[1]
        quant = cwd / "tiny_rec_infer" / "quant_post_static_model"
        assert b"quantize_linear" in (quant / "inference.pdmodel").read_bytes()  # an int8 program
        log = cwd / "test_tipc/output/tiny_rec" / MODE / "infer_cpu_usemkldnn_False_threads_2_batchsize_6.log"
        assert log.read_text().count("Predicts of ../inference/rec_inference/") == 4, log.read_text()[-2000:]

    # broken weights: the quantization fails, both say so and exit 1
    for cwd, _argv in legs:
        shutil.rmtree(cwd / "tiny_rec_infer")
        shutil.rmtree(cwd / "test_tipc" / "output")
        (cwd / "output" / "tiny_rec" / "latest.pdparams").write_bytes(b"not a paddle checkpoint")
    for cwd, lines in zip((repo, other), run_both(1)):
        assert lines[0].startswith("\x1b[33m Run failed with command - tiny_rec - python3 tools/quant_post_static.py")
        assert "cannot load weights" in (cwd / "test_tipc/output/tiny_rec" / MODE / "export.log").read_text()
        assert "Run failed" in lines[1]  # the predictor finds no model
        assert not (cwd / "tiny_rec_infer" / "quant_post_static_model").exists()


@pytest.mark.parametrize(
    "folder, spec",
    [
        ("paddleclas_ptq", "toy_train_ptq_infer_python.spec.yml"),
        ("paddleseg_ptq", "toyseg_train_ptq_infer_python.spec.yml"),
        ("models_ptq", "toynet_small_train_ptq_infer_python.spec.yml"),
    ],
)
def test_every_ptq_script_takes_mode_as_upstream_does_and_names_its_refusal(folder, spec, tmp_path):
    """Each family's test_ptq_inference_python.sh takes MODE as its second argument (no default:
    upstream's names its log directory after it) and ignores a third, as upstream's; a MODE other
    than whole_infer, or none, is refused before anything runs, and the runner names that
    refusal as a deviation (the docs' table is read from it)."""
    from tipcgen.plan.planner import runner_for
    from update_golden import FIXTURES

    src = FIXTURES / folder
    res = invoke_in(tmp_path, "build", str(src / spec), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    (tipc,) = (tmp_path / "gen").glob("*/test_tipc")
    script = tipc / "test_ptq_inference_python.sh"
    assert "# usage: bash test_tipc/test_ptq_inference_python.sh CONFIG MODE\n" in script.read_text()
    (config,) = tipc.glob("configs/*/*.txt")
    work = tmp_path / "work"
    work.mkdir()
    for args, said in (((), "usage: bash"), (("lite_train_lite_infer",), "unknown MODE 'lite_train_lite_infer'")):
        proc = subprocess.run(["bash", str(script), str(config), *args], cwd=work, capture_output=True, text=True,
                              timeout=60)  # fmt: skip
        assert proc.returncode == 2 and said in proc.stderr, (args, proc.stderr)
        assert not any(work.iterdir()), args  # nothing ran: not even a log directory
    layout = get_layout(json.loads((src / spec.replace(".spec.yml", ".whole_infer.plan.json")).read_text())["layout"])
    assert "whole-infer-only" in {d.name for d in runner_for(layout, None).DEVIATIONS}


def test_paddledetections_ptq_script_takes_its_config_alone_and_refuses_a_train_config(tmp_path):
    """PaddleDetection's test_ptq_inference_python.sh fixes MODE to whole_infer and reads its config
    alone (MODE optional, whole_infer only); unlike PaddleClas's script of that name it reads no
    train config (upstream's would run that config's lines as its own): the generated script refuses
    one before anything runs, naming the script that runs it."""
    from update_golden import FIXTURES

    src = FIXTURES / "paddledetection_ptq"
    res = invoke_in(tmp_path, "build", str(src / "toydet_s_320_train_ptq_infer_python.spec.yml"), "--out",
                    str(tmp_path / "gen"))  # fmt: skip
    assert res.exit_code == 0, res.output
    (tipc,) = (tmp_path / "gen").glob("*/test_tipc")
    script = tipc / "test_ptq_inference_python.sh"
    assert "# usage: bash test_tipc/test_ptq_inference_python.sh CONFIG [MODE]\n" in script.read_text()
    train = FIXTURES / "paddledetection" / "toydet_tiny_8e_demo_train_infer_python.txt"
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run(["bash", str(script), str(train)], cwd=work, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "its first section is 'train_params', a config of test_tipc/test_train_inference_python.sh" in proc.stderr
    assert not any(work.iterdir())  # nothing ran: not even a log directory
