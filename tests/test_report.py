"""Fast tier: `tipcgen report` (seed 003's speed-up table, the plots) and `tipcgen build
--results`, on hand-written run records; `tipcgen bench --dry-run` and the spec's bench fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import run_argv
from tipcgen.emit.bench_report import section, speedup_rows, table

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "specs" / "tiny_rec.yml"


def record(run_id, workers, nodes, ips, train_time, **kw):
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
        "train_time": train_time,
        "accuracy": None,
        "loss_curve": [[1, 70.0], [2, 30.0], [3, 19.0], [4, 18.0]],
        "finished_at": "2026-01-01T00:00:00+00:00",
    }
    r.update(kw)
    return r


RECORDS = [
    record("tiny_rec_bs16_fp32_mp_N2C2", 2, 2, 480.0, 1.8),
    record("tiny_rec_bs32_fp32_sp_N1C1", 1, 1, 300.0, 2.9, accuracy=0.667),
    record("tiny_rec_bs16_fp32_mp_N1C2", 2, 1, 390.0, 2.3, accuracy=0.67),
    record("tiny_rec_bs8_fp32_mp_N1C4", 4, 1, 0.0, None, status="failed"),
]


def test_speedup_rows_take_the_fewest_processes_as_baseline():
    rows = speedup_rows(RECORDS)
    assert [r.record["device_num"] for r in rows] == ["N1C1", "N1C2", "N2C2"]  # the failed run is left out
    assert all(r.baseline["device_num"] == "N1C1" for r in rows)
    assert [round(r.speedup, 3) for r in rows] == [1.0, 1.3, 1.6]
    assert [round(r.efficiency, 3) for r in rows] == [1.0, 0.65, 0.8]


def test_zh_table_in_seed_003s_shape():
    assert table(RECORDS, "zh").splitlines() == [
        "| 模型 | 精度 | 全局 batch | 配置 | 基线耗时/精度 | 耗时/精度 | 吞吐 (samples/s) | 加速比 | 效率 |",
        "|:---:|:---:|:---:|:---:|:---:|:---:|:---:|:---:|:---:|",
        "| tiny_rec | fp32 | 32 | 1机1进程 (N1C1) | 2.9s/66.7% | 2.9s/66.7% | 300.0 | **1.00** | 1.00 |",
        "| tiny_rec | fp32 | 32 | 1机2进程 (N1C2) | 2.9s/66.7% | 2.3s/67.0% | 390.0 | **1.30** | 0.65 |",
        "| tiny_rec | fp32 | 32 | 2机1进程 (N2C2) | 2.9s/66.7% | 1.8s/- | 480.0 | **1.60** | 0.80 |",
    ]


def test_en_section_notes_and_failed_runs():
    text = section(RECORDS, "en")
    assert text.startswith("## Speed and speed-up\n\n| model | precision | global batch | setup |")
    assert (
        "| tiny_rec | fp32 | 32 | 2 node(s) x 1 process(es) (N2C2) | 2.9s/66.7% | 1.8s/- | 480.0 | **1.60** | 0.80 |"
        in text
    )
    assert "the first 7 warm-up steps skipped" in text
    assert "Runs that did not pass (left out of the table): `tiny_rec_bs8_fp32_mp_N1C4`" in text
    assert section(list(reversed(RECORDS)), "en") == text  # order of the inputs does not matter


def test_convergence_records_are_verdicts_not_rows():
    conv = record(
        "tiny_rec_bs16_fp32_sp_N1C1_converge",
        1,
        1,
        290.0,
        17.0,
        convergence={
            "verdict": "FAIL",
            "metric": "loss",
            "target": 1.0,
            "direction": "min",
            "within": {"epochs": 25},
            "best_value": 73.9,
        },
    )
    text = section([*RECORDS, conv], "zh")
    assert "_converge |" not in text
    assert "- `tiny_rec_bs16_fp32_sp_N1C1_converge`：FAIL（loss <= 1.0，25 个 epochs 内；最优值 73.9）" in text


def _write(tmp_path: Path, records) -> list[str]:
    paths = []
    for r in records:
        p = tmp_path / "runs" / f"{r['run_id']}.json"
        p.parent.mkdir(exist_ok=True)
        p.write_text(json.dumps(r), encoding="utf-8")
        paths.append(str(p))
    return paths


def test_report_command_writes_markdown_and_plots(tmp_path):
    from PIL import Image

    _write(tmp_path, RECORDS)
    out = tmp_path / "rep"
    proc = run_argv(
        ["report", str(tmp_path / "runs"), "--out", str(out), "--lang", "en"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "| tiny_rec | fp32 | 32 | 1 node(s) x 2 process(es) (N1C2) |" in proc.stdout
    md = (out / "report.en.md").read_text(encoding="utf-8")
    assert md.startswith("# Speed and speed-up\n") and "![throughput.png](<throughput.png>)" in md
    for name in ("throughput", "loss"):
        with Image.open(out / f"{name}.png") as img:
            assert img.size == (700, 450)
            rgb = img.convert("RGB")
            colors = rgb.getcolors(maxcolors=1 << 16)
            assert colors is None or len(colors) > 50, f"{name}.png looks blank"
            assert rgb.getextrema() != ((255, 255), (255, 255), (255, 255))
    svg = (out / "throughput.svg").read_text(encoding="utf-8")
    assert 'id="ideal-line"' in svg  # the ideal line is drawn, under its own id...
    assert "ideal (linear)" in svg  # ...and labelled in the legend
    assert "N2C2 (0.80)" in svg  # points carry their efficiency
    # the same records give the same SVG (no date, fixed hash salt)
    again = tmp_path / "rep2"
    run_argv(
        ["report", *_write(tmp_path, RECORDS), "--out", str(again), "--lang", "en"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert (again / "throughput.svg").read_bytes() == (out / "throughput.svg").read_bytes()


def test_report_refuses_a_record_without_the_fields_it_needs(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"model": "x", "ips": 1.0}), encoding="utf-8")
    proc = run_argv(
        ["report", str(bad), "--no-plots", "--out", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert (
        f"{bad}: error: run record without run_id, workers, nodes, device_num, fp_item, global_batch_size"
        in proc.stderr
    )
    broken = tmp_path / "broken.json"
    broken.write_text("{\n  oops", encoding="utf-8")
    proc = run_argv(["report", str(broken), "--no-plots"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and f"{broken}:2:3: error: not a JSON run record" in proc.stderr


def test_build_results_embeds_the_table_and_nothing_without(tmp_path):
    paths = _write(tmp_path, RECORDS)
    doc = "tiny_rec/test_tipc/docs/test_train_inference_python.md"
    with_results, plain = tmp_path / "with", tmp_path / "plain"
    for out, extra in ((with_results, ["--results", str(tmp_path / "runs")]), (plain, [])):
        proc = run_argv(["build", str(SPEC), "--out", str(out), *extra], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
    text = (with_results / doc).read_text(encoding="utf-8")
    base = (plain / doc).read_text(encoding="utf-8")
    assert text.startswith(base)  # the report comes at the end, the rest is untouched
    assert text[len(base) :] == "\n" + section(RECORDS, "zh", level=3)
    assert (plain / doc).read_bytes() == (REPO / "generated" / doc).read_bytes()
    # check agrees with build, given the same results
    files = [a for p in paths for a in ("--results", p)]  # the option repeats, or names a directory
    proc = run_argv(
        ["check", str(SPEC), "--out", str(with_results), *files], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_bench_dry_run_plans_one_process_two_processes_and_two_nodes(tmp_path):
    proc = run_argv(
        ["bench", str(SPEC), "--dry-run", "--python", "py3", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [ln for ln in lines if not ln.startswith(" ")] == [
        "tiny_rec_bs32_fp32_sp_N1C1:",
        "tiny_rec_bs16_fp32_mp_N1C2:",
        "tiny_rec_bs16_fp32_mp_N2C2:",
    ]
    sp, mp, node0, node1 = (ln.strip() for ln in lines if ln.startswith(" "))
    assert sp.startswith("py3 tools/train.py -c configs/tiny_rec.yml -o ")
    assert "Train.loader.batch_size_per_card=32" in sp and "Global.epoch_num=4" in sp
    assert sp.endswith(" Global.print_batch_step=1")  # the bench's overrides come last
    assert f"--log_dir={tmp_path}/logs/tiny_rec_bs16_fp32_mp_N1C2/launch --nproc_per_node=2 tools/train.py" in mp
    assert "Train.loader.batch_size_per_card=16" in mp
    for node, ip in ((node0, "127.0.0.2"), (node1, "127.0.0.3")):
        assert "--ips=127.0.0.2,127.0.0.3 --nproc_per_node=1" in node and f"--host={ip} " in node
        assert "Train.loader.batch_size_per_card=16" in node


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("batch_sizes: [32]", "global batch size 33 does not split over the 2 processes of N1C2"),
        ("- {run_mode: sp}", "`sp` is one process on one node"),
        ("max_epochs: 4", "give `max_epochs` or `max_iters`"),
        ("suite: normal", "bench names suite 'nope'; the suites are normal, multiproc, fleet"),
    ],
)
def test_bench_fields_are_validated_with_their_line(tmp_path, edit, message):
    replacement = {
        "batch_sizes: [32]": "batch_sizes: [33]",
        "- {run_mode: sp}": "- {run_mode: sp, procs: 2}",
        "max_epochs: 4": "max_iters: 4\n  max_epochs: 4",
        "suite: normal": "suite: nope",
    }[edit]
    text = SPEC.read_text(encoding="utf-8")
    bad = tmp_path / "bad.yml"
    bad.write_text(text.replace(edit, replacement, 1), encoding="utf-8")
    proc = run_argv(["validate", str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("bench:"))
    assert f"{bad}:" in proc.stderr and message in proc.stderr, proc.stderr
    assert any(f"{bad}:{n}:" in proc.stderr for n in range(line, line + 16)), proc.stderr


def test_bench_of_a_legacy_config_reads_its_train_benchmark_params(tmp_path):
    cfg = tmp_path / "train_infer_python.txt"
    cfg.write_text(
        (REPO / "generated/tiny_rec/test_tipc/configs/tiny_rec/train_infer_python.txt").read_text(encoding="utf-8")
        + "===========================train_benchmark_params==========================\n"
        "batch_size:8|24\nfp_items:fp32|fp16\nepoch:2\n--profiler_options:null\n",
        encoding="utf-8",
    )
    proc = run_argv(["bench", str(cfg), "--dry-run"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    heads = [ln for ln in proc.stdout.splitlines() if not ln.startswith(" ")]
    assert heads == [f"tiny_rec_bs{bs}_{fp}_sp_N1C1:" for bs in (8, 24) for fp in ("fp32", "fp16")]
    commands = [ln.split() for ln in proc.stdout.splitlines() if ln.startswith(" ")]
    assert all("Global.epoch_num=2" in c for c in commands)
    assert [c.count("Global.auto_cast=amp") for c in commands] == [0, 1, 0, 1]  # fp16 -> amp, as upstream
    cfg.write_text(cfg.read_text(encoding="utf-8").split("=====train_benchmark")[0], encoding="utf-8")
    proc = run_argv(["bench", str(cfg), "--dry-run"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "no train_benchmark_params section" in proc.stderr


def test_force_sets_a_runners_mode_table_text_to_the_number():
    from tipcgen.bench.matrix import force

    argv = ["python3", "train.py", "-o", "bs=lite_train_lite_infer=16", "-o", "Global.epochs=2"]
    assert force(argv, {"-o bs": "8", "-o Global.epochs": "1", "-o lr": "0"}) == [
        "python3", "train.py", "-o", "bs=8", "-o", "Global.epochs=1", "-o", "lr=0",
    ]  # fmt: skip


def _figure(monkeypatch, plot, records):
    """The matplotlib figure a plot function draws (captured before it is saved and closed)."""
    from tipcgen.bench import plots

    got = []
    monkeypatch.setattr(plots, "_save", lambda fig, stem: got.append(fig) or {})
    plot(records, "x")
    return got[0].axes[0]


def _marked(line) -> set:
    """The data points where a line draws its marker."""
    xs, ys = line.get_xdata(), line.get_ydata()
    if line.get_marker() in ("None", "", None):
        return set()
    every = line.get_markevery()
    if every is None:
        idx = range(len(xs))
    elif isinstance(every, tuple):
        idx = range(every[0], len(xs), every[1])
    else:
        idx = every
    return {(float(xs[i]), float(ys[i])) for i in idx}


def test_plots_draw_the_baseline_once_and_every_loss_curve_visibly(monkeypatch):
    from tipcgen.bench.plots import loss_plot, throughput_plot

    ax = _figure(monkeypatch, throughput_plot, RECORDS)
    marks = [p for line in ax.get_lines() for p in _marked(line)]
    assert marks.count((1.0, 300.0)) == 1  # the N1C1 baseline: one marker, not a circle and a square
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert all("global batch 32" in label for label in labels) and ax.get_legend().get_texts()[0].get_fontsize() >= 9

    # the three runs log the same losses: each curve still shows (own style, markers on own points)
    ax = _figure(monkeypatch, loss_plot, RECORDS)
    lines = ax.get_lines()
    assert len(lines) == 3 and len({(ln.get_linestyle(), ln.get_marker()) for ln in lines}) == 3
    marked = [_marked(ln) for ln in lines]
    assert all(marked) and not (marked[0] & marked[1] or marked[0] & marked[2] or marked[1] & marked[2])
    names = [t.get_text() for t in ax.get_legend().get_texts()]
    assert names == [f"tiny_rec fp32 global batch 32 {d}" for d in ("N1C1", "N1C2", "N2C2")]  # no "bs16"
