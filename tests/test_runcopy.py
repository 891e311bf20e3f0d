"""The run copy of a config (fleet --via slurm): the allocation's addresses in every multi-node
gpu_list entry, every other byte kept; the emitted batch script's sed makes the same bytes."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tipcgen.errors import UsageError
from tipcgen.plan.runcopy import nodes_needed, with_ips

REPO = Path(__file__).resolve().parents[1]
IPS = ["198.18.0.11", "198.18.0.12", "198.18.0.13"]

CASES = [
    ("gpu_list:192.168.0.1,192.168.0.2;0,1\n", "gpu_list:198.18.0.11,198.18.0.12,198.18.0.13;0,1\n"),
    ("gpu_list:xx.xx.xx.xx,yy.yy.yy.yy;0,1\r\n", "gpu_list:198.18.0.11,198.18.0.12,198.18.0.13;0,1\r\n"),
    ("gpu_list:0|0,1|10.0.0.1,10.0.0.2;cpux2\n", "gpu_list:0|0,1|198.18.0.11,198.18.0.12,198.18.0.13;cpux2\n"),
    ("gpu_list:-1|0;1\n", "gpu_list:-1|0;1\n"),  # one IP: not a multi-node entry
    ("model_name:gpu_list_x\ngpu_list:0\n", "model_name:gpu_list_x\ngpu_list:0\n"),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_only_the_ips_of_multinode_entries_change(text, expected):
    assert with_ips(text, IPS, "t") == expected


def test_node_count_and_refusal():
    assert nodes_needed("gpu_list:a.b,c.d;0|e.f,g.h,i.j;0\n") == 3
    assert nodes_needed("gpu_list:0,1\n") == 0
    with pytest.raises(UsageError, match="two or more nodes"):
        with_ips("gpu_list:a,b;0\n", IPS[:1], "cfg.txt")


def _sed_line() -> str:
    """The batch script's run-copy command, as its template has it."""
    template = (REPO / "templates" / "fleet_sbatch.sh.j2").read_text()
    match = re.search(r'^sed -E .*"[$]config" >"[$]copy[.]tmp"$', template, re.M)
    assert match, "the batch script's run-copy command moved"
    return match.group(0).replace('>"$copy.tmp"', "")


def _script_copy(text: str, tmp_path: Path) -> str:
    """What the batch script's command makes of `text`, run by bash as in the script."""
    src = tmp_path / "in.txt"
    src.write_bytes(text.encode())
    res = subprocess.run(
        ["bash", "-c", f'ips="$1" config="$2"; {_sed_line()}', "bash", ",".join(IPS), str(src)],
        capture_output=True, timeout=30,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    return res.stdout.decode()


@pytest.mark.skipif(shutil.which("sed") is None, reason="no sed here")
@pytest.mark.parametrize("text, expected", CASES)
def test_batch_script_sed_agrees(text, expected, tmp_path):
    assert _script_copy(text, tmp_path) == expected


@pytest.mark.corpus
@pytest.mark.skipif(shutil.which("sed") is None, reason="no sed here")
def test_batch_script_sed_agrees_on_every_multinode_corpus_config(corpus, tmp_path):
    """Every corpus config with a multi-node gpu_list: sed's run copy is Python's, byte for byte."""
    seen = 0
    for path in sorted(corpus.rglob("*.txt")):
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        if nodes_needed(text) < 2:
            continue
        seen += 1
        expected = with_ips(text, IPS, str(path))
        assert expected != text
        assert _script_copy(text, tmp_path) == expected, path
    assert seen >= 1, "no multi-node config in the corpus"


def test_remote_dir_names_each_node(tmp_path):
    """`{node}` in --remote-dir: each node's own working copy on a shared file system."""
    import os

    from tipcgen.fleet.nodes import fleet_for

    spec = str(REPO / "specs" / "tiny_rec.yml")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        fleet = fleet_for(
            spec, "lite_train_lite_infer", suite="fleet", root=str(tmp_path), start_port=17000,
            remote_dir="/scratch/{node}/repo", gpu_ips=IPS[:2], node_names={IPS[0]: "node1", IPS[1]: "node2"},
        )  # fmt: skip
    finally:
        os.chdir(cwd)
    assert [(n.ip, n.dir) for n in fleet.nodes] == [(IPS[0], "/scratch/node1/repo"), (IPS[1], "/scratch/node2/repo")]
    assert (
        fleet.config
        == "test_tipc/output/tiny_rec/lite_train_lite_infer/nodes/run_copy.train_linux_cpu_fleet_infer_python.txt"
    )
    copy = fleet.files[0]
    assert copy.written and b"gpu_list:198.18.0.11,198.18.0.12;cpux1\n" in copy.data
    assert "--ips=198.18.0.11,198.18.0.12" in fleet.nodes[1].plan.steps[0].command
    # the record names the suite and the spec given, not the run copy (one row however nodes were found)
    from tipcgen.fleet.report import report_data

    record = report_data(fleet, [], None, 0)["record"]
    assert (record["kind"], record["suite"], record["config"]) == ("fleet", "fleet", spec)
