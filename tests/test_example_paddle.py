"""End-to-end tests for examples/tiny_rec (real paddle runs, no mocks).

Everything runs in subprocesses so that paddle never gets imported into the
pytest process; tests skip when paddle cannot be imported.
"""

import filecmp
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.paddle

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tiny_rec"
PY = sys.executable
TIMEOUT = 240
N_INFER = 8
LOG_PREFIX = re.compile(r"^\[\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}\] ppocr INFO: ")
CHECKSUM = re.compile(r"param checksum: rank=(\d+) world=(\d+) value=(-?\d+\.\d{10})\b")
EPOCH = re.compile(r"epoch: (\d+)/(\d+), loss: ([0-9.]+), samples/s: ([0-9.]+)")
FINAL = re.compile(r"final loss: ([0-9.]+) first epoch loss: ([0-9.]+)")
TIMINGS = {}


def _env():
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)  # makes the launcher assume GPUs
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def start(cmd, cwd):
    return subprocess.Popen(
        [str(c) for c in cmd],
        cwd=str(cwd),
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # own process group, killable as a whole
    )


def finish(proc, timeout=TIMEOUT):
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        out = proc.stdout.read() if proc.stdout else ""
        pytest.fail("timed out after %ss: %s\n%s" % (timeout, proc.args, out[-4000:]))
    return proc.returncode, out


def run(cmd, cwd, timeout=TIMEOUT, label=None):
    t0 = time.time()
    rc, out = finish(start(cmd, cwd), timeout)
    if label:
        TIMINGS[label] = time.time() - t0
    return rc, out


def run_ok(cmd, cwd, label=None):
    rc, out = run(cmd, cwd, label=label)
    assert rc == 0, "command failed (rc=%s): %s\n%s" % (rc, cmd, out[-4000:])
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_project(dst):
    for name in ("configs", "tools", "tinyrec"):
        shutil.copytree(EXAMPLE / name, dst / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def train_cmd(save_dir, epochs=3, bs=16, extra=()):
    return [
        "tools/train.py",
        "-c",
        "configs/tiny_rec.yml",
        "-o",
        "Global.use_gpu=False",
        "Global.save_model_dir=%s" % save_dir,
        "Global.epoch_num=%d" % epochs,
        "Global.auto_cast=fp32",
        "Train.loader.batch_size_per_card=%d" % bs,
        *extra,
    ]


def checksums(text):
    return {int(r): (int(w), v) for r, w, v in CHECKSUM.findall(text)}


@pytest.fixture(scope="module")
def paddle_info():
    try:
        res = subprocess.run(
            [PY, "-c", "import paddle; print('CUDA', paddle.is_compiled_with_cuda())"],
            capture_output=True,
            text=True,
            timeout=120,
            env=_env(),
        )
    except subprocess.TimeoutExpired:
        pytest.skip("import paddle timed out")
    if res.returncode != 0 or "CUDA" not in res.stdout:
        pytest.skip("paddle is not importable: %s" % (res.stderr.strip().splitlines() or ["?"])[-1])
    return {"cuda": "CUDA True" in res.stdout}


@pytest.fixture(scope="module")
def work(paddle_info, tmp_path_factory):
    """A working copy of the example with generated data (made once per module)."""
    root = tmp_path_factory.mktemp("tiny_rec")
    w = root / "w"
    copy_project(w)
    run_ok(
        [PY, "tools/make_data.py", "--out", ".", "--seed", "0", "--infer", str(N_INFER), "--tar", str(root / "tars")],
        w,
        label="make_data",
    )
    return w


@pytest.fixture(scope="module")
def trained(work):
    out = run_ok([PY] + train_cmd("./output/single"), work, label="train_1proc")
    return work, out


def test_make_data_is_deterministic_and_tars_unpack(work, tmp_path):
    other = tmp_path / "again"
    run_ok(
        [
            PY,
            work / "tools/make_data.py",
            "--out",
            other,
            "--seed",
            "0",
            "--infer",
            str(N_INFER),
            "--tar",
            other / "tars",
        ],
        tmp_path,
    )
    for sub in ("train_data/tiny_rec", "inference"):
        cmp = filecmp.dircmp(work / sub, other / sub)
        stack = [cmp]
        while stack:
            c = stack.pop()
            assert not c.left_only and not c.right_only and not c.diff_files, sub
            _, mismatch, errors = filecmp.cmpfiles(c.left, c.right, c.common_files, shallow=False)
            assert not mismatch and not errors, (sub, mismatch, errors)
            stack.extend(c.subdirs.values())
    tars = work.parent / "tars"
    for name in ("tiny_rec_data.tar", "rec_inference.tar"):
        assert (tars / name).read_bytes() == (other / "tars" / name).read_bytes(), name
    lines = (work / "train_data/tiny_rec/train_list.txt").read_text().splitlines()
    assert len(lines) == 200
    assert all(re.fullmatch(r"train/train_\d{5}\.png\t[0-9a-z]{3,6}", ln) for ln in lines)
    assert len(list((work / "inference/rec_inference").glob("*.png"))) == N_INFER

    with tarfile.open(tars / "tiny_rec_data.tar") as tf:
        members = tf.getmembers()
        names = [m.name for m in members]
        assert names == sorted(names)
        assert all(n == "tiny_rec" or n.startswith("tiny_rec/") for n in names)
        assert all(m.mtime == 0 and m.uid == 0 and m.gid == 0 for m in members)
    unpack = tmp_path / "unpack"
    (unpack / "train_data").mkdir(parents=True)
    (unpack / "inference").mkdir()
    kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    with tarfile.open(tars / "tiny_rec_data.tar") as tf:
        tf.extractall(unpack / "train_data", **kw)
    with tarfile.open(tars / "rec_inference.tar") as tf:
        tf.extractall(unpack / "inference", **kw)
    assert (unpack / "train_data/tiny_rec/eval_list.txt").read_bytes() == (
        work / "train_data/tiny_rec/eval_list.txt"
    ).read_bytes()
    assert len(list((unpack / "inference/rec_inference").glob("*.png"))) == N_INFER


def test_train_single_process_loss_decreases(trained):
    work, out = trained
    epochs = EPOCH.findall(out)
    assert [int(e[0]) for e in epochs] == [1, 2, 3], out[-3000:]
    final, first = map(float, FINAL.search(out).groups())
    assert final < 0.85 * first, (final, first)
    assert "unknown config key Global.auto_cast" in out
    cs = checksums(out)
    assert set(cs) == {0} and cs[0][0] == 1
    for fn in ("latest.pdparams", "latest.pdopt", "latest.states"):
        assert (work / "output/single" / fn).is_file(), fn
    assert TIMINGS["train_1proc"] < 60, TIMINGS


def test_train_is_deterministic(trained):
    work, out = trained
    again = run_ok([PY] + train_cmd("./output/single_again"), work)
    assert EPOCH.findall(out)[-1][2] == EPOCH.findall(again)[-1][2]
    assert checksums(out) == checksums(again)


def test_eval(trained):
    work, _ = trained
    out = run_ok(
        [
            PY,
            "tools/eval.py",
            "-c",
            "configs/tiny_rec.yml",
            "-o",
            "Global.pretrained_model=./output/single/latest",
            "Global.use_gpu=False",
        ],
        work,
        label="eval",
    )
    m = re.search(r"acc: ([0-9.]+), norm_edit_dis: ([0-9.]+)", out)
    assert m, out[-3000:]
    assert 0.0 <= float(m.group(1)) <= 1.0 and 0.0 <= float(m.group(2)) <= 1.0


@pytest.fixture(scope="module")
def exported(trained):
    work, _ = trained
    run_ok(
        [
            PY,
            "tools/export_model.py",
            "-c",
            "configs/tiny_rec.yml",
            "-o",
            "Global.checkpoints=./output/single/latest",
            "Global.save_inference_dir=./output/single",
        ],
        work,
        label="export",
    )
    return work, work / "output/single"


def test_export_writes_inference_model(exported):
    _, model_dir = exported
    assert (model_dir / "inference.pdiparams").is_file()
    assert (model_dir / "inference.json").is_file() or (model_dir / "inference.pdmodel").is_file()
    assert (model_dir / "inference.yml").is_file()


def test_export_missing_checkpoint_fails(work):
    rc, out = run(
        [
            PY,
            "tools/export_model.py",
            "-c",
            "configs/tiny_rec.yml",
            "-o",
            "Global.checkpoints=./output/does_not_exist/latest",
            "Global.save_inference_dir=./output/does_not_exist",
        ],
        work,
    )
    assert rc != 0
    assert "checkpoint not found" in out


BENCH_LINES = [
    "---------------------- Env info ----------------------",
    r" OS_version: .+",
    " CUDA_version: None",
    " CUDNN_version: None",
    " drivier_version: None",
    "---------------------- Paddle info ----------------------",
    r" paddle_version: \d+\.\d+\.\d+.*",
    r" paddle_commit: \S+",
    " log_api_version: 1.0",
    "----------------------- Conf info -----------------------",
    " runtime_device: cpu",
    " ir_optim: True",
    " enable_memory_optim: True",
    " enable_tensorrt: False",
    " enable_mkldnn: False",
    " cpu_math_library_num_threads: 2",
    "----------------------- Model info ----------------------",
    " model_name: rec",
    " precision: fp32",
    "----------------------- Data info -----------------------",
    " batch_size: {bs}",
    " input_shape: dynamic",
    " data_num: {n}",
    "----------------------- Perf info -----------------------",
    r" cpu_rss\(MB\): \d+\.\d+, gpu_rss\(MB\): None, gpu_util: None%",
    r" total time spent\(s\): \d+\.\d+",
    r" preprocess_time\(ms\): \d+\.\d+, inference_time\(ms\): \d+\.\d+, "
    r"postprocess_time\(ms\): \d+\.\d+",
]


def predict_cmd(model_dir, bs, *extra):
    return [
        PY,
        "tools/infer/predict_rec.py",
        "--use_gpu=False",
        "--use_tensorrt=False",
        "--enable_mkldnn=False",
        "--cpu_threads=2",
        "--rec_model_dir=%s" % model_dir,
        "--rec_batch_num=%d" % bs,
        "--image_dir=./inference/rec_inference",
        "--benchmark=True",
        "--precision=fp32",
        "--rec_image_shape=3,32,100",
        *extra,
    ]


@pytest.mark.parametrize("bs", [1, 6])
def test_predict_benchmark(exported, bs):
    work, model_dir = exported
    out = run_ok(predict_cmd(model_dir, bs, "--some_unknown_flag=1"), work, label="predict_bs%d" % bs)
    preds = re.findall(r"Predicts of (\S+):\('([0-9a-z]*)', ([0-9.e-]+)\)", out)
    assert len(preds) == N_INFER, out[-3000:]
    assert sorted(os.path.basename(p[0]) for p in preds) == sorted(
        p.name for p in (work / "inference/rec_inference").glob("*.png")
    )
    assert "ignoring unknown argument --some_unknown_flag=1" in out

    logged = [LOG_PREFIX.sub("", ln) for ln in out.splitlines() if LOG_PREFIX.match(ln)]
    start_idx = logged.index(BENCH_LINES[0])
    block = logged[start_idx : start_idx + len(BENCH_LINES)]
    assert len(block) == len(BENCH_LINES), block
    for pattern, line in zip(BENCH_LINES, block):
        pattern = pattern.replace("{bs}", str(bs)).replace("{n}", str(N_INFER))
        if pattern.startswith("-"):
            assert line == pattern
        else:
            assert re.fullmatch(pattern, line), (pattern, line)


def test_predict_error_paths(exported, paddle_info):
    work, model_dir = exported
    rc, out = run(predict_cmd(work / "output/no_model_here", 6), work)
    assert rc != 0 and "no inference model" in out
    if not paddle_info["cuda"]:
        rc, out = run(predict_cmd(model_dir, 6) + ["--use_gpu=True"], work)
        assert rc == 1 and "no CUDA support" in out


def test_two_process_launch(work, tmp_path):
    log_dir = tmp_path / "log"
    out = run_ok(
        [PY, "-m", "paddle.distributed.launch", "--nproc_per_node", "2", "--log_dir", log_dir]
        + train_cmd("./output/dp"),
        work,
        label="train_2proc",
    )
    logs = {i: (log_dir / ("workerlog.%d" % i)).read_text() for i in (0, 1)}
    cs0, cs1 = checksums(logs[0]), checksums(logs[1])
    assert set(cs0) == {0} and set(cs1) == {1}, (cs0, cs1, out[-3000:])
    assert cs0[0] == (2, cs1[1][1]), (cs0, cs1)
    for i in (0, 1):
        final, first = map(float, FINAL.search(logs[i]).groups())
        assert final < first
    # only rank 0 writes: the model files exist, and the log file (written by the
    # writer only) has rank 0's lines and none of rank 1's
    save = work / "output/dp"
    assert (save / "latest.pdparams").is_file() and (save / "latest.pdopt").is_file()
    train_log = (save / "train.log").read_text()
    assert "rank=0 world=2" in train_log and "rank=1" not in train_log
    assert "saved model" in logs[0] and "saved model" not in logs[1]


def test_two_node_launch_on_one_host(work, tmp_path):
    nodes = []
    for r in (0, 1):
        d = tmp_path / ("node%d" % r)
        copy_project(d)
        shutil.copytree(work / "train_data", d / "train_data")
        nodes.append(d)
    port = free_port()
    t0 = time.time()
    procs = [
        start(
            [
                PY,
                "-m",
                "paddle.distributed.launch",
                "--master",
                "127.0.0.1:%d" % port,
                "--nnodes",
                "2",
                "--rank",
                str(r),
                "--nproc_per_node",
                "1",
                "--log_dir",
                "./log",
            ]
            + train_cmd("./output/mn"),
            nodes[r],
        )
        for r in (0, 1)
    ]
    results = []
    try:
        for p in procs:
            results.append(finish(p, max(1.0, TIMEOUT - (time.time() - t0))))
    finally:
        for p in procs:
            if p.poll() is None:
                _kill(p)
    TIMINGS["train_2nodes"] = time.time() - t0
    for r, (rc, out) in enumerate(results):
        assert rc == 0, "node %d failed:\n%s" % (r, out[-4000:])
    # each node names its log after the local rank -> workerlog.0 in both copies
    cs = [checksums((nodes[r] / "log" / "workerlog.0").read_text()) for r in (0, 1)]
    assert set(cs[0]) == {0} and set(cs[1]) == {1}, cs
    assert cs[0][0] == cs[1][1] and cs[0][0][0] == 2, cs
    assert (nodes[0] / "output/mn/latest.pdparams").is_file()
    assert not (nodes[1] / "output/mn").exists()


def test_zz_report_timings(capsys):
    """Not a check: print the wall-clock times measured above (pytest -s shows them)."""
    with capsys.disabled():
        for k, v in sorted(TIMINGS.items()):
            print("tiny_rec timing %-14s %6.2f s" % (k, v))
