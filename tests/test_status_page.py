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

from helpers.cli import run_argv
from helpers.history import REGRESSED, regression_history, write
from helpers.tools import require

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
REAL = REPO / "tests" / "fixtures" / "status" / "real"
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
    done = run_argv(["status", str(rec), "--out", str(out), "--lang", "zh"], capture_output=True,
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
    done = run_argv(["run", NORMAL, "--mode", "lite_train_lite_infer", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=240)  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    summary = (repo / "records/summary.md").read_text()
    assert (tmp_path / "step_summary.md").read_text().startswith(summary.rstrip("\n"))
    assert (
        "#### step 3 `export` " in summary and "RuntimeError: export: an operator the exporter does not know" in summary
    )

    site = tmp_path / "site"
    done = run_argv(["status", str(repo / "records"), "--out", str(site)], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    dom = _dom(site, "zh")
    (row,) = dom.rows
    assert [s for s, _ in row["cells"]][:3] == ["passed", "passed", "failed"]
    href = row["cells"][2][1]
    assert href.endswith("_export.log") and "RuntimeError" in (site / unquote(href)).read_text()


# ----------------------------------------------------------------------------- issue 32's page
# Two suites of one model, a fleet run whose node 2 was lost (node 1 stopped by it), a fleet run
# refused before it started, and Paddle's backup_env.*.json beside the records.

# Marks each grid row's name cells with the lines Chromium laid their text out on (a name that
# wraps mid-word spans two): the page itself has no script, this copy is measured.
_MEASURE = """<script>
for (const tr of document.querySelectorAll('tr.row')) {
  [...tr.children].slice(0, 5).forEach((td) => {
    const range = document.createRange();
    range.selectNodeContents(td.firstChild);  // the name itself (the node's badge is a box of its own)
    const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
    td.setAttribute('data-lines', String(tops.size));
  });
}
</script>
</body>"""


def html_count(html: str, text: str) -> int:
    """How often `text` is in the page's visible text (its row line, not repeated in every cell)."""
    from helpers.pagetext import visible

    return visible(html).count(text)


class Rows(HTMLParser):
    """The grid rows as Chromium laid them out: keys, cell states, the row's reason, name lines."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict] = []
        self._why = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "row" in (a.get("class") or "").split():
            self.rows.append({**{k[5:]: v for k, v in a.items() if k.startswith("data-")}, "lines": [], "cells": [],
                              "why": ""})  # fmt: skip
        elif self.rows and tag == "td" and "data-lines" in a:
            self.rows[-1]["lines"].append(int(a["data-lines"]))
        elif self.rows and "cell" in (a.get("class") or "").split() and "data-state" in a:
            self.rows[-1]["cells"].append((a["data-state"], a.get("title") or ""))
        elif self.rows and tag == "div" and "data-why" in a:
            self._why = True

    def handle_endtag(self, tag):
        self._why = self._why and tag != "div"

    def handle_data(self, data):
        if self._why:
            self.rows[-1]["why"] += data


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    require("" if CHROMIUM else "no chromium on PATH (Debian: apt-get install chromium)")
    from helpers.history import status_scenario

    root = tmp_path_factory.mktemp("scenario")
    names = status_scenario(root, str(REPO / "specs" / "tiny_rec.yml"))
    out = root / "site"
    done = run_argv(["status", str(root / "records"), "--out", str(out)], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr  # backup_env.*.json: not a word
    dom = {}
    for lang in ("zh", "en"):
        page = out / f"index.{lang}.html"
        measured = out / f"measured.{lang}.html"
        measured.write_text(page.read_text(encoding="utf-8").replace("</body>", _MEASURE), encoding="utf-8")
        got = chromium("--window-size=900,1400", "--dump-dom", measured.as_uri())
        assert got.returncode == 0 and "</html>" in got.stdout, got.stderr[-2000:]
        rows = Rows()
        rows.feed(got.stdout)
        dom[lang] = (got.stdout, rows.rows)
    return {"site": out, "names": names, "dom": dom}


def test_two_suites_a_lost_node_and_a_refused_run_as_chromium_lays_them_out(scenario):
    names, (_, rows) = scenario["names"], scenario["dom"]["en"]
    mode, one, two = names["mode"], names["one"], names["two"]
    keys = [(r["mode"], r["suite"], r["node"]) for r in rows]
    # each suite its own row; in each fleet run the node that caused it first, the bystander after
    assert keys == [(mode, "fleet", two), (mode, "fleet", one), (mode, "multiproc", "-"), (mode, "normal", "-"),
                    ("whole_train_whole_infer", "fleet", two), ("whole_train_whole_infer", "fleet", one)]  # fmt: skip
    states = [[s for s, _ in r["cells"]] for r in rows]
    assert states[0][0] == "lost" and states[1][0] == "stopped" and set(states[1][1:]) == {"not run"}
    # the lost node's reason: once as text beside its row, and whole in the hover title of the row and of each cell
    assert html_count(scenario["dom"]["en"][0], "Connection timed out") == 1 + 1 + 5
    assert states[2] == ["timed out"] + ["skipped"] * 4 and states[3] == ["passed"] * 5
    assert set(states[4] + states[5]) == {"refused"}
    assert rows[0]["why"] == "⚠ node lost: " + names["lost_why"].removeprefix("lost: ")
    assert rows[4]["why"] == "⊘ refused: " + names["refused_why"]
    assert rows[5]["why"].startswith("⊘ refused: another node's problems")
    assert all(r["lines"] == [1] * 5 for r in rows), [r["lines"] for r in rows]  # no name wraps, at 900 px


def test_zh_page_in_chromium_is_chinese_with_whole_reasons_on_hover(scenario):
    names, (html, rows) = scenario["names"], scenario["dom"]["zh"]
    from helpers.pagetext import english_labels, visible

    lost = names["lost_why"].removeprefix("lost: ")
    own = [lost, names["refused_why"], f"node {names['two']} was lost", "评估 eval", "导出 export"]
    text = visible(html)
    assert english_labels(text, own) == []
    assert rows[0]["why"] == f"⚠ 节点失联：{lost}" and rows[4]["why"] == f"⊘ 被拒绝运行：{names['refused_why']}"
    assert rows[5]["why"] == "⊘ 被拒绝运行：因其他节点的问题未运行（所有节点都没有启动）"
    timed_out = rows[2]["cells"][0][1]
    assert timed_out.endswith(": 超时 (运行 600 秒后超时)") or "(运行 600 秒后超时) [" in timed_out  # whole, on hover
    for phrase in ("通过 → 超时", "未运行", "训练失败", "提交", "新失败", "最先失败", "套件"):
        assert phrase in text, phrase
    assert all(r["lines"] == [1] * 5 for r in rows), [r["lines"] for r in rows]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_scenario_screenshot(scenario, lang):
    from PIL import Image

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTEFACTS / f"issue32_{lang}.png"
    page = scenario["site"] / f"index.{lang}.html"
    done = chromium(f"--screenshot={shot}", "--window-size=1400,1100", page.as_uri())
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    with Image.open(shot) as img:
        colours = {c for _, c in img.convert("RGB").getcolors(1 << 20) or []}
    assert {(0x9A, 0x67, 0x00), (0x6E, 0x77, 0x81), (0x82, 0x50, 0xDF)} <= colours  # lost, refused, timed out drawn
