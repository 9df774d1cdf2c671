"""Attribution: where a gain comes from. Exact Shapley values on the log of a throughput ratio.

Going from system A = (H1, P1) to B = (H2, P2), the players are
- hardware parameter groups (``systems.HW_GROUPS``): hbm_bandwidth, hbm_capacity, flops, scaleup_link,
  scaleout_link, host_link, and power (per-MW metric) / price (per-dollar metric);
- software parts: each part of the fixed step (``STEP_PART_OF``: kernel_gaps, kernel_floors, collective_latency,
  layer_floors, cpu_per_step) and each other profile parameter group (the 4th element of ``PROFILE_PARAMS``:
  kernels, communication, scheduling, memory) and the features: speculative decoding (the acceptance rate),
  disaggregation and the KV host tier (the serving modes the engine may use);
and only those that differ between A and B take part (a player that changes nothing gets exactly 0).

A coalition S is the system with S's players taken from B and the rest from A. Its value v(S) is the log of
the best throughput over a set of deployments: at a per-user speed of at least X (``at_tps_per_user``), or at
the peak. All 2^n coalitions x deployments are evaluated together: every hardware/profile symbol becomes an
array over (deployment, coalition) points, and the batch that meets X is found by a vectorized regula-falsi
search on log(batch) (a handful of evaluate calls in all, whatever n is). The deployments are the best
``layouts_per_side`` of each endpoint's full frontier enumeration near X (or at the peak).

Shapley: phi_i = sum over S without i of |S|! (n-|S|-1)! / n! (v(S+i) - v(S)). The phi_i add up to
v(all) - v(none) = ln(total ratio), so the factors exp(phi_i) multiply to the total ratio exactly.
Exact over up to ``MAX_EXACT`` players. With more, a screen first evaluates each player alone (from A) and
last (into B); players with no effect at either end are inert here: the exact game runs over the others with
the inert ones at A's values, and the inert ones share what remains of the total equally (usually nothing),
so the parts still multiply to the total exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import factorial
from typing import Callable

import numpy as np
import pandas as pd

from ..engine.bind import profile_values
from ..engine.evaluate import Setup, SymbolValues
from ..engine.kernel_bind import defaults as kernel_defaults
from ..engine.kernel_bind import engine_of
from ..errors import SpecError
from ..formats import check_formats
from ..search import SLO, best, top_k
from ..serving.roots import illinois
from ..spec_decoding import acceptance_length
from ..specs.hardware import power_field
from ..specs.profile import PROFILE_PARAMS, player_of
from .deployments import LAYOUT_COLUMNS, SERVING_MIX
from .evaluation import evaluate_rows, workload_info
from .frontier import X, candidates
from .systems import DEFAULT_PROFILE, HW_GROUPS, System, as_model, as_system

METRICS = ("total_tps_per_gpu", "output_tps_per_gpu", "total_tps_per_mw", "total_tokens_per_usd")
MAX_EXACT = 12          # players: 2^12 coalitions x deployments per evaluate call (the fixed-step parts are players too)
KERNEL_SYMBOLS = tuple(kernel_defaults(0.0))   # the symbols engine/kernel_bind.py binds from kernel fits
CARRY = ["pf_gpus", "pf_tp", "pf_ep", "instances", "pf_instances"]


@dataclass
class Player:
    name: str
    kind: str            # hardware | software
    detail: str          # what changes, A -> B


@dataclass
class Attribution:
    """What ``attribute`` returns. ``parts``: one row per player: ``name``, ``kind`` (hardware | software),
    ``factor`` (dimensionless; the factors multiply to ``total_ratio``), ``log_share`` / ``share_pct`` (its
    share of ln(total_ratio)), ``change`` (what differs, A -> B). ``total_ratio`` = to_value / from_value;
    ``from_value`` / ``to_value`` in the metric's unit (tokens/s per GPU for the default, tokens/s per MW,
    tokens per USD). ``coalitions``: every coalition's ``value`` (same unit). ``meta``: from, to, metric,
    model, workload, at ("peak" or "X tok/s/user"), deployments, coalitions, notes."""

    parts: pd.DataFrame            # one row per player: factor, log share
    total_ratio: float             # B / A
    from_value: float
    to_value: float
    coalitions: pd.DataFrame       # every coalition's value
    meta: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"from": self.meta.get("from"), "to": self.meta.get("to"), "metric": self.meta.get("metric"),
                "at": self.meta.get("at"), "total_ratio": self.total_ratio, "from_value": self.from_value,
                "to_value": self.to_value,
                "parts": {r.name: float(r.factor) for r in self.parts.itertuples()},
                "kinds": {r.name: r.kind for r in self.parts.itertuples()},
                "notes": self.meta.get("notes", [])}


# ------------------------------------------------------------------ coalition setups
class CoalitionSetup(Setup):
    """A Setup whose symbol values are arrays, one entry per operating point (deployment x coalition)."""

    def __init__(self, base: Setup, values: SymbolValues):
        super().__init__(base.hardware, base.model, base.profile, base.weights, base.kv_cache,
                         base.attention_weights, dict(base.hw_overrides), dict(base.profile_overrides))
        self._values = values

    def subset(self, mask) -> "CoalitionSetup":
        if mask is None:
            return self
        out = CoalitionSetup.__new__(CoalitionSetup)
        out.__dict__.update(self.__dict__)
        out._values = {k: (v[mask] if isinstance(v, np.ndarray) else v) for k, v in self._values.items()}
        return out

    def symbol_values(self, which: str = "value", *, fields: dict | None = None,
                      profile: dict | None = None) -> SymbolValues:
        if fields is not None or profile is not None:
            raise ValueError("a coalition setup's symbol values are fixed: bind fields and profile in Setup")
        return self._values

    def power_w(self):
        return 1.0, "per-coalition"      # per-MW values are computed from each coalition's power

    def price(self):
        return None


# ------------------------------------------------------------------ players
def _v(x) -> str:
    return "(none)" if x is None else f"{x:g}"


def _kernel_setup(hw_of: System, engine_of_: System, formats: dict, model) -> Setup:
    """A setup whose kernel fits are ``hw_of``'s GPU under ``engine_of_``'s engine (the other values are
    passed to symbol_values explicitly)."""
    return Setup(hw_of.hardware_spec(), model, engine_of_.profile_spec(), **formats)


def _kernel_values(a: System, hw_of: System, engine_of_: System, formats: dict, model) -> dict:
    """The kernel-fit symbols (engine/kernel_bind.py) with everything else at A, bound by Setup.symbol_values."""
    vals = _kernel_setup(hw_of, engine_of_, formats, model).symbol_values(
        fields=a.fields(), profile=profile_values(a.profile_spec(), a.profile_overrides))
    return {k: vals[k] for k in KERNEL_SYMBOLS}


def _players(a: System, b: System, metric: str, agentic: bool, model, formats: dict
             ) -> tuple[list[Player], list[str]]:
    notes = []
    fa, fb = a.fields(), b.fields()
    players = []
    for g, fields in HW_GROUPS.items():
        if g == "power" and not metric.endswith("_per_mw"):
            continue
        if g == "price" and not metric.endswith("_per_usd"):
            continue
        diff = [f for f in fields if fa.get(f) != fb.get(f)]
        if diff:
            players.append(Player(g, "hardware", ", ".join(f"{f} {_v(fa.get(f))} -> {_v(fb.get(f))}" for f in diff)))
    pa = profile_values(a.profile_spec(), a.profile_overrides)
    pb = profile_values(b.profile_spec(), b.profile_overrides)
    groups: dict[str, list[str]] = {}
    for name in PROFILE_PARAMS:
        if pa[name] != pb[name]:
            groups.setdefault(player_of(name), []).append(f"{name} {pa[name]:g} -> {pb[name]:g}")
    for g, diffs in groups.items():
        players.append(Player(g, "software", ", ".join(diffs)))
    ra, rb = a.spec_rate(), b.spec_rate()
    if ra != rb:
        players.append(Player("speculative_decoding", "software", f"acceptance rate {ra} -> {rb}"))
    da, db = a.profile_spec().features, b.profile_spec().features
    if da.disaggregation != db.disaggregation:
        if agentic:
            notes.append("disaggregation differs but is not modeled for agentic sessions: not a player")
        else:
            players.append(Player("disaggregation", "software", f"{da.disaggregation} -> {db.disaggregation}"))
    if _kernel_values(a, a, a, formats, model) != _kernel_values(a, b, b, formats, model):
        if a.hardware_spec().id != b.hardware_spec().id:
            players.append(Player("gpu_kernels", "hardware", f"measured kernel floors and rates of "
                                  f"{a.hardware_spec().id} -> {b.hardware_spec().id} (the hardware's kernel fits)"))
        if engine_of(a.profile_spec()) != engine_of(b.profile_spec()):
            players.append(Player("engine_kernels", "software", f"kernels of {engine_of(a.profile_spec())} -> "
                                  f"{engine_of(b.profile_spec())} (the engine's kernel fits on the hardware)"))
    if da.kv_host_tier != db.kv_host_tier:
        if agentic:
            players.append(Player("kv_host_tier", "software", f"{da.kv_host_tier} -> {db.kv_host_tier}"))
        else:
            notes.append("KV host tier differs but only matters for agentic sessions: not a player")
    return players, notes


def _coalition_states(a: System, b: System, players: list[Player], masks):
    """Per coalition (bit i = player i from B): hardware fields, profile values, spec rate, features and
    whose kernel fits."""
    n = len(players)
    names = [p.name for p in players]
    fa, fb = a.fields(), b.fields()
    pa = profile_values(a.profile_spec(), a.profile_overrides)
    pb = profile_values(b.profile_spec(), b.profile_overrides)
    feats_a, feats_b = a.profile_spec().features, b.profile_spec().features
    states = []
    for mask in masks:
        on = {names[i] for i in range(n) if int(mask) >> i & 1}
        fields = dict(fa)
        for g, fs in HW_GROUPS.items():
            if g in on:
                fields.update({f: fb.get(f) for f in fs})
        prof = dict(pa)
        for name in PROFILE_PARAMS:
            if player_of(name) in on:
                prof[name] = pb[name]
        states.append({
            "fields": fields, "profile": prof,
            "kernels": (b if "gpu_kernels" in on else a, b if "engine_kernels" in on else a),
            "rate": b.spec_rate() if "speculative_decoding" in on else a.spec_rate(),
            "disaggregation": (feats_b if "disaggregation" in on else feats_a).disaggregation,
            "kv_host_tier": (feats_b if "kv_host_tier" in on else feats_a).kv_host_tier,
        })
    return states


def _coalition_symbols(a: System, model, formats: dict, states: list[dict], ci: np.ndarray
                       ) -> tuple[Setup, SymbolValues]:
    """A's setup and every symbol as an array over points (point j is coalition ci[j]), each coalition bound by
    Setup.symbol_values with its hardware fields and profile values (kernel fits: its GPU under its engine)."""
    setups: dict[tuple[int, int], Setup] = {}
    per_c = []
    for st in states:
        hw_of, eng_of = st["kernels"]
        key = (id(hw_of), id(eng_of))
        setups.setdefault(key, _kernel_setup(hw_of, eng_of, formats, model))
        per_c.append(setups[key].symbol_values(fields=st["fields"], profile=st["profile"]))
    return a.setup(model, **formats), {k: np.array([pc[k] for pc in per_c], dtype=float)[ci] for k in per_c[0]}


# ------------------------------------------------------------------ value function
def _top_layouts(cand: pd.DataFrame, at: float | None, metric: str, k: int) -> pd.DataFrame:
    """The ``k`` best distinct layouts by ``metric`` among the points at a per-user speed of at least ``at``
    (tokens/s per user: search.SLO's speed floor; None: every point)."""
    key = [c for c in LAYOUT_COLUMNS if c in cand]
    score = cand[metric] if at is None else cand[metric].where(SLO.speed_floor(at, speed_column=X).meets(cand))
    return top_k(cand, score, key, k)


def _shapley(v: np.ndarray, n: int) -> np.ndarray:
    masks = np.arange(2 ** n)
    size = np.array([bin(m).count("1") for m in masks])
    w = np.array([factorial(s) * factorial(n - s - 1) / factorial(n) if s < n else 0.0 for s in range(n + 1)])
    phi = np.zeros(n)
    for i in range(n):
        without = masks[(masks >> i & 1) == 0]
        phi[i] = np.sum(w[size[without]] * (v[without | (1 << i)] - v[without]))
    return phi


def _log_values(game: dict, masks: np.ndarray) -> np.ndarray:
    """log(best metric over the deployments) for each coalition mask, in one batch of evaluate calls."""
    states = _coalition_states(game["a"], game["b"], game["players"], masks)
    pts = _coalition_points(game, states)
    if game["at"] is None:
        value = _peak_values(pts, game["base_metric"])
    else:
        value = _values_at_speed(pts, game["base_metric"], game["at"], game["iterations"])
    ok = pts.valid & np.isfinite(value) & (value > 0)
    shape = (pts.layouts, len(states))
    by_c = _per_unit(best(value.reshape(shape).T, ok.reshape(shape).T), states, game["metric"])
    if not np.all(by_c > 0):
        bad = int(masks[np.nonzero(~(by_c > 0))[0][0]])
        players, at = game["players"], game["at"]
        members = [players[i].name for i in range(len(players)) if bad >> i & 1]
        raise SpecError(f"no enumerated deployment of the mixed system (from {game['a'].name}, with "
                        f"{', '.join(members) or 'nothing'} from {game['b'].name}) "
                        + (f"reaches {at:g} tok/s/user" if at else "fits"), field="attribute")
    return np.log(by_c)


@dataclass
class _Points:
    """Every (deployment, coalition) point, layout-major (point = l * C + c): ``run(batch)`` evaluates them all at
    ``batch`` sequences per instance; ``dp`` attention-DP ranks, ``cap_rank`` whole sequences per rank that fit,
    ``probe`` the evaluation at one sequence per rank, ``valid`` the points the coalition may run."""

    run: Callable[[np.ndarray], dict]
    dp: np.ndarray
    cap_rank: np.ndarray
    probe: dict
    valid: np.ndarray
    layouts: int


def _coalition_points(game: dict, states: list[dict]) -> _Points:
    lay, m, wl = game["lay"], game["m"], game["wl"]
    C, L = len(states), len(lay)
    li, ci = np.repeat(np.arange(L), C), np.tile(np.arange(C), L)
    formats = dict(weights=game["weights"], kv_cache=game["kv_cache"], attention_weights=game["attention_weights"])
    base_setup, syms = _coalition_symbols(game["a"], m, formats, states, ci)
    cs = CoalitionSetup(base_setup, syms)

    rows = lay.iloc[li].reset_index(drop=True)
    rate = np.array([np.nan if st["rate"] is None else st["rate"] for st in states])[ci]
    k = rows["spec_tokens"].to_numpy(float)
    acc = acceptance_length(rate, k)
    valid = ~((k > 0) & np.isnan(rate))
    serving = rows["serving"].to_numpy()
    valid &= (serving != "disaggregated") | np.array([st["disaggregation"] for st in states])[ci]
    if "kv_host_tier" in rows:
        valid &= ~rows["kv_host_tier"].to_numpy(bool) | np.array([st["kv_host_tier"] for st in states])[ci]
    domain = np.array([st["fields"]["scaleup_domain_gpus"] for st in states], dtype=float)[ci]
    valid &= rows["gpus"].to_numpy(float) <= domain
    rows["acc"] = np.where(np.isnan(acc), 1.0, acc)
    rows["mix"] = np.array([SERVING_MIX[s] for s in serving])
    for c in ("isl", "osl", "new"):
        rows.pop(c) if c in rows else None

    def run(batch: np.ndarray) -> dict:
        rows["batch"] = batch
        df, order = evaluate_rows(cs.subset, rows, wl)
        out = {}
        for col in ("tps_per_user", game["base_metric"], "max_batch", "fits"):
            v = np.empty(len(rows), dtype=float)
            v[order] = df[col].to_numpy(dtype=float)
            out[col] = v
        return out

    dp = rows["dp"].to_numpy(float)
    probe = run(dp.copy())
    cap_rank = np.floor(probe["max_batch"] / dp)
    valid &= cap_rank >= 1
    return _Points(run, dp, np.maximum(cap_rank, 1.0), probe, valid, L)


PEAK_GRID = 12   # log-grid points of batch per deployment, 1 .. capacity, for the peak


def _peak_values(pts: _Points, metric: str) -> np.ndarray:
    """The peak: the best over a log grid of batch per deployment (throughput rises with batch up to capacity)."""
    runs = [pts.run(pts.dp * np.exp(u * np.log(pts.cap_rank))) for u in np.linspace(0.0, 1.0, PEAK_GRID)]
    return best(np.stack([r[metric] for r in runs], axis=-1), np.stack([r["fits"] > 0 for r in runs], axis=-1))


def _values_at_speed(pts: _Points, metric: str, at: float, iterations: int) -> np.ndarray:
    """The metric at the largest batch whose per-user speed is still >= ``at``: the sign change of
    g(u) = ln tps_per_user(dp e^u) - ln at on u in [0, ln cap_rank] (serving/roots.illinois), read on its
    feasible side; the capacity where even it meets the speed. Points too slow at one sequence per rank are
    invalid (``pts.valid`` cleared)."""
    g_lo = np.log(pts.probe["tps_per_user"]) - np.log(at)
    top = pts.run(pts.dp * pts.cap_rank)
    g_hi = np.log(top["tps_per_user"]) - np.log(at)
    pts.valid &= g_lo >= 0
    at_cap = g_hi >= 0                        # the speed is met even at capacity: the batch is the capacity
    lo_u = np.zeros(pts.dp.size)

    def g(u: np.ndarray, idx: np.ndarray) -> np.ndarray:
        b = pts.dp * np.exp(lo_u)
        b[idx] = pts.dp[idx] * np.exp(u)
        return (np.log(pts.run(b)["tps_per_user"]) - np.log(at))[idx]

    search = pts.valid & ~at_cap
    br = illinois(g, lo_u, np.log(pts.cap_rank), np.where(search, g_lo, -1.0), np.where(search, g_hi, 0.0),
                  iterations=iterations)
    r = pts.run(pts.dp * np.exp(np.where(search, br.lo, 0.0)))    # the feasible side: tps_per_user >= at
    return np.where(at_cap, top[metric], r[metric])


def _per_unit(by_c: np.ndarray, states: list[dict], metric: str) -> np.ndarray:
    """Per-GPU values per coalition -> the metric's unit (per MW of the coalition's power, per USD of its price)."""
    if metric.endswith("_per_mw"):
        power = np.array([st["fields"][power_field(st["fields"])] for st in states])
        by_c = by_c / power * 1e6
    if metric.endswith("_per_usd"):
        price = np.array([st["fields"].get("price_usd_per_gpu_hour") or np.nan for st in states])
        if np.isnan(price).any():
            raise SpecError("a system has no price_usd_per_gpu_hour", field="metric")
        by_c = by_c * 3600 / price
    return by_c


def _deployments(a: System, b: System, m, workload, formats: dict, space, at: float | None, metric: str,
                 per_side: int) -> pd.DataFrame:
    """The deployments of the game: the best ``per_side`` of each endpoint's full frontier enumeration near the
    speed ``at`` (or at the peak), layout columns (and the pool columns a disaggregated row carries) only."""
    picks = []
    for s, label in ((a, "from"), (b, "to")):
        cand = candidates(s, m, workload, weights=(formats["weights"],), kv_cache=formats["kv_cache"],
                          attention_weights=formats["attention_weights"], space=space)
        top = _top_layouts(cand, at, metric, per_side)
        if top.empty:
            raise SpecError(f"{s.name} ({label}) does not reach {at:g} tok/s/user (max {cand[X].max():.1f})",
                            field="--at-tps-per-user")
        picks.append(top)
    lay = pd.concat(picks, ignore_index=True)
    key = [c for c in LAYOUT_COLUMNS if c in lay]
    lay = lay.drop_duplicates(key).reset_index(drop=True)
    return lay[key + [c for c in CARRY if c in lay and c not in key]].copy()


def attribute(from_: System | str, to: System | str, model, workload="fixed-1k1k", profile=DEFAULT_PROFILE, *,
              at_tps_per_user: float | None = None, peak: bool = False, metric: str = "total_tps_per_gpu",
              weights: str = "fp8", kv_cache: str = "fp8", attention_weights: str | None = None, space=None,
              layouts_per_side: int = 16, iterations: int = 14) -> Attribution:
    """Shapley split of value(to) / value(from) into hardware groups and software parts (factors multiply to it).

    ``at_tps_per_user``: throughput at a per-user speed of at least X tokens/s per user; otherwise (``peak``) the
    peak. ``layouts_per_side``: deployments taken from each endpoint's frontier; ``iterations``: regula-falsi
    steps of the batch search. Returns an ``Attribution`` (factors dimensionless, values in the metric's unit).
    """
    if metric not in METRICS:
        raise SpecError(f"unknown metric {metric!r}; choose from {list(METRICS)}", field="metric")
    if at_tps_per_user is not None and peak:
        raise SpecError("give either --at-tps-per-user or --peak, not both", field="--peak")
    if at_tps_per_user is not None and not at_tps_per_user > 0:
        raise SpecError(f"must be > 0, got {at_tps_per_user}", field="--at-tps-per-user")
    check_formats(weights, kv_cache, attention_weights)
    a, b = as_system(from_, profile), as_system(to, profile)
    m = as_model(model)
    wl = workload_info(workload)
    formats = dict(weights=weights, kv_cache=kv_cache, attention_weights=attention_weights)
    players, notes = _players(a, b, metric, wl.agentic, m, formats)
    n = len(players)
    at = at_tps_per_user
    base_metric = "total_tps_per_gpu" if metric in ("total_tps_per_mw", "total_tokens_per_usd") else metric

    lay = _deployments(a, b, m, workload, formats, space, at, base_metric, layouts_per_side)
    game = dict(a=a, b=b, players=players, lay=lay, m=m, wl=wl, weights=weights, kv_cache=kv_cache,
                attention_weights=attention_weights, metric=metric, base_metric=base_metric, at=at,
                iterations=iterations)
    full = 2 ** n - 1
    if n <= MAX_EXACT:
        masks = np.arange(2 ** n)
        v = _log_values(game, masks)
        phi = _shapley(v, n) if n else np.zeros(0)
        v0, vN = v[0], v[-1]
        C = len(masks)
    else:
        # screen: players with no effect at either end (alone from A, or last to join B) are inert here
        screen = np.array([0, full] + [1 << i for i in range(n)] + [full ^ (1 << i) for i in range(n)])
        vs = _log_values(game, screen)
        v0, vN = vs[0], vs[1]
        first, last = vs[2:2 + n] - v0, vN - vs[2 + n:]
        inert = [i for i in range(n) if abs(first[i]) < 1e-9 and abs(last[i]) < 1e-9]
        act = [i for i in range(n) if i not in inert]
        if len(act) > MAX_EXACT:
            raise SpecError(f"{len(act)} players change the result ({', '.join(players[i].name for i in act)}): "
                            f"exact Shapley over more than {MAX_EXACT} is too slow; compare fewer changes at once",
                            field="attribute")
        sub = np.arange(2 ** len(act))
        masks = np.array([sum(1 << act[j] for j in range(len(act)) if mk >> j & 1) for mk in sub], dtype=np.int64)
        v = _log_values(game, masks)           # inert players stay at A's values
        phi = np.zeros(n)
        phi[act] = _shapley(v, len(act))
        residual = vN - v[-1]                  # switching the inert players last: shared equally
        phi[inert] = residual / len(inert) if inert else 0.0
        names = ", ".join(players[i].name for i in inert)
        notes.append(f"{len(inert)} players had no effect at either end ({names}); exact Shapley over the other "
                     f"{len(act)}, the inert ones share the residual x{np.exp(residual):.6g}")
        C = len(masks) + len(screen)
        v = np.concatenate([v, [vN]])
        masks = np.concatenate([masks, [full]])
    L = len(lay)
    total = float(np.exp(vN - v0))
    log_total = vN - v0
    parts = pd.DataFrame({
        "name": [p.name for p in players], "kind": [p.kind for p in players],
        "factor": np.exp(phi), "log_share": phi / log_total if log_total else np.zeros(n),
        "change": [p.detail for p in players]})
    parts.loc[np.abs(phi) < 1e-12, ["factor", "log_share"]] = [1.0, 0.0]   # exact null players: no float dust
    parts["share_pct"] = parts["log_share"] * 100
    coal = pd.DataFrame({"mask": masks, "members": [", ".join(players[i].name for i in range(n) if int(c) >> i & 1)
                                                    for c in masks], "value": np.exp(v[:len(masks)])})
    meta = {"from": a.name, "to": b.name, "metric": metric, "model": m.id, "workload": wl.name,
            "at": ("peak" if at is None else f"{at:g} tok/s/user"), "deployments": L, "coalitions": C,
            "points_per_call": L * C, "notes": notes, "weights": weights}
    return Attribution(parts, total, float(np.exp(v0)), float(np.exp(vN)), coal, meta)
