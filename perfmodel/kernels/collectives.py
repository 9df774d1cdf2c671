"""Collectives family: the engines' custom all-reduce and NCCL all-reduce / all-gather, by group and size.

A collective of x bytes (the tables' message_size elements times the element size) over n GPUs of link
bandwidth B per direction (hardware catalog, scale-up) takes the faster of two algorithms, each a latency plus
a size term:
    t = min( a_1 n^g_1 + k_1 x / (B e_1),  a_2 n^g_2 + k_2 x / (B e_2) )
all-reduce:  k_1 = n - 1        (one-shot: every GPU reads all peers' buffers; NCCL's low-latency protocol)
             k_2 = 2 (n - 1) / n (two-shot / ring: reduce-scatter then all-gather)
all-gather:  k_1 = k_2 = (n - 1) / n   (the two regimes are NCCL's LL and Simple protocols)
a_i n^g_i is the algorithm's latency at group n (synchronization rounds grow with the group), e_i its share
of the link bandwidth. Shape groups held out: whole message sizes (every group size of that size).
"""

from __future__ import annotations

import numpy as np

from ..formats import table_element_bytes
from .fitting import Param

FAMILY = "allreduce"
TABLES = ("custom_allreduce", "nccl")
COLUMNS = ["kernel_source", "op_name", "allreduce_dtype", "nccl_dtype", "num_gpus", "message_size", "latency"]
GROUP = ["message_size"]

PARAMS = [
    Param("lat1_us", 3, 0.05, 500, unit="us", doc="latency of the small-message algorithm at n = 1 (one-shot / LL)"),
    Param("g1", 0.3, 0.0, 2.0, log=False, doc="growth exponent of that latency with the group"),
    Param("eff1", 0.3, 0.005, 1.0, doc="link-bandwidth share of the small-message algorithm"),
    Param("lat2_us", 8, 0.05, 1000, unit="us", doc="latency of the large-message algorithm (two-shot / ring)"),
    Param("g2", 0.3, 0.0, 2.0, log=False, doc="growth exponent of that latency with the group"),
    Param("eff2", 0.6, 0.005, 1.0, doc="link-bandwidth share of the large-message algorithm"),
]

def features(n, message_elems, elem_bytes: float, op: str, pk) -> dict:
    n = np.asarray(n, dtype=float)
    x = np.asarray(message_elems, dtype=float) * elem_bytes
    if op == "all_reduce":
        k1, k2 = n - 1, 2 * (n - 1) / n
    else:
        k1 = k2 = (n - 1) / n
    return dict(n=n, x=x, k1=k1, k2=k2, bw=pk.link_bw)


def latency_ms(p: dict, f: dict) -> np.ndarray:
    t1 = p["lat1_us"] * 1e-6 * f["n"] ** p["g1"] + f["k1"] * f["x"] / (f["bw"] * p["eff1"])
    t2 = p["lat2_us"] * 1e-6 * f["n"] ** p["g2"] + f["k2"] * f["x"] / (f["bw"] * p["eff2"])
    return np.minimum(t1, t2) * 1e3


def family_of(table: str, variant: str = "") -> str:
    return "all_gather" if variant.startswith("nccl:all_gather") else "allreduce"


def variants(df, pk):
    table = df.attrs.get("table")
    if table == "custom_allreduce":
        for (engine, ks, dt), g in df.groupby(["engine", "kernel_source", "allreduce_dtype"], observed=True):
            f = features(g["num_gpus"].to_numpy(), g["message_size"].to_numpy(), table_element_bytes(dt),
                         "all_reduce", pk)
            yield str(engine), f"custom:{ks}/{dt}", f, g["latency"].to_numpy(), g[GROUP], f["x"]
        return
    df = df[df["op_name"].isin(["all_reduce", "all_gather"])]
    for (engine, op, dt), g in df.groupby(["engine", "op_name", "nccl_dtype"], observed=True):
        f = features(g["num_gpus"].to_numpy(), g["message_size"].to_numpy(), table_element_bytes(dt),
                     str(op), pk)
        yield str(engine), f"nccl:{op}/{dt}", f, g["latency"].to_numpy(), g[GROUP], f["x"]
