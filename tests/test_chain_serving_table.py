"""PaddleDetection's serving chains written as tables (dialects/chains/paddledetection_serving_*.py):
what is theirs alone. The toy configs are in the golden harness (tests/fixtures/, test_dialects.py:
bytes, bash = Plan with each step failing) and the corpus tier is TABLE_CHAINS (tests/test_chains.py).
Here: detection against PaddleDetection's other chains and PaddleClas's serving configs, the Plan's
services, and real runs of the generated script: each web service stopped after its client, when the
client fails and when the script is interrupted, and nothing else on the machine stopped (upstream
kills whatever `ps ux | grep web_service` finds).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.configs import fixture_text
from tipcgen.dialects import signature
from tipcgen.dialects.chains import PADDLEDETECTION_PADDLE2ONNX, chain_layout, chain_of_text
from tipcgen.dialects.chains.paddledetection_serving_cpp import PADDLEDETECTION_SERVING_CPP
from tipcgen.dialects.chains.paddledetection_serving_python import PADDLEDETECTION_SERVING_PYTHON
from tipcgen.plan.planner import plan_config
from tipcgen.script.lines import split_lines

MODE = "serving_infer"
PY = PADDLEDETECTION_SERVING_PYTHON
CPP = PADDLEDETECTION_SERVING_CPP
TOY = fixture_text(PY.name, "toydet_s_320_serving_python_linux_gpu_cpu.txt")
TOY_CPP = fixture_text(CPP.name, "toydet_s_320_serving_cpp_linux_gpu_cpu.txt")


def test_detection_tells_the_chain_apart_from_the_other_tables():
    assert chain_of_text(TOY, "toydet_serving_python_linux_gpu_cpu.txt") is PY
    assert chain_of_text(TOY_CPP, "toydet_serving_cpp_linux_gpu_cpu.txt") is CPP
    p2o = fixture_text(PADDLEDETECTION_PADDLE2ONNX.name, "toydet_s_320_paddle2onnx_python_linux_cpu.txt")
    assert chain_of_text(p2o) is PADDLEDETECTION_PADDLE2ONNX
    for name, text in (
        ("paddleclas_serving_python", "toy_cls_serving_python_linux_gpu_cpu.txt"),
        ("paddleclas_serving_cpp", "toy_cls_serving_cpp_linux_gpu_cpu.txt"),
    ):
        assert chain_of_text(fixture_text(name, text)).name == name


@pytest.mark.corpus
def test_every_corpus_serving_config_of_paddledetection_is_its_scripts(corpus):
    """The repo's `*serving_python*` configs are this table's, and no other config is."""
    found = {
        p.name: chain_layout(signature(split_lines(p.read_bytes().decode("utf-8", "replace"))), "paddledetection")
        for p in sorted((corpus / "PaddleDetection").rglob("*.txt"))
    }
    for layout, marker in ((PY, "serving_python"), (CPP, "serving_cpp")):
        named = {name for name in found if marker in name}
        assert named, f"no PaddleDetection {marker} config in the corpus"
        assert {name for name, got in found.items() if got is layout} == named
    for p in sorted((corpus / "PaddleClas").rglob("*serving*.txt")):
        assert chain_of_text(p.read_bytes().decode("utf-8", "replace"), p.name) not in (PY, CPP), p


def test_the_plan_starts_each_service_and_stops_it_after_its_client():
    plan = plan_config(TOY, PY, MODE, gpuid="3", source="toy")
    kinds = [(s.kind, s.service) for s in plan.steps]
    per_opt = [("serve", "start"), ("infer", ""), ("stop", "stop")]
    assert kinds == [("export", ""), *per_opt * 2, *per_opt * 2]  # norm (exported) and null; cpu and gpu
    assert {s.cuda_visible_devices for s in plan.steps} == {"3"}
    serve = plan.steps[1]
    assert serve.warmup == 5 and serve.command.endswith("python_server_cpu.log 2>&1 &")
    assert "--opt=op.ppdet.local_service_conf.device_type=0" in serve.argv
    assert "--model_dir=./output_inference/toydet_s_320" in serve.argv
    assert all(s.argv == () and s.quiet for s in plan.steps if s.service == "stop")  # our own stop: no command


def test_the_cpp_plan_serves_null_on_the_cpu_and_any_other_item_on_the_gpu():
    """Upstream's `if [ ${gpu_ids} = "null" ]; then <cpu logs> else <gpu logs>`: every item runs."""
    text = TOY_CPP.replace("--gpu_ids:null|0", "--gpu_ids:null|0||1,2")
    plan = plan_config(text, CPP, MODE, gpuid="3", source="toy")
    serves = [s for s in plan.steps if s.kind == "serve"]
    assert [s.log.rsplit("/", 1)[1] for s in serves[:4]] == ["cpp_server_cpu.log", *["cpp_server_gpu.log"] * 3]
    assert serves[0].argv[1:3] == ("-m", "paddle_serving_server.serve")
    assert "--gpu_ids=1,2" in serves[3].argv and not any(a.startswith("--gpu_ids") for a in serves[0].argv)
    assert {s.cuda_visible_devices for s in plan.steps} == {None}  # it reads no GPUID, exports nothing


# A stand-in interpreter: a web service that runs until stopped (its pid appended to servers.pid),
# a client that fails (or, with TIPC_TEST_HANG, hangs), an export that passes.
FAKE_PYTHON = """#!/usr/bin/env bash
case $1 in
*web_service.py) echo $$ >> "$TIPC_TEST_DIR/servers.pid"; exec sleep 60 ;;
-m) [[ $2 == paddle_serving_server.serve ]] && echo $$ >> "$TIPC_TEST_DIR/servers.pid" && exec sleep 60 ;;
*http_client.py | *serving_client.py)
    [[ -n ${TIPC_TEST_HANG:-} ]] && exec sleep 60
    echo "client: no server answers"
    exit 1
    ;;
esac
exit 0
"""


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


def _setup(tmp_path: Path, layout=PY, text: str = TOY) -> tuple[list, Path, dict]:
    from tipcgen.emit.files import runner_script

    script, common = runner_script(layout, "test")
    root = tmp_path / "repo"
    (root / "test_tipc").mkdir(parents=True)
    (root / "test_tipc" / layout.dialect.script).write_text(script)
    (root / "test_tipc" / "common_func.sh").write_text(common)
    config = root / "test_tipc" / "configs" / "toydet" / "toydet_serving_python_linux_gpu_cpu.txt"
    config.parent.mkdir(parents=True)
    config.write_text(text)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3.7").write_text(FAKE_PYTHON)
    (bin_dir / "python3.7").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", TIPC_TEST_DIR=str(tmp_path),
               TIPC_SERVE_WARMUP="0", TIPC_KILL_GRACE="1")  # fmt: skip
    return ["bash", f"test_tipc/{layout.dialect.script}", str(config.relative_to(root))], root, env


def _pids(tmp_path: Path) -> list:
    path = tmp_path / "servers.pid"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


@pytest.mark.parametrize("layout, text, server", [(PY, TOY, "python3.7 deploy/serving/python/web_service.py"),
                                                  (CPP, TOY_CPP, "python3.7 -m paddle_serving_server.serve")],
                         ids=["python", "cpp"])  # fmt: skip
def test_each_service_is_stopped_by_its_own_process_group_and_nothing_else_is(tmp_path, layout, text, server):
    args, root, env = _setup(tmp_path, layout, text)
    # Another job's process whose command line says web_service and the port: upstream's
    # `ps ux | grep` kills it.
    decoy_dir = tmp_path / "other_job_19997"
    decoy_dir.mkdir()
    (decoy_dir / "web_service.py").write_text("import time\ntime.sleep(60)\n")
    decoy = subprocess.Popen([sys.executable, str(decoy_dir / "web_service.py")])
    try:
        run = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 1, run.stdout + run.stderr  # the clients failed
        status = (root / "test_tipc/output/toydet_s_320/serving_infer" / layout.dialect.status_log).read_text()
        assert status.count(f"Run successfully with command - toydet_s_320 - {server}") == 4
        assert status.count("Run failed with command - toydet_s_320 - python3.7 deploy/serving/") == 4
        pids = _pids(tmp_path)
        assert len(pids) == 4 and not any(_alive(pid) for pid in pids), "a web service outlived its client"
        assert decoy.poll() is None, "the script stopped a process it had not started"
    finally:
        decoy.kill()
        decoy.wait()


def test_the_service_is_stopped_when_the_script_is_interrupted(tmp_path):
    args, root, env = _setup(tmp_path)
    proc = subprocess.Popen(args, cwd=root, env={**env, "TIPC_TEST_HANG": "1"}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 30
    while not _pids(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # no warm-up: the client runs (and hangs)
    proc.terminate()
    assert proc.wait(timeout=30) == 143
    pids = _pids(tmp_path)
    assert len(pids) == 1 and not _alive(pids[0]), "the web service outlived the interrupted script"


@pytest.mark.corpus
def test_a_gpuid_reaches_every_command_as_upstreams_does(corpus):
    """The Python script exports CUDA_VISIBLE_DEVICES=<GPUID> (3rd argument) for every command, the
    export's too; the C++ one reads no GPUID: against the real scripts, with a GPUID given."""
    from helpers.oracle_runs import need_upstream, oracle

    runs = []
    for layout, marker in ((PY, "serving_python"), (CPP, "serving_cpp")):
        need_upstream(layout.dialect.script, repo="PaddleDetection")
        # one config that exports (infer_mode:norm) per script
        config = next(
            p
            for p in sorted((corpus / "PaddleDetection").rglob(f"*{marker}*.txt"))
            if "infer_mode:norm\n" in p.read_text()
        )
        runs += [(config, MODE, "1", fail, {"chain": layout.name}) for fail in (None, "web_service", "serve")]
    tally = oracle("PaddleDetection", runs)
    print(tally.report("serving tables, GPUID 1"))
    assert not tally.unfaithful, "\n".join(tally.unfaithful[:5])


def test_a_gpu_id_given_second_as_the_repos_docs_do_is_refused_with_the_call_that_works(tmp_path):
    """PaddleDetection's test_serving.md runs `test_serving_infer_python.sh CONFIG "1"` (upstream
    reads the GPU id from the third argument, so that run used GPU 0): ours refuses the `1` as a
    MODE before anything runs and says where a GPU id goes."""
    from helpers.cli import invoke_in
    from update_golden import FIXTURES

    spec = FIXTURES / PY.name / "toydet_s_320_serving_python_linux_gpu_cpu.spec.yml"
    res = invoke_in(tmp_path, "build", str(spec), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    (tipc,) = (tmp_path / "gen").glob("*/test_tipc")
    (config,) = tipc.glob("configs/*/*.txt")
    work = tmp_path / "work"
    work.mkdir()
    script = tipc / "test_serving_infer_python.sh"
    proc = subprocess.run(["bash", str(script), str(config), "1"], cwd=work, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "unknown MODE '1'" in proc.stderr and f"bash {script} CONFIG {MODE} GPUID" in proc.stderr, proc.stderr
    assert not any(work.iterdir())
