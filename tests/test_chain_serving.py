"""PaddleClas's serving chains (test_serving_infer_python.sh, test_serving_infer_cpp.sh): what is
theirs alone. Their four line tables (a classifier's config, PP-ShiTu's; Python and C++) have toy
configs in the golden harness (tests/fixtures/paddleclas_serving_*/, tests/test_dialects.py:
detection, identity, plans, bytes, bash = Plan with a step failing, recording sed/cp too). Here:
the tables told apart where content is not enough (the file name), a config of the other script
refused, the server stopped when its client fails or the script is interrupted, the build, and
the corpus tier against the real scripts (recording shims): identical, or different only where a
named deviation says so, then a live server run.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from helpers.cli import invoke_in
from helpers.configs import fixture_text
from helpers.difftest import Case, Harness
from helpers.oracle_runs import need_upstream, oracle
from tipcgen.dialects import signature
from tipcgen.dialects.chains import (
    PADDLECLAS_SERVING_CPP,
    PADDLECLAS_SERVING_CPP_SHITU,
    PADDLECLAS_SERVING_PYTHON,
    PADDLECLAS_SERVING_PYTHON_SHITU,
    chain_layout,
    chain_of_text,
)
from tipcgen.errors import UsageError
from tipcgen.plan.planner import plan_config
from tipcgen.script.lines import split_lines

MODE = "serving_infer"

# Toy models of our own, shaped like PaddleClas's serving configs (the harness's fixtures).
CLS = fixture_text(PADDLECLAS_SERVING_PYTHON.name, "toy_cls_serving_python_linux_gpu_cpu.txt")
SHITU = fixture_text(PADDLECLAS_SERVING_PYTHON_SHITU.name, "toy_shitu_serving_python_linux_gpu_cpu.txt")
CLS_CPP = fixture_text(PADDLECLAS_SERVING_CPP.name, "toy_cls_serving_cpp_linux_gpu_cpu.txt")
SHITU_CPP = fixture_text(PADDLECLAS_SERVING_CPP_SHITU.name, "toy_shitu_serving_cpp_linux_gpu_cpu.txt")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "configs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def test_the_name_tells_twins_apart_and_other_tables_are_none_of_these():
    # the same content named as a C++ config (two corpus files are): the C++ twin of its table
    name = "ToyNet_linux_gpu_normal_normal_serving_cpp_linux_gpu_cpu.txt"
    assert chain_of_text(CLS, name) is PADDLECLAS_SERVING_CPP
    assert chain_of_text(SHITU, f"configs/{name}") is PADDLECLAS_SERVING_CPP_SHITU
    assert chain_of_text(CLS_CPP, name.replace("_cpp_", "_python_")) is PADDLECLAS_SERVING_CPP  # content wins
    # another repo's serving configs have other keys: none of these tables
    assert chain_layout(signature(split_lines(CLS.replace("trans_model:", "trans_model_py:")))) is None


def test_a_config_of_the_other_script_is_refused_by_plan_cli_and_script(tmp_path):
    with pytest.raises(UsageError, match="C\\+\\+ serving config"):
        plan_config(CLS_CPP, PADDLECLAS_SERVING_PYTHON, MODE)
    # the C++ script: a config named as TIPC names a Python serving config is the Python script's
    python_named = "configs/ToyNet/ToyNet_linux_gpu_normal_normal_serving_python_linux_gpu_cpu.txt"
    with pytest.raises(UsageError, match="test_serving_infer_python.sh"):
        plan_config(CLS_CPP, PADDLECLAS_SERVING_CPP, MODE, source=python_named)
    assert plan_config(CLS_CPP, PADDLECLAS_SERVING_CPP, MODE, source="configs/ToyNet/ToyNet_serving_cpp.txt").steps
    # named a C++ config: the C++ script's plan, though the content is a Python config's
    path = _write(tmp_path, "ToyNet_serving_cpp_linux_gpu_cpu.txt", CLS)
    res = invoke_in(tmp_path, "plan", str(path), "--mode", MODE, "--format", "json")
    assert res.exit_code == 0 and "cpp_server_cpu.log" in res.output, res.output
    res = invoke_in(tmp_path, "run", str(path), "--mode", MODE)
    assert res.exit_code == 2 and "test_serving_infer_cpp.sh" in res.output, res.output
    # the generated scripts refuse as their Plans do, before they write anything
    cases = [Case(str(_write(tmp_path, "cpp.txt", CLS_CPP)), PADDLECLAS_SERVING_PYTHON.name, MODE)]
    named = str(_write(tmp_path, "ToyNet_linux_gpu_normal_normal_serving_python_linux_gpu_cpu.txt", CLS_CPP))
    cases.append(Case(named, PADDLECLAS_SERVING_CPP.name, MODE))
    mismatches = Harness(tmp_path / "h", tools=("sed", "cp")).run(cases)
    assert not mismatches, "\n".join(mismatches)


def test_one_script_serves_both_tables_of_its_language():
    from tipcgen.emit.files import runner_script

    for layout, shitu in ((PADDLECLAS_SERVING_PYTHON, PADDLECLAS_SERVING_PYTHON_SHITU),
                          (PADDLECLAS_SERVING_CPP, PADDLECLAS_SERVING_CPP_SHITU)):  # fmt: skip
        script = runner_script(layout, "test")[0]
        assert f"# usage: bash test_tipc/{layout.dialect.script} CONFIG [MODE] [GPUID]" in script
        assert runner_script(shitu, "test")[0] == script


def _script(tmp_path: Path, layout) -> Path:
    from tipcgen.emit.files import runner_script

    script, common = runner_script(layout, "test")
    d = tmp_path / "repo" / "test_tipc"
    d.mkdir(parents=True, exist_ok=True)
    (d / layout.dialect.script).write_text(script)
    (d / "common_func.sh").write_text(common)
    return d / layout.dialect.script


# A stand-in interpreter: a web service that runs until stopped (its pid to server.pid), clients
# that fail, a stop command that stops nothing.
FAKE_PYTHON = """#!/usr/bin/env bash
case $1 in
*_web_service.py) echo $$ > "$TIPC_TEST_DIR/server.pid"; exec sleep 60 ;;
*_client.py) echo "client: no server answers"; exit 1 ;;
esac
exit 0
"""


def test_the_server_is_stopped_when_its_client_fails_and_when_interrupted(tmp_path):
    script = _script(tmp_path, PADDLECLAS_SERVING_PYTHON)
    root = script.parent.parent
    config = root / "test_tipc" / "configs" / "ToyNet" / "ToyNet_serving_python_linux_gpu_cpu.txt"
    config.parent.mkdir(parents=True)
    config.write_text(CLS.replace("--use_gpu:0|null", "--use_gpu:null") + "\n")
    (root / "deploy" / "paddleserving").mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3.7").write_text(FAKE_PYTHON)
    (bin_dir / "python3.7").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", TIPC_TEST_DIR=str(tmp_path),
               TIPC_SERVE_WARMUP="0", TIPC_KILL_GRACE="1")  # fmt: skip
    args = ["bash", str(script), str(config.relative_to(root))]
    run = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run.stdout + run.stderr  # the client failed
    status = (root / "test_tipc/output/ToyNet/serving_infer/results_serving.log").read_text()
    assert "Run successfully with command - ToyNet - nohup python3.7 classification_web_service.py" in status
    assert "Run failed with command - ToyNet - python3.7 pipeline_http_client.py" in status
    pid = int((tmp_path / "server.pid").read_text())
    assert not _alive(pid), "the server outlived the script"
    # interrupted while the client runs: the server is stopped all the same
    (bin_dir / "python3.7").write_text(FAKE_PYTHON.replace("exit 1 ;;", "sleep 60 ;;"))
    (tmp_path / "server.pid").unlink()
    proc = subprocess.Popen(args, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not (tmp_path / "server.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # no warm-up: the client runs
    proc.terminate()
    assert proc.wait(timeout=20) == 143
    assert not _alive(int((tmp_path / "server.pid").read_text())), "the server outlived the interrupted script"


def _alive(pid: int) -> bool:
    for _ in range(30):  # it may take a moment to be reaped
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(") ", 1)[1].startswith("Z"):
                    return False
        except FileNotFoundError:
            return False
        time.sleep(0.1)
    return True


def test_build_emits_both_serving_scripts(tmp_path):
    folder = tmp_path / "src" / "ToyNet"
    folder.mkdir(parents=True)
    (folder / "ToyNet_linux_gpu_normal_normal_serving_python_linux_gpu_cpu.txt").write_text(CLS + "\n")
    (folder / "ToyNet_linux_gpu_normal_normal_serving_cpp_linux_gpu_cpu.txt").write_text(CLS + "\n")  # as PPHGNet's
    res = invoke_in(tmp_path, "import", str(folder), "--out", str(tmp_path / "specs"))
    assert res.exit_code == 0, res.output
    res = invoke_in(tmp_path, "build", str(tmp_path / "specs" / "ToyNet.yml"), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    tipc = tmp_path / "gen" / "ToyNet" / "test_tipc"
    assert (tipc / "test_serving_infer_python.sh").is_file() and (tipc / "test_serving_infer_cpp.sh").is_file()


def _serving_configs(corpus: Path) -> list:
    out = []
    for p in sorted((corpus / "PaddleClas").rglob("*.txt")):
        layout = chain_of_text(p.read_bytes().decode("utf-8", "replace"), p.name)
        if layout is not None and layout.dialect.script.startswith("test_serving_infer_"):
            out.append((p, layout))
    return out


@pytest.mark.corpus
def test_corpus_serving_configs_are_detected_as_their_scripts_read_them(corpus):
    """Every `*_serving_{python,cpp}_*` config of PaddleClas gets its script's table; content alone
    decides for all but the two C++ files identical to their Python twins; and our PP-ShiTu test
    (by keys) agrees with upstream's (model_name holds PPShiTu / ShiTu) on every one."""
    found = _serving_configs(corpus)
    names = sorted(p.name for p in (corpus / "PaddleClas").rglob("*_serving_*_linux_gpu_cpu.txt"))
    assert sorted(p.name for p, _ in found) == names and names
    by_name_only = []
    for path, layout in found:
        cpp = "_serving_cpp_" in path.name
        assert layout.dialect.script == ("test_serving_infer_cpp.sh" if cpp else "test_serving_infer_python.sh"), path
        if chain_layout(signature(split_lines(path.read_text()))) is not layout:
            by_name_only.append(path.name)
        model = next(line.split(":", 1)[1] for line in path.read_text().splitlines() if line.startswith("model_name:"))
        assert ("shitu" in layout.name) == (("ShiTu" if cpp else "PPShiTu") in model), path
    assert sorted(by_name_only) == [
        "PPHGNet_small_linux_gpu_normal_normal_serving_cpp_linux_gpu_cpu.txt",
        "PPHGNet_tiny_linux_gpu_normal_normal_serving_cpp_linux_gpu_cpu.txt",
    ]


# The failing step of each config's second run, in turn: the conversion, the server, the client,
# the edits (sed/cp: quiet), so that across the corpus each kind fails on some config of each table.
FAILS = ("paddle_serving_client.convert", "_web_service.py", "--port", "_client.py", "prototxt")


@pytest.mark.corpus
def test_every_paddleclas_serving_config_is_faithful_to_the_real_scripts(corpus, tmp_path):
    """Every corpus serving config x (passing, one step failing): the real script and our Plan
    agree, every difference a named deviation; and a sample of our generated scripts agrees with
    the Plan."""
    need_upstream("test_serving_infer_python.sh")
    found = _serving_configs(corpus)
    runs = [(p, MODE, None, f, {"chain": layout.name}) for i, (p, layout) in enumerate(found)
            for f in (None, FAILS[i % len(FAILS)])]  # fmt: skip
    tally = oracle("PaddleClas", runs)
    print(tally.report("serving oracle"))
    assert not tally.unfaithful, "\n".join(tally.unfaithful[:5])
    assert tally.runs == 2 * len(found)
    # the deviations are the ones expected; every run sleeps (the warm-up and pauses, recorded by the
    # oracle's sleep shim), which the generated script does not: serving-server-always-stopped names it
    assert set(tally.runs_by_deviation) == {
        "serving-gpu-log-names",
        "serving-server-own-status",
        "serving-cpp-shitu-gpu-server-log",
        "serving-server-always-stopped",
    }
    assert tally.runs_by_deviation["serving-server-always-stopped"] == tally.runs
    sample = {layout.name: p for p, layout in found}  # one config of each table
    cases = [Case(str(p), name, MODE, fail=f) for name, p in sample.items() for f in (None, "--port")]
    mismatches = Harness(tmp_path / "h", tools=("sed", "cp")).run(cases)
    assert not mismatches, "\n".join(mismatches[:5])


# A live stand-in for Paddle Serving's web service (none is installed here): an HTTP server on
# the port in TIPC_TEST_PORT, its pid to server.pid; the client asks it for a prediction.
WEB_SERVICE = """import http.server, os, socketserver
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"err_no": 0, "value": ["daisy"]}')
    def preprocess(self, input_imgs):
        return {"image": input_imgs}
open(os.environ["TIPC_TEST_DIR"] + "/server.pid", "w").write(str(os.getpid()))
socketserver.TCPServer.allow_reuse_address = True
socketserver.TCPServer(("127.0.0.1", int(os.environ["TIPC_TEST_PORT"])), Handler).serve_forever()
"""
CLIENT = """import os, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/prediction" % os.environ["TIPC_TEST_PORT"], timeout=5).read().decode())
"""
PROTOTXT = 'feed_var {\n  name: "x"\n  alias_name: "x"\n}\nfetch_var {\n  name: "out"\n  alias_name: "softmax"\n  is_lod_tensor: false\n}\n'


def _live_repo(root: Path, scripts: dict) -> Path:
    """A checkout for the Python serving script with a live stand-in web service and client."""
    tipc = root / "test_tipc"
    (tipc / "configs" / "Toy").mkdir(parents=True)
    for name, text in scripts.items():
        (tipc / name).write_text(text)
    text = CLS.replace("python:python3.7", "python:python3").replace("--use_gpu:0|null", "--use_gpu:null")
    (tipc / "configs" / "Toy" / "ToyNet_serving_python_linux_gpu_cpu.txt").write_text(text + "\n")
    serving = root / "deploy" / "paddleserving"
    (serving / "ToyNet_serving").mkdir(parents=True)
    (serving / "ToyNet_serving" / "serving_server_conf.prototxt").write_text(PROTOTXT)
    (serving / "classification_web_service.py").write_text(WEB_SERVICE)
    (serving / "pipeline_http_client.py").write_text(CLIENT)
    lines = [f"line{i}" for i in range(1, 29)]
    lines[20], lines[23], lines[26] = "model_config: old", "device_type: 1", 'devices: "0"'
    (serving / "config.yml").write_text("\n".join(lines) + "\n")
    return root


@pytest.mark.corpus
def test_a_live_server_run_edits_and_reports_as_the_real_script_and_is_stopped(corpus, tmp_path):
    """Our script and upstream's on one checkout with a live stand-in server: the same edits of
    the configs (real sed), the same status lines; ours leaves no server behind, upstream's
    (whose `paddle_serving_server.serve stop` cannot run here) does, and is stopped here."""
    import socket

    upstream = Path(os.environ.get("TIPC_UPSTREAM", corpus.parent / "upstream")) / "PaddleClas"
    if not (upstream / "test_serving_infer_python.sh").is_file():
        pytest.skip(f"the upstream scripts are not at {upstream}")
    from tipcgen.emit.files import runner_script

    ours, common = runner_script(PADDLECLAS_SERVING_PYTHON, "test")
    real = {n: (upstream / n).read_text() for n in ("test_serving_infer_python.sh", "common_func.sh")}
    results = {}
    for side, scripts in (
        ("ours", {"test_serving_infer_python.sh": ours, "common_func.sh": common}),
        ("upstream", real),
    ):
        root = _live_repo(tmp_path / side, scripts)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(os.environ, TIPC_TEST_DIR=str(root), TIPC_TEST_PORT=str(port), TIPC_SERVE_WARMUP="1")
        if side == "upstream":  # its fixed `sleep 5s` (warm-up, pauses) made 1 s, our warm-up's length
            (tmp_path / "bin").mkdir(exist_ok=True)
            (tmp_path / "bin" / "sleep").write_text("#!/bin/sh\nexec /bin/sleep 1\n")
            (tmp_path / "bin" / "sleep").chmod(0o755)
            env["PATH"] = f"{tmp_path / 'bin'}:{env['PATH']}"
        args = ["bash", "test_tipc/test_serving_infer_python.sh", "test_tipc/configs/Toy/ToyNet_serving_python_linux_gpu_cpu.txt", MODE]  # fmt: skip
        run = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=60)
        pid = int((root / "server.pid").read_text())
        left = _alive(pid)
        if left:
            os.kill(pid, 15)  # upstream's server, started by this test
        status = (root / "test_tipc/output/ToyNet/serving_infer/results_serving.log").read_text()
        edits = {p.name: p.read_text() for p in (root / "deploy").rglob("*") if p.is_file()}
        results[side] = (status.replace(str(root), "ROOT"), edits, left, run.stdout)
    assert results["ours"][1] == results["upstream"][1]  # the same edits
    assert '{ "x": input_imgs}' in results["ours"][1]["classification_web_service.py"]
    assert results["ours"][0] == results["upstream"][0]  # the same status lines
    assert "Run successfully with command - ToyNet - python3 pipeline_http_client.py" in results["ours"][0]
    assert '"daisy"' in results["ours"][3]  # the client reached the live server
    assert (results["ours"][2], results["upstream"][2]) == (False, True)
