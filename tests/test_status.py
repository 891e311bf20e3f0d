"""Fast tier: results/ (records over time, the PR summary, the status page) on synthetic records:
versioned and old records, the regression band, hostile records, escaping, `tipcgen status`."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from helpers.cli import run_argv
from helpers.history import REGRESSED, STEPS, regression_history, run_report, stamp, with_logs, write
from helpers.pagetext import english_labels, visible
from tipcgen.escape import for_markdown
from tipcgen.results.history import load_history
from tipcgen.results.page import flags, page_context, render_page
from tipcgen.results.summary import bench_summary, fleet_summary, run_summary

MODE = "lite_train_lite_infer"
FAILED_EXPORT = ["passed", "passed", "failed", "skipped", "skipped"]
STEPS5 = STEPS


def _page(tmp_path: Path, lang: str = "en", threshold: float = 0.05, tree: str = "rec") -> tuple[dict, str]:
    runs, problems = load_history([str(tmp_path / tree)])
    ctx = page_context(runs, problems, lang, threshold, str(tmp_path / "site"))
    return ctx, render_page(ctx)


def test_summary_of_a_failing_run_names_the_step_and_shows_its_log_tail(tmp_path):
    data = run_report("tiny_rec", MODE, FAILED_EXPORT, stamp(0), reasons={3: "export failed", 4: "export failed"})
    tail = "\n".join(f"line {i}" for i in range(40)) + "\nValueError: no checkpoint at ./output/best"
    with_logs(tmp_path, data, tail)
    text = run_summary(data, str(tmp_path), str(tmp_path / "ci"))
    assert text.startswith(f"### ❌ FAILED: tiny\\_rec · {MODE} · paddleocr · 1 node\n".replace("\\_", "_"))
    assert (
        "| passed | failed | skipped | timed out | stalled |\n|---:|---:|---:|---:|---:|\n| 2 | 1 | 2 | 0 | 0 |" in text
    )
    assert "#### step 3 `export` export: failed (exit status 1)" in text
    assert "python3 tools/export.py -c configs/tiny_rec.yml" in text  # its command
    assert "ValueError: no checkpoint at ./output/best" in text and "line 26" in text and "line 25\n" not in text
    log = f"test_tipc/output/tiny_rec/{MODE}/export_2.log"
    assert f"last 15 lines of [{log}](<../{log}>):" in text  # relative to the summary's directory
    assert "train_0.log" not in text  # passed steps are counted, not shown


def test_summary_of_a_passing_run_is_short(tmp_path):
    data = run_report("tiny_rec", MODE, ["passed"] * 5, stamp(0))
    text = run_summary(data, str(tmp_path), str(tmp_path))
    assert text.splitlines()[0].startswith("### ✅ PASSED: tiny")
    assert "Failed steps" not in text and len(text.splitlines()) <= 8


def test_summary_escapes_record_text(tmp_path):
    data = run_report("<script>x</script>|a", "m|b", FAILED_EXPORT, stamp(0))
    data["steps"][2]["command"] = "echo ```x``` </details>"
    with_logs(tmp_path, data, "```\n<img src=x onerror=alert(1)>")
    text = run_summary(data, str(tmp_path), str(tmp_path))
    head = text.splitlines()[0]
    assert "\\<script\\>x\\</script\\>\\|a" in head and "m\\|b" in head  # literal text, not a tag, not a cell
    assert "````text\necho ```x``` </details>\n````" in text  # a fence longer than the backticks inside
    assert for_markdown("a\n````b", "block") == "`````text\na\n````b\n`````"
    for line in text.splitlines():  # no table row gained a column
        if line.startswith("| 2 |"):
            assert line.count("|") == 6


def test_bench_summary_shows_a_failed_run_with_its_log(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out/r2.log").write_text("epoch 1\nTraceback\nRuntimeError: gloo timeout\n")
    records = [
        {"model": "tiny_rec", "run_id": "r1", "status": "passed", "ips": 300.0, "device_num": "N1C1",
         "speed_unit": "samples/s", "convergence_value": 0.5},
        {"model": "tiny_rec", "run_id": "r2", "status": "failed", "ips": 0.0, "device_num": "N2C2",
         "returncodes": [0, 1], "commands": [["python3", "tools/train.py"]], "log_file": "out/r2.log"},
    ]  # fmt: skip
    text = bench_summary(records, str(tmp_path), str(tmp_path))
    assert "| `r1` | passed | N1C1 | 300.0 samples/s | 0.5 |" in text
    assert "#### step 1 `train` r2: failed (exit status 1)" in text and "RuntimeError: gloo timeout" in text


def test_synthetic_history_flags_exactly_the_regressed_runs(tmp_path):
    regression_history(tmp_path / "rec")
    ctx, html = _page(tmp_path)
    regressed = {(f["benchmark"].split(" · ")[-1], f["metric"], f["run"]) for f in ctx["flagged"]}
    runs = {i + 1 for i in REGRESSED}
    assert regressed == {("N1C2", m, r) for m in ("ips", "speedup", "efficiency") for r in runs}
    assert all(f["flag"] == "regressed" for f in ctx["flagged"])  # the recovery is no "improvement"
    assert html.count('<tr class="regressed" data-flag="regressed"') == 6
    assert len(re.findall(r'<circle class="pt regressed"', html)) == 6  # marked in the charts too
    # a tighter band flags noise as well; a looser one misses the 12 % drop
    tight, _ = _page(tmp_path, threshold=0.01)
    assert len(tight["flagged"]) > 6
    loose, _ = _page(tmp_path, threshold=0.15)
    assert loose["flagged"] == []


def test_band_reference_is_the_median_of_the_previous_runs():
    judged = flags([100, 101, 99, 100, 100, 90, 100, None, 120], 0.05)
    assert [j[2] for j in judged] == ["", "", "", "", "", "regressed", "", "", "improved"]
    assert judged[5][0] == 100 and round(judged[5][1], 3) == 0.9


def test_a_regression_needs_three_earlier_runs():
    """The issue's case: a run flagged against a median of 1 or 2 earlier runs. The 2nd and 3rd
    values are not judged however far off; the 4th is, against the median of three."""
    judged = flags([100, 50, 150, 60], 0.10)
    assert [j[0] for j in judged] == [None, None, None, 100]
    assert [j[2] for j in judged] == ["", "", "", "regressed"]
    assert flags([100, 150, 100, 106], 0.10)[3][2] == ""  # 6 % off: within the default band


def test_status_default_threshold_and_minimum_are_on_the_page(tmp_path):
    """`tipcgen status` with no --threshold: 10 %, and the page says both numbers, in both languages."""
    from tipcgen.results.page import DEFAULT_THRESHOLD, MIN_HISTORY

    assert (DEFAULT_THRESHOLD, MIN_HISTORY) == (0.10, 3)
    regression_history(tmp_path / "rec")
    done = run_argv(["status", str(tmp_path / "rec"), "--out", str(tmp_path / "site")],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0 and "40 runs, 0 records skipped, 6 regressed" in done.stdout, done.stdout
    en = (tmp_path / "site/index.en.html").read_text()
    assert "by more than 10 % is flagged" in en and "only after at least 3 earlier runs" in en
    zh = (tmp_path / "site/index.zh.html").read_text()
    assert "超过 10 % 即记为回退" in zh and "之前至少有 3 次运行才做判断" in zh


@pytest.mark.parametrize(
    ("old", "new", "move"),
    [
        ("skipped", "passed", "passing"),
        ("passed", "skipped", "failing"),  # the mirror of the line above: one rule, both directions
        ("failed", "passed", "passing"),
        ("passed", "failed", "failing"),
        ("skipped", "timed out", "failing"),
        ("timed out", "skipped", "passing"),  # no longer fails
        (None, "failed", "failing"),  # a new step that fails
        (None, "passed", "passing"),
        ("skipped", "not run", ""),  # a node never trainer 0, stopped: no verdict either way
        ("not run", "skipped", ""),
        ("passed", "passed", ""),
        ("failed", "stalled", ""),  # failing both times
        ("lost", "passed", "passing"),
        ("passed", "refused", "failing"),
    ],
)
def test_one_change_rule_both_directions(old, new, move):
    from tipcgen.results.page import step_change

    assert step_change(old, new) == move
    # the reverse change is in the other list (a step gone: no verdict, as "not run")
    assert step_change(new, old or "not run") == {"passing": "failing", "failing": "passing", "": ""}[move]


def test_bystander_node_skipped_to_not_run_is_no_change_but_its_stop_is(tmp_path):
    """A two-node fleet twice: passing, then node 1 fails its train and node 2 (never trainer 0:
    its eval/export are skipped) is stopped. Node 2 lists only its stopped train as newly failing,
    not its `skipped -> not run` steps; node 1 its failed train and the steps it no longer passes."""
    rec = tmp_path / "rec"

    def fleet(when, a, b, first):
        nodes = [{"ip": ip, "state": "failed" if "failed" in st or "stopped" in st else "passed",
                  "steps": [{"index": i, "kind": k, "group": g, "status": s, "log": None}
                            for i, ((k, g), s) in enumerate(zip(STEPS5, st))]}
                 for ip, st in (("10.0.0.1", a), ("10.0.0.2", b))]  # fmt: skip
        return {"record": {"schema": 2, "kind": "fleet", "finished_at": stamp(when), "suite": "fleet"},
                "model_name": "m", "mode": MODE, "layout": "paddleocr", "log_dir": "o", "exit_code": 1 if first else 0,
                "first_failure": {"node": first} if first else None, "nodes": nodes}  # fmt: skip

    write(rec / "f1.json", fleet(0, ["passed"] * 5, ["passed"] + ["skipped"] * 4, None))
    write(rec / "f2.json", fleet(1, ["failed"] + ["skipped"] * 4, ["stopped"] + ["not run"] * 4, "10.0.0.1"))
    ctx, _ = _page(tmp_path)
    by_node = {c["key"].rsplit(" · ", 1)[-1]: c for c in ctx["changes"]}
    assert by_node["10.0.0.2"]["failing"] == ["1 train norm_train (passed → stopped)"]
    assert by_node["10.0.0.1"]["failing"][0] == "1 train norm_train (passed → failed)"
    assert len(by_node["10.0.0.1"]["failing"]) == 5 and by_node["10.0.0.2"]["passing"] == []


def test_grid_changes_and_links(tmp_path):
    rec = tmp_path / "rec"
    first = run_report("tiny_rec", MODE, ["passed"] * 5, stamp(0), paddle="2.6.1")
    second = run_report("tiny_rec", MODE, FAILED_EXPORT, stamp(1), commit="b" * 40,
                        reasons={3: "export failed", 4: "export failed"})  # fmt: skip
    second["record"]["root"] = str(tmp_path / "repo")
    write(rec / "r1.json", first)
    write(rec / "r2.json", second)
    with_logs(tmp_path / "repo", second)
    ctx, html = _page(tmp_path, tree=".")  # the records' tree holds the repo the record names
    (row,) = ctx["rows"]
    assert [c["state"] for c in row["cells"]] == FAILED_EXPORT
    assert row["cells"][3]["why"] == "export failed"
    assert [h["state"] for h in row["recent"]] == ["passed", "failed"]
    site = tmp_path / "site"
    for c in row["cells"]:
        assert (c["href"] is None) == (c["state"] == "skipped")  # skipped steps wrote no log
        if c["href"]:
            assert (site / c["href"]).resolve().is_file()
    (change,) = ctx["changes"]
    # the export failed; the inferences after it no longer pass (the one change rule: passed -> skipped)
    assert change["failing"] == ["3 export export (passed → failed)", "4 infer cpu bs1 (passed → skipped)",
                                 "5 infer cpu bs6 (passed → skipped)"]  # fmt: skip
    assert change["meta"] == ["commit aaaaaaaaaa → bbbbbbbbbb", "paddle 2.6.1 → 3.0.0"]


def test_two_suites_of_one_model_stay_two_rows_never_compared(tmp_path):
    """A `--suite multiproc` run beside the normal suite's, and a legacy config of the same model:
    three rows; each suite's change list compares it with its own previous run only."""
    rec, spec = tmp_path / "rec", "specs/tiny_rec.yml"
    legacy = "test_tipc/configs/tiny_rec/train_infer_python.txt"
    write(rec / "n1.json", run_report("tiny_rec", MODE, ["passed"] * 5, stamp(0), suite="normal", config=spec))
    write(rec / "m1.json", run_report("tiny_rec", MODE, ["passed"] * 5, stamp(1), suite="multiproc", config=spec))
    write(rec / "n2.json", run_report("tiny_rec", MODE, ["passed"] * 5, stamp(2), suite="normal", config=spec))
    timed_out = ["timed out"] + ["skipped"] * 4
    write(rec / "m2.json", run_report("tiny_rec", MODE, timed_out, stamp(3), suite="multiproc", config=spec,
                                      reasons={i: "train failed" for i in range(1, 5)}))  # fmt: skip
    write(rec / "l1.json", run_report("tiny_rec", MODE, FAILED_EXPORT, stamp(4), config=legacy))
    ctx, html = _page(tmp_path)
    rows = [(r["suite"], r["config"], [c["state"] for c in r["cells"]]) for r in ctx["rows"]]
    assert rows == [
        ("train_infer_python.txt", legacy, FAILED_EXPORT),
        ("multiproc", spec, timed_out),
        ("normal", spec, ["passed"] * 5),
    ]
    recent = [[h["state"] for h in r["recent"]] for r in ctx["rows"]]
    assert recent == [["failed"], ["passed", "timed out"], ["passed", "passed"]]
    (change,) = ctx["changes"]  # only multiproc changed, against its own earlier run
    assert change["key"] == f"tiny_rec · train_inference_python · {MODE} · multiproc"
    assert change["failing"][0] == "1 train norm_train (passed → timed out)"
    assert len(change["failing"]) == 5 and change["passing"] == []
    assert 'data-suite="normal"' in html and f'title="{legacy}"' in html


def test_records_name_the_suite_and_config_that_ran(tmp_path):
    """What `run`, `fleet` and `bench` put in the record: the suite a spec ran (`--suite`, else
    its first) and the file, relative to the repo root."""
    from tipcgen.check.source import what_ran
    from tipcgen.check.spec import load_spec

    spec = Path(__file__).resolve().parents[1] / "specs" / "tiny_rec.yml"
    first = next(iter(load_spec(str(spec)).suites))
    assert what_ran(str(spec), None, str(spec.parents[1])) == {"suite": first, "config": "specs/tiny_rec.yml"}
    assert what_ran(str(spec), first, "/elsewhere")["config"] == str(spec)  # outside the root: as given
    assert what_ran("test_tipc/configs/m/train_infer_python.txt", None) == {
        "suite": None, "config": "test_tipc/configs/m/train_infer_python.txt"}  # fmt: skip


def test_old_unversioned_records_are_read(tmp_path):
    write(tmp_path / "rec/old.json", run_report("tiny_rec", MODE, ["passed"] * 5, stamp(0), versioned=False))
    runs, problems = load_history([str(tmp_path / "rec")])
    assert problems == [] and [(r.schema, r.kind, r.model) for r in runs] == [(1, "run", "tiny_rec")]


def test_hostile_records_are_reported_skipped_and_escaped(tmp_path):
    rec = tmp_path / "rec"
    good = run_report("<script>alert(1)</script>|x", '"><b>m', ["passed", "timed out"], stamp(0),
                      reasons={1: "<img src=x onerror=alert(1)>"})  # fmt: skip
    write(rec / "markup.json", good)
    (rec / "trunc.json").write_text(json.dumps(good)[:200])
    write(rec / "future.json", {**good, "record": {**good["record"], "schema": 99}})
    (rec / "nan.json").write_text(json.dumps(good).replace('"seconds": 1.5', '"seconds": NaN', 1))
    write(rec / "types.json", {**good, "steps": [{"index": "0", "kind": 3, "status": []}]})
    write(rec / "list.json", [1, 2])
    write(rec / "other.json", {"hello": "world"})
    (rec / "huge.json").write_text('{"a": "' + "x" * (5 << 20) + '"}')
    (rec / "bytes.json").write_bytes(b'{"model_name": "\xff"}')
    (rec / "deep.json").write_text("[" * 100000)
    ctx, html = _page(tmp_path)
    skipped = {Path(p.split(":")[0]).name for p in ctx["problems"]}
    # other.json is JSON but no tipcgen record: passed over without a word
    assert skipped == {"trunc.json", "future.json", "nan.json", "types.json", "list.json",
                       "huge.json", "bytes.json", "deep.json"}  # fmt: skip
    assert any("future.json: skipped: record.schema 99: written by a newer tipcgen" in p for p in ctx["problems"])
    assert "<script>" not in html and "<img" not in html and '"><b>' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;|x" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert re.search(r'data-state="timed out"', html)


def _backup_env(path: Path) -> None:
    """What paddle.distributed.launch leaves beside bench's records: an environment dump."""
    write(path, {"PADDLE_TRAINER_ID": "0", "PADDLE_TRAINERS_NUM": "2", "PATH": "/usr/bin", "nested": {"a": [1]}})


def test_json_that_is_no_tipcgen_record_is_passed_over_silently(tmp_path):
    """Paddle's backup_env.*.json in bench's folder: not counted, not listed, not on stderr; a
    claimed record that is broken (a `record` block of an unknown kind, not an object) is still
    reported, and a cut-short file still is (its writer may have died)."""
    regression_history(tmp_path / "rec", runs=3)
    for i in range(12):
        _backup_env(tmp_path / f"rec/bench_00{i % 3}/backup_env.{i}.json")
    write(tmp_path / "rec/claims.json", {"record": {"schema": 2, "kind": "nightly"}, "model_name": "m"})
    write(tmp_path / "rec/block.json", {"record": [1], "model_name": "m"})
    (tmp_path / "rec/cut.json").write_text('{"record": {"schema": 2, "kind": "run"}, "steps": [')
    done = run_argv(["status", str(tmp_path / "rec"), "--out", str(tmp_path / "site")],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "6 runs, 3 records skipped" in done.stdout
    assert "backup_env" not in done.stderr + done.stdout
    said = sorted(line.split(": skipped: ")[0].rsplit("/", 1)[-1] for line in done.stderr.splitlines())
    assert said == ["block.json", "claims.json", "cut.json"], done.stderr
    assert "record.kind: one of run, fleet, bench is wanted" in done.stderr
    assert "backup_env" not in (tmp_path / "site/index.en.html").read_text()


def test_bench_report_passes_over_other_json_in_its_folder_and_checks_named_files(tmp_path):
    """`tipcgen report DIR` reads only bench records in DIR (the same rule as the page); a file
    named on the command line is checked whatever it holds; a folder with no bench record is
    refused, saying so."""
    session = regression_history(tmp_path / "rec", runs=1) / "bench_000"
    _backup_env(session / "backup_env.0.json")
    write(session / "run.json", run_report("tiny_rec", MODE, ["passed"] * 5, stamp(0)))
    done = run_argv(["report", str(session), "--out", str(tmp_path / "rep"), "--no-plots"],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "N1C2" in done.stdout and "backup_env" not in done.stdout
    named = run_argv(["report", str(session / "backup_env.0.json"), "--no-plots", "--out",
                            str(tmp_path / "rep2")], capture_output=True, text=True)  # fmt: skip
    assert named.returncode == 2 and "backup_env.0.json: error: run record without model" in named.stderr
    _backup_env(tmp_path / "only/backup_env.0.json")
    empty = run_argv(["report", str(tmp_path / "only"), "--no-plots", "--out", str(tmp_path / "r3")],
                           capture_output=True, text=True)  # fmt: skip
    assert empty.returncode == 2 and "no run records of `tipcgen bench` in this directory" in empty.stderr
    assert "Traceback" not in named.stderr + empty.stderr and not (tmp_path / "r3").exists()


def test_one_reader_of_records(tmp_path):
    """status and report read a record file through run.provenance.read_record alone: the same
    bounds give the same refusal whichever command reads it."""
    from tipcgen.bench import records
    from tipcgen.results import history

    big = tmp_path / "rec/big.json"
    big.parent.mkdir(parents=True)
    big.write_text('{"record": {"schema": 2, "kind": "bench"}, "a": [' + "{}," * 20_000 + "{}]}")
    _, problems = load_history([str(tmp_path / "rec")])
    assert problems == [f"{big}: skipped: not a JSON run record: more than 20000 JSON objects"]
    done = run_argv(["report", str(big), "--no-plots", "--out", str(tmp_path / "rep")],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "more than 20000 JSON objects" in done.stderr
    for module in (records, history):  # neither parses JSON nor opens files itself
        source = Path(module.__file__).read_text()
        assert "parse_json" not in source and "read_bytes" not in source and "open(" not in source


def test_status_command_writes_both_languages(tmp_path):
    regression_history(tmp_path / "rec")
    write(tmp_path / "rec/bad.json", {"record": {"schema": 3, "kind": "run"}})
    done = run_argv(["status", str(tmp_path / "rec"), "--out", str(tmp_path / "site"),
                           "--strict"], capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 1, done.stderr  # --strict: a record skipped, runs regressed
    assert "bad.json: skipped: record.schema 3" in done.stderr
    assert "40 runs, 1 records skipped, 6 regressed" in done.stdout
    zh = (tmp_path / "site/index.html").read_text()
    assert zh == (tmp_path / "site/index.zh.html").read_text()
    assert '<html lang="zh-CN">' in zh and "性能回退" in zh and "回退</td>" in zh
    en = (tmp_path / "site/index.en.html").read_text()
    assert '<html lang="en">' in en and "Regressions (6)" in en
    assert "<script" not in zh + en and "http" not in zh.replace('xmlns="http://www.w3.org/2000/svg"', "")
    bad = run_argv(["status", str(tmp_path / "rec"), "--threshold", "5"], capture_output=True,
                         text=True)  # fmt: skip
    assert bad.returncode == 2 and "--threshold must be a fraction" in bad.stderr


def test_fleet_reports_become_a_row_per_node_linking_to_gathered_logs(tmp_path):
    log_dir = f"./test_tipc/output/tiny_rec/{MODE}"
    steps = [{"index": 0, "kind": "train", "group": "norm_train", "log": None, "status": "failed",
              "reason": None, "status_line": "Run failed with command - tiny_rec - python3 train.py!"},
             {"index": 1, "kind": "eval", "group": "eval", "log": f"{log_dir}/eval.log", "status": "skipped",
              "reason": "train failed", "status_line": None}]  # fmt: skip
    data = {
        "record": {"schema": 2, "kind": "fleet", "finished_at": stamp(0), "root": str(tmp_path / "repo")},
        "model_name": "tiny_rec", "mode": MODE, "layout": "paddleocr", "log_dir": log_dir, "exit_code": 1,
        "first_failure": None, "stopped": None,
        "nodes": [{"ip": ip, "state": "failed", "steps": steps, "reason": "exit 1"} for ip in ("10.0.0.1", "10.0.0.2")],
    }  # fmt: skip
    write(tmp_path / "rec/fleet.json", data)
    console = tmp_path / "repo/test_tipc/output/tiny_rec" / MODE / "nodes/10.0.0.1/fleet_run.out"
    console.parent.mkdir(parents=True)
    console.write_text("Traceback\nRuntimeError: gloo\n")
    ctx, _ = _page(tmp_path, tree=".")
    rows = {r["node"]: r for r in ctx["rows"]}
    assert set(rows) == {"10.0.0.1", "10.0.0.2"}
    assert [c["state"] for c in rows["10.0.0.1"]["cells"]] == ["failed", "skipped"]
    href = rows["10.0.0.1"]["cells"][0]["href"]  # the train step's output: the node's console
    assert href and (tmp_path / "site" / href).resolve() == console
    assert rows["10.0.0.2"]["cells"][0]["href"] is None  # nothing gathered from that node
    text = fleet_summary(data, str(tmp_path / "repo"), str(tmp_path / "repo"))
    assert "| 10.0.0.1 | failed | 0 | 1 | 1 | 0 | 0 | 0 |" in text and "RuntimeError: gloo" in text
    assert "python3 train.py" in text


def _paths(value, at=()):
    """Every path into a JSON value (dict keys, list indices)."""
    yield at
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        yield from _paths(v, (*at, k))


def _mutated(data, at, new):
    data = json.loads(json.dumps(data))
    if not at:
        return new
    node = data
    for k in at[:-1]:
        node = node[k]
    node[at[-1]] = new
    return data


def test_mutated_records_never_crash_the_page_nor_inject_markup(tmp_path):
    """Every field of a run report, a fleet report and a bench record replaced, one at a time
    (seeded), by a value of another type or size: each record is read or reported, the page
    renders, and no record text becomes markup."""
    import random

    from helpers.history import bench_record

    rng = random.Random(25)
    odd = [None, "", "<i>x</i>", -1, 0, 2**70, 1e300, 1e400, float("nan"), [], {}, True, "y" * 10_000, [1, "<b>"]]
    fleet = {"record": {"schema": 2, "kind": "fleet", "finished_at": stamp(0)}, "model_name": "m", "mode": MODE,
             "layout": "paddleocr", "log_dir": "o", "first_failure": None, "exit_code": 0,
             "nodes": [{"ip": "10.0.0.1", "state": "passed", "steps": run_report("m", MODE, ["passed"], stamp(0))["steps"]}]}  # fmt: skip
    bases = [run_report("m", MODE, FAILED_EXPORT, stamp(0)), bench_record("m", "N1C2", 2, 1, 500.0, stamp(1)), fleet]
    rec = tmp_path / "rec"
    n = 0
    for base in bases:
        paths = list(_paths(base))
        for at in rng.sample(paths, min(60, len(paths))):
            text = json.dumps(_mutated(base, at, rng.choice(odd)), allow_nan=True).replace("1e+400", "1e400")
            (rec / f"s{n // 50}").mkdir(parents=True, exist_ok=True)
            (rec / f"s{n // 50}" / f"r{n}.json").write_text(text)
            n += 1
    ctx, html = _page(tmp_path)
    assert ctx["runs"] + len(ctx["problems"]) >= n  # each read (a fleet: a run per node) or reported
    assert "<i>" not in html and "<b>" not in html
    numbers = re.findall(r' (?:points|cx|cy|x|y|x1|x2|y1|y2)="([^"]*)"', html)
    assert numbers and all(math.isfinite(float(v)) for n in numbers for v in re.split(r"[ ,]", n) if v)


def test_zh_page_is_chinese_throughout_with_refused_and_lost_runs(tmp_path):
    """Two suites of one model, a lost node, a refused run: every label of the zh page (states,
    step kinds, tipcgen's own reasons, `commit`, the change lists) is Chinese; the causing node
    comes first; refused and lost rows say so with the reason, in full on hover."""
    from helpers.history import status_scenario

    names = status_scenario(tmp_path, str(Path(__file__).resolve().parents[1] / "specs" / "tiny_rec.yml"))
    done = run_argv(["status", str(tmp_path / "records"), "--out", str(tmp_path / "site")],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr  # backup_env.*.json: not a word
    assert "10 runs, 0 records skipped" in done.stdout
    zh = (tmp_path / "site/index.zh.html").read_text()
    text = visible(zh)
    lost = names["lost_why"].removeprefix("lost: ")
    # the record's own text: a node's ssh error, why the bystander stopped, the config's group names
    own = [lost, names["refused_why"], f"node {names['two']} was lost", "评估 eval", "导出 export"]
    assert english_labels(text, own) == []
    assert english_labels(visible((tmp_path / "site/index.en.html").read_text()), []) != []  # the check finds them
    for phrase in ("通过 → 超时", "未运行", "训练失败", "提交", "运行 600 秒后超时", "新失败", "节点失联", "被拒绝运行",
                   "因其他节点的问题未运行"):  # fmt: skip
        assert phrase in text, phrase
    rows = re.findall(r'<tr class="row[^"]*" data-model="tiny_rec" data-chain="[^"]*" data-mode="([^"]*)" '
                      r'data-suite="([^"]*)" data-config="[^"]*" data-node="([^"]*)"', zh)  # fmt: skip
    mode, two, one = names["mode"], names["two"], names["one"]
    assert rows == [(mode, "fleet", two), (mode, "fleet", one), (mode, "multiproc", "-"), (mode, "normal", "-"),
                    ("whole_train_whole_infer", "fleet", two), ("whole_train_whole_infer", "fleet", one)]  # fmt: skip
    assert zh.count('class="badge cause">最先失败<') == 2  # the lost node, the node that refused
    assert f"⚠ 节点失联：{lost}" in text and f'title="{lost}"' in zh
    assert f"⊘ 被拒绝运行：{names['refused_why']}" in text
    changes = text[text.index("与上一次运行相比") :]
    assert changes.index(f"fleet · {two}") < changes.index(f"fleet · {one}")  # cause first in the changes too


def test_a_long_reason_is_whole_on_hover_and_names_do_not_break(tmp_path):
    from tipcgen.results.page import SHOWN_REASON

    why = "RuntimeError: " + " ".join(f"word{i}" for i in range(80))
    write(tmp_path / "rec/r.json", run_report("tiny_rec", MODE, ["passed", "failed"], stamp(0), reasons={1: why}))
    ctx, html = _page(tmp_path, lang="zh")
    cell = ctx["rows"][0]["cells"][1]
    assert why in cell["title"] and cell["why"].endswith("…") and len(cell["why"]) == SHOWN_REASON + 1
    assert f'title="2 评估 eval: 失败 ({why})' in html  # whole, then where its log is
    css = html[html.index("<style>") : html.index("</style>")]
    assert "anywhere" not in css and css.count("break-all") == 1  # only the skipped records' paths may break
    assert "td.name, td.word { white-space: nowrap; }" in css and "word-break: keep-all" in css
