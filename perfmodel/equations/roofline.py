"""Roofline building blocks.

A kernel with FLOPs f at rate F (efficiency e_F) and bytes m at bandwidth W (efficiency e_W) takes
    t = max(f / (F e_F), m / (W e_W)).
A collective moving m bytes per GPU over an instance of G GPUs in domains of D_dom GPUs takes
    t = m / (BW_coll e_ln) + latency,  1/BW_coll = (1 - f_out)/BW_link + f_out/BW_nic,
    f_out = max(0, 1 - D_dom/G)  (share of peers outside the scale-up domain).
A ring all-reduce of x bytes sends 2 (n-1)/n x bytes per GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ..model.vocabulary import (  # noqa: F401 - the vocabulary, re-exported for the equations
    Ceil,
    Floor,
    SMax,
    SMin,
    ceil_,
    expected_max_normal,
    floor_,
    indicator_gt1,
    smax,
    smin,
)
from .symbols import S


@dataclass
class Kernel:
    """One kernel's demand: compute time and memory time (already divided by rates)."""

    name: str
    compute: sp.Expr
    memory: sp.Expr

    @property
    def time(self):
        return smax(self.compute, self.memory)


@dataclass
class Tally:
    """Accumulates kernels, link bytes and collective counts of one step."""

    kernels: list[Kernel] = field(default_factory=list)
    counts: dict = field(default_factory=dict)   # per-GPU FLOPs / bytes / collectives per step, by kind

    def count(self, key: str, expr, weight=1):
        self.counts[key] = self.counts.get(key, 0) + weight * expr

    def add(self, name: str, compute, memory, weight=1):
        self.kernels.append(Kernel(name, weight * compute, weight * memory))

    def time(self):
        return sp.Add(*[k.time for k in self.kernels])

    def by_name(self) -> dict[str, sp.Expr]:
        out: dict[str, sp.Expr] = {}
        for k in self.kernels:
            out[k.name] = out.get(k.name, 0) + k.time
        return out

    def by_resource(self) -> tuple[sp.Expr, sp.Expr]:
        """(compute-bound time, memory-bound time): each kernel's time goes to its binding resource."""
        c = sp.Add(*[k.time * sp.Heaviside(k.compute - k.memory, sp.Rational(1, 2)) for k in self.kernels])
        m = sp.Add(*[k.time * sp.Heaviside(k.memory - k.compute, sp.Rational(1, 2)) for k in self.kernels])
        return c, m


def collective_bandwidth():
    """Effective per-GPU collective bandwidth (B/s) given the instance size and the domain size."""
    f_out = smax(0, 1 - S["D_dom"] / S["G"])
    return 1 / ((1 - f_out) / S["BW_link"] + f_out / S["BW_nic"])


def allreduce_bytes(n, payload):
    """Bytes sent per GPU by a ring all-reduce of ``payload`` bytes over n GPUs."""
    return 2 * (n - 1) / n * payload
