"""Slow tier: the status page as a reader sees it, in headless Chromium (Debian's `chromium`).

The records: those of real `tipcgen run`s of the bundled example (tests/fixtures/status/real,
made by tests/helpers/real_records.py: passing, failing at export, timed out, two nodes), 20
synthetic benchmark sessions with a regression in runs 10 and 11, and hostile records. The page
is rendered by `tipcgen status`, loaded from the file system by Chromium, and its DOM as
Chromium parsed it is read back (`--dump-dom`): the grid's cell states, the flagged runs, every
link resolving to a file. A screenshot per language is kept in $TIPC_TEST_OUTPUT (default
`test-output/`) / status_page/ for a person to look at.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

from helpers.history import REGRESSED, regression_history, write
from helpers.tools import require

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
REAL = REPO / "tests" / "fixtures" / "status" / "real"
TIPCGEN = [sys.executable, "-c", "import sys; sys.argv[0] = 'tipcgen'; from tipcgen.cli import main; main()"]
ARTEFACTS = Path(os.environ.get("TIPC_TEST_OUTPUT", REPO / "test-output")) / "status_page"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--mute-audio"]


class Dom(HTMLParser):
    """What the tests read from the page: grid rows with their cells, flagged rows, links."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict] = []
        self.flagged: list[dict] = []
        self.links: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "script":
            self.scripts += 1
        if tag == "tr" and "row" in cls:
            self.rows.append({**{k[5:]: v for k, v in a.items() if k.startswith("data-")}, "cells": [], "recent": []})
        if "cell" in cls and "data-state" in a and self.rows:
            self.rows[-1]["cells"].append((a["data-state"], a.get("href")))
        if "dot" in cls and self.rows:
            self.rows[-1]["recent"].append(a["data-state"])
        if tag == "tr" and "data-flag" in a:
            self.flagged.append(a)
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])


def chromium(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": os.environ.get("HOME", "/tmp")}
    return subprocess.run([CHROMIUM, *FLAGS, *args], capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    require("" if CHROMIUM else "no chromium on PATH (Debian: apt-get install chromium)")
    root = tmp_path_factory.mktemp("status")
    rec = root / "records"
    shutil.copytree(REAL, rec / "real")  # real runs: each scenario's report beside its logs
    regression_history(rec / "bench")
    write(rec / "hostile" / "markup.json", _markup(json.loads((REAL / "fail" / "run.json").read_text())))
    (rec / "hostile" / "truncated.json").write_text((REAL / "pass" / "run.json").read_text()[:300])
    future = json.loads((REAL / "pass" / "run.json").read_text())
    future["record"]["schema"] = 7
    write(rec / "hostile" / "future.json", future)
    out = root / "site"
    done = subprocess.run([*TIPCGEN, "status", str(rec), "--out", str(out), "--lang", "zh"], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "2 records skipped, 6 regressed" in done.stdout, done.stdout
    return out


def _markup(data: dict) -> dict:
    data["model_name"] = "<script>alert(1)</script>|m"
    data["steps"][2]["reason"] = '"><img src=x onerror=alert(1)>'
    return data


def _dom(site: Path, lang: str) -> Dom:
    done = chromium("--dump-dom", (site / f"index.{lang}.html").as_uri())
    assert done.returncode == 0 and "</html>" in done.stdout, done.stderr[-2000:]
    dom = Dom()
    dom.feed(done.stdout)
    return dom


def test_grid_shows_each_real_run_as_its_cells(site):
    dom = _dom(site, "en")
    by_key = {(r["model"], r["chain"], r["mode"], r["node"]): [s for s, _ in r["cells"]] for r in dom.rows}
    mode = "lite_train_lite_infer"
    # the latest run of tiny_rec on one node: whichever of pass/fail/timeout finished last
    one = by_key[("tiny_rec", "train_inference_python", mode, "-")]
    assert one in (
        ["passed"] * 5,
        ["passed", "passed", "failed", "failed", "failed"],  # export failed; inference runs anyway, as upstream
        ["timed out", "skipped", "skipped", "skipped", "skipped"],
    )
    # the three real runs on one node, whatever their order, in the row's recent history
    recent = {
        r["node"]: r["recent"] for r in dom.rows if r["model"] == "tiny_rec" and r["chain"] == "train_inference_python"
    }
    assert sorted(recent["-"]) == ["failed", "passed", "timed out"]
    assert by_key[("tiny_rec", "train_inference_python", mode, "127.0.0.2")] == ["passed"] * 5
    assert (
        by_key[("tiny_rec", "train_inference_python", mode, "127.0.0.3")] == ["passed"] + ["skipped"] * 4
    )  # not trainer 0
    assert by_key[("<script>alert(1)</script>|m", "train_inference_python", mode, "-")][2] == "failed"
    assert dom.scripts == 0  # the model named <script> is text


def test_regressed_runs_are_flagged_and_shown(site):
    dom = _dom(site, "en")
    flagged = {(f["data-metric"], int(f["data-run"])) for f in dom.flagged}
    assert flagged == {(m, i + 1) for m in ("ips", "speedup", "efficiency") for i in REGRESSED}
    assert all(f["data-flag"] == "regressed" and f["data-benchmark"].endswith("N1C2") for f in dom.flagged)


def test_every_link_resolves_to_a_file(site):
    for lang in ("zh", "en"):
        dom = _dom(site, lang)
        files = [h for h in dom.links if not h.startswith("#")]
        assert len(files) > 60
        for href in files:
            assert "://" not in href, href  # nothing from the network
            assert (site / unquote(href)).resolve().is_file(), href
        cells = [h for r in dom.rows for _, h in r["cells"] if h]
        assert any(h.endswith("_export.log") for h in cells)  # the failed export's log is one click away


def test_the_failing_real_run_summary_shows_its_traceback():
    text = (REAL / "fail" / "summary.md").read_text()
    assert "#### step 3 `export` " in text and ": failed (exit status 1)" in text
    assert "RuntimeError: export: an operator the exporter does not know" in text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_screenshot_per_language(site, lang):
    from PIL import Image

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTEFACTS / f"status_{lang}.png"
    done = chromium(f"--screenshot={shot}", "--window-size=1300,2600", (site / f"index.{lang}.html").as_uri())
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    with Image.open(shot) as img:
        assert img.size == (1300, 2600)
        colours = {c for _, c in img.convert("RGB").getcolors(1 << 20) or []}
    assert (0xCF, 0x22, 0x2E) in colours  # a failed cell / a regressed mark drawn in red
    assert (0x1A, 0x7F, 0x37) in colours  # passed cells in green


@pytest.mark.paddle
def test_a_real_failing_run_summary_and_page(tmp_path):
    """One real run of the bundled example (paddle on CPU) whose export script is broken: the
    summary names the failed export with its traceback, also in $GITHUB_STEP_SUMMARY, and its
    cell on the page (as Chromium reads it) opens the export log."""
    require("" if CHROMIUM else "no chromium on PATH (Debian: apt-get install chromium)")
    probe = subprocess.run([sys.executable, "-c", "import paddle"], capture_output=True, text=True, timeout=180)
    if probe.returncode != 0:
        pytest.skip(f"`import paddle` fails: {(probe.stderr.strip().splitlines() or ['?'])[-1]}")
    from helpers.real_records import NORMAL, base_repo, run_env

    repo = base_repo(tmp_path)
    export = repo / "tools/export_model.py"
    export.write_text('raise RuntimeError("export: an operator the exporter does not know")\n' + export.read_text())
    env = run_env(GITHUB_STEP_SUMMARY=tmp_path / "step_summary.md")
    args = ["--json", "records/run.json", "--summary", "records/summary.md"]
    done = subprocess.run([*TIPCGEN, "run", NORMAL, "--mode", "lite_train_lite_infer", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=240)  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    summary = (repo / "records/summary.md").read_text()
    assert (tmp_path / "step_summary.md").read_text().startswith(summary.rstrip("\n"))
    assert (
        "#### step 3 `export` " in summary and "RuntimeError: export: an operator the exporter does not know" in summary
    )

    site = tmp_path / "site"
    done = subprocess.run([*TIPCGEN, "status", str(repo / "records"), "--out", str(site)], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    dom = _dom(site, "zh")
    (row,) = dom.rows
    assert [s for s, _ in row["cells"]][:3] == ["passed", "passed", "failed"]
    href = row["cells"][2][1]
    assert href.endswith("_export.log") and "RuntimeError" in (site / unquote(href)).read_text()
