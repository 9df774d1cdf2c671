"""Print the equations themselves: the notation table and, per layer group, each kernel's compute and
memory time and the layer's link and latency terms (decode form), as sympy text or LaTeX.

These are the same expressions the engine lambdifies; architecture numbers are already substituted.
"""

from __future__ import annotations

import sympy as sp

from .equations.roofline import Tally
from .equations.step import Phase, StepBuilder
from .equations.symbols import S, notation_markdown
from .specs.model import ModelSpec


def explain(model: ModelSpec, latex: bool = False) -> str:
    """Markdown text: notation, then per layer group the decode-step terms of one layer."""
    b = StepBuilder(model)
    s = S
    ph = Phase(seqs=s["B"], dec_tokens=s["B"] * s["q"], pf_tokens=0, L_dec=s["L"], L_pf=0, kv_ctx=s["L"],
               logits=s["B"] * s["q"], speedup=s["s_dec"])
    fmt = sp.latex if latex else (lambda e: sp.sstr(sp.simplify(e) if e.count_ops() < 60 else e))
    out = [f"# Decode-step equations of {model.id} (one layer of each group; pp = 1, no mixed prefill)", "",
           "## Notation", "", notation_markdown(), "",
           "Kernel time = max(compute, memory) / s_dec; layer = max(t_floor, sum of kernels) + visible link "
           "time + collectives x (lat_link + t_coll) + t_lay.", ""]
    for g in model.layers:
        tally = Tally()
        floor, link, lat = b.layer(g.attention, g.ffn, ph, tally, 1)
        out += [f"## {g.count} x layer ({g.attention} attention, {g.ffn} FFN){' - ' + g.where if g.where else ''}", ""]
        for k in tally.kernels:
            out.append(f"- `{k.name}` compute: `{fmt(k.compute)}`")
            out.append(f"- `{k.name}` memory: `{fmt(k.memory)}`")
        out.append(f"- link bytes per GPU: `{fmt(tally.counts.get('bytes_link', 0))}`")
        out.append(f"- collectives: `{fmt(tally.counts.get('collectives', 0))}`")
        out.append("")
    return "\n".join(out)
