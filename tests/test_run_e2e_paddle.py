"""Run, end to end: the generated tiny_rec suite works for real, end to end, on a CPU machine.

No mocks. A module fixture copies examples/tiny_rec to a scratch "model repo", compiles
specs/tiny_rec.yml with `tipcgen build` into a scratch directory and lays its test_tipc/ into
the repo, packs the data with `tools/make_data.py --tar` and serves the tarballs from a real
loopback HTTP server (tests/helpers/http_server.py). Every working copy is then made ready by the
generated `bash test_tipc/prepare.sh CONFIG lite_train_lite_infer`, with TIPC_MIRROR pointing
at the server (the spec's `mirror:` base https://tipcgen-example.invalid/tiny_rec maps to
TIPC_MIRROR/<file>) and TIPC_CACHE in the scratch directory.

Then the generated runner (and `tipcgen run`) trains, evaluates, exports and infers with real
PaddlePaddle: one process, two processes on one node (`--nproc_per_node=2`, gloo), two
simulated nodes on 127.0.0.2/127.0.0.3, and a node whose peer never comes.

Every subprocess runs in its own session with a timeout, and is killed with its whole process
tree when it outlives it (paddle.distributed.launch starts its workers with setsid, so the
tree, not only the group, is killed). After each test no process may be left whose working
directory lies in the scratch tree. CUDA_VISIBLE_DEVICES is always removed from the
environment (the launcher would assume GPUs). The tests skip, saying why, only when
`import paddle` fails.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers.cli import TIPCGEN  # the real exec, by this interpreter (the one that has paddle)
from helpers.http_server import PrepareServer
from helpers.machine import bound

pytestmark = pytest.mark.paddle

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "tiny_rec"
SPEC = REPO / "specs" / "tiny_rec.yml"
PY = sys.executable

MODE = "lite_train_lite_infer"
CFG = "test_tipc/configs/tiny_rec"
NORMAL = f"{CFG}/train_infer_python.txt"
MULTIPROC = f"{CFG}/train_linux_cpu_multiproc_infer_python.txt"
FLEET = f"{CFG}/train_linux_cpu_fleet_infer_python.txt"
LOG_DIR = f"test_tipc/output/tiny_rec/{MODE}"
STATUS_LOG = f"{LOG_DIR}/results_python.log"
N_INFER = 8
INFER_LOGS = [f"python_infer_cpu_usemkldnn_False_threads_2_precision_fp32_batchsize_{bs}.log" for bs in (1, 6)]
NODE_IPS = ("127.0.0.2", "127.0.0.3")

RUN_TIMEOUT = 240  # one whole runner invocation (train + eval + export + 2 inferences)
STEP_TIMEOUT = 25  # test 4: the step bound a lonely node's training hits (paddle starts in ~10 s)
MODULE_BUDGET = 600  # acceptance: the whole file in under 10 minutes on 2 cores

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LOG_PREFIX = re.compile(r"^\[\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}\] ppocr \w+: ")
EPOCH = re.compile(r"epoch: (\d+)/(\d+), loss: ([0-9.]+), samples/s: ([0-9.]+)")
FINAL = re.compile(r"final loss: ([0-9.]+) first epoch loss: ([0-9.]+)")
CHECKSUM = re.compile(r"param checksum: rank=(\d+) world=(\d+) value=(-?\d+\.\d+)")
OK_PREFIX = "Run successfully with command - tiny_rec - "

TIMINGS: dict = {}
NUMBERS: dict = {}
MODULE_T0 = [0.0]


# ----------------------------------------------------------------------------- processes


def _stat(pid: int):
    """(ppid, pgid, starttime) of a live, non-zombie pid, else None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("utf-8", "replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[1]), int(fields[2]), int(fields[19])


def _pids() -> list:
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def descendants(root: int) -> dict:
    """pid -> (starttime, cmdline) of every live descendant of `root` (any session)."""
    children: dict = {}
    stats = {}
    for pid in _pids():
        st = _stat(pid)
        if st:
            stats[pid] = st
            children.setdefault(st[0], []).append(pid)
    out, todo = {}, [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out[child] = (stats[child][2], _cmdline(child))
                todo.append(child)
    return out


def alive(pid: int, starttime: int) -> bool:
    st = _stat(pid)
    return st is not None and st[2] == starttime


def processes_in(path: Path) -> dict:
    """pid -> cmdline of every live process whose working directory lies under `path`."""
    found = {}
    prefix = str(path.resolve())
    for pid in _pids():
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if (cwd == prefix or cwd.startswith(prefix + os.sep)) and _stat(pid):
            found[pid] = _cmdline(pid)
    return found


def kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL the process, its group and every descendant (the launcher's workers run in
    sessions of their own), then reap it."""
    tree = descendants(proc.pid) if os.path.isdir("/proc") else {}
    for pgid in [proc.pid] + list(tree):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for pid, (start, _) in tree.items():
        if alive(pid, start):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover
        pass


def base_env(root: Path, **extra) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "CUDA_VISIBLE_DEVICES",
            "TIPC_NODE_IP",
            "FLAGS_START_PORT",
            "TIPC_MIRROR",
            "TIPC_OFFLINE",
            "TIPC_CACHE",
            "PADDLE_TRAINER_ENDPOINTS",
            "PADDLE_MASTER",
        )
    }
    # The configs say `python3`: make that the interpreter running these tests.
    env["PATH"] = f"{root / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update({k: str(v) for k, v in extra.items()})
    return env


class Run:
    """One subprocess in its own session, output to a file (so two can run concurrently)."""

    def __init__(self, cmd, cwd: Path, env: dict, out: Path, label: str):
        self.cmd = [str(c) for c in cmd]
        self.out = out
        self.label = label
        self.t0 = time.monotonic()
        self.seconds = None
        self.fh = open(out, "wb")
        self.proc = subprocess.Popen(
            self.cmd,
            cwd=str(cwd),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait(self, timeout: float) -> int:
        try:
            rc = self.proc.wait(timeout=max(1.0, timeout))
        except subprocess.TimeoutExpired:
            kill_tree(self.proc)
            self.fh.close()
            pytest.fail(f"{self.label}: timed out after {timeout:.0f} s: {' '.join(self.cmd)}\n{self.text()[-4000:]}")
        finally:
            self.seconds = time.monotonic() - self.t0
            TIMINGS[self.label] = self.seconds
        self.fh.close()
        return rc

    def stop(self) -> None:
        if self.proc.poll() is None:
            kill_tree(self.proc)
        if not self.fh.closed:
            self.fh.close()

    def text(self) -> str:
        return self.out.read_text(encoding="utf-8", errors="replace")


def run(cmd, cwd: Path, env: dict, out: Path, label: str, timeout: float = RUN_TIMEOUT):
    r = Run(cmd, cwd, env, out, label)
    try:
        rc = r.wait(timeout)
    finally:
        r.stop()
    return rc, r.text()


# ----------------------------------------------------------------------------- set-up


def _copy_example(dst: Path) -> None:
    skip_top = {"train_data", "inference", "output", "log", "test_tipc"}

    def ignore(directory, names):
        drop = {n for n in names if n == "__pycache__" or n.endswith(".pyc")}
        if Path(directory) == EXAMPLE:
            drop |= skip_top & set(names)
        return drop

    shutil.copytree(EXAMPLE, dst, ignore=ignore)


def free_port(ips=("127.0.0.1",), span: int = 4) -> int:
    """A port p such that p..p+span-1 can be bound on every address in `ips`."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + span > 65535:
            continue
        try:
            for ip in ips:
                for p in range(port, port + span):
                    with socket.socket() as s:
                        s.bind((ip, p))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port range found")


def loopback_aliases_usable() -> str:
    """'' when 127.0.0.2 and 127.0.0.3 can be bound and connected to, else why not."""
    for ip in NODE_IPS:
        try:
            with socket.socket() as srv:
                srv.bind((ip, 0))
                srv.listen(1)
                with socket.create_connection(srv.getsockname(), timeout=2):
                    pass
        except OSError as exc:
            return f"cannot bind and connect to {ip} on this host ({exc}); the two simulated nodes need it"
    return ""


class Env:
    """The module's scratch tree: base repo, served tarballs, cache, server."""

    def __init__(self, root: Path, server: PrepareServer):
        self.root = root
        self.server = server
        self.base = root / "base"
        self.cache = root / "cache"
        self.mirror = server.url("/tiny_rec")

    def env(self, **extra) -> dict:
        return base_env(
            self.root, TIPC_MIRROR=self.mirror, TIPC_CACHE=self.cache, TIPC_BACKOFF="0.1", TIPC_TIMEOUT="10", **extra
        )

    def working_copy(self, name: str, config: str) -> Path:
        """A fresh copy of the base repo, made ready by the generated prepare.sh."""
        w = self.root / name
        shutil.copytree(self.base, w, symlinks=True)
        rc, out = run(
            ["bash", "test_tipc/prepare.sh", config, MODE],
            w,
            self.env(),
            self.root / f"{name}.prepare.out",
            f"prepare {name}",
            timeout=120,
        )
        assert rc == 0, f"prepare.sh failed in {name}:\n{out[-3000:]}"
        assert "prepare: done (tiny_rec, lite_train_lite_infer)" in out, out
        assert len(list((w / "train_data/tiny_rec/train").glob("*.png"))) == 200
        assert len(list((w / "inference/rec_inference").glob("*.png"))) == N_INFER
        return w


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    MODULE_T0[0] = time.monotonic()
    root = tmp_path_factory.mktemp("e2e_tiny_rec")
    (root / "bin").mkdir()
    shim = root / "bin" / "python3"
    shim.write_text(f'#!/usr/bin/env bash\nexec "{PY}" "$@"\n')
    shim.chmod(0o755)

    rc, out = run(
        [PY, "-c", "import paddle; print('paddle', paddle.__version__)"],
        root,
        base_env(root),
        root / "import_paddle.out",
        "import paddle",
        timeout=180,
    )
    if rc != 0:
        lines = out.strip().splitlines() or ["?"]
        pytest.skip(f"`import paddle` fails with {PY}: {lines[-1]}")
    NUMBERS["paddle"] = out.strip().splitlines()[-1]

    # The model repo: the example plus the suite compiled from the spec.
    base = root / "base"
    _copy_example(base)
    rc, out = run(
        TIPCGEN + ["build", SPEC, "--out", root / "gen"], REPO, base_env(root), root / "build.out", "tipcgen build"
    )
    assert rc == 0, out
    shutil.copytree(root / "gen" / "tiny_rec" / "test_tipc", base / "test_tipc")
    for cfg in (NORMAL, MULTIPROC, FLEET):
        assert (base / cfg).is_file(), cfg

    # The data, packed reproducibly, served over real HTTP on 127.0.0.1.
    serve = root / "serve"
    rc, out = run(
        [PY, "tools/make_data.py", "--out", root / "data", "--infer", N_INFER, "--tar", serve],
        base,
        base_env(root),
        root / "make_data.out",
        "make_data",
    )
    assert rc == 0, out
    server = PrepareServer().start()
    try:
        for name in ("tiny_rec_data.tar", "rec_inference.tar"):
            server.add(f"/tiny_rec/{name}", (serve / name).read_bytes())
        env = Env(root, server)
        # The first copy downloads through the mirror; every later one is served by the cache.
        env.working_copy("prepare_check", NORMAL)
        for name in ("tiny_rec_data.tar", "rec_inference.tar"):
            gets = [r for r in server.requests(f"/tiny_rec/{name}") if r["method"] == "GET"]
            assert len(gets) == 1, (name, server.requests())
        shutil.rmtree(root / "prepare_check")
        yield env
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def no_process_left(request):
    """After each test: nothing runs with its working directory in the scratch tree."""
    yield
    if "e2e" not in request.fixturenames or not os.path.isdir("/proc"):
        return
    root = request.getfixturevalue("e2e").root
    left = processes_in(root)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    assert not left, f"processes left behind (now killed): {left}"


# ----------------------------------------------------------------------------- helpers


def status_lines(workdir: Path) -> list:
    """results_python.log, one entry per status line, colour codes and padding removed."""
    raw = (workdir / STATUS_LOG).read_text(encoding="utf-8")
    return [ANSI.sub("", line).strip() for line in raw.splitlines() if line.strip()]


def logged(text: str) -> list:
    return [LOG_PREFIX.sub("", ln) for ln in text.splitlines() if LOG_PREFIX.match(ln)]


def losses(text: str) -> tuple:
    """(per-epoch losses, final, first) from a train's output."""
    epochs = [(int(e), float(loss)) for e, _, loss, _ in EPOCH.findall(text)]
    m = FINAL.search(text)
    assert epochs and m, f"no epoch/final loss lines in:\n{text[-3000:]}"
    return [loss for _, loss in epochs], float(m.group(1)), float(m.group(2))


def checksums(text: str) -> dict:
    return {int(r): (int(w), v) for r, w, v in CHECKSUM.findall(text)}


def check_infer_log(path: Path, bs: int) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    preds = re.findall(r"Predicts of (\S+):\('([0-9a-z]*)', ([0-9.e-]+)\)", text)
    assert len(preds) == N_INFER, f"{path.name}:\n{text[-3000:]}"
    lines = logged(text)
    block_start = lines.index("---------------------- Env info ----------------------")
    block = lines[block_start:]
    for expected in (
        "---------------------- Paddle info ----------------------",
        " runtime_device: cpu",
        " enable_mkldnn: False",
        " cpu_math_library_num_threads: 2",
        " precision: fp32",
        f" batch_size: {bs}",
        f" data_num: {N_INFER}",
        "----------------------- Perf info -----------------------",
    ):
        assert expected in block, (path.name, expected, block)
    assert any(
        re.fullmatch(
            r" preprocess_time\(ms\): [0-9.]+, inference_time\(ms\): [0-9.]+, "
            r"postprocess_time\(ms\): [0-9.]+",
            ln,
        )
        for ln in block
    ), block


def log_files(workdir: Path) -> set:
    top = workdir / LOG_DIR
    return {str(p.relative_to(top)) for p in top.rglob("*") if p.is_file()}


def model_files(workdir: Path) -> list:
    return sorted(str(p.relative_to(workdir)) for p in workdir.rglob("latest.*"))


def check_single_process_run(w: Path, out: str, rc: int, label: str) -> dict:
    assert rc == 0, f"{label} exited {rc}:\n{out[-5000:]}"
    per_epoch, final, first = losses(out)
    assert len(per_epoch) == 3, per_epoch  # Global.epoch_num=3 in lite_train_lite_infer
    assert per_epoch[0] == first and per_epoch[-1] == final
    assert final < first, f"{label}: the loss did not go down: {per_epoch}"
    cs = checksums(out)
    assert set(cs) == {0} and cs[0][0] == 1, cs
    save = w / LOG_DIR / "norm_train_gpus_-1_autocast_fp32"
    for name in ("inference.json", "inference.pdiparams", "latest.pdparams"):
        assert (save / name).is_file(), f"{label}: {name} missing in {save}: {sorted(os.listdir(save))}"
    for bs, name in zip((1, 6), INFER_LOGS):
        check_infer_log(w / LOG_DIR / name, bs)
    lines = status_lines(w)
    assert len(lines) == 5, lines
    assert all(ln.startswith(OK_PREFIX) for ln in lines), lines
    for ln, what in zip(
        lines, ("tools/train.py", "tools/eval.py", "tools/export_model.py", "--rec_batch_num=1", "--rec_batch_num=6")
    ):
        assert what in ln, (what, ln)
    assert "tipc: 5 steps run, 5 passed, 0 failed, 0 skipped" in out
    return {"losses": per_epoch, "checksum": cs[0][1]}


# ----------------------------------------------------------------------------- tests


def test_1_normal_suite_bash_then_tipcgen_run(e2e):
    """One CPU process: the generated bash runner, then `tipcgen run` in a fresh copy."""
    w = e2e.working_copy("normal_bash", NORMAL)
    rc, out = run(
        ["bash", "test_tipc/test_train_inference_python.sh", NORMAL, MODE],
        w,
        e2e.env(),
        e2e.root / "normal_bash.out",
        "normal: bash runner",
    )
    bash = check_single_process_run(w, out, rc, "bash runner")
    NUMBERS["normal bash"] = bash

    w2 = e2e.working_copy("normal_run", NORMAL)
    rc, out2 = run(
        TIPCGEN + ["run", NORMAL, "--mode", MODE, "--layout", "paddleocr"],
        w2,
        e2e.env(),
        e2e.root / "normal_run.out",
        "normal: tipcgen run",
    )
    ours = check_single_process_run(w2, out2, rc, "tipcgen run")
    NUMBERS["normal tipcgen run"] = ours

    # Same log files, same status lines (byte for byte), and, training being deterministic,
    # the same losses and weights.
    assert log_files(w) == log_files(w2)
    assert (w / STATUS_LOG).read_bytes() == (w2 / STATUS_LOG).read_bytes()
    assert bash == ours


def test_2_multiproc_two_processes_one_node(e2e):
    """gpu_list cpux2 -> python3 -m paddle.distributed.launch --nproc_per_node=2 (gloo)."""
    w = e2e.working_copy("multiproc", MULTIPROC)
    rc, out = run(
        ["bash", "test_tipc/test_train_inference_python.sh", MULTIPROC, MODE],
        w,
        e2e.env(),
        e2e.root / "multiproc.out",
        "multiproc: bash runner",
    )
    assert rc == 0, out[-5000:]
    lines = status_lines(w)
    assert len(lines) == 5 and all(ln.startswith(OK_PREFIX) for ln in lines), lines
    assert "python3 -m paddle.distributed.launch --nproc_per_node=2 tools/train.py" in lines[0]

    logs = {r: (w / "log" / f"workerlog.{r}").read_text(encoding="utf-8", errors="replace") for r in (0, 1)}
    cs = {r: checksums(logs[r]) for r in (0, 1)}
    assert set(cs[0]) == {0} and set(cs[1]) == {1}, cs
    assert cs[0][0][0] == cs[1][1][0] == 2, cs
    assert cs[0][0][1] == cs[1][1][1], f"the ranks disagree on the weights: {cs}"
    per_epoch, final, first = losses(logs[0])
    assert final < first, per_epoch
    NUMBERS["multiproc"] = {"losses": per_epoch, "checksum rank 0": cs[0][0][1], "checksum rank 1": cs[1][1][1]}

    # Only rank 0 wrote the model: one set of latest.* files, one train.log with rank 0 only.
    save = f"{LOG_DIR}/norm_train_gpus_cpux2_autocast_fp32"
    assert model_files(w) == [f"{save}/latest.pdopt", f"{save}/latest.pdparams", f"{save}/latest.states"]
    train_log = (w / save / "train.log").read_text(encoding="utf-8")
    assert "rank=0 world=2" in train_log and "rank=1" not in train_log
    assert "saved model" in logs[0] and "saved model" not in logs[1]
    for bs, name in zip((1, 6), INFER_LOGS):
        check_infer_log(w / LOG_DIR / name, bs)


@pytest.fixture(scope="module")
def node_aliases():
    why = loopback_aliases_usable()
    if why:
        pytest.skip(why)


def test_3_fleet_two_nodes_concurrently(e2e, node_aliases):
    """gpu_list 127.0.0.2,127.0.0.3;cpux1, one working copy per node, both started at once."""
    copies = [e2e.working_copy(f"fleet_{n}", FLEET) for n in "AB"]
    port = free_port(("127.0.0.1",) + NODE_IPS)
    runs = []
    try:
        for w, ip, n in zip(copies, NODE_IPS, "AB"):
            runs.append(
                Run(
                    ["bash", "test_tipc/test_train_inference_python.sh", FLEET, MODE],
                    w,
                    e2e.env(TIPC_NODE_IP=ip, FLAGS_START_PORT=port),
                    e2e.root / f"fleet_{n}.out",
                    f"fleet: node {n}",
                )
            )
        deadline = time.monotonic() + RUN_TIMEOUT
        rcs = [r.wait(deadline - time.monotonic()) for r in runs]
    finally:
        for r in runs:
            r.stop()
    outs = [r.text() for r in runs]
    for n, rc, out in zip("AB", rcs, outs):
        assert rc == 0, f"node {n} exited {rc}:\n{out[-5000:]}"

    a, b = copies
    # Each node names its worker log after the local rank: workerlog.0 in both copies.
    cs_a = checksums((a / "log/workerlog.0").read_text(encoding="utf-8", errors="replace"))
    cs_b = checksums((b / "log/workerlog.0").read_text(encoding="utf-8", errors="replace"))
    assert set(cs_a) == {0} and set(cs_b) == {1}, (cs_a, cs_b)
    assert cs_a[0][0] == cs_b[1][0] == 2, (cs_a, cs_b)
    assert cs_a[0][1] == cs_b[1][1], f"the two nodes disagree on the weights: {cs_a} {cs_b}"
    NUMBERS["fleet"] = {"checksum node A (rank 0)": cs_a[0][1], "checksum node B (rank 1)": cs_b[1][1]}

    lines_a, lines_b = status_lines(a), status_lines(b)
    assert len(lines_a) == 5 and all(ln.startswith(OK_PREFIX) for ln in lines_a), lines_a
    assert f"--ips=127.0.0.2,127.0.0.3 --nproc_per_node=1 --host=127.0.0.2 --start_port={port} " in lines_a[0]
    assert len(lines_b) == 5 and lines_b[0].startswith(OK_PREFIX), lines_b
    assert "--host=127.0.0.3 " in lines_b[0]
    skipped = "Run skipped (not trainer 0) with command - tiny_rec - "
    assert all(ln.startswith(skipped) for ln in lines_b[1:]), lines_b
    for ln, what in zip(
        lines_b[1:], ("tools/eval.py", "tools/export_model.py", "--rec_batch_num=1", "--rec_batch_num=6")
    ):
        assert what in ln, (what, ln)
    assert "tipc: 1 steps run, 1 passed, 0 failed, 4 skipped" in outs[1]

    # Rank 0 (node A) alone saved, exported and inferred.
    save = f"{LOG_DIR}/norm_train_gpus_cpux1_autocast_fp32_nodes_2"
    assert model_files(a) == [f"{save}/latest.pdopt", f"{save}/latest.pdparams", f"{save}/latest.states"]
    assert model_files(b) == []
    assert (a / save / "inference.json").is_file() and (a / save / "inference.pdiparams").is_file()
    for bs, name in zip((1, 6), INFER_LOGS):
        check_infer_log(a / LOG_DIR / name, bs)
        assert not (b / LOG_DIR / name).exists()


class TreeWatcher(threading.Thread):
    """Records every descendant of a pid while it runs: (pid, starttime) -> every command line
    it showed (a child sampled between fork and exec still shows its parent's, or none)."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid = pid
        self.seen: dict = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            for pid, (start, cmd) in descendants(self.pid).items():
                self.seen.setdefault((pid, start), set()).add(cmd)
            self.done.wait(0.25)


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc to follow the launcher's process tree")
def test_4_peer_never_joins(e2e, node_aliases):
    """Only node A starts: the train step times out after STEP_TIMEOUT s, the run says the peer did not
    join and exits 1, and nothing it started is left running."""
    w = e2e.working_copy("lonely", FLEET)
    port = free_port(("127.0.0.1",) + NODE_IPS)
    r = Run(
        TIPCGEN + ["run", FLEET, "--mode", MODE, "--layout", "paddleocr", "--step-timeout", STEP_TIMEOUT],
        w,
        e2e.env(TIPC_NODE_IP=NODE_IPS[0], FLAGS_START_PORT=port),
        e2e.root / "lonely.out",
        "lonely node: tipcgen run",
    )
    watcher = TreeWatcher(r.proc.pid)
    watcher.start()
    try:
        rc = r.wait(STEP_TIMEOUT + 120)
    finally:
        watcher.done.set()
        watcher.join(5)
        r.stop()
    out = r.text()
    assert rc == 1, f"expected exit 1, got {rc}:\n{out[-5000:]}"
    flat = " ".join(out.split())  # rich wraps long lines
    assert f"timed out after {STEP_TIMEOUT} s" in flat, out[-5000:]
    assert "the other 1 node(s) did not join within the timeout" in flat, out[-5000:]
    assert "127.0.0.2,127.0.0.3" in flat and f"(here: {port})" in flat
    assert "tipc: 1 steps run, 0 passed, 1 failed, 4 skipped" in flat
    assert r.seconds < STEP_TIMEOUT + bound(40), r.seconds

    lines = status_lines(w)
    assert len(lines) == 5, lines
    assert lines[0].startswith("Run failed with command - tiny_rec - ") and "--host=127.0.0.2" in lines[0]
    assert all(ln.startswith("Run skipped (train failed) with command - tiny_rec - ") for ln in lines[1:]), lines

    # The tree really held the launcher and its worker (which runs in a session of its own),
    # and none of it survived.
    cmds = [cmd for shown in watcher.seen.values() for cmd in shown]
    assert any("paddle.distributed.launch" in c for c in cmds), cmds
    assert any("tools/train.py" in c and "paddle.distributed.launch" not in c for c in cmds), cmds
    left = {pid: shown for (pid, start), shown in watcher.seen.items() if alive(pid, start)}
    assert not left, f"left behind by tipcgen run: {left}"
    assert not processes_in(w), processes_in(w)
    NUMBERS["lonely node"] = {"seconds": round(r.seconds, 1), "processes seen": len(watcher.seen)}


def test_zz_report_and_budget(e2e, capsys):
    """Print what the tests measured (pytest -s, or the -rA summary) and check the time budget."""
    total = time.monotonic() - MODULE_T0[0]
    with capsys.disabled():
        print()
        for k, v in TIMINGS.items():
            print(f"e2e timing {k:<28} {v:7.1f} s")
        print(f"e2e timing {'module so far':<28} {total:7.1f} s")
        for k, v in NUMBERS.items():
            print(f"e2e numbers {k}: {v}")
    assert total < MODULE_BUDGET, f"the end-to-end tests took {total:.0f} s (budget {MODULE_BUDGET} s)"
