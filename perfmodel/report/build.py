"""Build the claims report: one evaluation per system (``claims.CurveStore``) shared by every claim and plot.

Writes into ``out`` (default reports/): ``claims.md``, ``claims/*.png`` and ``claims/*.csv``. Every figure has
a CSV with the same name; every number in the Markdown is in one of the CSVs.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .. import catalog, progress
from ..analyses.deployments import DeploymentSpace
from ..claims import CurveStore, Side
from ..claims.check import DEFAULT_MODELS, json_safe
from ..claims.curves import AXES, AXIS_TEXT, curve_end, read
from ..fileio import write_figure, write_whole
from .parallel import ClaimChecks, pool

SYSTEMS = ("gb200-nvl72", "gb300-nvl72", "vr200-nvl72")
NAMES = {"gb200-nvl72": "GB200 NVL72", "gb300-nvl72": "GB300 NVL72", "vr200-nvl72": "Vera Rubin NVL72"}
WORKLOAD = "agentx"
PROFILE = "vllm"
CURVE_COLS = ["tps_per_user", "tps_per_user_e2e", "total_tps_per_gpu", "output_tps_per_gpu", "total_tps_per_mw",
              "total_tokens_per_usd", "tpot_ms", "ttft_ms", "intvty", "tput_per_gpu", "output_tput_per_gpu",
              "serving", "gpus", "tp", "dp", "ep", "spec_tokens", "kv_host_tier", "batch", "bound", "sessions_per_gpu",
              "evicted_share"]
Y_LABEL = "total tokens/s per GPU\n(input incl. cached prefix + output)"


def _fig(ncols=1, h=4.2):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(5.2 * ncols + 1, h), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots(1, ncols, squeeze=False)[0]


def _style_log_axes(ax, xlabel: str, ylabel: str, title: str, ylabel_size: int = 8) -> None:
    """Log-log axes with the report's label sizes, grid and legend."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel, fontsize=7)
    ax.set_ylabel(ylabel, fontsize=ylabel_size)
    ax.set_title(title, fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def _table(rows: list[pd.DataFrame], d: Path, name: str) -> pd.DataFrame:
    """Concatenate a figure's rows and write them as its CSV (every figure has its CSV)."""
    df = pd.concat(rows, ignore_index=True)
    write_whole(d / name, df.to_csv(index=False))
    return df


def _labelled(df: pd.DataFrame, **labels) -> pd.DataFrame:
    """A copy of ``df`` with the label columns first (the CSV rows say which curve they belong to)."""
    return pd.concat([pd.DataFrame(labels, index=df.index), df], axis=1)


def _frontiers(store: CurveStore, d: Path, md: list, figs: list) -> pd.DataFrame:
    rows = []
    for m in DEFAULT_MODELS:
        fig, axes = _fig(2)
        for hw in SYSTEMS:
            side = Side(hw, PROFILE)
            for ax, axis in zip(axes, ("itl", "e2e")):
                env = store.envelope(side, m, WORKLOAD, axis, "total_tps_per_gpu")
                rows.append(_labelled(env[[c for c in CURVE_COLS if c in env]], model=m, hardware=hw,
                                      profile=PROFILE, axis=axis))
                x = env[AXES[axis]].to_numpy()
                line, = ax.plot(x, env["total_tps_per_gpu"], marker="o", ms=2, label=NAMES[hw])
                ax.axvline(x.max(), color=line.get_color(), ls=":", lw=0.8)
        for ax, axis in zip(axes, ("itl", "e2e")):
            _style_log_axes(ax, f"interactivity, {AXIS_TEXT[axis]}", Y_LABEL,
                            f"{m}, {WORKLOAD}, {PROFILE} profile, nvfp4 - {axis} axis")
        fn = f"frontier-{m}.png"
        write_figure(fig, d / fn)
        figs.append(fn)
        md.append(f"![frontier {m}](claims/{fn})")
    return _table(rows, d, "frontiers.csv")


def _ratios(store: CurveStore, d: Path, md: list, figs: list) -> pd.DataFrame:
    rows = []
    fig, axes = _fig(2)
    for ax, base in zip(axes, ("gb300-nvl72", "gb200-nvl72")):
        for m in DEFAULT_MODELS:
            ea = store.envelope(Side("vr200-nvl72", PROFILE), m, WORKLOAD, "itl", "total_tps_per_gpu")
            eb = store.envelope(Side(base, PROFILE), m, WORKLOAD, "itl", "total_tps_per_gpu")
            lo = min(ea["tps_per_user"].min(), eb["tps_per_user"].min())
            hi = min(curve_end(ea, "itl"), curve_end(eb, "itl"))
            g = np.geomspace(lo, hi, 40)
            ya, yb = read(ea, g, "itl", "total_tps_per_gpu"), read(eb, g, "itl", "total_tps_per_gpu")
            rows.append(pd.DataFrame({"model": m, "a": "vr200-nvl72", "b": base, "profile": PROFILE,
                                      "tps_per_user": g, "a_total_tps_per_gpu": ya, "b_total_tps_per_gpu": yb,
                                      "ratio": ya / yb}))
            ax.plot(g, ya / yb, label=m)
        ax.axhline(1, color="grey", lw=0.8)
        _style_log_axes(ax, f"interactivity, {AXIS_TEXT['itl']}",
                        f"ratio Vera Rubin / {NAMES[base]}\n(total tokens/s per GPU)",
                        f"Vera Rubin NVL72 / {NAMES[base]}, {WORKLOAD}, {PROFILE} on both")
    write_figure(fig, d / "ratios.png")
    figs.append("ratios.png")
    return _table(rows, d, "ratios.csv")


def _attribution(store: CurveStore, d: Path, md: list, figs: list) -> pd.DataFrame:
    from ..analyses import attribute
    from ..plots.waterfall import waterfall_plot
    m = "deepseek-v4.1-flash"
    a = Side("gb300-nvl72", PROFILE).system()
    b = Side("vr200-nvl72", PROFILE, host_tier=True, speedup=1.25).system()
    ea = store.envelope(Side("gb300-nvl72", PROFILE), m, WORKLOAD, "itl", "total_tps_per_gpu")
    x = round(0.8 * curve_end(ea, "itl"))
    rows = []
    space = DeploymentSpace(**store.space)
    for tag, kw in (("peak", {"peak": True}), (f"at-{x}", {"at_tps_per_user": float(x)})):
        at = attribute(a, b, m, WORKLOAD, weights=store.weights, space=space, layouts_per_side=6, iterations=8,
                       **kw)
        fn = f"attribution-{m}-{tag}.png"
        waterfall_plot(at, d / fn, title=f"{m}, {WORKLOAD}: total tokens/s per GPU, Vera Rubin (vllm, decode+prefill "
                                         f"kernels x1.25, KV host tier) / GB300 (vllm) at {at.meta['at']}\n"
                                         "blue: hardware groups, orange: software parts; factors multiply to the total")
        figs.append(fn)
        p = _labelled(at.parts, model=m, at=at.meta["at"])
        p["total_ratio"] = at.total_ratio
        rows.append(p)
        md.append(f"![attribution {tag}](claims/{fn})")
    return _table(rows, d, "attribution.csv")


def _whatif(store: CurveStore, d: Path, md: list, figs: list) -> pd.DataFrame:
    from ..analyses import frontier
    m = "deepseek-v4.1-flash"
    rubin_bw = catalog.hardware("vr200-nvl72").value("hbm_bandwidth_tbps")
    space = DeploymentSpace(**store.space)
    new = frontier("gb300-nvl72", m, WORKLOAD, PROFILE, weights=(store.weights,), space=space, refine=0,
                   hw_overrides={"hbm_bandwidth_tbps": rubin_bw})
    curves = {"GB300 NVL72": store.envelope(Side("gb300-nvl72", PROFILE), m, WORKLOAD, "itl", "total_tps_per_gpu"),
              f"GB300 NVL72 with Rubin's HBM bandwidth ({rubin_bw:g} TB/s)": new,
              "Vera Rubin NVL72": store.envelope(Side("vr200-nvl72", PROFILE), m, WORKLOAD, "itl", "total_tps_per_gpu")}
    fig, (ax,) = _fig(1, 4.5)
    rows = []
    for name, env in curves.items():
        ax.plot(env["tps_per_user"], env["total_tps_per_gpu"], marker="o", ms=2, label=name)
        rows.append(_labelled(env[[c for c in CURVE_COLS if c in env]], system=name))
    _style_log_axes(ax, f"interactivity, {AXIS_TEXT['itl']}", Y_LABEL,
                    f"What if GB300 had Rubin's memory bandwidth? {m}, {WORKLOAD}, {PROFILE}, nvfp4")
    write_figure(fig, d / "whatif-gb300-rubin-bandwidth.png")
    figs.append("whatif-gb300-rubin-bandwidth.png")
    return _table(rows, d, "whatif-gb300-rubin-bandwidth.csv")


def _claims_csv(results: list[dict], d: Path) -> pd.DataFrame:
    rows = []
    for r in results:
        m = r.get("model") or {}
        band = m.get("band") or [None, None]
        hw = r.get("hardware_only") or {}
        sens = r.get("sensitivity") or {}
        sv = {k: (v.get("ratio", v.get("value"))) for k, v in sens.items()}
        sysd = r.get("systems") or []
        rows.append({
            "id": r["id"], "kind": r["kind"], "metric": r.get("metric"), "at": r.get("at"),
            "read_on": r.get("read_on"), "claimed": r["claimed"],
            "model_value": m.get("value"), "band_low": band[0], "band_high": band[1],
            "central": m.get("central", m.get("value")),
            "interval_low": (m.get("interval") or [None, None])[0],
            "interval_high": (m.get("interval") or [None, None])[1],
            "claim_over_model": (r.get("distance") or {}).get("multiple"),
            "z_half_widths": (r.get("distance") or {}).get("z"),
            "verdict": r["verdict"], "condition": r.get("condition"),
            "a_share_of_peak": sysd[0].get("share_of_peak") if sysd else None,
            "b_share_of_peak": sysd[1].get("share_of_peak") if len(sysd) > 1 else None,
            "basis": (r.get("basis") or {}).get("text"),
            "would_have_to_be_true": " | ".join(n["text"] for n in r.get("needs") or []) or None,
            "a_max_tps_per_user": sysd[0]["max_tps_per_user"] if sysd else None,
            "b_max_tps_per_user": sysd[1]["max_tps_per_user"] if len(sysd) > 1 else None,
            "beyond_end": any(s.get("beyond_end") for s in sysd),
            "ratio_at_minus10pct": sv.get("x0.9"), "ratio_at_plus10pct": sv.get("x1.1"),
            "hardware_only_ratio": hw.get("ratio"), "software_factor_needed": hw.get("software_factor_needed"),
            "as_measured_ratio": (r.get("as_measured") or {}).get("ratio"),
            "interval_width": m.get("width"),
            "a_end_figure": sysd[0].get("end_figure") if sysd else None,
            "b_end_figure": sysd[1].get("end_figure") if len(sysd) > 1 else None,
            "a_point_tps_per_user": sysd[0].get("point_tps_per_user") if sysd else None,
            "b_point_tps_per_user": sysd[1].get("point_tps_per_user") if len(sysd) > 1 else None,
            "a_value": sysd[0].get("value") if sysd else None,
            "b_value": sysd[1].get("value") if len(sysd) > 1 else None,
            "seed_figures": "; ".join(f"{a['meaning']}: {a['computed']:,.4g} ({a['expression']})"
                                      for a in r.get("arithmetic") or [] if a.get("by") == "seed article") or None,
            "kernel_speedup_needed": (hw.get("software_change") or {}).get("speedup"),
            "reason": r["reason"]})
    df = pd.DataFrame(rows)
    write_whole(d / "claims.csv", df.to_csv(index=False))
    return df


def _assumptions(results) -> list[str]:
    out = []
    for mid in sorted({*DEFAULT_MODELS, *(r.get("model_id") for r in results if r.get("model_id"))}):
        spec = catalog.model(mid)
        if spec.confidence == "low":
            out.append(f"**Model {mid} is low-confidence**: {(spec.confidence_note or '').strip()}")
    for hw in SYSTEMS:      # one line per system: every number not from a datasheet, with its status and range
        spec = catalog.hardware(hw)
        items = [f"{f} {sv.value:g} ({sv.status}" + (f", {sv.low:g}-{sv.high:g}" if sv.low is not None else "") + ")"
                 for f, sv in spec.specs if sv is not None and getattr(sv, "status", "datasheet") != "datasheet"]
        if items:
            out.append(f"{hw}, not from a datasheet (sources: `perfmodel show {hw}`): " + "; ".join(items))
    out.append("Weights nvfp4 (experts and dense layers as the engine maps them) unless a claim states its format "
               "(for both systems or each), KV cache fp8; "
               f"deployments enumerated with {json.dumps({k: list(v) if isinstance(v, tuple) else v for k, v in CurveStore().space.items()})}.")
    out.append("The E2E axis is evaluated for the median-length request: the workload's P90 spread of request lengths is "
               "not in the frontier (AgentX publishes medians only).")
    return out


def build_report(out: str | Path = "reports") -> dict:
    """Write the claims report into ``out``; claims of other workloads are checked by worker processes."""
    t0 = time.time()
    store = CurveStore()
    workers = pool(store)
    try:
        res = _build_report(out, store, workers)
    finally:
        if workers is not None:
            workers.shutdown()
    res["seconds"] = time.time() - t0
    return res


def _build_report(out: str | Path, store: CurveStore, workers) -> dict:
    t0 = time.time()
    out = Path(out)
    d = out / "claims"
    d.mkdir(parents=True, exist_ok=True)
    # this directory is the report's own: its files are replaced whole one by one as they are written (a run stopped
    # on the way leaves each file old or new), and those of an earlier report this run did not write are removed last
    before = {p: p.stat().st_ino for p in [*d.glob("*.png"), *d.glob("*.csv"), *d.glob("*.json")]}
    # claims on other workloads than the figures' are checked by worker processes meanwhile (parallel.py)
    ids = catalog.ids("claims")
    checks = ClaimChecks(ids, store, local=lambda c: c.workload == WORKLOAD, workers=workers)
    figs: list[str] = []
    fr_md: list[str] = []
    ra_md: list[str] = []
    at_md: list[str] = []
    wi_md: list[str] = []
    # progress (stderr, terminals only): the 4 figure steps, then the claims (the workers' counted as they finish)
    bar = progress.bar(desc="report: frontiers", total=4 + len(ids), unit="step", at_once=True)

    def step_done(next_step: str) -> None:
        bar.update(1 + checks.poll())
        bar.set_description_str(f"report: {next_step}")
    _frontiers(store, d, fr_md, figs)
    step_done("ratios")
    _ratios(store, d, ra_md, figs)
    step_done("attribution")
    attr = _attribution(store, d, at_md, figs)
    step_done("what-if")
    _whatif(store, d, wi_md, figs)
    step_done("claims")
    results = checks.results(store, on_done=bar.update)
    bar.close()
    claims_df = _claims_csv(results, d)
    cross = {tuple(x["claims"]): x for r in results for x in (r.get("cross_claims") or [])}
    write_whole(d / "cross_claims.csv", pd.DataFrame([{k: (";".join(map(str, v)) if isinstance(v, list) else v)
                                                       for k, v in x.items()} for x in cross.values()])
                .to_csv(index=False))
    write_whole(d / "claims.json", json.dumps(json_safe(results), indent=1))
    from ..claims.shared import solve
    write_whole(d / "shared_conditions.json", json.dumps(json_safe(solve(results)), indent=1))
    from ..claims.story import solve as stories
    write_whole(d / "stories.json", json.dumps(json_safe(stories(results)), indent=1))
    from ..analyses.model_error import table as accuracy
    from .sentences import Sentences
    acc = accuracy()
    write_whole(d / "accuracy.csv", acc.to_csv(index=False))
    sentences = Sentences()
    from .planner import tables as planner_tables
    plan = planner_tables(store, results)
    write_whole(d / "planner.csv", plan.to_csv(index=False))
    md = _markdown(results, claims_df, attr, figs, fr_md, at_md, acc, sentences, plan)
    write_whole(d / "sentences.csv", pd.DataFrame(sentences.rows, columns=[
        "sentence", "a_label", "a_value", "a_source", "b_label", "b_value", "b_source", "relation"]).to_csv(index=False))
    from .. import provenance
    from ..analyses.model_error import TABLE
    command = "perfmodel report" + ("" if out == Path("reports") else f" --out {out}")
    write_whole(out / "claims.md", provenance.header(command, [catalog.builtin_root() / TABLE]) + "\n" + md)
    for p, ino in before.items():        # what this run did not rewrite is a stale file of an earlier report
        if p.is_file() and p.stat().st_ino == ino:
            p.unlink()
    secs = time.time() - t0
    return {"markdown": str(out / "claims.md"), "claims": len(results), "figures": len(figs),
            "csvs": len(list(d.glob("*.csv"))), "seconds": secs, "evaluations": store.evaluations}


def _markdown(results, claims_df, attr, figs, fr_md, at_md, acc=None, sentences=None, plan=None) -> str:
    """The compact report (issue 32): a first screen per source, one line per claim, a short section per claim;
    the shared conditions solved once per source (``claims.shared``)."""
    from ..claims.shared import solve
    from ..claims.story import solve as stories
    from .text import render_compact
    return render_compact(results, figs, acc, solve(results), assumptions=_assumptions(results), sentences=sentences,
                          plan=plan, stories=stories(results))
