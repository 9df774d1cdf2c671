"""Profile-parameter samples of the validation band: N_SAMPLES uniform draws of every profile parameter in its
[low, high] range at a fixed seed (the band is their BAND percentiles), or the central values alone."""

from __future__ import annotations

import numpy as np

from ..specs.profile import PROFILE_PARAMS, ProfileSpec

N_SAMPLES = 200
SEED = 0
BAND = (5.0, 95.0)


def sample_params(profile: ProfileSpec, n: int, seed: int = SEED) -> dict[str, np.ndarray]:
    """Profile parameter -> n uniform draws in [low, high] (plus 'acceptance_rate'). A decode attention efficiency
    the profile does not set apart from eff_attention (the same value and range) is the same draw."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for name in PROFILE_PARAMS:
        p = getattr(profile, name)
        if name == "eff_attention_decode" and p == profile.eff_attention:
            out[name] = out["eff_attention"]
            continue
        out[name] = rng.uniform(p.low, p.high, n) if p.high > p.low else np.full(n, p.value)
    ar = profile.spec_decoding.acceptance_rate
    out["acceptance_rate"] = rng.uniform(ar.low, ar.high, n) if ar else np.full(n, np.nan)
    return out


def central_params(profile: ProfileSpec) -> dict[str, np.ndarray]:
    out = {name: np.array([getattr(profile, name).value]) for name in PROFILE_PARAMS}
    ar = profile.spec_decoding.acceptance_rate
    out["acceptance_rate"] = np.array([ar.value if ar else np.nan])
    return out
