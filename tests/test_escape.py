"""One escaper per medium (tipcgen.escape), and every producer of reader-facing text routed
through it: hostile strings fed to each producer, the output read as its reader reads it.

- terminal (`check`'s diff, errors, `lint`): no raw control byte (ESC, CR, backspace, NUL, C1,
  bidi overrides) reaches the terminal; each is shown as a visible escape.
- markdown (the migrate report, the run/fleet/bench summaries, the bench report): rendered by a
  real CommonMark parser (markdown-it-py, with GFM tables), no HTML element, link or image comes
  from a value, no table row gains a cell, and the value is shown whole.
- HTML (the status page) and XML (JUnit): parsed back, no element or attribute from a value.
- record paths: a log is linked or read only inside the run's directory / the records' tree.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from conftest import SPECS
from helpers.cli import invoke_in
from helpers.history import bench_record, run_report, stamp, with_logs, write
from tipcgen.escape import for_html, for_markdown, for_terminal

MODE = "lite_train_lite_infer"

# What a pull request, a config or a log can put in front of a reader.
HOSTILE = {
    "erase-line": "done\x1b[2K\x1b[1Gtipcgen check: 12 files up to date",
    "carriage-return": "bad value\rtipcgen check: 12 files up to date",
    "img-onerror": '<img src=x onerror="alert(1)">',
    "script": "</td></tr></table><script>alert(1)</script>",
    "backtick-runs": "``` `` ` ````x```` </code><b>bold</b>",
    "pipes": "a | b | c || d",
    "rtl-override": "evil\u202etxt.sh\u202c and \u2066isolate\u2069",
    "nul-backspace-c1": "nul\x00 bs\x08 c1\x9b[31m del\x7f",
    "link-image": "[click](javascript:alert(1)) ![x](http://127.0.0.1:9/x.png) <http://127.0.0.1:9>",
    "entity-newline": "&lt;b&gt; &amp; line1\nline2\r\n| x |",
}
IDS = list(HOSTILE)
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(value: str) -> str:
    """How a value must appear to a reader once its line breaks are spaces: every control and
    bidi character as its escape."""
    return for_terminal(re.sub(r"[\r\n]+", " ", value))


# ----------------------------------------------------------------------------- readers


class Elements(HTMLParser):
    """Every element and attribute of an HTML document, and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.code: list[str] = []
        self._in_code = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "code":
            self._in_code += 1
            self.code.append("")

    def handle_endtag(self, tag):
        if tag == "code":
            self._in_code -= 1

    def handle_data(self, data):
        self.text.append(data)
        if self._in_code:
            self.code[-1] += data


def parse_html(text: str) -> Elements:
    p = Elements()
    p.feed(text)
    p.close()
    return p


MD = MarkdownIt("commonmark", {"html": True}).enable("table")
MD_TAGS = {"h1", "h2", "h3", "h4", "p", "code", "pre", "ul", "li", "strong", "em", "table", "thead", "tbody", "tr",
           "th", "td", "a", "img"}  # fmt: skip


def read_markdown(text: str, links_ok=lambda href: False) -> Elements:
    """The markdown as GitHub shows it: no element a value could inject, every table row with
    its header's cells, every link one of the producer's own."""
    html = MD.render(text)
    doc = parse_html(html)
    for tag, attrs in doc.tags:
        assert tag in MD_TAGS, f"<{tag}> from a value:\n{html}"
        assert not any(k.startswith("on") for k in attrs), html
        if tag == "a":
            assert links_ok(attrs.get("href", "")), f"a link from a value: {attrs}\n{text}"
        if tag == "img":
            assert links_ok(attrs.get("src", "")), f"an image from a value: {attrs}\n{text}"
    for table in re.findall(r"<table>.*?</table>", html, re.S):
        head = len(re.findall(r"<th[ >]", table))
        for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]:
            assert len(re.findall(r"<td[ >]", row)) == head, f"a row gained or lost a cell:\n{table}"
    return doc


def shown(doc: Elements) -> str:
    return re.sub(r"\s+", " ", "".join(doc.text))


# ----------------------------------------------------------------------------- the escapers


@pytest.mark.parametrize("name", IDS)
def test_each_escaper_keeps_a_hostile_value_literal(name):
    value = HOSTILE[name]
    term = for_terminal(value)
    assert not CONTROL.search(term) and "\n" not in term
    assert "\n" in for_terminal("a\nb", lines=True) and "\r" not in for_terminal("a\rb", lines=True)
    # markdown: literal text, a code span holding the whole value, a block holding every line
    doc = read_markdown(f"x {for_markdown(value)} y")
    assert visible(value).strip() in shown(doc)
    doc = read_markdown(f"x {for_markdown(value, 'code')} y")
    assert doc.code == [visible(value)] or doc.code == [visible(value).strip()]
    doc = read_markdown(f"| h |\n|---|\n| {for_markdown(value, 'code', table=True)} |\n")
    assert visible(value) in doc.code[0] or visible(value).strip() == doc.code[0]
    doc = read_markdown("- item\n\n  " + for_markdown(value, "block").replace("\n", "\n  "))
    assert doc.code == [for_terminal(value, lines=True) + "\n"]
    # HTML: text and a quoted attribute
    page = parse_html(f'<p title="{for_html(value)}">{for_html(value)}</p>')
    assert page.tags == [("p", {"title": for_terminal(value)})]
    assert "".join(page.text) == for_terminal(value)


# ----------------------------------------------------------------------------- markdown producers


def _migration(value: str):
    from tipcgen.migrate.switch import Migration, Row

    bad = Row(f"test_tipc/configs/{value}.txt", value, "CHANGED", f"step 1, plan '{value}'\nupstream: {value}\nplan: x",
              "CHANGED", value, script=value)  # fmt: skip
    ok = Row(f"test_tipc/configs/{value}/b.txt", "lite", "faithful", value, "identical", "")
    return Migration(
        root=f"/repos/{value}", layout=value, runner=value, specs={}, files={}, rows=[bad, ok],
        not_imported={f"test_tipc/configs/{value}.txt": value}, untyped={value: [f"wget {value}", value]},
        deviations={value: value}, replaced=[f"test_tipc/{value}.sh"], added=[f"test_tipc/{value}.py"],
        chain_rows=[Row(f"test_tipc/configs/{value}_serving.txt", value, "faithful", value, "faithful", value,
                        script=value)],
        prepare_modes_lost=[value],
    )  # fmt: skip


@pytest.mark.parametrize("name", IDS)
def test_migrate_report_shows_repo_text_literally(name):
    from tipcgen.migrate.report import report_markdown

    value = HOSTILE[name]
    doc = read_markdown(report_markdown(_migration(value)))
    assert f"test_tipc/configs/{visible(value)}.txt" in doc.code  # a config path: one whole code span
    assert f"wget {visible(value)}" in doc.code  # a prepare command kept as a `run` step
    first = for_terminal(value.split("\n")[0])  # the differing commands' block, a side per line
    assert any(f"upstream: {first}" in c for c in doc.code), doc.code
    assert f"tipcgen migrate: /repos/{visible(value)}".strip() in shown(doc)


def _run_data(value: str) -> dict:
    data = run_report(value, value, ["passed", "failed", "skipped", "skipped", "skipped"], stamp(0),
                      reasons={1: value}, layout=value)  # fmt: skip
    data["steps"][1]["command"] = f"python3 train.py {value}"
    data["steps"][1]["group"] = value
    for i, step in enumerate(data["steps"]):  # a path cannot hold NUL: the logs' own names
        step["log"] = f"test_tipc/output/m/{step['kind']}_{i}.log"
    data["log_dir"] = data["status_log"] = "test_tipc/output/m"
    return data


@pytest.mark.parametrize("name", IDS)
def test_run_and_fleet_summaries_show_record_and_log_text_literally(tmp_path, name):
    from tipcgen.results.summary import fleet_summary, run_summary

    value = HOSTILE[name]
    data = _run_data(value)
    with_logs(tmp_path, data, f"Traceback\n{value}\nRuntimeError: {value}\n")
    ours = lambda href: href.startswith("test_tipc/output/")  # noqa: E731 - the summary's own links
    doc = read_markdown(run_summary(data, str(tmp_path), str(tmp_path)), ours)
    assert f"python3 train.py {for_terminal(value, lines=True)}\n" in doc.code  # the command, whole
    # the log's tail, as a terminal would show it: colour codes dropped, a CR starting a line
    tail = [c for c in doc.code if "RuntimeError: " in c]
    assert len(tail) == 1 and not CONTROL.search(tail[0]) and for_terminal(value[-4:]).strip() in tail[0]
    assert f"❌ FAILED: {visible(value).strip()}" in shown(doc)
    fleet = {"record": {"schema": 2, "kind": "fleet", "finished_at": stamp(0)}, "model_name": value, "mode": value,
             "layout": value, "log_dir": "", "exit_code": 1, "stopped": value,
             "nodes": [{"ip": value, "state": value, "reason": value, "steps": [
                 {"index": 0, "kind": value, "group": value, "status": "failed", "log": None,
                  "status_line": f"Run failed with command - m - {value}!"}]}]}  # fmt: skip
    doc = read_markdown(fleet_summary(fleet, str(tmp_path), str(tmp_path)))
    assert visible(value).strip() in shown(doc)


@pytest.mark.parametrize("name", IDS)
def test_bench_summary_and_report_show_record_text_literally(tmp_path, name):
    from tipcgen.emit.bench_report import section
    from tipcgen.results.summary import bench_summary

    value = HOSTILE[name]
    one = bench_record(value, value, 1, 1, 100.0, stamp(0), run_id=value, fp_item=value, speed_unit=value)
    two = bench_record(value, value, 2, 1, 180.0, stamp(0), run_id=value + "2", fp_item=value, speed_unit=value)
    bad = {**two, "run_id": value + "3", "status": value, "commands": [["python3", value]], "log_file": "x.log"}
    (tmp_path / "x.log").write_text(f"{value}\n")
    doc = read_markdown(bench_summary([one, two, bad], str(tmp_path), str(tmp_path)), lambda h: h == "x.log")
    assert visible(value) in doc.code or visible(value).strip() in doc.code  # the run id, whole, in its cell
    doc = read_markdown(section([one, two, bad], "en"))
    assert visible(value).strip() in shown(doc)


# ----------------------------------------------------------------------------- HTML and XML producers


@pytest.mark.parametrize("name", IDS)
def test_status_page_shows_record_text_as_text(tmp_path, name):
    from tipcgen.results.history import load_history
    from tipcgen.results.page import page_context, render_page

    value = HOSTILE[name]
    data = _run_data(value)
    data["steps"][1]["log"] = f"test_tipc/{value}.log"
    write(tmp_path / "rec" / "run.json", data)
    (tmp_path / "rec" / f"bad{value[:20]}.json".replace("/", "_").replace("\x00", "0")).write_text("{")
    runs, problems = load_history([str(tmp_path / "rec")])
    page = parse_html(render_page(page_context(runs, problems, "en", 0.05, str(tmp_path / "site"))))
    for tag, attrs in page.tags:
        assert tag not in ("script", "img", "iframe", "object") and not any(k.startswith("on") for k in attrs)
        for key in ("href", "src"):
            assert not re.match(r"[a-z]+:", attrs.get(key) or ""), attrs  # no scheme: links are relative
        assert not any(CONTROL.search(v or "") for v in attrs.values()), attrs
    text = "".join(page.text)
    assert not CONTROL.search(text)
    titles = " ".join(a.get("title") or "" for _, a in page.tags)
    assert visible(value) in text + titles or for_terminal(value) in text + titles


@pytest.mark.parametrize("name", IDS)
def test_junit_xml_holds_hostile_text_legally(name):
    from tipcgen.emit.junit import Case, Suite, junit_xml

    value = HOSTILE[name]
    case = Case(value, value, "failed", value, value, value, f"log\n{value}\n", 1.0)
    xml = junit_xml(value, [Suite(value, 1.0, (("model_name", value),), [case])], 1.0)
    root = ET.fromstring(xml.encode("utf-8"))  # well-formed XML 1.0: no control character in it
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None and failure.get("message") == for_terminal(value)
    assert failure.text == for_terminal(value, lines=True)
    assert root.find("testsuite/testcase/system-out").text == for_terminal(f"log\n{value}\n", lines=True)


# ----------------------------------------------------------------------------- terminal producers


def _no_control(text: str) -> None:
    bad = CONTROL.search(text)
    assert not bad, f"raw {bad.group()!r} reached the terminal:\n{text!r}"


TERMINAL = ["erase-line", "carriage-return", "rtl-override", "nul-backspace-c1"]


@pytest.mark.parametrize("name", TERMINAL)
def test_check_diff_shows_a_committed_files_control_bytes_escaped(tmp_path, name):
    value = HOSTILE[name]
    out = tmp_path / "gen"
    assert invoke_in(tmp_path, "build", str(SPECS / "tiny_rec.yml"), "--out", str(out)).exit_code == 0
    script = out / "tiny_rec/test_tipc/prepare.sh"
    script.write_bytes(script.read_bytes() + value.encode("utf-8", "surrogateescape") + b"\n")
    result = invoke_in(tmp_path, "check", str(SPECS / "tiny_rec.yml"), "--out", str(out), "--no-cache")
    assert result.exit_code == 1, result.output
    _no_control(result.output)
    assert f"+{for_terminal(value)}" not in result.output  # the added line is on disk, not in the spec
    assert f"-{for_terminal(value)}" in result.output  # shown as the diff's removed line, escaped
    assert "files up to date" not in result.output.replace(for_terminal(value), "")


def test_repo_check_diff_and_stale_lines_are_escaped(tmp_path):
    root = tmp_path / "repo"
    (root / "test_tipc/specs").mkdir(parents=True)
    shutil.copy(SPECS / "tiny_rec.yml", root / "test_tipc/specs")
    assert invoke_in(root, "build").exit_code == 0
    doc = next((root / "test_tipc/docs/tiny_rec").glob("*.md"))
    doc.write_text(doc.read_text() + HOSTILE["erase-line"] + "\r" + HOSTILE["rtl-override"] + "\n")
    result = invoke_in(root, "check", "--no-cache")
    assert result.exit_code == 1
    _no_control(result.output)
    assert "\\x1b[2K" in result.output and "\\x0d" in result.output and "\\u202e" in result.output


@pytest.mark.parametrize("name", TERMINAL)
def test_errors_naming_a_hostile_path_are_one_escaped_line(tmp_path, name):
    value = HOSTILE[name].replace("\x00", "0")  # a path cannot hold NUL
    result = invoke_in(tmp_path, "check", f"{value}.yml", "--out", str(tmp_path / "gen"))
    assert result.exit_code == 2
    _no_control(result.output)
    assert len(result.output.rstrip("\n").splitlines()) == 1, result.output


@pytest.mark.parametrize("name", TERMINAL)
def test_lint_output_escapes_a_configs_name_and_text(tmp_path, name):
    value = HOSTILE[name].replace("\x00", "0")
    config = Path(__file__).parents[1] / "generated/tiny_rec/test_tipc/configs/tiny_rec/train_infer_python.txt"
    text = config.read_text().replace("--use_gpu:False", f"--use_gpu:{value}")
    bad = tmp_path / f"cfg{value.replace('/', '_')}_train_infer_python.txt"
    bad.write_text(text)
    result = invoke_in(tmp_path, "lint", str(bad))
    _no_control(result.output)
    assert for_terminal(bad.name) in result.output


# ----------------------------------------------------------------------------- record paths


def _secret(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- s3cr3t\n")
    return secret


def test_a_summary_neither_reads_nor_links_a_log_outside_the_run(tmp_path):
    from tipcgen.results.summary import run_summary

    secret = _secret(tmp_path)
    run = tmp_path / "repo"
    data = run_report("m", MODE, ["passed", "failed", "failed", "skipped", "skipped"], stamp(0))
    with_logs(run, data)
    data["steps"][1]["log"] = str(secret)  # a record naming an absolute path
    swapped = run / data["steps"][2]["log"]  # a step that swapped its log for a link leading out
    swapped.unlink()
    swapped.symlink_to(secret)
    data["log_dir"] = "/etc"
    text = run_summary(data, str(run), str(run))
    assert "s3cr3t" not in text
    doc = read_markdown(text, lambda href: False)  # no link at all: every path leads out
    assert str(secret) in doc.code and data["steps"][2]["log"] in doc.code and "/etc" in doc.code
    assert text.count("not linked: it leads outside the run's directory") == 3


def test_the_status_page_links_no_log_outside_the_records_tree(tmp_path):
    from tipcgen.results.history import load_history
    from tipcgen.results.page import page_context, render_page

    secret = _secret(tmp_path)
    rec = tmp_path / "rec"
    data = run_report("m", MODE, ["passed", "failed", "failed", "skipped", "skipped"], stamp(0))
    data["record"]["root"] = "/"  # a root the record names does not widen the tree
    with_logs(rec, data)
    data["steps"][0]["log"] = str(secret)
    data["steps"][1]["log"] = str(secret.relative_to("/"))
    swapped = rec / data["steps"][2]["log"]
    swapped.unlink()
    swapped.symlink_to(secret)
    write(rec / "run.json", data)
    runs, problems = load_history([str(rec)])
    ctx = page_context(runs, problems, "en", 0.05, str(tmp_path / "site"))
    cells = ctx["rows"][0]["cells"]
    assert [c["href"] for c in cells[:3]] == [None, None, None]
    assert "outside the repo or directory holding the records" in cells[0]["title"]
    assert str(secret) in cells[0]["title"]
    page = parse_html(render_page(ctx))
    assert not any("outside" in (a.get("href") or "") for _, a in page.tags)


def test_records_inside_a_model_repo_link_its_logs_and_nothing_outside_it(tmp_path):
    from tipcgen.results.history import load_history
    from tipcgen.results.page import page_context

    secret = _secret(tmp_path)
    repo = tmp_path / "repo"
    data = run_report("m", MODE, ["passed", "failed", "skipped", "skipped", "skipped"], stamp(0))
    data["record"]["root"] = "/"  # the record's word widens nothing: the repo is found on the disk
    with_logs(repo, data)  # repo/test_tipc/output/...: a model repo
    data["steps"][1]["log"] = str(secret)
    write(repo / "records" / "run.json", data)
    runs, problems = load_history([str(repo / "records")])
    cells = page_context(runs, problems, "en", 0.05, str(tmp_path / "site"))["rows"][0]["cells"]
    assert cells[0]["href"] and (tmp_path / "site" / cells[0]["href"]).resolve().is_file()  # the repo's log
    assert cells[1]["href"] is None and "not linked" in cells[1]["title"]


def test_read_log_refuses_links_out_and_reads_only_the_end(tmp_path):
    from tipcgen.run.reports import MAX_LOG_BYTES, read_log

    secret = _secret(tmp_path)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "link.log").symlink_to(secret)
    assert read_log(str(tmp_path / "run"), "link.log") is None
    assert read_log(str(tmp_path / "run"), str(secret)) is None
    assert read_log(str(tmp_path / "run"), "../outside/id_rsa") is None
    os.mkfifo(tmp_path / "run" / "fifo.log")
    assert read_log(str(tmp_path / "run"), "fifo.log") is None  # never blocks
    big = tmp_path / "run" / "big.log"
    big.write_bytes(b"x" * (MAX_LOG_BYTES + 10) + b"\nTraceback: the end\n")
    text = read_log(str(tmp_path / "run"), "big.log")
    assert text is not None and text.endswith("Traceback: the end\n") and len(text) == MAX_LOG_BYTES


# ----------------------------------------------------------------------------- the manifest


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "test_tipc/specs").mkdir(parents=True)
    shutil.copy(SPECS / "tiny_rec.yml", root / "test_tipc/specs")
    assert invoke_in(root, "build").exit_code == 0
    return root


def _claim(root: Path, rel: str, digest: str) -> None:
    manifest = root / "test_tipc/.tipcgen.manifest"
    manifest.write_text(manifest.read_text() + f"{digest}  {rel}\n")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("digest", ["forged", "matching"])
def test_a_forged_manifest_line_cannot_make_build_replace_a_hand_written_file(tmp_path, digest):
    root = _repo(tmp_path)
    prepare = root / "test_tipc/prepare.sh"
    prepare.write_text("#!/bin/bash\n# the maintainers' own prepare.sh\n")
    manifest = root / "test_tipc/.tipcgen.manifest"
    lines = [ln for ln in manifest.read_text().splitlines() if not ln.endswith("  test_tipc/prepare.sh")]
    claimed = "0" * 64 if digest == "forged" else _sha(prepare)  # a hash that matches, but no banner
    manifest.write_text("\n".join(lines) + f"\n{claimed}  test_tipc/prepare.sh\n")
    result = invoke_in(root, "build")
    assert result.exit_code == 2, result.output
    assert "test_tipc/prepare.sh" in result.output and "--adopt" in result.output and "by hand" in result.output
    assert prepare.read_text() == "#!/bin/bash\n# the maintainers' own prepare.sh\n"
    assert invoke_in(root, "build", "--adopt").exit_code == 0 and "Generated by tipcgen" in prepare.read_text()


@pytest.mark.parametrize("digest", ["forged", "matching"])
def test_a_forged_manifest_line_cannot_make_build_remove_a_hand_written_file(tmp_path, digest):
    root = _repo(tmp_path)
    mine = root / "test_tipc/my_tool.sh"
    mine.write_text("#!/bin/bash\necho the maintainers' own tool\n")
    _claim(root, "test_tipc/my_tool.sh", "f" * 64 if digest == "forged" else _sha(mine))
    result = invoke_in(root, "build")
    assert result.exit_code == 0, result.output
    assert mine.read_text() == "#!/bin/bash\necho the maintainers' own tool\n"
    assert "test_tipc/my_tool.sh" in result.output and "left in place" in result.output
    assert "my_tool.sh" not in (root / "test_tipc/.tipcgen.manifest").read_text()  # no longer claimed


def test_a_file_tipcgen_wrote_is_still_removed_when_no_spec_generates_it(tmp_path):
    root = _repo(tmp_path)
    old = root / "test_tipc/old_chain.sh"
    old.write_text("#!/usr/bin/env bash\n# Generated by tipcgen from specs/x.yml. Do not edit.\n")
    _claim(root, "test_tipc/old_chain.sh", _sha(old))
    result = invoke_in(root, "build")
    assert result.exit_code == 0 and not old.exists() and "removed test_tipc/old_chain.sh" in result.output


# ----------------------------------------------------------------------------- the lint baseline


@pytest.mark.parametrize(
    ("entry", "field", "says"),
    [
        ({"count": -1000000}, "findings[0].count", "from 1 to 1000000, not -1000000"),
        ({"count": 10**12}, "findings[0].count", "from 1 to 1000000"),
        ({"count": "5"}, "findings[0].count", "not '5'"),
        ({"count": True}, "findings[0].count", "not True"),
        ({"count": 2.5}, "findings[0].count", "not 2.5"),
        ({"rule": None}, "findings[0].rule", "must be a string"),
        ({"message": ["x"]}, "findings[0].message", "must be a string (a list)"),
    ],
)
def test_a_baseline_with_values_out_of_range_is_refused_naming_the_field(tmp_path, entry, field, says):
    import json

    config = Path(__file__).parents[1] / "generated/tiny_rec/test_tipc/configs/tiny_rec/train_infer_python.txt"
    base = {"rule": "TIPC001", "file": "x.txt", "role": "", "message": "m", "count": 1}
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"format": "tipcgen-lint-baseline", "version": 1, "findings": [{**base, **entry}]}))
    result = invoke_in(tmp_path, "lint", str(config), "--baseline", str(baseline))
    assert result.exit_code == 2, result.output
    assert f"{baseline}: error: field `{field}`: " in result.output and says in result.output
    assert "fixed since" not in result.output and "Traceback" not in result.output


def test_a_baseline_whose_findings_are_not_a_list_is_refused(tmp_path):
    config = Path(__file__).parents[1] / "generated/tiny_rec/test_tipc/configs/tiny_rec/train_infer_python.txt"
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"format": "tipcgen-lint-baseline", "version": 1, "findings": {"a": 1}}')
    result = invoke_in(tmp_path, "lint", str(config), "--baseline", str(baseline))
    assert result.exit_code == 2 and "field `findings`: must be a list" in result.output


# ----------------------------------------------------------------------------- by construction

PKG = Path(__file__).resolve().parents[1] / "compiler" / "tipcgen"
ESCAPERS = {"for_markdown", "for_html", "for_terminal", "printable", "quote"}  # quote: a URL's own escaper
NUMBERS = {"len", "int", "sum", "round", "float", "abs", "min", "max"}
# The modules that build markdown, and each interpolation in them that is not escaped where it is
# written, with the reason it is safe. A new one fails test_markdown_producers_interpolate_only_escaped_values.
MARKDOWN = {
    "migrate/report.py": {
        "'tipcgen' if side == 'plan' else side": "_side's lines go to for_markdown(..., 'block') whole",
        "command.strip()": "_side's lines go to for_markdown(..., 'block') whole",
        "v": "a verdict of the VERDICTS constant",
        "runner.get(v, 0)": "a count",
        "prepare.get(v, 0)": "a count",
        "n": "a count (tally), or a deviation name that reaches the text through _text",
        "line": "a line of a for_markdown block, indented under its list item",
    },
    "results/summary.py": {
        "label": "the callers' node label, built with for_markdown",
        "step['returncode']": "why: escaped with for_markdown where it is shown",
        "rc[0]": "the reason: escaped with for_markdown where it is shown",
        "log_link": "built by _link: for_markdown text and a percent-encoded target",
    },
    "emit/bench_report.py": {
        "'#' * level": "a heading's level",
        "w['heading']": "the WORDS table's own text",
    },
}


class _Interpolations:
    """The f-string values of a module that are not an escaper's output: a module function is
    safe when all it returns is, a local variable when everything assigned to it is."""

    def __init__(self, tree: ast.Module, extra: frozenset = frozenset(), allowed: frozenset = frozenset()) -> None:
        self.safe_funcs = set(ESCAPERS) | set(extra)
        self.allowed = allowed  # expressions (source text) a test allows, each with its reason
        funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        changed = True
        while changed:
            changed = False
            for fn in funcs:
                returns = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
                if fn.name not in self.safe_funcs and returns and all(self.ok(r, self.safe_names(fn)) for r in returns):
                    self.safe_funcs.add(fn.name)
                    changed = True

    def safe_names(self, fn: ast.AST) -> set[str]:
        assigned: dict[str, list[ast.expr]] = {}
        for n in ast.walk(fn):
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):  # `line += ...` counts too
                assigned.setdefault(n.target.id, []).append(n.value)
            if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and isinstance(n.iter, (ast.Tuple, ast.List)):
                assigned.setdefault(n.target.id, []).extend(n.iter.elts)  # a loop over constants
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    pairs = (
                        zip(t.elts, n.value.elts)
                        if isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple)
                        else [(t, n.value)]
                    )
                    for target, value in pairs:
                        if isinstance(target, ast.Name):
                            assigned.setdefault(target.id, []).append(value)
        safe: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, values in assigned.items():
                if name not in safe and all(self.ok(v, safe) for v in values):
                    safe.add(name)
                    changed = True
        return safe

    def ok(self, e: ast.AST, safe: set[str]) -> bool:
        if isinstance(e, ast.Constant) or ast.unparse(e) in self.allowed:
            return True
        if isinstance(e, ast.Starred):
            return self.ok(e.value, safe)
        if isinstance(e, ast.Name):
            return e.id in safe or e.id.isupper()  # a module constant (TAIL, MAX_FAILED)
        if isinstance(e, ast.JoinedStr):
            return all(self.ok(v, safe) for v in e.values)
        if isinstance(e, ast.FormattedValue):
            spec = ast.unparse(e.format_spec) if e.format_spec is not None else ""
            return bool(re.search(r"[dfge%]'?$", spec.rstrip('"'))) or self.ok(e.value, safe)  # a number
        if isinstance(e, ast.IfExp):
            return self.ok(e.body, safe) and self.ok(e.orelse, safe)
        if isinstance(e, ast.BinOp):
            return self.ok(e.left, safe) and self.ok(e.right, safe)
        if isinstance(e, ast.Call):
            f = e.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in self.safe_funcs or name in NUMBERS:
                return True
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id.isupper():
                return True  # a lookup in a module's constant table (_NOTES.get)
            if name == "join" and isinstance(f, ast.Attribute) and self.ok(f.value, safe) and e.args:
                arg = e.args[0]
                return self.ok(arg.elt if isinstance(arg, (ast.GeneratorExp, ast.ListComp)) else arg, safe)
        return False

    def unescaped(self, tree: ast.Module) -> list[tuple[int, str]]:
        out = []
        for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
            safe = self.safe_names(fn)
            for n in ast.walk(fn):
                if isinstance(n, ast.JoinedStr):
                    out += [(n.lineno, ast.unparse(v.value)) for v in n.values
                            if isinstance(v, ast.FormattedValue) and not self.ok(v, safe)]  # fmt: skip
        return out


@pytest.mark.parametrize("module", sorted(MARKDOWN))
def test_markdown_producers_interpolate_only_escaped_values(module):
    tree = ast.parse((PKG / module).read_text(encoding="utf-8"))
    allowed = MARKDOWN[module]
    found = _Interpolations(tree).unescaped(tree)
    bad = [f"{module}:{line}: {{{src}}}" for line, src in found if src not in allowed]
    assert not bad, "markdown built from a value not escaped by tipcgen.escape.for_markdown:\n" + "\n".join(bad)
    stale = set(allowed) - {src for _, src in found}
    assert not stale, f"{module}: allowed interpolations no longer there (remove them): {sorted(stale)}"


def test_the_status_page_prints_every_value_through_the_html_escaper():
    from tipcgen.results.page import _template

    env = _template().environment
    value = HOSTILE["rtl-override"] + HOSTILE["img-onerror"]
    assert env.from_string("{{ x }}|{{ y }}").render(x=value, y=7) == f"{for_html(value)}|7"
    template = (Path(__file__).resolve().parents[1] / "templates" / "status_page.html.j2").read_text()
    assert "|safe" not in template.replace(" ", "") and "Markup" not in template  # nothing bypasses it


def test_an_imported_specs_error_names_the_configs_not_a_yaml_file_never_written():
    from tipcgen.check.spec import load_imported_text
    from tipcgen.errors import SpecError

    text = (SPECS / "tiny_rec.yml").read_text().replace("model: tiny_rec", "model: [tiny_rec")
    with pytest.raises(SpecError) as exc:
        load_imported_text(text, "test_tipc/specs/tiny_rec.yml", "test_tipc/configs/tiny_rec")
    said = str(exc.value)
    assert said.startswith("test_tipc/configs/tiny_rec: error: the spec imported from here")
    assert "(test_tipc/specs/tiny_rec.yml, not written)" in said and "tiny_rec.yml:" not in said
    assert "of the imported spec: " in said  # the YAML line quoted: there is no file to open


PRINTERS = {"echo", "print", "write"}  # typer.echo / click.echo, print(), sys.stdout.write
RICH_ESCAPERS = {"rich_text", "_text", "escape", "str", "Table"}  # Table: its own arguments are checked
RICH_CALLS = {"print", "add_row", "add_column", "Table"}
# rich output whose value is not escaped where it is written, and why that is safe
RICH_ALLOWED = {
    "num(r['ips'])": "a number formatted by bench's num()",
    "num(r['trainer_samples_per_s'])": "a number",
    "num(r['step_time'], '{:.4f}')": "a number",
    "num(r['convergence_value'], '{:.4f}')": "a number",
    "num(r['peak_rss_mb'])": "a number",
    "r.status": "a StepResult status, one of the executor's constants",
    "_STYLE[r.status]": "a style name of the module's table",
    "_STYLE.get(s.status, '')": "a style name of the module's table",
    "style": "a style name of the module's table",
    "result.status": "a StepResult status, one of the executor's constants",
    "cells": "fleet's status cells: rich_text(status) in its style",
}


def test_every_command_prints_through_the_terminal_escaper():
    """cli/ prints only through cli.common.echo (the terminal escaper); rich consoles and tables
    get only rich_text(...) output, numbers and constants."""
    bad = []
    for path in sorted((PKG / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scan = _Interpolations(tree, frozenset(RICH_ESCAPERS), frozenset(RICH_ALLOWED))
        for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
            safe = scan.safe_names(fn)
            for call in [n for n in ast.walk(fn) if isinstance(n, ast.Call)]:
                f = call.func
                owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
                owner = f.value.attr if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) else owner
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if (owner in ("typer", "click", "stdout", "stderr") and name in PRINTERS) or (
                    not owner and name == "print"
                ):
                    if not (path.name == "common.py" and fn.name == "echo"):
                        bad.append(f"{path.name}:{call.lineno}: {ast.unparse(call)[:80]} (print with cli.common.echo)")
                if name in RICH_CALLS and (owner or name == "Table"):
                    args = [*call.args, *(k.value for k in call.keywords if k.arg in ("title", "caption"))]
                    for arg in args:
                        parts = (
                            [v.value for v in arg.values if isinstance(v, ast.FormattedValue)]
                            if isinstance(arg, ast.JoinedStr)
                            else [arg]
                        )
                        for part in parts:
                            if not scan.ok(part, safe):
                                bad.append(f"{path.name}:{call.lineno}: {ast.unparse(part)} (wrap it in rich_text)")
    assert not bad, "terminal output that bypasses tipcgen.escape.for_terminal:\n" + "\n".join(bad)


@pytest.mark.parametrize("name", TERMINAL)
def test_json_printed_to_the_terminal_reads_back_the_same(tmp_path, name):
    import json

    value = HOSTILE[name].replace("\x00", "0") + "\x85\xa0\U0001f600"
    config = Path(__file__).parents[1] / "generated/tiny_rec/test_tipc/configs/tiny_rec/train_infer_python.txt"
    bad = tmp_path / f"cfg{value}_train_infer_python.txt"
    bad.write_text(config.read_text().replace("--use_gpu:False", "--use_gpu:Fasle"))
    result = invoke_in(tmp_path, "lint", str(bad), "--format", "json")
    _no_control(result.output)
    findings = json.loads(result.output)
    assert findings and all(f["file"] == str(bad) for f in findings)  # JSON's escapes give the name back
