"""`perfmodel check CLAIM` and `perfmodel report`: thin formatting over perfmodel.claims and perfmodel.report."""

from __future__ import annotations

import json


def __getattr__(name: str):
    """``format_check`` (the formatting lives with the checks, claims/describe.py), imported on first use."""
    if name == "format_check":
        from ..claims.describe import format_check
        return format_check
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check(args) -> int:
    from ..claims import check
    from ..claims.check import json_safe
    from ..claims.describe import format_check
    r = check(args.claim)
    print(json.dumps(json_safe(r), indent=2, allow_nan=False) if args.json else format_check(r))
    return 0


def _report(args) -> int:
    from ..fileio import check_output_dir
    from ..report import build_report
    check_output_dir(args.out, "--out")
    res = build_report(args.out)
    print(f"wrote {res['markdown']} ({res['claims']} claims, {res['figures']} figures, {res['csvs']} CSV files) "
          f"in {res['seconds']:.1f} s")
    return 0


def register(sub) -> None:
    from ..defaults import RULE
    p = sub.add_parser("check", help="check a published claim: verdict, band, curve ends, sensitivity, attribution",
                       epilog=RULE)
    p.add_argument("claim", help="claim catalog id or YAML path (see claims/)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_check)
    r = sub.add_parser("report", help="check every seed claim and write the report, plots and CSVs into reports/")
    r.add_argument("--out", default="reports", help="output directory (default reports/)")
    r.set_defaults(func=_report)
