"""GEMM family: C[m, n] = A[m, k] B[k, n], one curve per (engine, kernel, format) on each GPU.

    t = t0 + ( c^q + b^q )^(1/q)                                       (a rounded roofline max; q -> inf: max)
    c = 2 k n_pad rows_pad(m) / (u F e_c  * k / (k + k_half) * m / (m + m_half) * occ^beta_c)
    b = (k n s_w + a_act m k + 2 m n) / (W e_b * occ^beta_b)
    occ = min(1, tiles / n_sm),  tiles = ceil(m / M_t) ceil(n / N_t),  n_pad = N_t ceil(n / N_t)

rows_pad and the wave utilization u are ``equations/gemm_shape.py`` (dense_issued_flops); F is the format's
dense tensor peak and W the HBM bandwidth of the hardware catalog; s_w bytes per weight element. e_c, e_b are
the plateau efficiencies; k_half / m_half the reduction and row lengths at which compute efficiency is half
(prologue/epilogue and narrow MMA); occ^beta the share of SMs a launch with fewer tiles than SMs still keeps
busy (beta = 0: split-K fills them; 1: idle); a_act the bytes per activation element moved (input
quantization passes included); t0 the launch latency. Shape groups held out: (n, k).
"""

from __future__ import annotations

import numpy as np

from .fitting import Param
from .gpu import bytes_per_element
from .shape_physics import TILE_M, TILE_N, dense_issued_flops

FAMILY = "gemm"
TABLES = ("gemm",)
COLUMNS = ["kernel_source", "gemm_dtype", "m", "n", "k", "latency"]
GROUP = ["n", "k"]

PARAMS = [
    Param("eff_c", 0.7, 0.05, 1.0, doc="plateau share of the format's dense tensor peak"),
    Param("k_half", 100, 1, 1e5, unit="elements", doc="reduction length at half compute efficiency"),
    Param("m_half", 4, 0.01, 1e4, unit="rows", doc="rows at half compute efficiency (narrow MMA)"),
    Param("beta_c", 0.5, 0, 1, log=False, doc="compute loss exponent of launches with fewer tiles than SMs"),
    Param("eff_b", 0.8, 0.05, 1.0, doc="plateau share of HBM bandwidth"),
    Param("beta_b", 0.3, 0, 1, log=False, doc="bandwidth loss exponent of launches with fewer tiles than SMs"),
    Param("act_bytes", 1.5, 0.3, 8, unit="bytes/element", doc="activation bytes moved per m x k element"),
    Param("sharp", 3, 1, 20, doc="roofline corner sharpness q (max at q -> inf)"),
    Param("t0_us", 5, 0.1, 100, unit="us", doc="launch latency"),
]


def features(m, n, k, dtype: str, pk) -> dict:
    """Shape features of GEMMs (numpy arrays m, n, k) on the GPU ``pk`` (kernels.gpu.GpuPeaks)."""
    m, n, k = (np.asarray(x, dtype=float) for x in (m, n, k))
    tiles = np.ceil(m / TILE_M) * np.ceil(n / TILE_N)
    return dict(m=m, k=k, mk=m * k, occ=np.minimum(1.0, tiles / pk.n_sm),
                issued=dense_issued_flops(m, n, k, pk.n_sm) * np.ceil(n / TILE_N) * TILE_N / n,
                flops=pk.flops(dtype), bw=pk.hbm_bw,
                fixed_bytes=k * n * bytes_per_element(dtype) + 2 * m * n)


def latency_ms(p: dict, f: dict) -> np.ndarray:
    """The closed form above, in ms."""
    eff = p["eff_c"] * f["k"] / (f["k"] + p["k_half"]) * f["m"] / (f["m"] + p["m_half"]) * f["occ"] ** p["beta_c"]
    c = f["issued"] / (f["flops"] * eff)
    b = (f["fixed_bytes"] + p["act_bytes"] * f["mk"]) / (f["bw"] * p["eff_b"] * f["occ"] ** p["beta_b"])
    q = p["sharp"]
    return (c ** q + b ** q) ** (1 / q) * 1e3 + p["t0_us"] * 1e-3


def variants(df, pk):
    """(engine, variant, features, latency ms, group keys, plot size) per engine, kernel and format."""
    for (engine, ks, dt), g in df.groupby(["engine", "kernel_source", "gemm_dtype"], observed=True):
        f = features(g["m"].to_numpy(), g["n"].to_numpy(), g["k"].to_numpy(), str(dt), pk)
        yield (str(engine), f"{ks}/{dt}", f, g["latency"].to_numpy(), g[GROUP],
               2 * f["m"] * g["n"].to_numpy() * f["k"])
