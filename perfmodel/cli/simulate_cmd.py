"""`perfmodel simulate SCENARIO.yaml`: the reference event simulation of one engine instance."""

from __future__ import annotations

from ..fileio import check_output, dumps_json, write_whole
from ..numfmt import fmt_number
from .main import positive_int

SHOWN = ["request_rate_per_s", "total_tps_per_gpu", "output_tps_per_gpu", "input_tps_per_gpu", "prefix_hit",
         "tps_per_user", "tpot_ms", "tpot_p90_ms", "tpot_p99_ms", "ttft_ms", "ttft_mean_ms", "ttft_p90_ms",
         "ttft_p99_ms", "e2e_ms", "e2e_p90_ms", "in_system_little", "requests", "measured_requests", "window_s"]


def register(sub):
    p = sub.add_parser("simulate", help="reference event simulation of one aggregated engine instance (same step "
                                        "equations): throughput and TTFT / TPOT / E2E percentiles per request")
    p.add_argument("scenario", help="scenario YAML (deployment.concurrency: closed-loop clients, or "
                                    "deployment.arrival_rate: open loop)")
    p.add_argument("--requests", type=positive_int, default=10_000, help="requests to complete (default 10,000)")
    p.add_argument("--seed", type=int, default=0, help="random seed, 0 to 2^32-1 (default 0)")
    p.add_argument("--out", help="per-request CSV (sent, first token, done, lengths, TTFT, TPOT, E2E)")
    p.add_argument("--json", action="store_true", help="the summary as JSON")
    p.set_defaults(func=run)


def run(args):
    from ..errors import SpecError
    if not 0 <= args.seed < 2 ** 32:
        raise SpecError(f"must be an integer in [0, 2^32), got {args.seed}", field="--seed")
    check_output(args.out, "--out", (".csv",))
    from .. import api
    scenario = api.load_scenario(args.scenario)
    summary, df = api.simulate(scenario, requests=args.requests, seed=args.seed)
    if args.out:
        write_whole(args.out, df.to_csv(index=False, float_format="%.6g"))
    if args.json:
        print(dumps_json(summary))
        return 0
    if summary.get("overloaded"):
        print(summary["overload"])
    for k in SHOWN:
        print(f"{k:>20}  {fmt_number(summary[k], 4)}")
    return 0
