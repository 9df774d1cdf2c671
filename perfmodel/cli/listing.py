"""`perfmodel list KIND` and `perfmodel show ID`."""

from __future__ import annotations

from ..fileio import dumps_json
from ..numfmt import fmt_number


def register(sub):
    p = sub.add_parser("list", help="list catalog entries with derived figures")
    p.add_argument("kind", choices=["hardware", "models", "workloads", "profiles", "claims"])
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_list)
    s = sub.add_parser("show", help="show one catalog entry (any kind) with derived figures")
    s.add_argument("id")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=run_show)


def run_list(args):
    import numpy as np
    import pandas as pd

    from .. import describe
    df = describe.table(args.kind)
    if args.json:
        print(dumps_json(df.to_dict(orient="records")))
    else:
        shown = df.map(lambda v: ",".join(v) if isinstance(v, list) else v)   # lists read as a, b in text
        shown = shown.replace([np.inf, -np.inf], np.nan)
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print(shown.to_string(index=False, na_rep="n/a"))
    return 0


def _lines(d: dict, indent: int = 0) -> list[str]:
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out.append(" " * indent + f"{k}:")
            out += _lines(v, indent + 2)
        else:
            out.append(" " * indent + f"{k}: {fmt_number(v)}")
    return out


def run_show(args):
    from .. import describe
    kind, d = describe.show(args.id)
    if args.json:
        print(dumps_json(d))
    else:
        print(f"[{kind}]")
        print("\n".join(_lines(d)))
    return 0
