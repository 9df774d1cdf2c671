"""`perfmodel explain --model M [--latex]`: print the model's decode-step equations."""

from __future__ import annotations


def register(sub):
    p = sub.add_parser("explain", help="print the equations: all of them (no --model), or one model's "
                                      "sympy expressions (text or LaTeX)")
    p.add_argument("--model")
    p.add_argument("--latex", action="store_true")
    p.set_defaults(func=run)


def run(args):
    from .. import catalog
    from ..explain import equations_doc, explain
    print(explain(catalog.model(args.model), latex=args.latex) if args.model else equations_doc())
    return 0
