"""`perfmodel plan`: demand and SLOs -> deployment, GPUs, scale-up domains, MW and dollars per candidate system
(perfmodel.analyses.plan; docs/plan.md)."""

from __future__ import annotations

from ..errors import SpecError
from ..fileio import check_output, dumps_json, ensure_parent
from .analyses_cmd import add_space_args, add_workload_args, format_table, frontier_kwargs, workload_of
from .main import finite_float

TABLE = ["system", "period", "demand_value", "serving", "gpus_per_instance", "tp", "ep", "spec_tokens", "batch", "units", "gpus",
         "gpus_low", "gpus_high", "scaleup_domains", "domains_to_add", "output_tps_per_gpu", "tps_per_user", "tps_per_user_e2e_p90", "ttft_p90_ms", "ttft_p99_ms", "capacity_output_tps", "utilization", "gpus_bias_corrected", "slo_margin_min", "mw",
         "usd_per_month", "binding"]
AGENTX_RECOMMENDED = "agentx-062126-0730"
"""The AgentX version a plan should read for AgentX-like traffic: the current InferenceX harness (after the
2026-07-30 AIPerf update) on the full cc-traces-weka-062126 trace, whose records map there; it declares AgentX's
per-user axis (E2E-normalised, P90). agentx-062126-256k is the same for 262k-context models."""
SPEED_AXES = {"itl": "decode (1000 / TPOT)", "e2e": "E2E-normalised (osl / (TTFT + osl TPOT))"}
DEMANDS = (("rate", "requests_per_s"), ("output_tps", "output_tps"), ("tokens_per_day", "tokens_per_day"),
           ("users", "users"), ("sessions", "sessions"))


def register(sub):
    p = sub.add_parser("plan", help="capacity plan: demand + SLOs -> deployment, GPUs, racks, MW, USD per system")
    p.add_argument("--system", action="append", required=True, metavar="H[:PROFILE]",
                   help="candidate system (repeatable); profile default as in frontier")
    add_workload_args(p)
    add_space_args(p)
    d = p.add_argument_group("demand (one of)")
    d.add_argument("--rate", type=finite_float, metavar="R", help="requests/s of the workload")
    d.add_argument("--output-tps", type=finite_float, metavar="T", help="output tokens/s")
    d.add_argument("--tokens-per-day", type=finite_float, metavar="N", help="output tokens per day")
    d.add_argument("--users", type=finite_float, metavar="N", help="concurrent users (one request in flight each)")
    d.add_argument("--sessions", type=finite_float, metavar="N", help="live agent sessions (agentic workload)")
    d.add_argument("--demand-file", metavar="CSV", help="demand over time: a CSV with a 'period' column and one "
                   "demand column (requests_per_s, output_tps, tokens_per_day, users or sessions); one plan per "
                   "period, and the GPUs at the peak period")
    d.add_argument("--demand-scale", default="1", metavar="S,S,..", help="growth multipliers (default 1)")
    s = p.add_argument_group("SLO (none: the peak)")
    s.add_argument("--ttft-ms", type=finite_float, metavar="MS", help="TTFT limit, ms")
    s.add_argument("--ttft-percentile", type=finite_float, default=50.0, help="50, 90 or 99 (default 50)")
    s.add_argument("--min-tps-per-user", type=finite_float, metavar="X", help="per-user speed floor, tok/s/user, "
                   "at --speed-percentile on --speed-axis")
    s.add_argument("--speed-axis", choices=list(SPEED_AXES), help="the per-user speed the floor reads: itl = "
                   "1000 / TPOT while decoding; e2e = osl / (TTFT + osl TPOT), AgentX's E2E-normalised axis "
                   "(default: the workload's own, its 'interactivity' field)")
    s.add_argument("--speed-percentile", type=finite_float, metavar="Q", help="percentile of the speed floor: itl "
                   "50 (mean TPOT), 90 or 99 (default --tpot-percentile); e2e 50 or 90 (default the workload's "
                   "interactivity_percentile)")
    s.add_argument("--tpot-ms", type=finite_float, metavar="MS", help="TPOT limit, ms")
    s.add_argument("--tpot-percentile", type=finite_float, default=50.0, help="50 (the mean), 90 or 99 "
                   "(default 50)")
    s.add_argument("--e2e-s", type=finite_float, metavar="S", help="E2E latency limit, s (TTFT at its percentile + "
                                                                    "osl x TPOT)")
    lim = p.add_argument_group("limits")
    lim.add_argument("--gpu-limit", type=finite_float, metavar="N", help="GPUs at most (all systems)")
    lim.add_argument("--mw-limit", type=finite_float, metavar="MW", help="all-in MW at most")
    lim.add_argument("--usd-per-hour-limit", type=finite_float, metavar="USD", help="USD per hour at most")
    lim.add_argument("--headroom", type=finite_float, default=0.0, help="share of capacity kept free (default 0)")
    p.add_argument("--power-basis", default="board", choices=["board", "tdp", "measured"],
                   help="power per GPU for MW: board = catalog all-in (provisioned) power, the default; tdp = GPU "
                   "TDP; measured = a measured all-in draw (data/measured-power/power.yaml)")
    p.add_argument("--csv", metavar="FILE", help="write the plan (fixed columns, docs/plan.md) to FILE")
    p.add_argument("--launch", metavar="FILE.md", help="write each system's chosen deployment as launch arguments "
                   "for its engine (vLLM, SGLang, TensorRT-LLM, Dynamo workers) to FILE.md")
    p.add_argument("--dynamo-graph", metavar="FILE.yaml", help="write each Dynamo system's chosen deployment "
                   "(dynamo-* profiles) as a Kubernetes DynamoGraphDeployment to FILE.yaml (kubectl apply -f)")
    p.add_argument("--plot", metavar="FILE.png", help="GPUs (or --plot-metric) needed against demand per system")
    p.add_argument("--plot-metric", default="gpus", choices=["gpus", "mw", "usd_per_hour"])
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_plan)


def _scales(text: str) -> tuple[float, ...]:
    try:
        out = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise SpecError(f"expected numbers separated by commas, got {text[:40]!r}", field="--demand-scale") from None
    if not out or any(not (v > 0 and v < float("inf")) for v in out):
        raise SpecError(f"expected positive numbers, got {text[:40]!r}", field="--demand-scale")
    return out


def _demand(args):
    from ..analyses.plan import Demand
    given = [(opt, kind) for opt, kind in DEMANDS if getattr(args, opt) is not None]
    if len(given) > 1:
        raise SpecError("give one demand: " + ", ".join("--" + o.replace("_", "-") for o, _ in given),
                        field="demand")
    if not given:
        return None
    opt, kind = given[0]
    if not getattr(args, opt) > 0:
        raise SpecError(f"must be > 0, got {getattr(args, opt)!r}", field="--" + opt.replace("_", "-"))
    return Demand(kind, getattr(args, opt))


def unmeasured(df) -> str | None:
    """One line naming what in the plan has no measured record behind it in the shipped record files
    (data/shared/*.csv and data/measured/*.csv): hardware, engine profile, model."""
    from ..specs.records import project_measured_files, read_records, shared_data_files
    from ..validation.predict_rows import ENGINE_PROFILE
    recs = [r for f in (*shared_data_files(), *project_measured_files()) for r in read_records(f)]
    hw = {r.hardware for r in recs} | {r.hardware_b for r in recs if r.hardware_b}
    engines = {ENGINE_PROFILE.get((r.engine or "trtllm").lower()) for r in recs}
    models = {r.model for r in recs}
    missing = [f"hardware {h}" for h in sorted(set(df["hardware"])) if h not in hw]
    missing += [f"engine {e}" for e in sorted(set(df["profile"])) if e not in engines]
    missing += [f"model {m}" for m in sorted(set(df["model"])) if m not in models]
    return ("no measured record behind: " + ", ".join(missing) +
            " (their numbers are the model's alone, unchecked)") if missing else None


def plan_slo(args):
    """The plan's SLO (search.SLO, the frontier's type) from the options: the speed floor on its axis at its
    percentile (itl: a TPOT limit at that percentile; e2e: the speed form on tps_per_user_e2e_p{q}), TTFT, TPOT and
    E2E limits. One-line SpecError naming what is not modeled; nothing is read at another percentile."""
    from ..search import SLO
    wl = _workload_spec(args)
    axis = args.speed_axis or getattr(wl, "interactivity", "itl")
    q = args.speed_percentile
    common = dict(ttft_ms=args.ttft_ms, ttft_percentile=args.ttft_percentile, tpot_ms=args.tpot_ms,
                  tpot_percentile=args.tpot_percentile, e2e_s=args.e2e_s)
    if args.min_tps_per_user is None:
        if args.speed_axis is not None or q is not None:
            raise SpecError("--speed-axis / --speed-percentile qualify --min-tps-per-user: give the floor",
                            field="--min-tps-per-user")
        return SLO(**common)
    if axis == "itl":
        q = args.tpot_percentile if q is None else q
        if args.tpot_ms is not None and q != args.tpot_percentile:
            raise SpecError(f"the decode-speed floor is a TPOT limit read at P{q:g} and --tpot-ms at "
                            f"P{args.tpot_percentile:g}: give one percentile", field="--speed-percentile")
        return SLO(**{**common, "tpot_percentile": q}, tps_per_user=args.min_tps_per_user)
    q = float(getattr(wl, "interactivity_percentile", 90.0)) if q is None else q
    if q not in (50.0, 90.0):
        raise SpecError(f"the E2E-normalised per-user speed at P{q:g} is not modeled (P50 and P90 are: the "
                        "queue's TTFT percentile + osl x mean TPOT); choose 50 or 90", field="--speed-percentile")
    return SLO(**common, tps_per_user=args.min_tps_per_user, speed_percentile=q,
               speed_column=f"tps_per_user_e2e_p{q:g}")


def _workload_spec(args):
    """The catalog workload the options name (None for --isl/--osl)."""
    from .. import catalog
    from ..specs.workload import WorkloadSpec
    w = workload_of(args)
    w = catalog.workload(w) if isinstance(w, str) else w
    return w if isinstance(w, WorkloadSpec) else None


def _write_files(args, df) -> None:
    """The plan's files: --csv, --launch (with the Dynamo graph of its dynamo-* systems), --dynamo-graph."""
    from .. import catalog
    from ..fileio import write_whole
    if args.csv:
        from ..analyses.plan import PLAN_COLUMNS
        from ..csvout import write_csv
        write_csv(df, ensure_parent(args.csv), PLAN_COLUMNS)
    models = {m: catalog.model(m) for m in set(df["model"])}
    if args.launch:
        from ..analyses.plan_launch import launch_text
        page = launch_text(df, models)
        if df["profile"].astype(str).str.startswith("dynamo-").any():     # the graph too (analyses/plan_graph)
            from ..analyses.plan_graph import graphs_yaml
            page += ("\n## Dynamo graph (DynamoGraphDeployment: kubectl apply -f; also --dynamo-graph FILE.yaml)"
                     "\n\n```yaml\n" + graphs_yaml(df, models).rstrip() + "\n```\n")
        write_whole(args.launch, page)
    if args.dynamo_graph:
        from ..analyses.plan_graph import graphs_yaml
        write_whole(args.dynamo_graph, graphs_yaml(df, models))


def run_plan(args):
    from ..analyses.plan import Limits, plan
    check_output(args.plot, "--plot", (".png",))
    check_output(args.csv, "--csv")
    check_output(args.launch, "--launch", (".md",))
    check_output(args.dynamo_graph, "--dynamo-graph", (".yaml", ".yml"))
    slo = plan_slo(args)
    limits = Limits(gpus=args.gpu_limit, mw=args.mw_limit, usd_per_hour=args.usd_per_hour_limit,
                    headroom=args.headroom)
    systems = [s if ":" in s else f"{s}:{args.profile}" for s in args.system]
    kw = frontier_kwargs(args)
    demand, scales, periods = _demand(args), _scales(args.demand_scale), None
    if args.demand_file:
        from ..analyses.plan import Demand
        from ..analyses.plan_error import read_demand_file
        if demand is not None or args.demand_scale != "1":
            raise SpecError("give --demand-file alone (not with another demand or --demand-scale)",
                            field="--demand-file")
        kind, periods, vals = read_demand_file(args.demand_file)
        demand, scales = Demand(kind, 1.0), tuple(vals)
    df = plan(args.model, workload_of(args), systems, demand, slo, scales, limits, power_basis=args.power_basis,
              periods=periods, **kw)
    _write_files(args, df)
    if args.plot:
        from ..plots import plan_plot
        plan_plot(df, args.plot, args.plot_metric)
    if args.json:
        import json
        print(dumps_json({"slo": slo.text(), "errors": df.attrs.get("errors", []),
                          "rows": json.loads(df.to_json(orient="records"))}))
        return 0
    print(f"plan: model={df['model'].iloc[0]} workload={df['workload'].iloc[0]}  SLO: {slo.text()}  "
          f"demand: {df['demand_kind'].iloc[0]}")
    for name, g in df.groupby("system", sort=False):            # named, in the order the systems were given
        print(f"  {name}: power basis {g['power_basis'].iloc[0]}; price basis {g['price_basis'].iloc[0]} "
              "(USD/month = USD/h x 730)")
    board = list(dict.fromkeys(df.loc[df["power_basis"].str.startswith("gpu_tdp_w"), "system"]))
    if board and args.power_basis == "board":
        print(f"  power bases differ: {', '.join(board)} board power only (no all-in figure in the catalog); its MW "
              "is below an all-in figure and not comparable with the others'")
    print("  racks as bought: units packed whole into scale-up domains (scaleup_domains, packing); MW and USD count "
          "the GPUs of the domains bought (gpus_bought)")
    wl_id = str(df["workload"].iloc[0])
    if wl_id.startswith("agentx") and wl_id not in (AGENTX_RECOMMENDED, "agentx-062126-256k"):
        print(f"  AgentX-like traffic: the recommended workload is {AGENTX_RECOMMENDED} (the current InferenceX "
              "harness on the full trace, E2E-normalised P90 axis; agentx-062126-256k for 262k-context models); "
              f"this plan reads {wl_id}")
    if args.min_tps_per_user is not None and slo.speed_percentile is None and bool(df["pause_mean_s"].gt(0).any()):
        e2e = ", ".join(f"{n} {v:.4g}" for n, v in zip(df["system"], df["tps_per_user_e2e_p90"]))
        print(f"  the speed floor reads the decode speed (1000 / TPOT); AgentX figures (perfmodel check) read the "
              f"E2E-normalised P90, here {e2e} tok/s/user: --speed-axis e2e --speed-percentile 90 plans on that axis")
    if (line := unmeasured(df)) is not None:
        print(f"  {line}")
    for e in df.attrs.get("errors", []):
        print(f"  not planned: {e}")
    for name, g in df.groupby("system", sort=False):
        top = g.loc[g["gpus"].idxmax()]
        print(f"  {name}: count to sign {top['gpus_bias_corrected']:,.0f} GPUs (the model reads "
              f"{top['model_over_true']:.2f}x the measured throughput at the median of its held-out records; "
              f"80%: {top['gpus_low']:,.0f}-{top['gpus_high']:,.0f}); {top['error_basis']}; SLO margin: "
              f"{top['slo_margin']}")
        print(f"  {name}: deployment {top['envelope']}")
    if periods is not None:
        for name, g in df.groupby("system", sort=False):
            top = g.loc[g["gpus"].idxmax()]
            adds = ", ".join(f"{p} +{int(a)}" for p, a in zip(g["period"], g["domains_to_add"]) if a > 0)
            print(f"  {name}: at the peak period {top['period']}: {top['gpus']:,.0f} GPUs "
                  f"({top['gpus_low']:,.0f}-{top['gpus_high']:,.0f}) in {top['scaleup_domains']:,.0f} domains, "
                  f"{top['mw']:.3g} MW; domains to add: {adds}")
    print(format_table(df.assign(binding=df["binding"] + df["status"].where(df["status"] != "ok", "").radd(" ")
                           .where(df["status"] != "ok", "")), TABLE))
    return 0
