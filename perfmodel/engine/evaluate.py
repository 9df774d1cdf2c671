"""The step equations over arrays of operating points: the fixed ``Setup`` (hardware, model, profile, formats
-> symbol values), operating-point arrays -> equation symbols (decode, prefill), and prefill steps.
Serving them under load (chunked prefill, queueing, pools, sessions) is perfmodel/serving/.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..specs.hardware import HardwareSpec, power_field
from ..specs.model import ModelSpec
from ..specs.profile import ProfileSpec
from .bind import (
    attention_format,
    bind_formats,
    bind_hardware,
    bind_kernel_fits,
    bind_profile,
    hardware_fields,
    profile_values,
    required,
)
from .compiled import compiled

SymbolValues = dict[str, float | np.ndarray]
"""Equation symbol -> value in SI units: a float, or an array over operating points (parameter draws, coalitions)."""

POINT_COLUMNS = ("batch", "gpus", "tp", "ep", "pp", "spec_tokens", "acc", "isl", "osl", "new", "mix")
# share of requests whose prefix is reloaded from the host tier; share of KV decode reads from the host tier
# concurrency: clients in flight per instance in a closed loop (NaN: the batch; above the batch they queue)
# arrival_rate: requests/s arriving at an instance in an open loop (NaN: closed loop or a fixed batch)
# max_running: the deployment's running-request cap per scheduler (NaN: the profile's max_running_requests)
# prefill_cv2: squared coefficient of variation of the requests' prefill service time (0: equal requests;
# agentic sessions: serving/prefill_spread.py), in the prefill queue's wait
OPTIONAL_COLUMNS = {"reload": 0.0, "cold": 0.0, "pool_reload": 0.0, "concurrency": np.nan, "arrival_rate": np.nan,
                    "max_running": np.nan, "prefill_cv2": 0.0}


@dataclass
class Setup:
    """Everything fixed for one evaluation call (scalars); the operating points vary."""

    hardware: HardwareSpec
    model: ModelSpec
    profile: ProfileSpec
    weights: str = "fp8"
    kv_cache: str = "fp8"
    attention_weights: str | None = None
    hw_overrides: dict = field(default_factory=dict)
    profile_overrides: dict = field(default_factory=dict)

    def symbol_values(self, which: str = "value", *, fields: dict | None = None,
                      profile: dict | None = None) -> SymbolValues:
        """Every equation symbol's value in SI units: the one place symbols are bound.

        ``which``: the profile's central value or a corner ("value" | "low" | "high"). ``fields`` (hardware field
        -> value in spec units, as ``hardware_fields`` returns) and ``profile`` (profile parameter -> value, floats
        or arrays over operating points) replace this setup's own resolved values: the coalitions of attribution
        and the parameter draws of calibration bind through here. The kernel fits are always this setup's
        hardware and engine, scaled to ``fields``' scale-up latency."""
        fields = hardware_fields(self.hardware, self.hw_overrides) if fields is None else fields
        prof = profile_values(self.profile, self.profile_overrides, which) if profile is None else profile
        return bind_parts(self.symbol_parts(fields), prof)

    def symbol_parts(self, fields: dict | None = None) -> tuple[SymbolValues, SymbolValues]:
        """The symbol values bound before and after the profile's parameters (``symbol_values`` is
        ``bind_parts(symbol_parts(fields), profile)``): the hardware, then the number formats, the kernel fits and
        the serving layer's switches. None of them depends on the profile's parameter values, so a caller that
        binds many parameter vectors on one setup (calibration: ``validation/batch_predict.py``) binds them once."""
        fields = hardware_fields(self.hardware, self.hw_overrides) if fields is None else fields
        attn = attention_format(self.model, self.weights, self.attention_weights)
        without_fp4 = "bf16" if self.profile.uses("w4a16_without_fp4") else "fp8"
        before: SymbolValues = {**bind_hardware(fields, self.weights, attn, without_fp4)}
        after: SymbolValues = {**bind_formats(self.model, self.weights, attn, self.kv_cache)}
        after.update(bind_kernel_fits(self.hardware, self.profile, self.model, self.weights, self.kv_cache, fields))
        after["C_host"] = required(fields, "host_memory_gb") * 1e9   # host-tier capacity per GPU (serving layer)
        after["mixed_pf"] = 1.0 if self.profile.features.mixed_prefill else 0.0   # serving/prefill_first.py
        after["q_mlapad"] = 1.0 if self.profile.uses("mla_decode_row_tiles") else 0.0   # model/mla.py padding
        return before, after

    def power_w(self) -> tuple[float, str]:
        f = hardware_fields(self.hardware, self.hw_overrides)
        field = power_field(f)
        return required(f, field), "all-in" if field == "allin_power_w" else "gpu-tdp-fallback"

    def price(self) -> float | None:
        return hardware_fields(self.hardware, self.hw_overrides).get("price_usd_per_gpu_hour")


def bind_parts(parts: tuple[SymbolValues, SymbolValues], profile: dict) -> SymbolValues:
    """Every symbol's value from a setup's ``symbol_parts`` and the profile parameters ``profile`` (floats or
    arrays): the parts before, the profile's symbols, the parts after, in that order (a later one wins)."""
    before, after = parts
    return {**before, **bind_profile(profile), **after}


def point_arrays(points: dict) -> dict[str, np.ndarray]:
    """POINT_COLUMNS and OPTIONAL_COLUMNS (their defaults where absent) as read-only float arrays of the points'
    length: a scalar broadcast, an array of that length viewed as it is."""
    n = max((np.size(v) for v in points.values()), default=1)
    out = {k: _points_of(points[k], n) for k in POINT_COLUMNS}
    for k, default in OPTIONAL_COLUMNS.items():
        out[k] = _points_of(points.get(k, default), n)
    return out


def _points_of(v, n: int) -> np.ndarray:
    """``v`` (a scalar or an array) as a read-only float array of shape (n,): what ``np.broadcast_to`` gives,
    without its cost where ``v`` is a scalar or already has that shape (a fixed overhead of one-point calls)."""
    a = np.asarray(v, dtype=float)
    if a.ndim == 0:
        a = np.full(n, a)
    elif a.shape != (n,):
        return np.broadcast_to(a, (n,))
    else:
        a = a.view()
    a.flags.writeable = False
    return a


def decode_symbols(p: dict, mix) -> dict:
    """The decode equations' operating-point symbols of points ``p`` (arrays, or Python floats for one point:
    serving/point.py), with the prefill mix ``mix``: L = isl + osl / 2 is the mean context, L_max = isl + osl."""
    return dict(B=p["batch"], G=p["gpus"], tp=p["tp"], ep=p["ep"], pp=p["pp"], q=1 + p["spec_tokens"],
                acc=p["acc"], isl=p["isl"], osl=p["osl"], new=p["new"], mix=mix,
                L=p["isl"] + p["osl"] / 2, L_max=p["isl"] + p["osl"], f_rl=p.get("reload", 0.0),
                f_cold=p.get("cold", 0.0), f_rp=p.get("pool_reload", 0.0))


def prefill_symbols(p: dict, new, tokens=None) -> dict:
    """The prefill equations' symbols of points ``p`` whose uncached tokens are ``new`` (at least 1; ``tokens``
    per step, default all of them): T_pf tokens this step, S_pf of the request, P_pf = isl - new cached ahead."""
    return dict(G=p["gpus"], tp=p["tp"], ep=p["ep"], pp=p["pp"], T_pf=new if tokens is None else tokens,
                S_pf=new, P_pf=p["isl"] - p["new"])


def symbol_inputs(p: dict[str, np.ndarray], vals: SymbolValues) -> SymbolValues:
    """Operating-point arrays -> equation symbols (decode)."""
    x = dict(vals)
    x.update(decode_symbols(p, p["mix"]))
    cap = p.get("max_running")
    if cap is not None and not np.all(np.isnan(cap)):
        x["N_run"] = np.where(np.isnan(cap), vals["N_run"], cap)
    return x


def prefill_inputs(p: dict[str, np.ndarray], vals: SymbolValues, tokens=None) -> SymbolValues:
    """One request's uncached tokens (or ``tokens`` per step) after its cached prefix."""
    x = dict(vals)
    x.update(prefill_symbols(p, np.maximum(p["new"], 1.0), tokens))
    return x


PREFILL_TOKENS_PER_GPU = 8192  # default prefill step per GPU (engine chunk sizes are of this order)


def prefill_step(setup: Setup, p: dict, vals: dict, tokens_per_gpu: float = PREFILL_TOKENS_PER_GPU):
    """Prefill steps of max(tokens_per_gpu x gpus, new) tokens (at least one whole request):
    (tokens per step, seconds per step) per point. Throughput per GPU = tokens / seconds / gpus."""
    tokens = np.maximum(tokens_per_gpu * p["gpus"], p["new"])
    t = compiled(setup.model).prefill(prefill_inputs(p, vals, tokens=tokens))["prefill_s"]
    return tokens, np.broadcast_to(np.asarray(t, dtype=float), np.shape(tokens))
