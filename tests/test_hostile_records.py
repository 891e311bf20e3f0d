"""Trust, records: `tipcgen report`, `build --results` and `bench CONFIG` on hostile input.

A run record or a config's benchmark section comes from a pull request or another machine. Each
bad one is one message naming the file and the field (or the config's line), exit 2, no
traceback, no hang, nothing written; record text lands in markdown escaped, never as HTML, an
image or a broken table; plots draw text as text. Real CLI (typer's runner, or a subprocess
where a hang or a terminal is the point), real files, FIFOs and links."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.machine import bound
from tipcgen.cli import app

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "specs" / "tiny_rec.yml"
CONFIG = REPO / "generated/tiny_rec/test_tipc/configs/tiny_rec/train_infer_python.txt"
DOC = "tiny_rec/test_tipc/docs/test_train_inference_python.md"


def record(run_id="tiny_rec_bs32_fp32_sp_N1C1", workers=1, nodes=1, ips=300.0, **kw) -> dict:
    r = {
        "model": "tiny_rec",
        "run_id": run_id,
        "ips": ips,
        "workers": workers,
        "nodes": nodes,
        "device_num": f"N{nodes}C{workers}",
        "device": "cpu",
        "fp_item": "fp32",
        "global_batch_size": 32,
        "speed_unit": "samples/s",
        "status": "passed",
        "skip_steps": 7,
        "train_time": 2.9,
        "accuracy": 0.667,
        "loss_curve": [[1, 70.0], [2, 30.0]],
        "finished_at": "2026-01-01T00:00:00+00:00",
    }
    r.update(kw)
    return r


def cli(*args) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    out = result.stdout + result.stderr
    assert "Traceback" not in out and not isinstance(result.exception, (AssertionError, KeyError, TypeError)), out
    return result.exit_code, result.stdout, result.stderr


def refused(*args, names=(), located=True) -> str:
    """A clean refusal: exit 2, one message naming each of `names`, no raw ESC."""
    code, out, err = cli(*args)
    assert code == 2, (code, out, err)
    assert err.count(": error: ") == int(located) and err.count("\n") == 1, err
    for name in names:
        assert name in err, (name, err)
    assert "\x1b" not in out + err
    return err


def subprocess_cli(*args, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tipcgen.cli", *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def report_refuses(tmp_path: Path, data, *names: str) -> str:
    """`report` and `build --results` refuse the record `data` with the same message, writing nothing."""
    path = write(tmp_path / "bad" / "x.json", data)
    out = tmp_path / "out"
    err = refused("report", path, "--out", out, "--no-plots", names=(f"{path}:", *names))
    assert refused("build", SPEC, "--out", out, "--results", path) == err
    assert not out.exists()
    return err


# -- the failures ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "field", "says"),
    [
        ({"workers": 0}, "workers", "greater than or equal to 1, got 0"),
        ({"train_time": "2.9"}, "train_time", 'should be a valid number, got "2.9"'),
        ({"run_id": [1, 2]}, "run_id", "should be a valid string, got a JSON array of 2"),
        (
            {"convergence": {"verdict": "FAIL", "metric": "loss", "target": 1.0, "within": [1]}},
            "convergence.within",
            "should be a valid dictionary",
        ),
        ({"ips": -1.5}, "ips", "greater than or equal to 0"),
        ({"workers": True}, "workers", "valid integer, got True"),
        ({"nodes": 2}, "", "nodes 2 is more than workers 1"),
        ({"device_num": "N1C1 | <b>"}, "device_num", "should match pattern"),
        ({"loss_curve": [[1, 2, 3]]}, "loss_curve[0]", "at most 2 items"),
        ({"model": "x" * 201}, "model", "at most 200 characters"),
    ],
)
def test_a_bad_field_is_one_message_naming_the_file_and_the_field(tmp_path, edit, field, says):
    err = report_refuses(tmp_path, record(**edit), says)
    if field:
        assert f"field `{field}`" in err


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ('"ips": Infinity', "ips", "Infinity"),
        ('"ips": NaN', "ips", "NaN"),
        ('"train_time": -Infinity', "train_time", "-Infinity"),
        ('"ips": 1e400', "ips", "1e400"),
        ('"workers": 1' + "0" * 400, "workers", "...(401 characters)"),
        ('"loss_curve": [[1, 2.0], [2, NaN]]', "loss_curve[1][1]", "NaN"),
        ('"extra": {"deep": [Infinity]}', "extra.deep[0]", "Infinity"),  # a field report ignores too
    ],
)
def test_numbers_a_record_cannot_hold_are_refused_naming_the_field(tmp_path, text, field, value):
    key = text.split(":")[0].strip('"')
    base = json.dumps({k: v for k, v in record().items() if k != key})
    report_refuses(
        tmp_path,
        base[:-1] + ", " + text + "}",
        f"field `{field}`",
        value,
        "does not fit: numbers are finite",
    )


def test_record_text_is_refused_with_control_characters_and_escaped_in_markdown(tmp_path):
    err = report_refuses(tmp_path, record(model="a\nb"), "field `model`", "U+000A (LINE FEED)")
    assert "\n" not in err.rstrip("\n")
    err = report_refuses(tmp_path, record(model="red\x1b[31mx"), "field `model`", "ESCAPE")
    hostile = "<script>alert(1)</script>|x ![x](http://127.0.0.1:9/x.png) &amp; `a`"
    runs = tmp_path / "runs"
    write(runs / "a.json", record(model=hostile, fp_item="fp32|<i>", speed_unit="<img src=x>"))
    write(runs / "b.json", record(run_id="`</code><script>", model=hostile, status="failed"))
    code, out, err = cli("report", runs, "--out", tmp_path / "rep", "--no-plots", "--lang", "en")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.en.md").read_text(encoding="utf-8")
    # no HTML tag, entity, image or link survives unescaped; every table row keeps its 9 cells
    prose = md.replace("`` `</code><script> ``", "")  # in a code span HTML is text: checked below
    assert not re.search(r"(?<!\\)<|(?<!\\)&|(?<!\\)!\[|(?<!\\)\[", prose), md
    rows = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert len(rows) == 3 and all(len(re.split(r"(?<!\\)\|", ln)) == 11 for ln in rows), rows
    assert r"\<script\>alert(1)\</script\>\|x \!\[x\](http://127.0.0.1:9/x.png) \&amp; \`a\`" in rows[2]
    assert "throughput (\\<img src=x\\>)" in rows[0]
    assert "`` `</code><script> ``" in md  # a run id in a code span fenced longer than its backticks
    assert out.startswith("#" + md)  # stdout is the section (level 2), the same escaped text
    # build --results puts the same escaped section into the docs
    runs = tmp_path / "docs_runs"  # the docs show the records of the spec's model
    write(runs / "a.json", record(fp_item="fp32|<i>![x](http://127.0.0.1:9/x.png)"))
    code, _, err = cli("build", SPEC, "--out", tmp_path / "gen", "--results", runs, "--lang", "en")
    assert code == 0, err
    doc = (tmp_path / "gen" / DOC).read_text(encoding="utf-8")
    (row,) = [ln for ln in doc.splitlines() if ln.startswith("| tiny_rec |")]
    assert r"| fp32\|\<i\>\!\[x\](http://127.0.0.1:9/x.png) |" in row and len(re.split(r"(?<!\\)\|", row)) == 11


def test_mathtext_in_a_model_name_is_drawn_as_text(tmp_path):
    runs = tmp_path / "runs"
    write(runs / "a.json", record(model=r"$\undefined$"))
    write(runs / "b.json", record(run_id="b_N1C2", model=r"$\undefined$", workers=2, device_num="N1C2"))
    code, _, err = cli("report", runs, "--out", tmp_path / "rep", "--lang", "en")
    assert code == 0, err
    svg = (tmp_path / "rep" / "throughput.svg").read_text(encoding="utf-8")
    assert r"$\undefined$ fp32 global batch 32: measured, one node" in svg


def test_deep_nesting_is_refused_without_recursing(tmp_path):
    report_refuses(tmp_path, "[" * 200_000, "nested more than 32 deep")
    report_refuses(
        tmp_path, json.dumps(record(extra=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])), "deep"
    )
    nested = record(extra=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])  # 32 deep: fine
    path = write(tmp_path / "ok" / "x.json", nested)
    assert cli("report", path, "--out", tmp_path / "rep", "--no-plots")[0] == 0


def test_fifo_and_devices_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    runs = tmp_path / "runs"
    runs.mkdir()
    os.mkfifo(runs / "a.json")  # found by a directory argument: refused as well, never skipped
    start = time.monotonic()
    for args, what in (
        (["report", fifo], "FIFO"),
        (["report", "/dev/zero"], "a character device"),
        (["report", runs], "FIFO"),
        (["build", SPEC, "--results", fifo], "FIFO"),
        (["check", SPEC, "--results", "/dev/zero"], "a character device"),
    ):
        err = refused(*args, "--out", tmp_path / "out", names=(what, ": a run record is a regular file"))
        assert err.startswith(str(runs / "a.json" if args[-1] == runs else args[-1]))
    assert time.monotonic() - start < bound(10)
    assert not (tmp_path / "out").exists()


def test_fifo_does_not_hang_the_real_process(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    proc = subprocess_cli("report", fifo, "--no-plots", "--out", tmp_path / "out", timeout=30)
    assert proc.returncode == 2 and f"{fifo}: error: cannot read a " in proc.stderr, proc.stderr
    assert "FIFO" in proc.stderr and "Traceback" not in proc.stderr


def test_a_big_record_is_refused_after_reading_its_bound(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:  # 60 MB, sparse: the reader must not take it whole
        fh.truncate(60 << 20)
    refused("report", big, "--no-plots", names=(f"{big}: error: more than 4194304 bytes", "at most 4 MiB"))
    # a loss curve of 10^7 points is far beyond that
    curve = tmp_path / "curve.json"
    with open(curve, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(record())[:-1] + ', "epoch_loss": [')
        fh.write("[1,1]," * 1_000_000 + "[1,1]]}")
    refused("report", curve, "--no-plots", names=("more than 4194304 bytes",))
    # within the bytes, a curve longer than a record holds names the field
    long = write(tmp_path / "long.json", json.dumps(record(loss_curve=[[i, 1] for i in range(20_001)])))
    refused("report", long, "--no-plots", names=("field `loss_curve`", "at most 20000 items"))


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("[1, 2]", "a run record is a JSON object"),
        ('"tiny_rec"', "a run record is a JSON object"),
        ("", ":1:1: error: not a JSON run record: Expecting value"),
        (b'{"model": "\xff"}', ":1: error: not a JSON run record: the file is not UTF-8 text"),
        ('{"model": "a", "model": "b"}', "field `model`: given twice"),
        ('{"ips": 1, "nested": {"k": 1, "k": 2}}', "field `k`: given twice"),
        ('{"a": [' + "{}," * 20_000 + "{}]}", "more than 20000 JSON objects"),  # a Python hook call each
        ('{"a": [' + "0," * 150_001 + "0]}", "more than 150000 values"),
        ('{"model": "\\u001b[31m"}', ""),  # an escaped ESC is still an ESC: refused below
    ],
)
def test_what_is_not_a_record(tmp_path, data, says):
    if data == '{"model": "\\u001b[31m"}':
        data = json.dumps(record())[:-1] + ', "fp_item": "\\u001b[31m"}'
        data = data.replace('"fp_item": "fp32", ', "")
        says = "field `fp_item`: '\\x1b[31m' contains U+001B (ESCAPE)"
    report_refuses(tmp_path, data, says)


def test_directory_of_records_is_bounded_and_links_out_are_refused(tmp_path):
    many = tmp_path / "many"
    many.mkdir()
    for i in range(10_001):
        os.close(os.open(many / f"{i}.json", os.O_CREAT | os.O_WRONLY, 0o644))
    start = time.monotonic()
    refused("report", many, "--no-plots", names=(f"{many}: error: more than 10000 run records",))
    assert time.monotonic() - start < bound(5)
    # a link in a directory of records leading out of it names the link
    secret = write(tmp_path / "secret" / "r.json", record(run_id="secret"))
    runs = tmp_path / "runs"
    write(runs / "a.json", record())
    os.symlink(secret, runs / "b.json")
    refused("report", runs, "--no-plots", names=(f"{runs / 'b.json'}: error: cannot read: a symbolic link leads to",))
    # a link to a file beside it is fine
    (runs / "b.json").unlink()
    os.symlink("a.json", runs / "b.json")
    assert cli("report", runs, "--no-plots", "--out", tmp_path / "rep")[0] == 0


def test_a_bad_file_name_in_a_directory_cannot_drive_the_terminal(tmp_path):
    runs = tmp_path / "runs"
    write(runs / "\x1b[2J\x1b]0;owned\x07.json", "[]")
    err = refused("report", runs, "--no-plots", names=("\\x1b[2J\\x1b]0;owned\\x07.json: error:",))
    assert "\x07" not in err


def test_mixed_models_group_apart_and_docs_show_their_own(tmp_path):
    runs = tmp_path / "runs"
    write(runs / "a.json", record())
    write(runs / "b.json", record(run_id="b_N1C2", workers=2, device_num="N1C2", ips=540.0))
    write(runs / "c.json", record(run_id="other_N1C1", model="other_model", ips=50.0))
    code, out, _ = cli("report", runs, "--out", tmp_path / "rep", "--lang", "en", "--no-plots")
    assert code == 0
    rows = [ln for ln in out.splitlines() if ln.startswith("| ") and "N1C" in ln]
    assert [r.split(" | ")[0] for r in rows] == ["| other_model", "| tiny_rec", "| tiny_rec"]
    assert "**1.80** | 0.90" in rows[2]  # tiny_rec's N1C2 against its own baseline, not other_model's
    code, _, err = cli("build", SPEC, "--out", tmp_path / "gen", "--results", runs)
    assert code == 0 and "no spec has model 'other_model'" in err
    assert "other_model" not in (tmp_path / "gen" / DOC).read_text(encoding="utf-8")


def test_report_writes_only_below_out(tmp_path):
    runs = tmp_path / "runs"
    write(runs / "a.json", record())
    outside = write(tmp_path / "outside.md", "mine\n")
    out = tmp_path / "rep"
    out.mkdir()
    for name, plots in (("report.zh.md", ["--no-plots"]), ("loss.svg", [])):
        os.symlink(outside, out / name)
        refused(
            "report", runs, "--out", out, *plots, names=(f"{out / name}: error: leads to {outside}, outside {out}/",)
        )
        assert outside.read_text(encoding="utf-8") == "mine\n"
        assert sorted(os.listdir(out)) == [name]  # nothing half-written: not the report, no plot
        (out / name).unlink()
    os.mkfifo(out / "report.zh.md")  # comparing with it would block
    refused(
        "report", runs, "--out", out, "--no-plots", names=(f"{out / 'report.zh.md'}: error: is not a regular file",)
    )
    os.unlink(out / "report.zh.md")
    os.symlink("other.md", out / "report.zh.md")  # a link even inside --out is refused, not followed
    write(out / "other.md", "other\n")
    refused(
        "report",
        runs,
        "--out",
        out,
        "--no-plots",
        names=(f"{out / 'report.zh.md'}: error: cannot write: it is a symbolic link",),
    )
    assert (out / "report.zh.md").is_symlink() and (out / "other.md").read_text(encoding="utf-8") == "other\n"


def test_bogus_lang_is_refused_before_reading(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    refused("report", fifo, "--lang", "fr", names=("--lang must be zh or en, not 'fr'",), located=False)


def test_records_bench_writes_load_even_for_a_diverged_run(tmp_path):
    from tipcgen.bench.records import load_records, write_record

    diverged = record(
        loss_curve=[[1, 2.0], [2, float("nan")], [3, float("inf")]],
        convergence_value=float("nan"),
        ips_max=float("inf"),
    )
    path = write_record(diverged, str(tmp_path))
    text = Path(path).read_text(encoding="utf-8")
    assert "NaN" not in text and "Infinity" not in text
    (loaded,) = load_records([path])
    assert loaded["loss_curve"] == [(1.0, 2.0)] and "convergence_value" not in loaded and "ips_max" not in loaded


def test_every_field_bench_writes_is_one_report_reads(tmp_path):
    from test_bench_parse import TINY_LOG
    from tipcgen.bench.converge import judge
    from tipcgen.bench.execute import Outcome
    from tipcgen.bench.matrix import BenchRun, NodeCommand
    from tipcgen.bench.parse import parse_train_log
    from tipcgen.bench.records import RunRecord, load_records, make_record, write_record
    from tipcgen.spec.bench_section import Convergence, RunMode

    run = BenchRun(
        run_id="tiny_rec_bs16_fp32_mp_N1C2", model="tiny_rec", run_mode=RunMode(run_mode="mp", procs=2),
        batch_size=16, global_batch_size=32, fp_item="fp32", device="cpu", max_epochs=3, max_iters=None,
        warmup_steps=1, timeout=60, log_dir="/x",
        nodes=(NodeCommand(None, ("python", "train.py"), None, None, "/x/launch"),),
    )  # fmt: skip
    log = parse_train_log(TINY_LOG)
    rec = make_record(run, Outcome("timed out", [None, -9], 12.4, None), log, "2026-01-01T00:00:00+00:00")
    rec["convergence"] = judge(Convergence(target=20.0, within={"epochs": 3}), log).to_json()
    (loaded,) = load_records([write_record(rec, str(tmp_path))])
    assert set(rec) <= set(RunRecord.model_fields)  # all typed: none is silently ignored
    assert {k: v for k, v in rec.items() if v is not None and k != "convergence"} == {
        k: [list(p) for p in v] if k.endswith(("curve", "loss")) else v for k, v in loaded.items() if k != "convergence"
    }
    assert loaded["convergence"]["verdict"] == "PASS" and loaded["convergence"]["within"] == {"epochs": 3}


def test_bench_thins_a_long_curve_to_what_report_reads():
    from tipcgen.bench.records import MAX_CURVE, thin

    points = [[i, 1.0] for i in range(1, 3 * MAX_CURVE + 7)]
    kept = thin(points)
    assert len(kept) <= MAX_CURVE and kept[0] == points[0] and kept[-1] == points[-1]
    assert thin(points[:10]) == points[:10]


def test_total_curve_points_are_bounded(tmp_path, monkeypatch):
    from tipcgen.bench import records
    from tipcgen.errors import SpecError

    monkeypatch.setattr(records, "MAX_POINTS", 3)
    a = write(tmp_path / "a.json", record(run_id="a"))
    b = write(tmp_path / "b.json", record(run_id="b"))
    assert len(records.load_records([str(a)])) == 1
    with pytest.raises(SpecError, match="more than 3 curve points in all"):
        records.load_records([str(a), str(b)])


# -- bench CONFIG: the benchmark section as benchmark_train.sh reads it -------------------------


def config(tmp_path: Path, section: str) -> Path:
    text = CONFIG.read_text(encoding="utf-8")
    header = "===========================train_benchmark_params==========================\n"
    return write(tmp_path / "train_infer_python.txt", text + header + section)


def line_of(path: Path, prefix: str, nth: int = 1) -> int:
    return [i for i, ln in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if ln.startswith(prefix)][
        nth - 1
    ]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("-5", "`batch_size` is '-5': not whole numbers separated by `|`"),
        ("1_0", "`batch_size` is '1_0': not whole numbers separated by `|`"),  # int() reads 10, bash does not
        ("²", "`batch_size` is '²': not whole numbers"),
        ("8|", "`batch_size` is '8|': not whole numbers"),
        ("0", "0 is not a whole number from 1 to 10000000"),
        ("99999999999", "99999999999 is not a whole number from 1 to 10000000"),
        ("1" * 40, "not whole numbers"),
        ("|".join(map(str, range(1, 66))), "65 batch sizes; at most 64"),
    ],
)
def test_bench_config_batch_size_errors_point_at_the_configs_line(tmp_path, value, says):
    cfg = config(tmp_path, f"batch_size:{value}\nfp_items:fp32\nepoch:2\n")
    err = refused("bench", cfg, "--dry-run", "--out", tmp_path / "b", names=(says,))
    assert err.startswith(f"{cfg}:{line_of(cfg, 'batch_size:')}:12: error: field `train_benchmark_params.batch_size`")
    if "whole numbers separated" in says:  # lint reads it the same way
        lint = cli("lint", cfg)[1]
        assert f"{cfg}:{line_of(cfg, 'batch_size:')}: error: TIPC023" in lint


@pytest.mark.parametrize(
    ("section", "line_prefix", "says"),
    [
        ("batch_size:8\nfp_items:fp32\nepoch:1_0\n", "epoch:", "`epoch` is '1_0': not a whole number"),
        ("batch_size:8\nfp_items:fp32\nepoch:0\n", "epoch:", "0 is not a whole number from 1"),
        (
            "fp_items:fp32\nbatch_size:8\nepoch:2\n",
            "fp_items:",
            "reads line {n} as `batch_size`, but it holds 'fp_items'",
        ),
        ("batch_size:8\nfp_items:fp32\n", None, "reads line {n} as `epoch`"),
        (
            "batch_size:8\nfp_items:fp32\nepoch:2\n"
            "===========================train_benchmark_params==========================\nbatch_size:16\n",
            "=====" * 5 + "==train_benchmark_params",
            "a second train_benchmark_params section",
        ),
    ],
)
def test_bench_config_section_is_read_where_the_script_reads_it(tmp_path, section, line_prefix, says):
    cfg = config(tmp_path, section)
    n = (
        line_of(cfg, line_prefix, 2 if "params" in line_prefix else 1)
        if line_prefix
        else len(cfg.read_text().splitlines()) + 1
    )
    err = refused("bench", cfg, "--dry-run", names=(says.format(n=n),))
    assert err.startswith(f"{cfg}:{n}:"), err


def test_bench_config_in_order_still_plans(tmp_path):
    cfg = config(tmp_path, "batch_size:8|24\nfp_items:fp32|fp16\nepoch:2\n--profiler_options:null\n")
    code, out, err = cli("bench", cfg, "--dry-run")
    assert code == 0, err
    assert [ln for ln in out.splitlines() if not ln.startswith(" ")] == [
        f"tiny_rec_bs{bs}_{fp}_sp_N1C1:" for bs in (8, 24) for fp in ("fp32", "fp16")
    ]


@pytest.mark.parametrize(
    ("value", "got"), [('["10"]', "the text '10'"), ("[true]", "the boolean true"), ("[32.0]", "32.0")]
)
def test_spec_batch_sizes_are_whole_numbers_not_text(tmp_path, value, got):
    spec = write(
        tmp_path / "s.yml", SPEC.read_text(encoding="utf-8").replace("batch_sizes: [32]", f"batch_sizes: {value}")
    )
    refused("bench", spec, "--dry-run", names=("field `bench.batch_sizes[0]`: expected a whole number", got))


def test_bench_config_reads_the_section_where_benchmark_train_sh_does(tmp_path):
    """A blank line above the section shifts what the scripts read (they index the config's
    non-empty lines by the header's file line number): `bench CONFIG` reads the same line, so it
    refuses the section instead of benchmarking what the script would not run."""
    text = CONFIG.read_text(encoding="utf-8")
    header = "===========================train_benchmark_params==========================\n"
    cfg = write(tmp_path / "train_infer_python.txt", text + "\n" + header + "batch_size:8\nfp_items:fp32\nepoch:2\n")
    n = line_of(cfg, "fp_items:")
    err = refused("bench", cfg, "--dry-run", "--out", tmp_path / "b", names=(f"reads line {n} as `batch_size`",))
    assert err.startswith(f"{cfg}:{n}:1: error: field `train_benchmark_params.batch_size`"), err
    # Without the blank line, the same section is read as written.
    ok = write(tmp_path / "ok" / "train_infer_python.txt", text + header + "batch_size:8\nfp_items:fp32\nepoch:2\n")
    code, out, err = cli("bench", ok, "--dry-run", "--out", tmp_path / "b2")
    assert code == 0, err
