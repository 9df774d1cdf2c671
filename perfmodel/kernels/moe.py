"""Fused MoE family: routing + grouped expert GEMMs (gate/up and down) of one rank, per (engine, kernel, format).

On one rank of an expert-TP x expert-parallel layout (tp = moe_tp_size, ep = moe_ep_size), T tokens routed
top-k over E experts give A = T k / ep token-expert pairs on E_l = E / ep local experts of inter size I / tp;
the measured rank's load and active experts D follow from the routing (``rank_load``). Tokens per active
expert tpe = A / D. The grouped GEMMs issue (``equations/gemm_shape.py`` grouped_issued_flops)
    W_up = 2 I/tp h (K = h),  W_down = h I/tp (K = I/tp)
and the curve is
    t = t0 + t_route T k + t_exp D + ( c^q + b^q )^(1/q)
    c = issued / (F e_c  tpe / (tpe + tpe_half)  tp^(-g_tp))
    b = (D 3 h I/tp s_w + a_act A h + a_tok T h) / (W e_b)
The table's distribution is the routing skew: power-law rows put s_d ep^sigma_d times the mean pairs on the
measured rank over fewer distinct experts (``rank_load``). tp^(-g_tp) the expert-TP penalty (short
per-expert reductions and narrow tiles of a split expert), a_act the activation bytes per routed pair and
hidden element (gather, scatter), a_tok per token of the whole batch (every rank quantizes, routes and
finalizes all T tokens), t_route the time per routed pair of the whole batch (sorting and permuting the
routing table, on every rank), t_exp the fixed cost of each active expert in the grouped launch. Shape groups held out: the model shape
(hidden, inter, top-k, experts).
"""

from __future__ import annotations

import numpy as np

from .fitting import Param
from .gpu import bytes_per_element
from .shape_physics import TILE_M_MIN, grouped_issued_flops

FAMILY = "moe"
TABLES = ("moe",)
COLUMNS = ["kernel_source", "moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts",
           "moe_tp_size", "moe_ep_size", "distribution", "latency"]
GROUP = ["hidden_size", "inter_size", "topk", "num_experts"]

PARAMS = [
    Param("eff_c", 0.5, 0.02, 1.0, doc="plateau share of the format's dense tensor peak in the grouped GEMMs"),
    Param("tpe_half", 2, 0.01, 1e4, unit="tokens", doc="tokens per active local expert at half compute efficiency"),
    Param("tile_m_min", 16, 1, 128, unit="rows", doc="smallest row tile of the kernel's grouped GEMM (the tokens of "
          "an expert are padded to it; swap-AB kernels go down to 8)"),
    Param("g_tp", 0.1, 0, 1.5, log=False, doc="expert-TP penalty exponent: efficiency x tp^-g_tp"),
    Param("eff_b", 0.6, 0.02, 1.0, doc="share of HBM bandwidth streaming the active experts' weights"),
    Param("act_bytes", 8, 0.1, 200, unit="bytes", doc="activation bytes per routed pair and hidden element"),
    Param("tok_bytes", 4, 0.01, 200, unit="bytes", doc="bytes per token and hidden element over all T tokens "
          "(every rank quantizes, routes and finalizes the whole batch, whatever its local share)"),
    Param("route_ps", 50, 0.01, 1e5, unit="ps", doc="time per routed pair of the whole batch (T k: sort, "
          "permute, scan of the routing table on every rank)"),
    Param("expert_ns", 50, 0.01, 1e5, unit="ns", doc="fixed cost per active local expert (its tile scheduling, "
          "prologue and epilogue in the grouped launch)"),
    Param("allpair_bytes", 1, 0.001, 100, unit="bytes", doc="bytes per routed pair of the whole batch and hidden "
          "element (the finalize / un-permute pass reads every pair's slot on every rank)"),
    Param("skew_pl101", 1.1, 1.0, 20, doc="busiest-rank load factor of power_law_1.01 routing at ep = 1"),
    Param("skew_ep_pl101", 0.2, 0.0, 1.0, log=False, doc="growth exponent of that factor with ep"),
    Param("cover_pl101", 1.3, 0.2, 50, doc="pairs per local expert for 63% of experts active, power_law_1.01"),
    Param("skew_pl12", 1.1, 1.0, 20, doc="busiest-rank load factor of power_law_1.2 routing at ep = 1"),
    Param("skew_ep_pl12", 0.25, 0.0, 1.0, log=False, doc="growth exponent of that factor with ep"),
    Param("cover_pl12", 1.5, 0.2, 50, doc="pairs per local expert for 63% of experts active, power_law_1.2"),
    Param("sharp", 3, 1, 20, doc="roofline corner sharpness q"),
    Param("t0_us", 20, 0.5, 500, unit="us", doc="launch latency (routing, sorting, the fused launches)"),
]


def features(tokens, hidden, inter, topk, experts, tp, ep, distribution, dtype: str, pk) -> dict:
    """Shape features of fused MoE layers (numpy arrays) on GPU ``pk``."""
    t, h, i, k, e, tp, ep = (np.asarray(x, dtype=float) for x in (tokens, hidden, inter, topk, experts, tp, ep))
    dist = np.asarray(distribution).astype(str)
    return dict(pairs=t * k / ep, local=e / ep, h=h, tok=t * h, all_pairs=t * k, il=i / tp, tp=tp, ep=ep, n_sm=pk.n_sm,
                flops=pk.flops(dtype), bw=pk.hbm_bw, s_w=bytes_per_element(dtype),
                pl101=(dist == "power_law_1.01"), pl12=(dist == "power_law_1.2"))


def rank_load(p: dict, f: dict):
    """(pairs, active experts) on the measured rank. Balanced routing spreads pairs over distinct experts:
    D = min(E_l, A). Power-law routing: A_r = A s_d ep^sigma_d pairs (the rank holding hot experts) on
    D = E_l (1 - exp(-A_r / (E_l c_d))) active experts."""
    s = np.ones_like(f["pairs"])
    cover = np.ones_like(f["pairs"])
    for d in ("pl101", "pl12"):
        m = f[d]
        s = np.where(m, p[f"skew_{d}"] * f["ep"] ** p[f"skew_ep_{d}"], s)
        cover = np.where(m, p[f"cover_{d}"], cover)
    pairs = f["pairs"] * s
    skewed = f["pl101"] | f["pl12"]
    active = np.where(skewed, f["local"] * -np.expm1(-pairs / (f["local"] * cover)), np.minimum(f["local"], pairs))
    return pairs, np.clip(active, 1.0, np.maximum(pairs, 1.0))


def latency_ms(p: dict, f: dict) -> np.ndarray:
    """The closed form above, in ms."""
    pairs, active = rank_load(p, f)
    h, il = f["h"], f["il"]
    mmin = p.get("tile_m_min", TILE_M_MIN)
    issued = (grouped_issued_flops(2 * il * h, pairs, active, h, f["n_sm"], tile_m_min=mmin)
              + grouped_issued_flops(h * il, pairs, active, il, f["n_sm"], tile_m_min=mmin))
    tpe = pairs / active
    eff = p["eff_c"] * tpe / (tpe + p["tpe_half"]) * f["tp"] ** (-p["g_tp"])
    c = issued / (f["flops"] * eff)
    b = (active * 3 * h * il * f["s_w"] + p["act_bytes"] * pairs * h + p["tok_bytes"] * f["tok"]
         + p.get("allpair_bytes", 0.0) * f["all_pairs"] * h) / (f["bw"] * p["eff_b"])
    q = p["sharp"]
    return ((c ** q + b ** q) ** (1 / q) * 1e3 + p["t0_us"] * 1e-3 + p["route_ps"] * 1e-9 * f["all_pairs"]
            + p.get("expert_ns", 0.0) * 1e-6 * active)


def variants(df, pk):
    for (engine, ks, dt), g in df.groupby(["engine", "kernel_source", "moe_dtype"], observed=True):
        f = features(g["num_tokens"].to_numpy(), g["hidden_size"].to_numpy(), g["inter_size"].to_numpy(),
                     g["topk"].to_numpy(), g["num_experts"].to_numpy(), g["moe_tp_size"].to_numpy(),
                     g["moe_ep_size"].to_numpy(), g["distribution"].to_numpy(), str(dt), pk)
        yield str(engine), f"{ks}/{dt}", f, g["latency"].to_numpy(), g[GROUP], f["pairs"] * f["h"] * f["il"]
