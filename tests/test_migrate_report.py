"""`tipcgen migrate`: every difference readable, fast, with progress.

- the oracle names EVERY differing command of a run, aligned (a command one side adds or drops is
  one difference, never a cascade over every later command), each with both sides;
- the report: a summary (verdicts per script; each edit once with its runs and configs), then every
  differing command, then the whole per-run table (no row limit); `--json` carries everything;
- workers from TIPC_JOBS, progress on stderr (a bar on a terminal, a line per 10 % otherwise);
- the verdict cache: `--apply` after a report of the same inputs runs nothing again, any change
  to an input is a miss; `--apply --accept-changes` exits 0 once written.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
from pathlib import Path

import pytest

from helpers.cli import invoke_in, run_cli
from tipcgen.escape import for_markdown
from tipcgen.migrate import cache
from tipcgen.migrate.oracle import Command, _compare_commands, _Norm
from tipcgen.migrate.report import edits, report_json, report_markdown
from tipcgen.migrate.switch import Migration, Row, RowDifference
from tipcgen.plan.steps import Step

PY = "python3.7"


def _step(i: int, kind: str, *args: str, cwd=None) -> tuple:
    argv = (PY, *args)
    return (Step(i, kind, " ".join(argv), argv, f"./log/{kind}_{i}.log", None, cwd=cwd), True)


def _cmd(*args: str, cwd: str = ".") -> Command:
    return Command((PY, *args), None, cwd)


RUN = [
    _step(0, "train", "tools/train.py", "-c", "a.yml", "-o", "epochs=1"),
    _step(1, "eval", "tools/eval.py", "-c", "a.yml"),
    _step(2, "export", "tools/export.py", "-c", "a.yml"),
    _step(3, "infer", "deploy/infer.py", "--device=gpu", "--batch=1"),
    _step(4, "infer", "deploy/infer.py", "--device=cpu", "--batch=1"),
]
SAME = [_cmd(*s.argv[1:]) for s, _ok in RUN]


def _differences(up: list) -> list:
    return _compare_commands(up, RUN, _Norm("/scratch/repo", "m", "lite_train_lite_infer"))


# ---- the oracle: every differing command, aligned


def test_the_same_commands_have_no_difference():
    assert _differences(SAME) == []


def test_an_inserted_command_is_one_difference_not_a_cascade():
    up = [SAME[0], _cmd("tools/build_op.py", "install", cwd="ext_op"), *SAME[1:]]
    found = _differences(up)
    assert [d.category for d in found] == [
        "steps: upstream runs more (tools/build_op.py ...)",
        "cwd: upstream runs commands from ext_op/",
    ]
    assert "upstream: python3.7 tools/build_op.py install\n    plan:     <none>" in found[0].detail


def test_a_dropped_command_is_one_difference_with_the_plans_side():
    found = _differences([*SAME[:3], SAME[4]])  # upstream drops the GPU inference
    assert [d.category for d in found] == ["steps: plan runs more (infer)"]
    assert found[0].detail.endswith("upstream: <none>\n    plan:     python3.7 deploy/infer.py --device=gpu --batch=1")


def test_every_edited_command_is_named_with_both_sides():
    up = [
        SAME[0],
        _cmd("tools/eval.py", "-c", "a.yml", "--pretrained=x"),  # a flag added to eval
        _cmd("tools/export.py", "-c", "a.yml", "--pretrained=x"),  # and to export
        SAME[3],
        _cmd("deploy/infer.py", "--device=cpu", "--batch=1", cwd="deploy"),  # another directory
    ]
    found = _differences(up)
    assert [d.category for d in found] == [
        "eval argv: upstream +[--pretrained=x]",
        "export argv: upstream +[--pretrained=x]",
        "infer: upstream runs it from deploy/",
    ]
    assert (
        "upstream: python3.7 tools/eval.py -c a.yml --pretrained=x\n    plan:     python3.7 tools/eval.py -c a.yml"
        in (found[0].detail)
    )


def test_edits_insertions_and_drops_together_are_each_named_once():
    up = [
        _cmd("tools/train.py", "-c", "a.yml", "-o", "epochs=2"),  # edited
        _cmd("tools/eval.py", "-c", "a.yml"),
        _cmd("tools/extra.py"),  # inserted
        _cmd("tools/export.py", "-c", "a.yml"),
        # both inferences dropped
    ]
    found = _differences(up)
    assert [d.category for d in found] == [
        "train argv: order or values (epochs=N vs epochs=N)",
        "steps: upstream runs more (tools/extra.py ...)",
        "steps: plan runs more (infer)",
        "steps: plan runs more (infer)",
    ]


def test_a_config_text_in_a_command_stays_on_its_line():
    """A nested runner's recorder appends the config's text (line breaks in it): each side of the
    detail is still one line, so the report's block shows one command per side."""
    up = [_cmd("tools/train.py", "-c", "a.yml", "-o", "epochs=1\nmodel_name:x"), *SAME[1:]]
    detail = _differences(up)[0].detail
    lines = detail.split("\n")
    assert len(lines) == 3 and lines[1].strip().startswith("upstream:") and "epochs=1\\nmodel_name:x" in lines[1]


# ---- the report and its JSON form


def _diff(category: str, config: str, deviation: str = "") -> RowDifference:
    detail = (
        f"step 1 (eval): {category}\n    upstream: {PY} tools/eval.py {config} --x\n    plan:     {PY} tools/eval.py"
    )
    return RowDifference("runner", "commands", category, detail, deviation)


def _migration(n_configs: int) -> Migration:
    rows = []
    for i in range(n_configs):
        config = f"test_tipc/configs/m{i}/train_infer_python.txt"
        for mode in ("lite_train_lite_infer", "whole_infer"):
            found = [_diff("eval argv: upstream +[--x]", config), _diff("logs: upstream +[train.log]", config, "dev-a")]
            if i == 0:
                found.append(_diff("steps: plan runs more (infer)", config))
            rows.append(Row(config, mode, "CHANGED", found[0].detail, "identical", "", differences=found))
    return Migration("/repos/x", "paddleclas", None, {}, {"test_tipc/a.sh": b"x"}, rows, deviations={"dev-a": "why"})


def test_the_report_has_a_summary_then_every_difference_then_every_row():
    m = _migration(1100)  # 2,200 runs: more than the old 2,000-row cut
    text = report_markdown(m)
    summary = text.index("## Summary: each difference once")
    changed = text.index("## CHANGED: every command that would change")
    table = text.index("## Per config and mode")
    assert text.index("## Summary: verdicts per script") < summary < changed < table
    assert "| test_train_inference_python.sh | 2200 | 2200 CHANGED |" in text
    # the same edit across runs: once, with its runs and every config it touches
    eval_row = next(line for line in text.splitlines() if line.startswith("| test_train_inference_python.sh | eval"))
    assert "| 2200 | 2200 |" in eval_row and eval_row.count("`test_tipc/configs/m") == 1100
    assert eval_row.endswith("| **unexplained** |")
    logs_row = next(line for line in text.splitlines() if "logs: upstream" in line and line.startswith("| test_train"))
    assert logs_row.endswith("| dev-a |")
    # every unexplained differing command of every run (the explained ones in the summary only)
    listed = [line for line in text[changed:table].splitlines() if line.startswith("- `test_tipc/configs/")]
    assert len(listed) == 2200 * 1 + 2  # m0's dropped inference in both its modes
    assert text[changed:table].count("upstream: python3.7 tools/eval.py") == 2202
    rows = [line for line in text[table:].splitlines() if line.startswith("| `test_tipc/configs/")]
    assert len(rows) == 2200 and "more |" not in text[table:]


def test_edits_are_collapsed_unexplained_first():
    listed = edits(_migration(3))
    assert [(e["category"], e["runs"], len(e["configs"]), e["deviation"]) for e in listed] == [
        ("eval argv: upstream +[--x]", 6, 3, ""),
        ("steps: plan runs more (infer)", 2, 1, ""),
        ("logs: upstream +[train.log]", 6, 3, "dev-a"),
    ]


def test_the_json_form_carries_everything():
    m = _migration(2)
    m.configs_kept = {"test_tipc/configs/m0/ptq.txt": "no chain types it"}
    m.not_imported = {"test_tipc/configs/bad.txt": "no trainer"}
    data = json.loads(json.dumps(report_json(m)))
    assert data["format"] == "tipcgen-migrate-report" and data["ready"] is False
    assert len(data["rows"]) == 4 and data["rows"][0]["differences"][0]["upstream"].endswith("--x")
    assert data["rows"][0]["differences"][0]["tipcgen"] == f"{PY} tools/eval.py"
    assert data["rows"][0]["differences"][1]["deviation"] == "dev-a"
    assert data["configs_kept"] == m.configs_kept and data["not_imported"] == m.not_imported
    assert data["deviations"] == {"dev-a": "why"} and data["files"]["all"] == ["test_tipc/a.sh"]
    assert data["entries"] == [] and data["edits"][0]["runs"] == 4


# ---- workers and progress


@pytest.mark.parametrize("value", ["0", "-1", "x", "65", "1e3", " 2", "\u0663", "2\n"])
def test_a_bad_tipc_jobs_is_refused_in_one_paragraph(tmp_path, value):
    result = run_cli("migrate", tmp_path, cwd=tmp_path, env={**os.environ, "TIPC_JOBS": value})
    assert result.returncode == 2, result.stderr
    assert "TIPC_JOBS=" in result.stderr and "from 1 to 64" in result.stderr and "Traceback" not in result.stderr


def test_progress_off_a_terminal_is_a_line_per_tenth():
    from tipcgen.cli.migrate import Progress

    out = io.StringIO()
    progress = Progress(out)
    progress.begin()  # off a terminal: nothing (an error after it stays one paragraph)
    for done in range(0, 38):
        progress(done, 37)
    progress.done()
    first, *lines, last = out.getvalue().splitlines()
    assert first.startswith("tipcgen migrate: imported in ") and last.startswith(
        "tipcgen migrate: 37 runs compared in "
    )
    tenths = [int(line.split("%")[0].rsplit(" ", 1)[1]) // 10 for line in lines]
    assert tenths == list(range(11)) and "\r" not in out.getvalue()
    assert lines[-1].startswith("tipcgen migrate: 100% (37/37 runs compared")


def test_the_import_says_how_far_it_is_a_line_per_fourth_off_a_terminal():
    """A family tree's import (every model's prepare.sh traced) takes minutes: a CI log shows it
    is alive, in at most four lines, before the comparisons' own."""
    from tipcgen.cli.migrate import Progress

    out = io.StringIO()
    progress = Progress(out)
    progress.begin()
    for done in range(0, 10):
        progress.importing(done, 9)
    progress(0, 5)
    progress.importing(9, 9)  # (after the comparisons began: nothing)
    lines = out.getvalue().splitlines()
    assert [line.split(" (")[0] for line in lines[:4]] == [
        f"tipcgen migrate: imported {n} of 9 models" for n in (3, 5, 7, 9)
    ]
    assert lines[4].startswith("tipcgen migrate: imported in ") and len(lines) == 6 and "\r" not in out.getvalue()


def test_progress_on_a_terminal_is_one_bar_redrawn():
    from tipcgen.cli.migrate import Progress

    leader, follower = pty.openpty()
    with os.fdopen(follower, "w") as tty:
        progress = Progress(tty)
        progress.begin()
        for done in range(3):
            progress.importing(done, 2)
        for done in range(5):
            progress(done, 4)
        progress.done()
    chunks = []
    while True:  # a pty hands its bytes over in pieces; EIO once the writer's side is closed
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    shown = b"".join(chunks).decode()
    assert shown.count("\r") >= 6 and re.search(r"100% 4/4 runs, \d+ s", shown)
    assert shown.startswith("tipcgen migrate: importing") and "\r\x1b[Ktipcgen migrate: imported in" in shown
    assert re.search(
        r"\r\x1b\[Ktipcgen migrate: importing the configs and tracing prepare\.sh: 2/2 models, \d+ s", shown
    )
    assert "[" + "#" * 30 + "]" in shown


# ---- the verdict cache


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "test_tipc/configs/m").mkdir(parents=True)
    (root / "test_tipc/configs/m/train_infer_python.txt").write_text("model_name:m\n")
    (root / "test_tipc/prepare.sh").write_text("echo prepare\n")
    return root


def test_the_cache_returns_what_it_stored_for_the_same_inputs(tmp_path):
    root = _repo(tmp_path)
    env = {"TIPC_CACHE": str(tmp_path / "cache")}
    m = _migration(2)
    m.sources = {("m", "train_infer_python.txt"): str(root / "test_tipc/configs/m/train_infer_python.txt")}
    key = cache.input_key(str(root), {"modes": ("a",)})
    cache.store(env, key, m)
    back = cache.load(env, key, str(root))
    assert back is not None and back.rows == m.rows and back.files == m.files and back.sources == m.sources
    assert back.root == str(root) and back.deviations == m.deviations
    assert oct(os.stat(next((tmp_path / "cache/migrate").iterdir())).st_mode & 0o777) == "0o600"


def test_every_field_of_the_migration_survives_the_cache(tmp_path):
    """`--apply` after a report works from the cached Migration: every field of it comes back (a
    field the cache dropped, such as the .gitignore lines apply appends, would be lost silently)."""
    from dataclasses import fields

    from tipcgen.migrate.entries import EntryPoint, EntryRow

    root = _repo(tmp_path)
    env = {"TIPC_CACHE": str(tmp_path / "cache")}
    m = _migration(2)
    m.root = str(root)
    m.not_imported = {"test_tipc/configs/x.txt": "why"}
    m.sources = {("m", "train_infer_python.txt"): "test_tipc/configs/m/train_infer_python.txt"}
    m.untyped = {"m": ["wget x"]}
    m.replaced, m.added = ["test_tipc/a.sh"], ["test_tipc/b.sh"]
    m.chain_rows, m.prepare_rows = m.rows[:1], m.rows[1:2]
    m.prepare_modes_lost = ["cpp_infer"]
    m.entries = [
        EntryRow(EntryPoint("test_tipc/a.sh", None, "whole_infer"), "CHANGED", "d", ["- x", "+ y"], 1, 2, 0, None)
    ]
    m.configs_kept = {"test_tipc/configs/k.txt": "kept"}
    m.gitignore_hidden, m.gitignore = ["test_tipc/.tipcgen.manifest"], ["!/.tipcgen.manifest"]
    m.sourced_kept = {"test_tipc/k.sh": "test_tipc/legacy/r.sh"}
    m.modes_left_out = ["whole_infer"]
    empty = Migration(str(root), "", None, {}, {})
    m.specs = {"test_tipc/specs/m.yml": "model: m\n"}
    unset = [
        f.name for f in fields(m) if f.name not in ("root", "runner") and getattr(m, f.name) == getattr(empty, f.name)
    ]
    assert not unset, f"give these a value, so that the round trip checks them: {unset}"
    key = cache.input_key(str(root), {"modes": ("a",)})
    cache.store(env, key, m)
    back = cache.load(env, key, str(root))
    assert back is not None
    assert {f.name: getattr(back, f.name) for f in fields(m)} == {f.name: getattr(m, f.name) for f in fields(m)}


@pytest.mark.parametrize(
    "change", ["config", "new file", "gitignore", "modes", "timeout", "code", "renamed", "moved repo"]
)
def test_any_input_change_is_a_miss(tmp_path, monkeypatch, change):
    root = _repo(tmp_path)
    options = {"modes": ("a",), "timeout": 60.0}
    key = cache.input_key(str(root), options)
    config = root / "test_tipc/configs/m/train_infer_python.txt"
    if change == "config":
        config.write_text("model_name:n\n")
    elif change == "new file":
        (root / "test_tipc/docs").mkdir()
        (root / "test_tipc/docs/x.md").write_text("x")
    elif change == "gitignore":
        (root / ".gitignore").write_text("*.json\n")
    elif change == "modes":
        options["modes"] = ("a", "b")
    elif change == "timeout":
        options["timeout"] = 61.0
    elif change == "code":
        monkeypatch.setattr("tipcgen.emit.check_cache.code_digest", lambda: "another tipcgen")
    elif change == "renamed":
        config.rename(config.with_name("train_amp_infer_python.txt"))
    else:
        root = root.rename(tmp_path / "elsewhere")
    assert cache.input_key(str(root), options) != key


@pytest.mark.parametrize(
    "bad",
    ["not json", "other key", "dotdot path", "wrong type", "plain field of another type", "field missing", "link"],
)
def test_a_corrupt_or_foreign_record_is_a_miss(tmp_path, bad):
    root = _repo(tmp_path)
    env = {"TIPC_CACHE": str(tmp_path / "cache")}
    key = cache.input_key(str(root), {})
    cache.store(env, key, _migration(1))
    record = next((tmp_path / "cache/migrate").iterdir())
    data = json.loads(record.read_text())
    if bad == "not json":
        record.write_text("{not json")
    elif bad == "other key":
        data["key"] = "0" * 64
        record.write_text(json.dumps(data))
    elif bad == "dotdot path":
        data["fields"]["files"] = {"../../etc/x": "eA=="}
        record.write_text(json.dumps(data))
    elif bad == "wrong type":
        data["fields"]["rows"] = [{"config": 1}]
        record.write_text(json.dumps(data))
    elif bad == "plain field of another type":
        data["fields"]["gitignore"] = "!/x"  # a str where the Migration holds a list
        record.write_text(json.dumps(data))
    elif bad == "field missing":
        del data["fields"]["modes_left_out"]
        record.write_text(json.dumps(data))
    else:
        (tmp_path / "elsewhere.json").write_text(record.read_text())
        record.unlink()
        record.symlink_to(tmp_path / "elsewhere.json")
    assert cache.load(env, key, str(root)) is None
    assert cache.load({**env, "TIPC_MIGRATE_CACHE": "0"}, key, str(root)) is None


# ---- the whole command on a repo slice: an edited runner (corpus, sandbox)


@pytest.mark.corpus
@pytest.mark.sandbox
def test_an_edited_runner_is_reported_command_by_command_then_applied_from_the_cache(tmp_path, monkeypatch):
    """PaddleDetection's slice with its runner edited twice: a flag added to every eval and an
    extra command after every training. Every differing command is in the report and the JSON,
    nothing else differs (the export and inferences after the inserted command are aligned);
    `--apply --accept-changes` then reuses the verdicts, writes, and exits 0."""
    from helpers.repo_slice import repo_slice

    monkeypatch.setenv("TIPC_CACHE", str(tmp_path / "cache"))
    root = repo_slice(tmp_path, "PaddleDetection")
    script = root / "test_tipc/test_train_inference_python.sh"
    text = script.read_text()
    eval_line = 'eval_cmd="${python} ${eval_py} ${set_eval_trained_weight} ${set_use_gpu} ${set_eval_params1}"'
    run_eval = "                # run eval\n"
    assert eval_line in text and run_eval in text
    text = text.replace(eval_line, eval_line[:-1] + ' --flag_x=on"')
    text = text.replace(run_eval, run_eval + "                ${python} tools/extra_step.py --quiet\n", 1)
    script.write_text(text)
    mode = "lite_train_lite_infer"
    report = invoke_in(root, "migrate", "--mode", mode, "--json", str(tmp_path / "r.json"))
    assert report.exit_code == 1, report.output
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["rows"] and all(r["runner"] == "CHANGED" for r in data["rows"])
    for row in data["rows"]:
        unexplained = [d for d in row["differences"] if not d["deviation"] and d["side"] == "runner"]
        # the eval's status line shows its new command too
        assert {d["category"] for d in unexplained if d["aspect"] != "commands"} == {"status: eval command text"}
        unexplained = [d for d in unexplained if d["aspect"] == "commands"]
        cats = sorted({d["category"] for d in unexplained})
        assert cats == ["eval argv: upstream +[--flag_x=on]", "steps: upstream runs more (tools/extra_step.py ...)"], (
            row["config"],
            [d["detail"] for d in unexplained],
        )
        evals = [d for d in unexplained if d["category"].startswith("eval")]
        extras = [d for d in unexplained if d["category"].startswith("steps")]
        assert len(evals) == len(extras) >= 1  # one of each per training
        assert all(d["upstream"].endswith("--flag_x=on") and d["tipcgen"] for d in evals)
        assert all(d["upstream"] == "python3.7 tools/extra_step.py --quiet" and d["tipcgen"] is None for d in extras)
    md = report.output
    summary = md.split("## Summary: each difference once", 1)[1].split("## CHANGED")[0]
    assert for_markdown("steps: upstream runs more (tools/extra_step.py ...)") in summary
    applied = invoke_in(root, "migrate", "--mode", mode, "--apply", "--accept-changes")
    assert applied.exit_code == 0, applied.output
    assert "verdicts reused" in applied.output and "wrote " in applied.output
    assert (root / "test_tipc/.tipcgen.manifest").is_file()


@pytest.mark.parametrize("name", ["img-onerror", "script", "backtick-runs", "pipes", "link-image", "entity-newline",
                                  "rtl-override", "erase-line"])  # fmt: skip
def test_repo_text_in_the_summary_and_every_difference_is_shown_literally(name):
    """A category, a config path, a command and an entry point made of hostile text: no element,
    link or cell from it, in the summary tables, the CHANGED blocks and the entry points' table."""
    from test_escape import HOSTILE, read_markdown, visible
    from tipcgen.migrate.entries import EntryPoint, EntryRow

    value = HOSTILE[name]
    config = f"test_tipc/configs/{value}.txt"
    found = [
        RowDifference("runner", "commands", f"eval argv: upstream +[{value}]",
                      f"step 1 (eval): {value}\n    upstream: {PY} {value}\n    plan:     {PY} x"),
        RowDifference("prepare", "prepare", f"prepare.sh: {value}", f"upstream {value}, ours x"),
    ]  # fmt: skip
    m = Migration(
        f"/r/{value}", value, None, {}, {}, [Row(config, value, "CHANGED", value, "CHANGED", value, value, found)]
    )
    m.entries = [EntryRow(EntryPoint(f"test_tipc/{value}.sh", config, value), "CHANGED", value, [f"- before: {value}"])]
    doc = read_markdown(report_markdown(m))
    assert f"test_tipc/configs/{visible(value)}.txt" in doc.code
    first = visible(value.split("\n")[0])  # a side per line of the block
    assert any(f"upstream: {PY} {first}" in c for c in doc.code), doc.code
    assert any(f"- before: {first}" in c for c in doc.code), doc.code
    data = json.dumps(report_json(m), ensure_ascii=True)
    assert data.isascii() and json.loads(data)["rows"][0]["differences"][0]["detail"] == found[0].detail


def test_mktemp_names_of_generated_scripts_are_one_name_so_the_report_is_the_same_each_run():
    """The generated prepare.sh extracts into `<to>/.tipcgen/tmp.XXXXXX` (mktemp): two runs of the
    same tree recorded different names, and the report differed run by run. A name the repo's own
    script spells is kept as it is."""
    from tipcgen.migrate.entrypoints import _normal
    from tipcgen.migrate.oracle import Command

    def recorded(name: str) -> Command:
        argv = ("tar", "-xf", "/s/home/a.tar", "-C", f"/s/repo/test_tipc/data/.tipcgen/{name}", "data/tmp.abc123")
        return _normal(Command(argv, None, "/s/repo/test_tipc/data/.tipcgen/old.Zq81Lp"), ("/s/repo", "/s", "/b"))

    one, other = recorded("tmp.2lBbxA"), recorded("tmp.wKEhri")
    assert one == other
    assert one.argv[-2:] == ("./test_tipc/data/.tipcgen/tmp.XXXXXX", "data/tmp.abc123")
    assert one.cwd == "./test_tipc/data/.tipcgen/old.XXXXXX"
