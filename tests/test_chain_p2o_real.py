"""The paddle2onnx chain for real: examples/tiny_rec's paddle2onnx config (specs/tiny_rec.yml,
a typed `paddle2onnx` suite) run by the generated test_tipc/test_paddle2onnx.sh and by `tipcgen run`.

No mocks. A module fixture copies the example to a scratch "model repo", lays the test_tipc/
that `tipcgen build specs/tiny_rec.yml` writes into it, makes the data, trains (12 epochs, so the
model reads some characters) and exports into deploy/models/tiny_rec_infer/, and runs the Paddle
predictor on the inference images. Then paddle2onnx converts the model and onnxruntime recognises
the same images: the same texts as Paddle's. With a truncated inference.pdiparams paddle2onnx
still exits 0 (it logs the invalid model and writes it), onnxruntime cannot load the file, and
the run fails cleanly: exit 1, the inference's status line `Run failed` (upstream's script
reports it `Run successfully`: deviation onnx-infer-own-status).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import TIPCGEN  # the real exec, by this interpreter (the one that has paddle)

pytestmark = [pytest.mark.paddle, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "tiny_rec"
PY = sys.executable
CONFIG = "test_tipc/configs/tiny_rec/tiny_rec_paddle2onnx_python_linux_cpu.txt"
MODE = "paddle2onnx_infer"
LOG_DIR = f"test_tipc/output/tiny_rec/{MODE}"
MODEL_DIR = "deploy/models/tiny_rec_infer"
N_INFER = 8
TIMEOUT = 120
ANSI = re.compile(r"\x1b\[[0-9;]*m")
PREDICT = re.compile(r"Predicts of (\S+?):\('([^']*)', ([0-9.e-]+)\)")


def _env() -> dict:
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    # the config's `python3` and the generated script's commands: this interpreter's venv
    env["PATH"] = f"{Path(PY).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run(cmd: list, cwd: Path) -> subprocess.CompletedProcess:
    res = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=TIMEOUT
    )  # fmt: skip
    return res


def run_ok(cmd: list, cwd: Path) -> str:
    res = run(cmd, cwd)
    assert res.returncode == 0, f"{cmd} exited {res.returncode}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res.stdout


def predictions(text: str) -> dict:
    """{image file name: (text, score)} from a predictor's output."""
    return {Path(path).name: (rec, float(score)) for path, rec, score in PREDICT.findall(text)}


@pytest.fixture(scope="module")
def tools_ready():
    from helpers.tools import require

    probe = subprocess.run(
        [PY, "-c", "import paddle, paddle2onnx, onnxruntime"], capture_output=True, text=True, timeout=120, env=_env()
    )  # fmt: skip
    require("" if probe.returncode == 0 else f"paddle/paddle2onnx/onnxruntime: {probe.stderr.strip()[-300:]}")
    require("" if shutil.which("paddle2onnx", path=_env()["PATH"]) else "no paddle2onnx CLI (pip install -e '.[onnx]')")


@pytest.fixture(scope="module")
def exported(tools_ready, tmp_path_factory):
    """(a trained and exported model repo with the generated test_tipc/, the Paddle predictor's
    predictions {image: (text, score)})."""
    from tipcgen.check.spec import load_spec
    from tipcgen.emit.files import build_files

    scratch = tmp_path_factory.mktemp("p2o")
    repo = scratch / "repo"
    for name in ("configs", "tools", "tinyrec", "deploy"):
        shutil.copytree(EXAMPLE / name, repo / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # the test_tipc/ that `tipcgen build specs/tiny_rec.yml` writes (built in-process: no second
    # interpreter start on a busy machine)
    for rel, content in build_files(load_spec(str(REPO / "specs" / "tiny_rec.yml"))).items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(content)
    run_ok([PY, "tools/make_data.py", "--out", ".", "--seed", "0", "--infer", N_INFER], repo)
    train = ["Global.use_gpu=False", "Global.save_model_dir=./output/p2o", "Global.epoch_num=12"]
    run_ok([PY, "tools/train.py", "-c", "configs/tiny_rec.yml", "-o", *train, "Optimizer.lr.learning_rate=0.01"], repo)
    export = ["Global.checkpoints=./output/p2o/latest", f"Global.save_inference_dir=./{MODEL_DIR}"]
    run_ok([PY, "tools/export_model.py", "-c", "configs/tiny_rec.yml", "-o", *export], repo)
    out = run_ok(
        [PY, "tools/infer/predict_rec.py", f"--rec_model_dir=./{MODEL_DIR}", "--image_dir=./inference/rec_inference",
         "--rec_batch_num=6", "--use_gpu=False"],
        repo,
    )  # fmt: skip
    paddle = predictions(out)
    assert len(paddle) == N_INFER, out[-2000:]
    # 12 epochs read some characters: the comparison with onnxruntime is not between empty strings
    assert any(text for text, _ in paddle.values()), paddle
    return repo, paddle


def _fresh(repo: Path) -> None:
    """No ONNX model and no logs of an earlier run."""
    (repo / MODEL_DIR / "inference.onnx").unlink(missing_ok=True)
    shutil.rmtree(repo / "test_tipc" / "output", ignore_errors=True)


def _status_lines(repo: Path) -> list:
    """The status lines without the colours PaddleClas's status_check paints them in."""
    text = (repo / LOG_DIR / "results_paddle2onnx.log").read_text()
    return [ANSI.sub("", line).strip() for line in text.splitlines()]


def _check_passing_run(repo: Path, paddle: dict, res: subprocess.CompletedProcess) -> None:
    from tipcgen.run.autolog import parse_autolog

    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    status = _status_lines(repo)
    assert len(status) == 2 and all(line.startswith("Run successfully with command - tiny_rec - ") for line in status)
    assert "tools/to_onnx.py" in status[0] and "./python/predict_rec.py" in status[1]
    onnx = repo / MODEL_DIR / "inference.onnx"
    assert onnx.is_file() and onnx.stat().st_size > 100_000  # the weights are in it
    log = (repo / LOG_DIR / "paddle2onnx_infer_cpu.log").read_text()
    got = predictions(log)
    assert sorted(got) == sorted(paddle)
    for image, (text, score) in paddle.items():
        assert got[image][0] == text, (image, got[image], text)
        assert abs(got[image][1] - score) < 1e-3, (image, got[image], score)
    block = parse_autolog(log)
    assert block is not None and block["conf"]["inference_engine"] == "onnxruntime"
    assert block["data"]["data_num"] == N_INFER and block["perf"]["inference_time(ms)"] > 0


def test_generated_script_converts_and_onnxruntime_reads_what_paddle_reads(exported):
    repo, paddle = exported
    _fresh(repo)
    res = run(["bash", "test_tipc/test_paddle2onnx.sh", CONFIG], repo)
    _check_passing_run(repo, paddle, res)
    assert "2 steps run, 2 passed, 0 failed" in res.stdout


def test_tipcgen_run_converts_and_onnxruntime_reads_what_paddle_reads(exported):
    repo, paddle = exported
    _fresh(repo)
    res = run([*TIPCGEN, "run", CONFIG, "--mode", MODE], repo)
    _check_passing_run(repo, paddle, res)


@pytest.fixture(scope="module")
def broken(exported, tmp_path_factory):
    """A copy of the repo whose inference.pdiparams is cut to 1000 bytes."""
    repo = tmp_path_factory.mktemp("p2o_broken") / "repo"
    shutil.copytree(exported[0], repo, ignore=shutil.ignore_patterns("output", "inference.onnx"))
    params = repo / MODEL_DIR / "inference.pdiparams"
    params.write_bytes(params.read_bytes()[:1000])
    return repo


@pytest.mark.parametrize("runner", ["generated", "tipcgen"])
def test_a_broken_model_fails_cleanly_and_the_inference_is_not_reported_successful(broken, runner):
    _fresh(broken)
    if runner == "generated":
        res = run(["bash", "test_tipc/test_paddle2onnx.sh", CONFIG], broken)
    else:
        res = run([*TIPCGEN, "run", CONFIG, "--mode", MODE], broken)
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-3000:]
    convert, infer = _status_lines(broken)
    # paddle2onnx logs the invalid model but exits 0; the model it wrote cannot be loaded
    assert "tools/to_onnx.py" in convert and "Model checker error" in (broken / LOG_DIR / "trans_model.log").read_text()
    assert infer.startswith("Run failed with command - tiny_rec - ") and "./python/predict_rec.py" in infer
    log = (broken / LOG_DIR / "paddle2onnx_infer_cpu.log").read_text()
    assert "onnxruntime cannot load" in log and "Predicts of" not in log
    assert "Traceback" not in log  # a clean error, not a crash
    assert "1 failed" in res.stdout


def test_upstream_script_reports_the_failed_inference_successful(broken, corpus):
    """The defect our deviation fixes, shown with PaddleClas's real test_paddle2onnx.sh on the
    same broken model (its common_func.sh laid in place of ours)."""
    upstream = Path(os.environ.get("TIPC_UPSTREAM", corpus.parent / "upstream")) / "PaddleClas"
    if not (upstream / "test_paddle2onnx.sh").is_file():
        pytest.skip(f"the upstream scripts are not at {upstream.parent}")
    tree = broken.parent / "upstream_repo"
    shutil.copytree(broken, tree, ignore=shutil.ignore_patterns("output", "inference.onnx"))
    for name in ("test_paddle2onnx.sh", "common_func.sh"):
        shutil.copy(upstream / name, tree / "test_tipc" / name)
    res = run(["bash", "test_tipc/test_paddle2onnx.sh", CONFIG], tree)
    assert res.returncode == 0  # upstream always exits 0
    convert, infer = _status_lines(tree)
    # upstream passes --enable_dev_version=False too: tools/to_onnx.py takes it, so it converts
    assert "tools/to_onnx.py" in convert and "Run successfully" in convert
    assert "onnxruntime cannot load" in (tree / LOG_DIR / "paddle2onnx_infer_cpu.log").read_text()
    assert "Run successfully" in infer  # the failed inference, reported with the conversion's status


@pytest.mark.corpus
def test_the_example_config_is_faithful_to_the_real_script(corpus, tmp_path):
    """The example's paddle2onnx config against PaddleClas's real test_paddle2onnx.sh under the
    oracle's recording shims (no Paddle): passing, the conversion failing, the inference failing;
    every difference is the deviation onnx-infer-own-status."""
    from tipcgen.check.spec import load_spec
    from tipcgen.migrate.oracle import compare

    upstream = Path(os.environ.get("TIPC_UPSTREAM", corpus.parent / "upstream"))
    if not (upstream / "PaddleClas" / "test_paddle2onnx.sh").is_file():
        pytest.skip(f"the upstream scripts are not at {upstream}")
    spec = load_spec(str(REPO / "specs" / "tiny_rec.yml"))
    config = tmp_path / Path(CONFIG).name
    from tipcgen.emit.files import config_files

    config.write_text(config_files(spec)[CONFIG])
    explained = {}
    for fail in (None, "to_onnx", "predict_rec"):
        d = compare(config, "PaddleClas", MODE, fail=fail, upstream=upstream, chain="paddleclas_paddle2onnx")
        assert d.faithful, [x.detail for x in d.unexplained()]
        explained[fail] = d.explained_by()
    # a passing run is identical; a failing step's status shows the deviation
    assert explained == {None: [], "to_onnx": ["onnx-infer-own-status"], "predict_rec": ["onnx-infer-own-status"]}
