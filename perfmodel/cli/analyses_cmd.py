"""`perfmodel frontier | compare | whatif | sensitivity | attribute`: thin formatting over perfmodel.analyses."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from ..defaults import DEFAULT_PROFILE, RULE, default_weights
from ..errors import SpecError
from ..fileio import check_output, dumps_json, ensure_parent, write_whole
from ..numfmt import fmt_number
from .main import finite_float, positive_int

if TYPE_CHECKING:
    import pandas as pd

# numpy, pandas, the progress bars and the analyses are imported by the commands that run, not with the parser

TABLE_COLUMNS = ["serving", "weights", "gpus", "tp", "dp", "ep", "spec_tokens", "instances", "pf_instances",
                 "pf_gpus", "pf_tp", "pf_dp", "pf_ep", "kv_host_tier", "batch", "tps_per_user", "total_tps_per_gpu", "output_tps_per_gpu", "tpot_ms", "ttft_ms", "bound"]
METRICS = ["total_tps_per_gpu", "output_tps_per_gpu", "total_tps_per_mw", "total_tokens_per_usd"]


# ------------------------------------------------------------------ shared options
def add_workload_args(p):
    p.add_argument("--model", required=True, help="model catalog id (or YAML path)")
    p.add_argument("--workload", default=None, help="workload catalog id (default fixed-1k1k)")
    p.add_argument("--isl", type=finite_float, help="custom workload: input tokens (with --osl)")
    p.add_argument("--osl", type=finite_float, help="custom workload: output tokens (with --isl)")
    p.add_argument("--prefix-hit", type=finite_float, default=0.0, help="custom workload: cached share of the input")
    p.add_argument("--profile", default=DEFAULT_PROFILE,
                   help=f"software profile (default {DEFAULT_PROFILE}, calibrated; speed-of-light = the roofline bound). "
                        f"{RULE}")


def add_space_args(p, multi_weights=True):
    if multi_weights:
        p.add_argument("--weights", action="append", default=None, metavar="FMT",
                       help="weight format(s) to enumerate, repeatable (default fp8, or the model's native format "
                            "where narrower)")
    else:
        p.add_argument("--weights", default=None, metavar="FMT",
                       help="weight format (default fp8, or the model's native format where narrower)")
    p.add_argument("--kv-cache", default="fp8", help="KV-cache format (default fp8)")
    p.add_argument("--spec-tokens", default="0,1,2,3,4", metavar="K,K,..",
                   help="draft tokens per step to enumerate (default 0,1,2,3,4; 0 = off)")
    p.add_argument("--max-gpus", type=positive_int, help="largest instance (default: the scale-up domain)")
    p.add_argument("--gpus", default=None, metavar="N,N,..", help="GPUs per instance to enumerate")
    p.add_argument("--batch-points", type=positive_int, default=64, help="log-grid batch sizes per deployment (default 64)")
    p.add_argument("--serving", action="append", default=None, choices=["aggregated", "decode_only", "disaggregated"],
                   help="serving modes (default aggregated, plus disaggregated where the engine supports it)")
    p.add_argument("--no-disaggregation", action="store_true", help="do not enumerate disaggregated serving")
    p.add_argument("--max-disagg-gpus", type=positive_int, default=None, metavar="N",
                   help="GPUs of both pools of a disaggregated deployment (default: the scale-up domain, or 64 "
                        "across nodes over the NIC when the domain is smaller)")
    p.add_argument("--max-ttft-ms", type=finite_float, default=None, metavar="MS",
                   help="TTFT limit (P50): points above it are off the frontier, and prefill pools must keep up")
    p.add_argument("--pf-gpus", default=None, metavar="N,N,..", help="prefill instance sizes to search")
    p.add_argument("--pf-tp", default=None, metavar="N,N,..", help="prefill attention TP degrees to search")
    p.add_argument("--pf-ep", default=None, metavar="N,N,..", help="prefill EP degrees to search")
    p.add_argument("--no-kv-tier", action="store_true", help="do not enumerate the KV host tier")


def _ints(text: str | None, option: str):
    if text is None:
        return None
    try:
        vals = tuple(int(x) for x in text.replace(" ", "").split(",") if x != "")
    except ValueError:
        raise SpecError(f"expected comma-separated integers, got {text!r}", field=option) from None
    if not vals:
        raise SpecError("empty list", field=option)
    if option in ("--gpus", "--pf-gpus", "--pf-tp", "--pf-ep") and min(vals) < 1:
        raise SpecError(f"GPU counts must be >= 1, got {min(vals)}", field=option)
    return vals


def workload_of(args):
    if not args.model.strip():
        raise SpecError("must not be empty", field="--model")
    if args.isl is not None or args.osl is not None:
        if args.isl is None or args.osl is None or not (args.isl > 0 and args.osl > 0):
            raise SpecError("a custom workload needs both --isl and --osl, > 0", field="--isl/--osl")
        if not 0 <= args.prefix_hit < 1:
            raise SpecError(f"must lie in [0, 1), got {args.prefix_hit}", field="--prefix-hit")
        return {"isl": args.isl, "osl": args.osl, "prefix_hit": args.prefix_hit}
    return args.workload or "fixed-1k1k"


def _space(args):
    from ..analyses.deployments import DeploymentSpace
    serving = tuple(a for a in (args.serving or ["aggregated"]) if a != "disaggregated") or ("aggregated",)
    disagg = not args.no_disaggregation and (args.serving is None or "disaggregated" in args.serving)
    if args.serving and "aggregated" not in args.serving and "decode_only" not in args.serving:
        serving = ()
    if args.batch_points < 1:
        raise SpecError("must be >= 1", field="--batch-points")
    if args.max_gpus is not None and args.max_gpus < 1:
        raise SpecError("must be >= 1", field="--max-gpus")
    kw = dict(spec_tokens=_ints(args.spec_tokens, "--spec-tokens"), batch_points=args.batch_points,
              max_gpus=args.max_gpus, gpus=_ints(args.gpus, "--gpus"), serving=serving,
              disaggregation=disagg, kv_host_tier=not args.no_kv_tier,
              max_disagg_gpus=getattr(args, "max_disagg_gpus", None), max_ttft_ms=getattr(args, "max_ttft_ms", None))
    for opt in ("pf_gpus", "pf_tp", "pf_ep"):
        kw[opt] = _ints(getattr(args, opt, None), "--" + opt.replace("_", "-"))
    return DeploymentSpace(**kw)


def frontier_kwargs(args, multi_weights=True):
    weights = tuple(args.weights or [default_weights(args.model)]) if multi_weights else \
        (args.weights or default_weights(args.model),)
    return dict(weights=weights, kv_cache=args.kv_cache, space=_space(args))


def _num(v, digits=4):
    return fmt_number(v, digits, na="-")


def format_table(df: pd.DataFrame, cols: list[str]) -> str:
    cols = [c for c in cols if c in df.columns]
    if "prefill_ratio" in cols and not (df["prefill_ratio"].fillna(0) > 0).any():
        cols.remove("prefill_ratio")
    if "instances" in cols and not (df["instances"].fillna(0) > 0).any():   # no disaggregated point
        cols = [c for c in cols if c not in ("instances", "pf_instances", "pf_gpus", "pf_tp", "pf_dp", "pf_ep")]
    if "kv_host_tier" in cols and not df["kv_host_tier"].fillna(False).astype(bool).any():
        cols.remove("kv_host_tier")
    body = [[_num(v) for v in row] for row in df[cols].itertuples(index=False)]
    widths = [max(len(c), *(len(r[i]) for r in body)) if body else len(c) for i, c in enumerate(cols)]
    import pandas as pd
    left = [c == cols[-1] and pd.api.types.is_string_dtype(df[c]) for c in cols]   # free text last: left-aligned
    just = lambda v, w, lf: v.ljust(w) if lf else v.rjust(w)  # noqa: E731
    lines = ["  ".join(just(c, w, lf) for c, w, lf in zip(cols, widths, left)).rstrip()]
    lines += ["  ".join(just(v, w, lf) for v, w, lf in zip(r, widths, left)).rstrip() for r in body]
    return "\n".join(lines)


def _thin(df: pd.DataFrame, rows: int) -> pd.DataFrame:
    """At most ``rows`` rows, spread evenly in log interactivity (first and last kept)."""
    if len(df) <= rows or rows <= 0:
        return df
    import numpy as np
    x = np.log(df["tps_per_user"].to_numpy())
    targets = np.linspace(x.min(), x.max(), rows)
    idx = np.unique(np.searchsorted(x, targets).clip(0, len(df) - 1))
    return df.iloc[idx]


def _check_outputs(args):
    """Fail before the work when an output file cannot be written."""
    check_output(getattr(args, "plot", None), "--plot", (".png",))
    check_output(getattr(args, "csv", None), "--csv")


def _records(df: pd.DataFrame) -> list[dict]:
    return json.loads(df.to_json(orient="records"))


def _dep_line(d: dict) -> str:
    keys = ["serving", "weights", "gpus", "tp", "dp", "ep", "pp", "spec_tokens", "instances", "pf_instances",
            "pf_gpus", "pf_tp", "pf_dp", "pf_ep", "kv_host_tier", "batch"]
    blank = lambda v: v is None or (isinstance(v, float) and math.isnan(v))  # noqa: E731
    return " ".join(f"{k}={_num(d[k])}" for k in keys if k in d and not blank(d[k])
                    and not (k == "kv_host_tier" and not d[k]))


# ------------------------------------------------------------------ frontier
def run_frontier(args):
    _check_outputs(args)
    import pandas as pd

    from .. import progress
    from ..analyses.frontier import frontier, summary
    if args.rows < 0:
        raise SpecError("must be >= 0", field="--rows")
    wl = workload_of(args)
    kw = frontier_kwargs(args)
    slo = _slo(args)
    explain_at = getattr(args, "explain_at", None)
    fronts = [frontier(h, args.model, wl, args.profile, metric=args.metric, all_columns=explain_at is not None, **kw)
              for h in progress.bar(args.hardware, desc="frontiers", unit="system")]
    explained: list[dict | None] = [None] * len(fronts)
    if explain_at is not None:
        from .explain_at import explain
        explained = [explain(f, explain_at) for f in fronts]
        fronts = [_usual_columns(f) for f in fronts]
    agents = [_agents(h, args, wl, kw, slo) for h in progress.bar(args.hardware, desc="agents_per_gpu", unit="system")
              ] if slo else [None] * len(fronts)
    if args.csv:
        from ..analyses.frontier import CSV_COLUMNS
        from ..csvout import write_csv
        write_csv(pd.concat([f.assign(system=f.attrs.get("system")) for f in fronts], ignore_index=True),
                  ensure_parent(args.csv), CSV_COLUMNS, disagg_blank=True)
    if args.plot:
        from ..plots import frontier_plot
        frontier_plot(fronts, args.plot, metric=args.metric)
    ends = [_curve_end(f) for f in fronts]
    if args.json:
        from .explain_at import to_json
        print(dumps_json({"systems": [{**summary(f), **_agents_json(a), "curve_end_parts": e, "points": _records(f),
                                       **({"explain": to_json(x)} if x else {})}
                                      for f, a, e, x in zip(fronts, agents, ends, explained)]}))
        return 0
    for f, a, end, x in zip(fronts, agents, ends, explained):
        s = summary(f)
        print(f"{s['system']}  model={f['model'].iloc[0]}  workload={s['workload']} "
              f"(isl {f.attrs['isl']:g}, osl {f.attrs['osl']:g})")
        print(f"  candidates={s['candidates']:,} fitting={s['fitting']:,} frontier_points={s['frontier_points']}")
        for note in s["notes"]:
            print(f"  note: {note}")
        at_top = s[f"{args.metric}_at_max_tps_per_user"]
        print(f"  max interactivity: {s['max_tps_per_user']:,.1f} tok/s/user at {at_top:,.1f} {args.metric}  "
              f"[{_dep_line(s['max_tps_per_user_deployment'])}]")
        if end:
            from ..analyses.curve_end import parts_line
            print(f"  step at the curve end: {sum(p['ms'] for p in end):.3g} ms = {parts_line(end)}")
        print(f"  peak {args.metric}: {s[f'peak_{args.metric}']:,.1f} at {s['tps_per_user_at_peak']:,.1f} tok/s/user, "
              f"{_ttft_text(s['ttft_ms_at_peak'], args.max_ttft_ms)}  [{_dep_line(s['peak_deployment'])}]")
        if a is not None:
            print(_agents_line(a))
        print(format_table(_thin(f, args.rows), TABLE_COLUMNS if args.metric in TABLE_COLUMNS
                     else TABLE_COLUMNS[:-5] + [args.metric] + TABLE_COLUMNS[-5:]))
        if x:
            from .explain_at import text
            print(text(x))
        print()
    if args.csv:
        print(f"wrote {args.csv}")
    if args.plot:
        print(f"wrote {args.plot}")
    return 0


def _usual_columns(front: pd.DataFrame) -> pd.DataFrame:
    """A frontier computed with all_columns, cut to the columns it has without (the table, CSV and JSON points
    stay as they are without --explain-at)."""
    from ..analyses.frontier import usual_columns
    return usual_columns(front)


def _curve_end(front) -> list[dict]:
    """The parts of the decode step at the curve end (analyses/curve_end.py; [] for a disaggregated end)."""
    from ..analyses.curve_end import at_deployment, step_parts
    from ..analyses.frontier import summary
    dep = summary(front)["max_tps_per_user_deployment"]
    if dep.get("serving") not in ("aggregated", "decode_only"):
        return []
    return step_parts(at_deployment(dep, front.attrs["isl"], front.attrs["osl"]))


HEADLINE_TTFT_MS = 5000.0
"""A headline peak with a P50 TTFT above this (ms) is flagged: no interactive service runs there."""


def _ttft_text(ttft_ms, limit_ms) -> str:
    """'TTFT 812 ms', flagged when above HEADLINE_TTFT_MS and no --max-ttft-ms limit was given."""
    if ttft_ms is None or not math.isfinite(ttft_ms):
        return "TTFT n/a"
    text = f"TTFT {fmt_number(ttft_ms)} ms"
    if limit_ms is None and ttft_ms > HEADLINE_TTFT_MS:
        text += f" (ABOVE {HEADLINE_TTFT_MS / 1000:g} s: --max-ttft-ms MS keeps such points off the frontier)"
    return text


def _slo(args):
    """The --slo-* options as an SLO (None without --slo-tps-per-user)."""
    from ..search import SLO
    if args.slo_tps_per_user is None:
        if args.slo_ttft_ms is not None:
            raise SpecError("a TTFT limit needs the speed floor --slo-tps-per-user", field="--slo-ttft-ms")
        return None
    axis = getattr(args, "slo_speed_axis", "itl")
    if axis == "itl":
        return SLO.speed_floor(args.slo_tps_per_user, args.slo_ttft_ms, args.slo_percentile)
    q = args.slo_percentile
    if q not in (50.0, 90.0):
        raise SpecError(f"the E2E-normalised per-user speed at P{q:g} is not modeled (P50 and P90 are: the "
                        "queue's TTFT percentile + osl x mean TPOT); choose 50 or 90", field="--slo-percentile")
    return SLO.speed_floor(args.slo_tps_per_user, args.slo_ttft_ms, q, speed_column=f"tps_per_user_e2e_p{q:g}")


def _agents(h, args, wl, kw, slo):
    from ..analyses.agents import capacity
    return capacity(h, args.model, wl, slo, args.profile, **kw)


def _agents_line(a) -> str:
    if a.value is None:
        return f"  agents_per_gpu: none meet the SLO {a.slo.text()}: {a.reason}"
    d = {k: a.row[k] for k in ("serving", "weights", "gpus", "tp", "dp", "ep", "pp", "spec_tokens", "prefill_ratio",
                               "kv_host_tier", "batch") if k in a.row.index}
    return (f"  agents_per_gpu: {a.value:,.2f} sessions/GPU within the SLO {a.slo.text()} (at "
            f"{a.row['tps_per_user']:,.1f} tok/s/user, TTFT p{a.slo.ttft_percentile:g} "
            f"{a.slo.ttft_values(a.row.to_frame().T)[0]:,.0f} ms)  [{_dep_line(d)}]")


def _agents_json(a) -> dict:
    if a is None:
        return {}
    out = {"agents_per_gpu": a.value, "agents_slo": a.slo.text(), "agents_reason": a.reason}
    if a.row is not None:
        out["agents_deployment"] = {k: (v.item() if hasattr(v, "item") else v) for k, v in a.row.items()
                                    if k in ("serving", "gpus", "tp", "dp", "ep", "spec_tokens", "batch",
                                             "prefill_ratio", "kv_host_tier", "tps_per_user", "ttft_ms")}
    return out


# ------------------------------------------------------------------ compare / whatif
def _print_comparison(cmp, args, header: str, metric: str = "total_tps_per_gpu", at: dict | None = None):
    na, nb = cmp.names
    extra = ("jump",) if "jump" in cmp.curve else ()
    if args.csv:
        from ..analyses.compare import curve_csv_columns
        from ..csvout import write_csv
        write_csv(cmp.curve, ensure_parent(args.csv), curve_csv_columns(metric, extra))
    if args.plot:
        from ..plots import comparison_plot
        comparison_plot(cmp, args.plot)
    if args.json:
        print(dumps_json({"a": na, "b": nb, "metric": metric, "summary": _records(cmp.summary),
                          "curve": _records(cmp.curve), **({"at": at} if at is not None else {}),
                          "notes": {"a": cmp.a.attrs.get("notes", []), "b": cmp.b.attrs.get("notes", [])}}, indent=1))
        return 0
    print(header)
    print(f"  A = {na}\n  B = {nb}")
    na_, nb_ = cmp.a.attrs.get("notes", []), cmp.b.attrs.get("notes", [])
    for note in sorted(set(na_) | set(nb_)):
        who = "A and B" if note in na_ and note in nb_ else ("A" if note in na_ else "B")
        print(f"  note ({who}): {note}")
    print(format_table(cmp.summary.rename(columns={"ratio": "A/B"}), ["quantity", "a", "b", "A/B", "ratio_is"]))
    if at is not None:
        print(f"  {at['text']}")
    print(f"\n  ratio A/B of {metric} along the curve (interactivities both reach; below a curve's start, its peak "
          "counts)" + ("; jump: where the multiple is not smooth (a change of deployment layout)" if extra else "")
          + ":")
    cols = ["tps_per_user", f"a_{metric}", f"b_{metric}", "ratio",
            *([] if not metric.endswith("_per_gpu") else ["ratio_per_mw", "ratio_per_usd"]), *extra]
    print(format_table(_thin(cmp.curve, args.rows), cols))
    for path in (args.csv, args.plot):
        if path:
            print(f"wrote {path}")
    return 0


def run_compare(args):
    _check_outputs(args)
    from ..analyses.compare import compare
    if args.rows < 0:
        raise SpecError("must be >= 0", field="--rows")
    cmp = compare(args.a, args.b, args.model, workload_of(args), args.profile, **frontier_kwargs(args))
    return _print_comparison(cmp, args, f"compare {args.model}, workload {cmp.a.attrs.get('workload')}")


def run_whatif(args):
    _check_outputs(args)
    from ..analyses.systems import parse_assignments
    from ..analyses.whatif import describe_changes, multiple_at, whatif
    if args.rows < 0:
        raise SpecError("must be >= 0", field="--rows")
    scale = parse_assignments(args.scale, "--scale")
    set_ = parse_assignments(args.set, "--set")
    if not scale and not set_:
        raise SpecError("give at least one --scale NAME=FACTOR or --set NAME=VALUE", field="whatif")
    if args.at_tps_per_user is not None and not args.at_tps_per_user > 0:
        raise SpecError(f"must be > 0, got {args.at_tps_per_user!r}", field="--at-tps-per-user")
    cmp = whatif(args.hardware, args.model, workload_of(args), args.profile, scale=scale, set_=set_,
                 metric=args.metric, **frontier_kwargs(args))
    at = multiple_at(cmp, args.at_tps_per_user, args.metric) if args.at_tps_per_user is not None else None
    return _print_comparison(cmp, args, f"what-if {describe_changes(scale, set_)} on {args.hardware}, {args.model}: "
                                        "A = changed, B = baseline", args.metric, at)


# ------------------------------------------------------------------ sensitivity
def run_sensitivity(args):
    _check_outputs(args)
    from ..analyses.sensitivity import sensitivity
    if args.top < 0:
        raise SpecError("must be >= 0", field="--top")
    wl = workload_of(args)                      # checks --model first
    if args.weights is None:
        args.weights = default_weights(args.model)
    explicit = {k: getattr(args, k) for k in ("gpus", "tp", "ep", "pp", "batch") if getattr(args, k) is not None}
    if explicit and (args.at_tps_per_user is not None or args.peak):
        raise SpecError("give an explicit point (--gpus/--tp/--ep/--batch) or --at-tps-per-user/--peak, not both",
                        field="operating point")
    point = None
    if explicit:
        if "batch" not in explicit:
            raise SpecError("an explicit operating point needs --batch", field="--batch")
        point = {**explicit, "spec_tokens": args.spec_tokens or 0, "serving": args.serving, "weights": args.weights,
                 "kv_cache": args.kv_cache}
        g, tp, pp = explicit.get("gpus", 1), explicit.get("tp", 1), explicit.get("pp", 1)
        if g % (tp * pp):
            raise SpecError(f"gpus={g} is not a multiple of tp x pp = {tp * pp}", field="--gpus")
    df = sensitivity(args.hardware, args.model, wl, args.profile, point=point,
                     at_tps_per_user=args.at_tps_per_user,
                     peak=args.peak or (point is None and args.at_tps_per_user is None),
                     weights=args.weights, kv_cache=args.kv_cache, metric=args.metric)
    if args.csv:
        write_whole(args.csv, df.to_csv(index=False))
    if args.plot:
        from ..plots import sensitivity_plot
        sensitivity_plot(df, args.plot)
    if args.json:
        print(dumps_json({"system": df.attrs["system"], "metric": df.attrs["metric"], "point": df.attrs["point"],
                          "tpot_ms": df.attrs["tpot_ms"], "at_capacity": df.attrs["at_capacity"],
                          "elasticities": _records(df)}, indent=1))
        return 0
    pt = df.attrs["point"]
    print(f"sensitivity of {df.attrs['metric']} on {df.attrs['system']}, {args.model}: d ln T / d ln p "
          "(sympy derivatives, fixed deployment and batch)")
    print(f"  point: {_dep_line(pt)}  tpot={df.attrs['tpot_ms']:.4g} ms  max_batch={df.attrs['max_batch']:.0f}"
          + (f"  tps_per_user={pt['tps_per_user']:.4g}" if "tps_per_user" in pt else ""))
    if pt.get("serving", "aggregated") != "aggregated":
        print("  note: elasticities of the decode step (a disaggregated point's prefill pool is not included)")
    if df.attrs["at_capacity"]:
        print("  at capacity: elasticity_at_capacity adds the batch that memory allows (d ln B_max / d ln p)")
    shown = df if args.all else df[(df["elasticity"].abs() > 1e-9) | (df["capacity_elasticity"].abs() > 1e-9)]
    cols = ["parameter", "kind", "group", "value", "elasticity", "capacity_elasticity", "elasticity_at_capacity"]
    print(format_table(shown.head(args.top) if args.top else shown, cols))
    hidden = len(df) - len(shown)
    if hidden:
        print(f"  ({hidden} parameters with zero elasticity hidden; --all shows them)")
    for path in (args.csv, args.plot):
        if path:
            print(f"wrote {path}")
    return 0


# ------------------------------------------------------------------ attribution
def run_attribute(args):
    _check_outputs(args)
    from ..analyses.attribution import attribute
    from ..analyses.systems import System
    if args.at_tps_per_user is None and not args.peak:
        raise SpecError("say where to compare: --at-tps-per-user X or --peak", field="attribute")
    res = attribute(System.parse(args.from_, args.profile), System.parse(args.to, args.profile), args.model,
                    workload_of(args), args.profile, at_tps_per_user=args.at_tps_per_user, peak=args.peak,
                    metric=args.metric, weights=args.weights or default_weights(args.model), kv_cache=args.kv_cache, space=_space(args),
                    layouts_per_side=args.layouts)
    if args.csv:
        write_whole(args.csv, res.parts.to_csv(index=False))
    if args.plot:
        from ..plots import waterfall_plot
        waterfall_plot(res, args.plot)
    if args.json:
        print(dumps_json(res.to_json()))
        return 0
    m = res.meta
    print(f"attribution of {m['metric']} at {m['at']}: {m['to']} / {m['from']} = x{res.total_ratio:.4g}  "
          f"({res.to_value:,.1f} / {res.from_value:,.1f})")
    print(f"  model {m['model']}, workload {m['workload']}, weights {m['weights']}; exact Shapley over "
          f"{len(res.parts)} players ({m['coalitions']} coalitions x {m['deployments']} deployments)")
    for note in m["notes"]:
        print(f"  note: {note}")
    if len(res.parts):
        print(format_table(res.parts, ["name", "kind", "factor", "share_pct", "change"]))
        hw = res.parts[res.parts.kind == "hardware"]["factor"].prod()
        sw = res.parts[res.parts.kind == "software"]["factor"].prod()
        print(f"  hardware x{hw:.4g} * software x{sw:.4g} = x{hw * sw:.4g}")
    else:
        print("  the two systems do not differ in any parameter the model uses")
    for path in (args.csv, args.plot):
        if path:
            print(f"wrote {path}")
    return 0


# ------------------------------------------------------------------ registration
def register(sub) -> None:
    """Add the analyses subcommands to the CLI's subparsers."""
    _register_frontier(sub)
    _register_compare(sub)
    _register_whatif(sub)
    _register_sensitivity(sub)
    _register_attribute(sub)


def _register_frontier(sub) -> None:
    p = sub.add_parser("frontier", help="Pareto frontier: throughput per GPU vs tokens/s per user over deployments")
    p.add_argument("--hardware", action="append", required=True, metavar="H[:PROFILE]",
                   help="system (repeatable: several on one plot); id@variant works")
    add_workload_args(p)
    add_space_args(p)
    p.add_argument("--metric", default="total_tps_per_gpu", choices=METRICS)
    p.add_argument("--rows", type=int, default=20, help="frontier rows to print (default 20; 0 = all)")
    p.add_argument("--csv", metavar="FILE", help="write every frontier point (all systems) to FILE")
    p.add_argument("--plot", metavar="FILE.png", help="plot the frontier(s), log interactivity axis")
    p.add_argument("--json", action="store_true")
    p.add_argument("--explain-at", type=finite_float, metavar="X",
                   help="read each frontier at X tok/s/user and print that point term by term (deployment, sessions, "
                        "KV residency, prefill pool and KV transfer, step and binding limit) with where it lies "
                        "against the measured envelope of the shipped records")
    slo = p.add_argument_group("agents_per_gpu (AA-AgentPerf): the most sessions per GPU within an SLO")
    slo.add_argument("--slo-tps-per-user", type=finite_float, metavar="X", help="per-user speed floor, tok/s/user")
    slo.add_argument("--slo-ttft-ms", type=finite_float, metavar="MS", help="TTFT limit, ms")
    slo.add_argument("--slo-percentile", type=finite_float, default=50.0, help="percentile of both (default 50)")
    slo.add_argument("--slo-speed-axis", choices=("itl", "e2e"), default="itl",
                     help="the per-user speed the floor reads: itl = the decode speed (default; one value per "
                          "point, read at every percentile), e2e = AgentX's E2E-normalised osl / (TTFT_q + osl "
                          "TPOT) at --slo-percentile 50 or 90 (the axis plan --speed-axis e2e reads)")
    p.set_defaults(func=run_frontier)


def _register_compare(sub) -> None:
    p = sub.add_parser("compare", help="ratio A/B of two systems' frontiers along interactivity and at peak")
    p.add_argument("a", metavar="A", help="HARDWARE[:PROFILE]")
    p.add_argument("b", metavar="B", help="HARDWARE[:PROFILE]")
    add_workload_args(p)
    add_space_args(p)
    p.add_argument("--rows", type=int, default=15)
    p.add_argument("--csv", metavar="FILE", help="write the ratio curve to FILE")
    p.add_argument("--plot", metavar="FILE.png", help="plot both curves and the ratio")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_compare)


def _register_whatif(sub) -> None:
    p = sub.add_parser("whatif", help="scale/set hardware fields or profile parameters: new frontier vs baseline")
    p.add_argument("--hardware", required=True, metavar="H[:PROFILE]")
    p.add_argument("--scale", action="append", default=[], metavar="NAME=FACTOR",
                   help="e.g. hbm_bandwidth=2.4, nvlink_bandwidth=1.7, fp4_flops=2, decode_speedup=1.25")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="e.g. hbm_capacity_gb=288, step_overhead_ms=1, acceptance_rate=0.8")
    add_workload_args(p)
    add_space_args(p)
    p.add_argument("--metric", default="total_tps_per_gpu", choices=METRICS,
                   help="the throughput both frontiers maximise and the multiple compares (default total_tps_per_gpu)")
    p.add_argument("--at-tps-per-user", type=finite_float, metavar="X",
                   help="the multiple A/B at X tok/s/user, each side's deployment there, and whether it sits on a "
                        "jump (a change of deployment layout)")
    p.add_argument("--rows", type=int, default=15)
    p.add_argument("--csv", metavar="FILE")
    p.add_argument("--plot", metavar="FILE.png")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_whatif)


def _register_sensitivity(sub) -> None:
    p = sub.add_parser("sensitivity", help="elasticities d ln(throughput)/d ln(parameter) at an operating point")
    p.add_argument("--hardware", required=True, metavar="H[:PROFILE]")
    add_workload_args(p)
    where = p.add_argument_group("operating point (default: the frontier peak)")
    where.add_argument("--at-tps-per-user", type=finite_float, help="the first frontier point reaching X tok/s/user")
    where.add_argument("--peak", action="store_true", help="the frontier's peak throughput")
    for k in ("gpus", "tp", "ep", "pp", "batch"):
        where.add_argument(f"--{k}", type=positive_int)
    where.add_argument("--spec-tokens", type=int, default=None)
    where.add_argument("--serving", default="aggregated", choices=["aggregated", "decode_only"])
    p.add_argument("--weights", default=None, help="weight format (default fp8, or the model's native format "
                                                   "where narrower)")
    p.add_argument("--kv-cache", default="fp8")
    p.add_argument("--metric", default="total_tps_per_gpu",
                   choices=["total_tps_per_gpu", "output_tps_per_gpu", "tps_per_user", "total_tps_per_mw",
                            "total_tokens_per_usd"])
    p.add_argument("--top", type=int, default=0, help="show the N largest only")
    p.add_argument("--all", action="store_true", help="also show parameters with zero elasticity")
    p.add_argument("--csv", metavar="FILE")
    p.add_argument("--plot", metavar="FILE.png", help="tornado chart of the elasticities (largest on top)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_sensitivity)


def _register_attribute(sub) -> None:
    p = sub.add_parser("attribute", help="Shapley split of a ratio into hardware groups and software parts")
    p.add_argument("--from", dest="from_", required=True, metavar="H1[:P1]")
    p.add_argument("--to", required=True, metavar="H2[:P2]")
    add_workload_args(p)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--at-tps-per-user", type=finite_float, help="compare at this interactivity")
    where.add_argument("--peak", action="store_true", help="compare peak throughput")
    p.add_argument("--metric", default="total_tps_per_gpu", choices=METRICS)
    add_space_args(p, multi_weights=False)
    p.add_argument("--layouts", type=positive_int, default=16, help="best deployments taken from each side (default 16)")
    p.add_argument("--plot", metavar="FILE.png", help="waterfall plot")
    p.add_argument("--csv", metavar="FILE")
    p.add_argument("--json", action="store_true", help="total_ratio and parts (name -> factor)")
    p.set_defaults(func=run_attribute)
