"""`perfmodel explain --model M [--latex]`: print the model's decode-step equations."""

from __future__ import annotations


def register(sub):
    p = sub.add_parser("explain", help="print the sympy equations of a model (text or LaTeX)")
    p.add_argument("--model", required=True)
    p.add_argument("--latex", action="store_true")
    p.set_defaults(func=run)


def run(args):
    from .. import catalog
    from ..explain import explain
    print(explain(catalog.model(args.model), latex=args.latex))
    return 0
