"""`perfmodel predict SCENARIO.yaml` (or the same with flags)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..fileio import check_output, dumps_json, ensure_parent
from ..numfmt import fmt_number
from .main import finite_float, positive_int

if TYPE_CHECKING:
    from ..specs.deployment import Scenario

# the command's work (api, the specs, the serving layer) is imported when it runs, not when the parser is built

KEY_COLUMNS = ["hardware", "model", "profile", "batch", "tpot_ms", "ttft_ms", "tps_per_user", "tps_per_user_e2e",
               "output_tps_per_gpu", "total_tps_per_gpu", "total_tps_per_mw", "mem_gb_per_gpu", "max_batch",
               "fits", "bound", "fit_reason"]


EXTRA_COLUMNS = ["serving", "input_tps_per_gpu", "sessions", "prefix_hit", "kv_in_host_share", "evicted_share",
                 "host_kv_gb_per_gpu", "prefill_gpus", "decode_gpus", "kv_transfer_ms", "prefill_queue_ms",
                 "prefill_utilization", "note"]


def register(sub):
    from ..defaults import RULE
    p = sub.add_parser("predict", help="predict one operating point from a scenario YAML (or flags)", epilog=RULE)
    p.add_argument("scenario", nargs="?", help="scenario YAML (README: 'Scenario files')")
    p.add_argument("--hardware")
    p.add_argument("--model")
    p.add_argument("--profile", help="software profile (default vllm; speed-of-light = the roofline bound)")
    p.add_argument("--workload", help="workload catalog id")
    p.add_argument("--isl", type=finite_float)
    p.add_argument("--osl", type=finite_float)
    p.add_argument("--prefix-hit", type=finite_float)
    for k in ("gpus", "tp", "ep", "pp", "batch"):
        p.add_argument(f"--{k}", type=positive_int)
    p.add_argument("--spec-tokens", type=int)
    p.add_argument("--acceptance-length", type=finite_float)
    p.add_argument("--concurrency", type=finite_float, metavar="C",
                   help="clients in flight per instance: a closed loop, each sends its next request when the last "
                        "one ends (agentic workloads: live sessions); sets the running batch and the TTFT queue")
    p.add_argument("--rate", dest="arrival_rate", type=finite_float, metavar="REQ_PER_S",
                   help="open loop: requests/s arriving at one instance (Poisson); sets the running batch and "
                        "the TTFT queue (P50 ttft_ms, P90 ttft_p90_ms, P99 ttft_p99_ms; TPOT tail tpot_p99_ms)")
    p.add_argument("--dp-attention", action="store_true", default=None)
    p.add_argument("--weights", help="weight format (default fp8, or the model's native format where narrower)")
    p.add_argument("--kv-cache")
    p.add_argument("--serving")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="hardware override, e.g. --set hbm_bandwidth_tbps=8")
    p.add_argument("--allow-overflow", action="store_true",
                   help="print the numbers of a deployment that does not fit in memory (exit status 1) "
                        "instead of stopping with an error")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--csv", nargs="?", const="-", default=None, metavar="FILE",
                     help="write the row as CSV to FILE (as --csv does in every other command); "
                          "without FILE, to standard output")
    p.set_defaults(func=run)


def _scenario(args) -> Scenario:
    from pydantic import ValidationError

    from .. import api
    from ..errors import SpecError, pydantic_to_spec_error
    from ..specs.deployment import Scenario
    base = {}
    if args.scenario:      # validated as written, then taken as written: unset fields keep the default rule
        import copy

        from .. import catalog
        api.load_scenario(args.scenario)
        base = copy.deepcopy(catalog.load_yaml(Path(args.scenario)))
        base["deployment"] = dict(base.get("deployment") or {})
    for k in ("hardware", "model", "profile"):
        if getattr(args, k) is not None:
            if not getattr(args, k).strip():
                raise SpecError("must not be empty", field=f"--{k}")
            base[k] = getattr(args, k)
    dep = base.get("deployment", {})
    for k in ("gpus", "tp", "ep", "pp", "batch", "spec_tokens", "acceptance_length", "dp_attention", "weights",
              "kv_cache", "serving", "concurrency", "arrival_rate"):
        v = getattr(args, k)
        if v is not None:
            dep[k] = v
    base["deployment"] = dep
    if args.workload:
        base["workload"] = args.workload
    elif args.isl is not None or args.osl is not None or args.prefix_hit is not None:
        given = base.get("workload")
        w = given if isinstance(given, dict) else {}
        w.update({k: v for k, v in (("isl", args.isl), ("osl", args.osl), ("prefix_hit", args.prefix_hit)) if v is not None})
        missing = [f"--{k}" for k in ("isl", "osl") if k not in w]
        if missing:
            raise SpecError(f"give {' and '.join(missing)} with --isl/--osl/--prefix-hit (or a --workload id)",
                            field=missing[0])
        base["workload"] = w
    ov = base.setdefault("overrides", {"hardware": {}, "profile": {}})
    for item in args.set:
        if "=" not in item:
            raise SpecError(f"expected FIELD=VALUE, got {item!r}", field="--set")
        k, v = item.split("=", 1)
        try:
            ov.setdefault("hardware", {})[k] = float(v)
        except ValueError:
            raise SpecError(f"{v!r} is not a number", field=f"--set {k}") from None
    _check_ids(base)
    try:
        return Scenario.model_validate(base)
    except ValidationError as exc:
        raise pydantic_to_spec_error(exc, file=args.scenario or "command line") from None


def overrides_text(scenario: Scenario) -> str:
    """The scenario's overrides (``--set`` and ``overrides:``) as ``hardware.FIELD=V; profile.PARAM=V`` ('' if none)."""
    ov = scenario.overrides
    return "; ".join(f"{kind}.{k}={fmt_number(v, 6)}" for kind, d in (("hardware", ov.hardware), ("profile", ov.profile))
                     for k, v in sorted(d.items()))


def _check_ids(base: dict) -> None:
    """Resolve the catalog ids first, so a typo in an id is the error reported, not a deployment shape."""
    from .. import catalog
    for key, load in (("hardware", catalog.hardware), ("model", catalog.model), ("profile", catalog.profile),
                      ("workload", catalog.workload)):
        v = base.get(key)
        if isinstance(v, str):
            load(v)


def run(args):
    from .. import api
    from ..errors import SpecError
    from ..serving.result import record, units
    if args.csv and args.csv != "-":
        if args.csv.lower().endswith((".yaml", ".yml")):
            raise SpecError(f"{args.csv} looks like a scenario; give it before --csv, or --csv FILE.csv",
                            field="--csv")
        check_output(args.csv, "--csv", (".csv",))
    if not args.scenario and (args.hardware is None or args.model is None):
        raise SpecError("give a scenario YAML, or at least --hardware and --model", field="scenario")
    scenario = _scenario(args)
    api.predict_point_cache_clear()    # every command binds the catalog as it is now (a long-lived process too)
    try:   # the CSV writes a frame; text and JSON read the row (api.predict_point: predict's row, no frame)
        df = api.predict(scenario) if args.csv else None
        row = df.iloc[0].to_dict() if df is not None else api.predict_point(scenario)
    except SpecError as exc:   # a deployment/override problem names the scenario file it came from
        if args.scenario and exc.field and exc.field.split(".")[0] in ("deployment", "overrides", "workload"):
            raise exc.in_file(args.scenario) from None
        raise
    if not row["fits"] and not args.allow_overflow:
        reason = row["fit_reason"]
        if reason.startswith("arrival_rate"):
            raise SpecError(f"{reason} (--allow-overflow prints the numbers at its capacity anyway)",
                            field="deployment.arrival_rate")
        field = "deployment.gpus" if row["kv_max_batch"] < 1 else "deployment.batch"
        what = "exceeds the running-request cap" if "running-request cap" in reason else "does not fit in memory"
        if "running-request cap" in reason:
            field = "deployment.max_running_requests"
        raise SpecError(f"the deployment {what}: {reason} "
                        "(--allow-overflow prints the numbers anyway)", field=field)
    row["overrides"] = overrides_text(scenario)     # what was changed from the catalog, in every output
    if df is not None:
        from ..csvout import write_csv
        from ..serving.result import csv_columns
        df = df.assign(overrides=row["overrides"])
        cols = csv_columns(list(df.columns))        # the declared set: the same single columns for every scenario
        if args.csv == "-":
            write_csv(df, "-", cols)
            return 0
        ensure_parent(args.csv)
        write_csv(df, args.csv, cols)
        print(f"wrote {args.csv}")
        return 0
    if args.json:
        cols = [k for k in row if k != "overrides"]
        rec = record({k: row[k] for k in cols})          # the declared columns, in schema order
        rec["overrides"] = scenario.overrides.model_dump()
        rec["units"] = units(cols)
        rec["breakdown"] = {
            "component_ms": {k[2:-3]: rec[k] for k in row if k.startswith("t_") and k.endswith("_ms")},
            "resource_ms": {k[4:-3]: rec[k] for k in row if k.startswith("res_")}}
        print(dumps_json(rec))
        return 0
    extra = [k for k in EXTRA_COLUMNS if k in row] + [k for k in row if k.startswith("tps_per_user_e2e_p")]
    for k in KEY_COLUMNS[:3] + ["overrides"] + KEY_COLUMNS[3:] + extra:
        v = row[k]
        print(f"{k:>20}: {fmt_number(v) if v != '' else 'none (catalog values)'}")
    print("  decode step by resource (ms):")
    for k in row:
        if k.startswith("res_") and row[k] > 0:
            print(f"{k[4:-3]:>20}: {fmt_number(row[k])}")
    print("  decode step by component (ms):")
    for k in row:
        if k.startswith("t_") and k.endswith("_ms") and row[k] > 0:
            print(f"{k[2:-3]:>20}: {fmt_number(row[k])}")
    return 0 if row["fits"] else 1
