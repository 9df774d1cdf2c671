"""Sensitivity: elasticities d ln(throughput) / d ln(p) at one operating point, from sympy derivatives.

At a fixed deployment and batch, the decode-step throughput per GPU is B a / (step G), so for every parameter
p that is not the batch or the acceptance length,  d ln T / d ln p = -(p / step) dstep/dp. (These are the
elasticities of the steady decode rate at the operating point's load: the share of steps that carry a
prefill chunk is taken from the queueing layer and held fixed; the per-request prefill and queueing time
that the closed-loop throughput also counts, serving/queueing.py, is not in them.)  The derivative is the sympy
derivative of the engine's TPOT expression (``compiled(model).decode``), taken by the chain rule over its
common subexpressions (``forward_derivatives``), lambdified once per model and cached; no finite differences. A hardware field maps to the symbols it binds (FP8 FLOP/s feeds F_fp8 and,
with FP8 weights, F_x and F_a), found by binding the field at two values; the elasticity is the sum over
those symbols. ``capacity_elasticity`` is d ln(max batch) / d ln p (memory size, workspace, formats): it
matters at the peak, where the batch sits at capacity. The acceptance rate enters through
a = (1 - p^(k+1)) / (1 - p).

Homogeneity check (Euler): scaling every rate by k and every latency by 1/k scales throughput by k, so the
rate elasticities minus the latency elasticities sum to 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..engine.bind import PROFILE_SYMBOLS
from ..engine.compiled import compiled
from ..engine.evaluate import POINT_COLUMNS, symbol_inputs
from ..errors import SpecError
from ..formats import check_formats
from ..serving.aggregated import chunk_mixture, evaluate
from ..spec_decoding import acceptance_length_expr
from ..specs.hardware import HARDWARE_FIELDS, power_field
from ..specs.profile import DISCRETE_PARAMS, PROFILE_PARAMS
from .deployments import SERVING_MIX
from .frontier import X, frontier
from .systems import DEFAULT_PROFILE, HW_GROUP_OF, System, as_model, as_system, lengths_for

if TYPE_CHECKING:
    import sympy as sp

# sympy is imported by the functions that take derivatives: importing perfmodel.analyses does not load it

_DERIV_CACHE: dict[int, tuple] = {}
OPERATING = {"B": "batch", "acc": "acceptance_length"}
METRICS = ("total_tps_per_gpu", "output_tps_per_gpu", "tps_per_user", "total_tps_per_mw", "total_tokens_per_usd")


def forward_derivatives(exprs: list[sp.Expr], wrt: list[sp.Symbol]):
    """Exact symbolic derivatives of ``exprs`` by forward-mode chain rule over their common subexpressions.

    sympy's cse splits the expressions into small assignments x_i = f_i(...); the derivative of each one,
    d x_i / d p = sum_s (d f_i / d s) (d s / d p), is a small sympy derivative (sp.diff). The result is the same
    expression as sp.diff of the whole tree, built ~5x faster. Returns (assignments, outputs): outputs are
    ``exprs`` followed by p * d expr / d p for each expr and each p in ``wrt``.
    """
    import sympy as sp
    rep, red = sp.cse(exprs, symbols=sp.numbered_symbols("_cse"))
    cse_syms = {x for x, _ in rep}
    d: dict[sp.Symbol, dict] = {p: {} for p in wrt}
    assigns: list[tuple[sp.Symbol, sp.Expr]] = []
    counter = iter(range(10**9))

    def terms(f, p):
        out = []
        for s in f.free_symbols:
            if s == p:
                out.append(sp.diff(f, s))
            elif s in cse_syms and s in d[p]:
                out.append(sp.diff(f, s) * d[p][s])
        return out

    for x, f in rep:
        assigns.append((x, f))
        for p in wrt:
            t = terms(f, p)
            if t:
                sym = sp.Symbol(f"_dcse{next(counter)}")
                assigns.append((sym, sp.Add(*t)))
                d[p][x] = sym
    outs = list(red)
    for e in red:
        for p in wrt:
            t = terms(e, p)
            outs.append(p * sp.Add(*t) if t else sp.Integer(0))
    return assigns, outs


def derivative_functions(model):
    """(fn, args, syms): fn(*args) -> [tpot, max_batch, p dTPOT/dp for p in syms..., p dBmax/dp for p in syms...].

    Built once per model structure and cached. Lambdified with the engine's own numpy mapping of its
    functions (max/min/Heaviside/ceiling), taken from the namespace of the engine's compiled decode function.
    """
    cm = compiled(as_model(model))
    key = id(cm)
    if key not in _DERIV_CACHE:
        import sympy as sp
        dec = cm.decode
        tpot = dec.exprs[dec.names.index("step_s")]
        cap = dec.exprs[dec.names.index("max_batch")]
        wanted = set(PROFILE_SYMBOLS_SYMS()) | set(HW_SYMBOL_NAMES) | set(OPERATING) | set(KERNEL_FLOOR_SYMBOLS) \
            | {"a_1s", "a_2s"}
        args = sorted(tpot.free_symbols | cap.free_symbols, key=lambda s: s.name)
        wrt = [s for s in args if s.name in wanted]
        assigns, outs = forward_derivatives([tpot, cap], wrt)
        namespace = {k: v for k, v in dec.fn.__globals__.items() if not k.startswith("__")}
        fn = sp.lambdify(args, outs, modules=[namespace, "numpy"], cse=lambda _exprs: (assigns, outs))
        _DERIV_CACHE[key] = (fn, [a.name for a in args], [s.name for s in wrt])
    return _DERIV_CACHE[key]


def PROFILE_SYMBOLS_SYMS():  # noqa: N802
    return [sym for sym, _ in PROFILE_SYMBOLS.values()]


KERNEL_FLOOR_SYMBOLS = ("t_gemm0", "t_attn0", "t_moe0")
"""Launch floors fitted on the kernel tables (engine/kernel_bind.py): one latency parameter together."""
HW_SYMBOL_NAMES = ("BW_hbm", "C_hbm", "F_bf16", "F_fp8", "F_x", "F_a", "BW_link", "lat_link", "BW_nic", "D_dom",
                   "BW_host", "BW_hmem")


def field_symbols(setup, fields: dict) -> dict[str, list[str]]:
    """Hardware field -> symbols whose bound value (Setup.symbol_values) is proportional to it (bind at 1x and
    2x); a symbol that moves with a field but not in proportion is an error (its elasticity would be wrong)."""
    base = setup.symbol_values(fields=fields)
    out = {}
    for f, v in fields.items():
        if v is None:
            continue
        moved = setup.symbol_values(fields={**fields, f: 2 * v})
        syms = []
        for s, b0 in base.items():
            b1 = moved[s]
            if b0 and abs(b1 / b0 - 2) < 1e-12:
                syms.append(s)
            elif b0 != b1:
                raise SpecError(f"symbol {s} is not proportional to {f}", field="sensitivity")
        out[f] = syms
    return out


def operating_point(system: System | str, model, workload="fixed-1k1k", profile=DEFAULT_PROFILE, *,
                    at_tps_per_user: float | None = None, peak: bool = False, metric: str = "total_tps_per_gpu",
                    **frontier_kw) -> pd.Series:
    """A frontier point: the first one reaching ``at_tps_per_user`` (an enumerated deployment), or the peak."""
    front = frontier(system, model, workload, profile, **frontier_kw)
    if at_tps_per_user is not None:
        ok = front[front[X] >= at_tps_per_user]
        if ok.empty:
            raise SpecError(f"{front.attrs['system']} does not reach {at_tps_per_user:g} tok/s/user "
                            f"(max {front[X].max():.1f})", field="--at-tps-per-user")
        return ok.iloc[0]
    m = metric if metric in front else "total_tps_per_gpu"
    return front.iloc[int(front[m].to_numpy().argmax())]


def sensitivity(system: System | str, model, workload="fixed-1k1k", profile=DEFAULT_PROFILE, *,
                point: dict | pd.Series | None = None, at_tps_per_user: float | None = None, peak: bool = False,
                weights: str = "fp8", kv_cache: str = "fp8", attention_weights: str | None = None,
                metric: str = "total_tps_per_gpu", **frontier_kw) -> pd.DataFrame:
    """Ranked elasticities of ``metric`` at an operating point, one row per hardware/profile parameter.

    ``point``: deployment keys (gpus, tp, ep, pp, batch, spec_tokens, serving; weights/kv_cache optional);
    otherwise the frontier point at ``at_tps_per_user`` or the peak.
    """
    if metric not in METRICS:
        raise SpecError(f"unknown metric {metric!r}; choose from {list(METRICS)}", field="metric")
    check_formats(weights, kv_cache, attention_weights)
    sysm = as_system(system, profile)
    m = as_model(model)
    if point is None:
        fw = dict(frontier_kw, weights=(weights,), kv_cache=kv_cache, attention_weights=attention_weights)
        point = operating_point(sysm, m, workload, profile, at_tps_per_user=at_tps_per_user, peak=peak, **fw)
    point = dict(point)
    setup = sysm.setup(m, weights=point.get("weights", weights), kv_cache=point.get("kv_cache", kv_cache),
                       attention_weights=attention_weights)
    p = _point_arrays(sysm, point, workload)
    vals = setup.symbol_values()
    d = _step_derivatives(setup, p, vals)
    if d.cap < p["batch"][0]:
        g = int(p["gpus"][0])
        raise SpecError(f"batch {p['batch'][0]:g} does not fit in memory on {g} GPU(s) of {sysm.name} "
                        f"(at most {max(int(np.floor(d.cap)), 0)} sequences fit); lower the batch or add GPUs",
                        field="deployment.batch" if d.cap >= 1 else "deployment.gpus")
    df = pd.DataFrame(_elasticity_rows(sysm, setup, vals, p, d, metric))
    at_cap = float(p["batch"][0]) >= np.floor(d.cap) * 0.999
    if at_cap:   # at the peak the batch follows capacity
        df["elasticity_at_capacity"] = df["elasticity"] + d.e_thr("B", metric) * df["capacity_elasticity"]
    df = df.iloc[np.lexsort((-df["capacity_elasticity"].abs().to_numpy(), -df["elasticity"].abs().to_numpy()))]
    df = df.reset_index(drop=True)
    df.attrs.update(system=sysm.name, metric=metric, serving=point.get("serving", "aggregated"),
                    tpot_ms=d.tpot * 1e3, max_batch=d.cap, at_capacity=bool(at_cap),
                    point={kk_: (v.item() if hasattr(v, "item") else v) for kk_, v in point.items()
                           if kk_ in ("weights", "kv_cache", "serving", "gpus", "tp", "dp", "ep", "pp", "spec_tokens",
                                      "acceptance_length", "batch", "tps_per_user", "total_tps_per_gpu", "bound")})
    return df


def _point_arrays(sysm: System, point: dict, workload) -> dict[str, np.ndarray]:
    """The operating point as one-element step-equation arrays (POINT_COLUMNS): lengths from the workload (an
    agentic point's uncached input after evictions), accepted tokens per step from the point or the profile."""
    lengths = lengths_for(workload)
    k = float(point.get("spec_tokens", 0))
    if "acceptance_length" in point:
        acc = float(point["acceptance_length"])
    else:
        from .systems import acceptance_length
        acc = float(acceptance_length(sysm.spec_rate(), k)) if k else 1.0
        if np.isnan(acc):
            raise SpecError(f"spec_tokens={k:g} but profile {sysm.profile_spec().id} has no acceptance rate",
                            field="spec_tokens")
    serving = point.get("serving", "aggregated")
    if serving not in SERVING_MIX:
        raise SpecError(f"unknown serving mode {serving!r}; choose from {sorted(SERVING_MIX)}", field="serving")
    if "uncached_input" in point and np.isfinite(point["uncached_input"]):
        lengths = {**lengths, "new": float(point["uncached_input"])}
    if "batch" not in point:
        raise SpecError("the operating point needs a batch", field="batch")
    p = {"batch": point["batch"], "gpus": point.get("gpus", 1), "tp": point.get("tp", 1), "ep": point.get("ep", 1),
         "pp": point.get("pp", 1), "spec_tokens": k, "acc": acc, "mix": SERVING_MIX[serving], **lengths}
    return {c: np.atleast_1d(np.asarray(p[c], dtype=float)) for c in POINT_COLUMNS}


@dataclass
class _Derivatives:
    """TPOT (s) and capacity (sequences) at the point, and their elasticities d ln / d ln symbol."""

    tpot: float
    cap: float
    e_tpot: dict[str, float]
    e_cap: dict[str, float]

    def e_thr(self, sym: str, metric: str) -> float:
        """Elasticity of throughput (per GPU, or per user for tps_per_user) = -d ln TPOT, plus 1 for the
        accepted tokens per step and (aggregate metrics) the batch."""
        e = -self.e_tpot.get(sym, 0.0)
        if sym == "acc" or (sym == "B" and metric != "tps_per_user"):
            e += 1.0
        return e


def _step_derivatives(setup, p: dict, vals: dict) -> _Derivatives:
    """Forward-mode derivatives of TPOT and capacity at the point. The steps are a mixture of bare and chunk steps,
    the share of chunk steps from the queueing layer (held fixed: elasticities of the decode step at this load)."""
    fn, args, syms = derivative_functions(setup.model)

    def at(points):
        x = symbol_inputs(points, vals)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.array([float(np.asarray(v, dtype=float).reshape(-1)[0]) for v in fn(*[x[a] for a in args])])

    share = float(evaluate(setup, p, symbol_values=vals)["chunk_step_share"].iloc[0])
    out = at({**p, "mix": np.zeros_like(p["mix"])})
    if share > 0:
        out = (1 - share) * out + share * at(chunk_mixture(p, vals)[2])
    tpot, cap, n = out[0], out[1], len(syms)
    return _Derivatives(tpot, cap, dict(zip(syms, np.array(out[2:2 + n]) / tpot)),
                        dict(zip(syms, np.array(out[2 + n:2 + 2 * n]) / cap)))


def _elasticity_rows(sysm: System, setup, vals: dict, p: dict, d: _Derivatives, metric: str) -> list[dict]:
    """One row per hardware field, profile parameter, the kernel launch floors, the acceptance rate (drafts on)
    and the batch."""
    def e_thr(sym: str) -> float:
        return d.e_thr(sym, metric)

    fields = sysm.fields()
    rows = []
    for f, syms in field_symbols(setup, fields).items():
        e = sum(e_thr(s) for s in syms)
        if (f == power_field(fields) and metric.endswith("_per_mw")) \
                or (f == "price_usd_per_gpu_hour" and metric.endswith("_per_usd")):
            e -= 1.0
        rows.append({"parameter": f, "kind": "hardware", "group": HW_GROUP_OF.get(f, ""), "value": fields[f],
                     "unit": HARDWARE_FIELDS[f][2], "symbols": " ".join(syms), "elasticity": e,
                     "capacity_elasticity": sum(d.e_cap.get(s, 0.0) for s in syms)})
    pvals = {**sysm.profile_spec().values(), **sysm.profile_overrides}
    for name, (sym, _k) in PROFILE_SYMBOLS.items():
        if name in DISCRETE_PARAMS:       # switches and integer limits have no elasticity
            continue
        desc, _lo, _hi, group = PROFILE_PARAMS[name]
        rows.append({"parameter": name, "kind": "profile", "group": group, "value": pvals[name], "unit": desc,
                     "symbols": sym, "elasticity": e_thr(sym), "capacity_elasticity": d.e_cap.get(sym, 0.0)})
    rows.append({"parameter": "kernel_launch_floors", "kind": "kernel", "group": "latency",
                 "value": sum(vals.get(x, 0.0) for x in KERNEL_FLOOR_SYMBOLS) * 1e6,
                 "unit": "us, launch floors of a layer's GEMM, attention and fused-MoE kernels (kernel fits; 0 "
                         "without)", "symbols": " ".join(KERNEL_FLOOR_SYMBOLS),
                 "elasticity": sum(e_thr(x) for x in KERNEL_FLOOR_SYMBOLS),
                 "capacity_elasticity": sum(d.e_cap.get(x, 0.0) for x in KERNEL_FLOOR_SYMBOLS)})
    k, rate = float(p["spec_tokens"][0]), sysm.spec_rate()
    if k > 0 and rate is not None:
        import sympy as sp
        pr, kk = sp.symbols("p k", positive=True)
        a = acceptance_length_expr(pr, kk)
        dlna = float((sp.diff(a, pr) * pr / a).subs({pr: rate, kk: k}))
        rows.append({"parameter": "acceptance_rate", "kind": "profile", "group": "speculative_decoding",
                     "value": rate, "unit": "per-draft acceptance probability", "symbols": "acc",
                     "elasticity": e_thr("acc") * dlna, "capacity_elasticity": 0.0})
    rows.append({"parameter": "batch", "kind": "operating_point", "group": "", "value": float(p["batch"][0]),
                 "unit": "sequences per instance", "symbols": "B", "elasticity": e_thr("B"),
                 "capacity_elasticity": 0.0})
    return rows
