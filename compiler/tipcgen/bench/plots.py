"""The report's plots (matplotlib, Agg backend): throughput vs processes with the ideal line,
and the loss curve of every run; each written as PNG and SVG.

matplotlib is imported here only, when a report is made, so the CLI starts fast. The SVGs keep
their text as text (`svg.fonttype: none`) and carry no date, and the ideal line is the SVG
group `ideal-line`, so a reader (or a test) can find it.
"""

from __future__ import annotations

import io
from typing import Any

from tipcgen.emit.bench_report import passed, speedup_rows

IDEAL_GID = "ideal-line"
_DPI = 100
_SIZE = (7.0, 4.5)  # inches: 700 x 450 pixels at _DPI
# What one plot draws, so many or long records cannot make it slow or huge (the table has them
# all): the first groups / runs in the table's order, each curve thinned to about 2 points a pixel.
MAX_GROUPS = 12
MAX_RUNS = 24
MAX_DRAWN_POINTS = 1400


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # record text is text: `$...$` in a model name is no mathtext (an unknown symbol was a crash)
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "tipcgen", "font.size": 10, "text.parse_math": False})
    return plt


def _save(fig: Any, stem: str) -> dict[str, bytes]:
    """The figure as PNG and SVG, in memory: nothing is written before every plot is drawn."""
    files = {}
    for ext, meta in (("png", {"Software": None}), ("svg", {"Date": None, "Creator": None})):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=_DPI, metadata=meta)
        files[f"{stem}.{ext}"] = buf.getvalue()
    return files


def _label(text: str) -> str:
    return text if not text.startswith("_") else " " + text  # matplotlib hides labels starting with `_`


def _more(title: str, shown: int, total: int) -> str:
    return title if shown >= total else f"{title} (first {shown} of {total})"


def batch_name(r: dict) -> str:
    """The one naming of a run's batch in every plot and legend: the global batch (all
    processes together), as the speed-up table says it; run ids say the per-card batch."""
    return f"global batch {r['global_batch_size']:g}"


def run_name(r: dict) -> str:
    return f"{r['model']} {r['fp_item']} {batch_name(r)} {r['device_num']}"


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_STYLES = ("-", "--", ":", "-.")


def throughput_plot(records: list[dict], stem: str) -> dict[str, bytes]:
    """Throughput vs processes, one series per group (model, device, precision, global batch),
    with the ideal line: the baseline's throughput times the ratio of processes. The baseline is
    drawn once (a black diamond); the one-node and several-node series start from it."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=_SIZE)
    groups: dict[int, list] = {}
    for row in speedup_rows(records):
        groups.setdefault(id(row.baseline), []).append(row)
    top = 1
    for g, rows in enumerate(list(groups.values())[:MAX_GROUPS]):
        base = rows[0].baseline
        label = _label(f"{base['model']} {base['fp_item']} {batch_name(base)}")
        xs = [r.record["workers"] for r in rows]
        color = f"C{g % 10}"
        # processes on one node and runs on several nodes are two series, both from the baseline
        for kind, marker, style, keep in (("one node", "o", "-", 1), ("several nodes", "s", "-.", 2)):
            series = [r for r in rows if r.record is base or min(r.record["nodes"], 2) == keep]
            if len(series) > 1:
                pts = [(r.record["workers"], r.record["ips"]) for r in series]
                ax.plot(
                    [x for x, _ in pts],
                    [y for _, y in pts],
                    linestyle=style,
                    marker=marker,
                    markevery=[i for i, r in enumerate(series) if r.record is not base],
                    color=color,
                    markersize=7,
                    label=f"{label}: measured, {kind}",
                )
        ax.plot([base["workers"]], [base["ips"]], "D", color="black", markersize=8, zorder=5,
                label=f"{label}: baseline {base['device_num']}")  # fmt: skip
        for r in rows:
            ax.annotate(
                f"{r.record['device_num']} ({r.efficiency:.2f})",
                (r.record["workers"], r.record["ips"]),
                textcoords="offset points",
                xytext=(6, -12),
                fontsize=9,
            )
        top = max(top, *xs)
        span = sorted({base["workers"], *xs})
        (ideal,) = ax.plot(
            span,
            [base["ips"] * x / base["workers"] for x in span],
            "--",
            color="gray",
            label=f"{label}: ideal (linear)",
        )
        ideal.set_gid(IDEAL_GID)
    ax.set_xlabel("processes (all nodes)")
    ax.set_ylabel(f"throughput ({(records[0].get('speed_unit') if records else None) or 'samples/s'})")
    ax.set_title(_more("Throughput vs processes (label: N nodes C processes, efficiency)", MAX_GROUPS, len(groups)))
    if top <= 16:
        ax.set_xticks(range(1, top + 1))
    else:  # a tick per process count would pile up
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    if groups:  # no passed run: no series to name
        ax.legend(fontsize=9, loc="lower right", framealpha=0.95)
    fig.tight_layout()
    try:
        return _save(fig, stem)
    finally:
        plt.close(fig)


def loss_plot(records: list[dict], stem: str) -> dict[str, bytes]:
    """Each run's loss per step against the samples seen (steps x global batch), so runs of
    different process counts share the x axis. Runs of one model often log the same losses:
    each curve has its own line style and marker, its markers on other points than its
    neighbours', so a curve lying exactly on another still shows."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=_SIZE)
    runs = [r for r in passed(records) if r.get("loss_curve")]
    drawn = 0
    chosen = sorted(runs, key=lambda r: (r["workers"], r["nodes"], str(r["run_id"])))[:MAX_RUNS]
    for i, r in enumerate(chosen):
        curve = list(r["loss_curve"])
        if len(curve) > MAX_DRAWN_POINTS:
            curve = curve[:: -(-len(curve) // MAX_DRAWN_POINTS)] + curve[-1:]
        gbs = float(r["global_batch_size"])
        every = max(1, len(curve) // 8) * len(chosen)  # about 8 markers a curve, staggered per run
        ax.plot(
            [s * gbs for s, _ in curve],
            [v for _, v in curve],
            label=_label(run_name(r)),
            linewidth=1.4,
            linestyle=_STYLES[i % len(_STYLES)],
            marker=_MARKERS[i % len(_MARKERS)],
            markersize=6,
            markevery=(min(i * max(1, every // len(chosen)), max(0, len(curve) - 1)), every),
            fillstyle="none" if i % 2 else "full",
        )
        drawn += 1
    if not drawn:
        ax.text(0.5, 0.5, "no loss values in the records", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("samples seen (steps x global batch)")
    ax.set_ylabel("loss (rank 0, per logged step)")
    ax.set_title(_more("Loss curves", drawn, len(runs)))
    ax.grid(True, alpha=0.3)
    if drawn:
        ax.legend(fontsize=9, framealpha=0.95)
    fig.tight_layout()
    try:
        return _save(fig, stem)
    finally:
        plt.close(fig)


def plot_files(records: list[dict]) -> dict[str, bytes]:
    """{file name: bytes} of both plots, each as PNG and SVG."""
    return {**throughput_plot(records, "throughput"), **loss_plot(records, "loss")}
