"""The report's plots (matplotlib, Agg backend): throughput vs processes with the ideal line,
and the loss curve of every run; each written as PNG and SVG.

matplotlib is imported here only, when a report is made, so the CLI starts fast. The SVGs keep
their text as text (`svg.fonttype: none`) and carry no date, and the ideal line is the SVG
group `ideal-line`, so a reader (or a test) can find it.
"""

from __future__ import annotations

import os
from typing import Any

from tipcgen.bench.report import passed, speedup_rows

IDEAL_GID = "ideal-line"
_DPI = 100
_SIZE = (7.0, 4.5)  # inches: 700 x 450 pixels at _DPI


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "tipcgen", "font.size": 10})
    return plt


def _save(fig: Any, stem: str) -> list[str]:
    paths = []
    for ext, meta in (("png", {"Software": None}), ("svg", {"Date": None, "Creator": None})):
        path = f"{stem}.{ext}"
        fig.savefig(path, dpi=_DPI, metadata=meta)
        paths.append(path)
    return paths


def throughput_plot(records: list[dict], stem: str) -> list[str]:
    """Throughput vs processes, one series per group (model, device, precision, global batch),
    with the ideal line: the baseline's throughput times the ratio of processes."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=_SIZE)
    groups: dict[int, list] = {}
    for row in speedup_rows(records):
        groups.setdefault(id(row.baseline), []).append(row)
    top = 1
    for rows in groups.values():
        base = rows[0].baseline
        label = f"{base['model']} {base['fp_item']} global batch {base['global_batch_size']:g}"
        xs = [r.record["workers"] for r in rows]
        # processes on one node and runs on several nodes are two series, both from the baseline
        for kind, marker, keep in (("one node", "o-", 1), ("several nodes", "s-", 2)):
            series = [r for r in rows if r.record is base or min(r.record["nodes"], 2) == keep]
            if len(series) > 1 or keep == 1:
                pts = [(r.record["workers"], r.record["ips"]) for r in series]
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker, label=f"{label}: measured, {kind}")
        for r in rows:
            ax.annotate(
                f"{r.record['device_num']} ({r.efficiency:.2f})",
                (r.record["workers"], r.record["ips"]),
                textcoords="offset points",
                xytext=(6, -12),
                fontsize=8,
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
    ax.set_title("Throughput vs processes (label: N nodes C processes, efficiency)")
    ax.set_xticks(range(1, top + 1))
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    try:
        return _save(fig, stem)
    finally:
        plt.close(fig)


def loss_plot(records: list[dict], stem: str) -> list[str]:
    """Each run's loss per step against the samples seen (steps x global batch), so runs of
    different process counts share the x axis."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=_SIZE)
    drawn = 0
    for r in sorted(passed(records), key=lambda r: (r["workers"], r["nodes"], str(r["run_id"]))):
        curve = r.get("loss_curve") or []
        if not curve:
            continue
        gbs = float(r["global_batch_size"])
        ax.plot([s * gbs for s, _ in curve], [v for _, v in curve], label=str(r["run_id"]), linewidth=1.2)
        drawn += 1
    if not drawn:
        ax.text(0.5, 0.5, "no loss values in the records", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("samples seen (steps x global batch)")
    ax.set_ylabel("loss (rank 0, per logged step)")
    ax.set_title("Loss curves")
    ax.grid(True, alpha=0.3)
    if drawn:
        ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        return _save(fig, stem)
    finally:
        plt.close(fig)


def write_plots(records: list[dict], out: str) -> list[str]:
    os.makedirs(out, exist_ok=True)
    return throughput_plot(records, os.path.join(out, "throughput")) + loss_plot(records, os.path.join(out, "loss"))
