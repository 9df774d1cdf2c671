"""``perfmodel kernels --report FILE.md``: fit tables and one measured-vs-fitted PNG per family.

Each plot shows, for every GPU, held-out measured latency against the fitted latency of the same shapes (log
axes; the diagonal is a perfect fit, the dotted lines +-10%), so a reader sees where the curve fits and where
it does not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..fileio import write_figure, write_whole
from .fitting import Fit
from .loader import LICENSE_NOTICE

PLOT_POINTS = 4000
"""Held-out points drawn per GPU and family (a deterministic subsample)."""


def _plot(fam: str, fits: list[Fit], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 5.5))
    by_gpu: dict = {}
    for f in fits:
        by_gpu.setdefault(f.gpu, []).append(f)
    lo, hi = np.inf, 0.0
    for gpu, fs in by_gpu.items():
        meas = np.concatenate([f.measured for f in fs])
        pred = np.concatenate([f.predicted for f in fs])
        if not meas.size:
            continue
        idx = np.linspace(0, meas.size - 1, min(PLOT_POINTS, meas.size)).astype(int)
        ax.scatter(meas[idx] * 1e3, pred[idx] * 1e3, s=3, alpha=0.35, label=gpu)
        lo, hi = min(lo, meas.min() * 1e3, pred.min() * 1e3), max(hi, meas.max() * 1e3, pred.max() * 1e3)
    if hi > 0:
        xs = np.array([lo, hi])
        ax.plot(xs, xs, "k-", lw=0.8)
        ax.plot(xs, xs * 1.1, "k:", lw=0.6)
        ax.plot(xs, xs / 1.1, "k:", lw=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured latency, us (held-out shapes)")
    ax.set_ylabel("fitted closed form, us")
    ax.set_title(f"kernel family {fam}: held-out shapes")
    ax.legend(markerscale=4, fontsize=8)
    fig.tight_layout()
    write_figure(fig, path, dpi=110)
    plt.close(fig)


def write_report(fits: list[Fit], rows, out: str | Path, data_dir: str) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# Kernel fits", "",
             f"Closed-form kernel latency curves fitted on the measured kernel tables in `{data_dir}` "
             "(`perfmodel kernels --report`). Each family's curve and parameters are documented in "
             "`perfmodel/kernels/<family>.py`. Held-out = whole shape groups never seen by the fit.", "",
             f"Data: {LICENSE_NOTICE}", "", "## Held-out median |error| per family and GPU", "",
             "| family | gpu | held-out rows | median abs err % |", "|---|---|---:|---:|"]
    lines += [f"| {fam} | {gpu} | {n} | {err:.1f} |" for fam, gpu, n, err in rows]
    fams = []
    for fam, *_ in rows:
        if fam not in fams:
            fams.append(fam)
    for fam in fams:
        fs = [f for f in fits if f.family == fam]
        png = out.with_name(f"{out.stem}-{fam}.png")
        _plot(fam, fs, png)
        names = list(fs[0].params)
        lines += ["", f"## {fam}", "", f"![{fam}]({png.name})", "",
                  "| gpu | engine | variant | train | held-out | err % | " + " | ".join(names) + " |",
                  "|---|---|---|---:|---:|---:|" + "---:|" * len(names)]
        for f in fs:
            vals = " | ".join(f"{f.params.get(n, float('nan')):.4g}" for n in names)
            lines.append(f"| {f.gpu} | {f.engine} | `{f.variant}` | {f.n_train} | {f.n_held_out} | "
                         f"{f.median_abs_err_pct:.1f} | {vals} |")
    write_whole(out, "\n".join(lines) + "\n")
    return out
