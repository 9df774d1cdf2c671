"""Summary text, the predicted-vs-measured plot and the Markdown validation report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

TARGETS = {"median_abs_error_pct": ("<=", 15.0), "within_25pct": (">=", 0.80), "inside_band": (">=", 0.80)}


def summary_text(s: dict) -> str:
    return (f"{s['predicted']}/{s['rows']} rows predicted ({s['unsupported']} unsupported); "
            f"median |error| {s['median_abs_error_pct']:.1f}%, mean |error| {s['mean_abs_error_pct']:.1f}%, "
            f"within ±25%: {s['within_25pct']:.0%}, measured inside band: {s['inside_band']:.0%}")


def table_text(df: pd.DataFrame) -> str:
    cols = ["id", "hardware", "model", "metric", "measured", "predicted", "low", "high", "error_pct", "status"]
    return df[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}")


def plot(df: pd.DataFrame, path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ok = df[df["status"] == "ok"]
    fig, ax = plt.subplots(figsize=(6.5, 6))
    markers = "osD^v<>ph*X"
    for i, (hw, g) in enumerate(ok.groupby("hardware")):
        yerr = np.vstack([g["predicted"] - g["low"], g["high"] - g["predicted"]]).clip(0)
        ax.errorbar(g["measured"], g["predicted"], yerr=yerr, fmt=markers[i % len(markers)], label=hw,
                    capsize=2, alpha=0.85)
        for _, r in g.iterrows():
            ax.annotate(r["id"], (r["measured"], r["predicted"]), fontsize=6, xytext=(3, 3),
                        textcoords="offset points")
    lo = min(ok["measured"].min(), ok["low"].min()) * 0.7
    hi = max(ok["measured"].max(), ok["high"].max()) * 1.4
    x = np.array([lo, hi])
    ax.plot(x, x, "k-", lw=0.8)
    ax.plot(x, x * 1.25, "k:", lw=0.6)
    ax.plot(x, x * 0.75, "k:", lw=0.6)
    ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi), xlabel="measured", ylabel="predicted",
           title="perfmodel: predicted vs measured (bars: 5-95% band; dotted: ±25%)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _md_table(df: pd.DataFrame) -> str:
    cols = ["id", "kind", "hardware", "model", "engine", "metric", "measured", "predicted", "low", "high",
            "error_pct", "status"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if isinstance(v, float):
                v = "" if np.isnan(v) else (f"{v:+.1f}" if c == "error_pct" else f"{v:.4g}")
            cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_report(df: pd.DataFrame, s: dict, path: Path, data_file: str, recs=None, discussion: str | None = None):
    """reports/validation.md plus reports/validation.csv and reports/validation.png beside it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = path.with_suffix(".csv"), path.with_suffix(".png")
    df.to_csv(csv_path, index=False, float_format="%.6g")
    plot(df, png_path)
    met = []
    for k, (op, t) in TARGETS.items():
        v = s[k]
        good = v <= t if op == "<=" else v >= t
        shown = f"{v:.1f}%" if k.endswith("pct") else f"{v:.0%}"
        tgt = f"{t:.0f}%" if k.endswith("pct") else f"{t:.0%}"
        met.append(f"| {k} | {shown} | {op} {tgt} | {'met' if good else 'NOT met'} |")
    ok = df[df["status"] == "ok"].copy()
    ok["abs"] = ok["error_pct"].abs()
    worst = ok.sort_values("abs", ascending=False).head(6)
    notes = {r.id: r.notes for r in (recs or [])}
    worst_lines = [f"- **{r.id}** ({r.hardware}, {r.model}, {r.metric}): measured {r.measured:.4g}, predicted "
                   f"{r.predicted:.4g} ({r.error_pct:+.0f}%), band [{r.low:.4g}, {r.high:.4g}]. Setup: "
                   f"{notes.get(r.id, '')}" + (f" Model note: {r.note}." if r.note else "")
                   for r in worst.itertuples()]
    unsup = df[df["status"] != "ok"]
    text = f"""# Validation: predicted vs measured

Regenerate with one command (after `perfmodel calibrate`):

    perfmodel validate {data_file} --report {path}

Data: `{data_file}` ({s['rows']} records). Profiles: the catalog profile of each row's engine
(`perfmodel.validation.predict_rows.ENGINE_PROFILE`; `deepseek` -> `sglang`, `tilert` -> `trtllm`).
Band: {200} Monte Carlo draws per row (seed 0), every profile parameter uniform in its [low, high] range,
propagated through the compiled equations; low/high are the 5th/95th percentiles. Rules for blank cells and for
frontier/ratio rows: the module docstring of `perfmodel/validation/predict_rows.py`.

**These are in-sample numbers**: the profiles were fitted on these same records (few shared parameters per
engine family, none per row), so they overstate accuracy on unseen data.

## Summary

{summary_text(s)}

| statistic | value | target (issue 6) | |
|---|---|---|---|
{chr(10).join(met)}

![predicted vs measured]({png_path.name})

Per-row CSV: [{csv_path.name}]({csv_path.name}).

## Rows

{_md_table(df)}

## Worst rows

{chr(10).join(worst_lines)}

{"## Unsupported rows" + chr(10) + chr(10) + chr(10).join(f"- {r.id}: {r.status}" for r in unsup.itertuples()) if len(unsup) else "No row is unsupported."}

## Discussion

{discussion or DISCUSSION}
"""
    path.write_text(text)
    return path


DISCUSSION = "(see reports/validation.md discussion section, written after the calibration run)"
