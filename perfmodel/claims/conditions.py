"""Named conditions: the one unknown that would bring a claim inside the model's error interval, solved for its
value and held against physics and the evidence (rules 2, 4, 5 and 7 of issue 32).

A condition is never searched for fit: every kind that applies to a claim is solved and reported, in a fixed
order (power or price ratio, the first system's steps, the second system's steps); the verdict names the first
one whose value is physically allowed.

- ``steps``: system ``hw``'s decode steps k times the modeled ones (k < 1: faster software, e.g. a vendor's
  build; k > 1: slower, e.g. a curve that ends sooner), the figure read with every operating point of ``hw``
  moved along the diagonal (``Figure.read(shifts=..., diagonal=True)``). Allowed: k no faster than the
  speed-of-light profile (k >= k_sol), and no slower than lets the system reach a per-user speed the claim says
  it was measured at (rule 2: k <= curve end / that speed).
- ``power`` / ``price``: the A/B all-in power (or GPU-hour price) ratio a per-MW (per-dollar) ratio claim needs,
  against the catalog's value and range (the range is the allowed set).

Each result: {kind, system, needed (value at the claim), edge (least change that reaches the interval's edge),
allowed, bound, evidence, text}.
"""

from __future__ import annotations

import functools
import math

from .. import catalog
from .curves import curve_end, peak
from .fmt import fmt
from .latency import is_latency
from .reading import env_metric
from .values import Band, Evaluation, StepFactor, end_of

K_GRID = [math.exp(x / 6) for x in range(-18, 19)]        # 0.05 .. 20, 6 points per e-fold
SOL = "speed-of-light"


def _target(c: float, iv: dict) -> tuple[float, float]:
    """The figures at which the claim sits on the interval's edge (the least change) and at its centre."""
    return (c * math.exp(-iv["up"]) if c > iv["value"] else c * math.exp(iv["down"])), c


@functools.cache
def _measured_hw() -> dict[str, int]:
    """Records per hardware id in the data the profiles are calibrated on (third-party measurements)."""
    from ..specs.records import SHARED_FILES, read_records
    n: dict[str, int] = {}
    for f in SHARED_FILES:
        p = catalog.builtin_root() / "data" / "shared" / f
        if p.is_file():
            for r in read_records(p):
                n[r.hardware] = n.get(r.hardware, 0) + 1
    return n


def evidence(hw: str, k: float | None = None, err: tuple[float, float] | None = None) -> str:
    """The evidence on a system's speed: its third-party calibration records (and, for a step factor k beyond
    the model's held-out error ``err`` = (k_low, k_high), that the records contradict it), else the vendor's
    word."""
    n = _measured_hw().get(hw, 0)
    if not n:
        return f"vendor's word (no third-party record of {hw} in the calibration data)"
    if k is not None and err is not None and not err[0] <= k <= err[1]:
        return (f"contradicts third-party measurement ({n} calibration records of {hw}; the held-out error allows "
                f"{err[0]:.2g}-{err[1]:.2g}x)")
    return f"third-party measured ({n} calibration records of {hw})"


def solve_factor(q_of, q0: float, target: float) -> float | None:
    """The k nearest 1 (in ln) at which q_of(k) crosses ``target``: the grid K_GRID walked out from k = 1 in
    each direction until q passes the target, then bisection in ln k (q may be 0 or infinity where a system
    cannot reach the point: those count as below / above any target)."""
    want_up = target > q0

    def past(q):
        return q is not None and not math.isnan(q) and ((q >= target) if want_up else (q <= target))
    best = None
    for direction in (1, -1):
        prev_k = 1.0
        for k in sorted((k for k in K_GRID if (k > 1) == (direction > 0) and k != 1.0),
                        key=lambda k: abs(math.log(k))):
            if past(q_of(k)):
                lo, hi = math.log(prev_k), math.log(k)
                for _ in range(14):
                    mid = (lo + hi) / 2
                    lo, hi = (lo, mid) if past(q_of(math.exp(mid))) else (mid, hi)
                k_hit = math.exp(hi)
                if best is None or abs(math.log(k_hit)) < abs(math.log(best)):
                    best = k_hit
                break
            prev_k = k
    return best


def lands(q: float | None, c: float, iv: dict) -> bool:
    """Whether the claim c lies inside the model's interval around the figure q a solution gives (the solver's
    read-back: q exp(-down) <= c <= q exp(up), a hair of slack for the bisection's last step); False for a q of 0,
    infinity or NaN (a solution on a jump of the figure)."""
    if q is None or not math.isfinite(q) or q <= 0 or not c or c <= 0:
        return False
    d = math.log(c / q)
    return -iv["down"] - 1e-3 <= d <= iv["up"] + 1e-3


def sol_factor(C, fig, hw: str) -> float | None:
    """k of the speed-of-light profile for ``hw`` at the claim's kind of point: the model's curve end (or peak)
    over the speed-of-light one."""
    t = next(t for t in fig.terms if t.side.hardware == hw)
    s = t.side
    sol = s.but(profile=SOL, corner="value", speedup=1.0, prefill_speedup=None)
    em = env_metric(fig.col)
    e0 = C.store.envelope(s, C.model, C.wl, fig.axis, em)
    e1 = C.store.envelope(sol, C.model, C.wl, fig.axis, em)
    if not len(e0) or not len(e1):
        return None
    if t.point.point == "peak" and fig.col != "tps_per_user" and not is_latency(fig.col):
        return peak(e0, em) / peak(e1, em)
    return curve_end(e0, fig.axis) / curve_end(e1, fig.axis)


def measured_speed(C, hw: str) -> float | None:
    """The fastest per-user speed the source says ``hw`` was measured at, for rule 2: the stated speeds of every
    claim of the same source on ``hw`` and the same model (the slow end of an approximate one), and the source's
    own fastest runs (a maximum per-user speed it states for ``hw``, e.g. 255 tok/s/user on Kimi K3) unless the
    model judges that run implausible (``judged_implausible``: a claim judged implausible bounds no other)."""
    v = []
    for cid in catalog.ids("claims"):
        c = catalog.claim(cid)
        if c.source != C.claim.source or c.model != C.model or hw not in c.system_ids or c.metric is None:
            continue
        pts = [c.to, c.from_] if c.kind == "delta" else [c.at]
        v += [p.tps_per_user * (0.9 if p.approx else 1.0) for p in pts if p is not None and p.point == "speed"]
        if (c.id != C.claim.id and c.metric.quantity == "tps_per_user" and c.at is not None
                and c.at.point == "max_speed" and c.system_ids[0] == hw and not judged_implausible(C, c)):
            v.append(c.claimed)          # the source's own fastest run on hw bounds its other claims
    pts = [C.claim.to, C.claim.from_] if C.claim.kind == "delta" else [C.claim.at]
    v += [p.tps_per_user * (0.9 if p.approx else 1.0) for p in pts if p is not None and p.point == "speed"]
    return max(v) if v else None


_JUDGING: set[str] = set()      # claims being checked for ``judged`` (no recursion)


def judged(C, claim) -> dict | None:
    """The check's own result for another claim of the source (``C.judge``: claim -> check result, set by
    ``sides.ClaimSides``), once per store; None without a judge, or while that claim's own check is under way
    (two claims asking each other)."""
    judge = getattr(C, "judge", None)
    if judge is None:
        return None
    memo = C.store.__dict__.setdefault("_judged", {})
    if claim.id not in memo:
        if claim.id in _JUDGING:
            return None
        _JUDGING.add(claim.id)
        try:
            memo[claim.id] = judge(claim)
        finally:
            _JUDGING.discard(claim.id)
    return memo[claim.id]


def judged_implausible(C, claim) -> bool:
    """Whether the model judges ``claim`` (a source's fastest run) implausible, through the check's own judge
    (``judged``; none: plausible): such a claim bounds none of the source's others (its figure is itself outside
    what the model and the evidence allow). A claim whose own check is under way counts as plausible."""
    r = judged(C, claim)
    return r is not None and r.get("verdict") == "implausible"


def source_claim(C, hw: str, k: float, key: str) -> dict | None:
    """The source's own claim on ``hw``'s steps: another claim of the same source on ``hw`` alone and the same model
    (a change along its curve, its figure, its top speed), not judged implausible, whose own check needs ``hw``'s
    steps in the same region (``key``: at peak or at speed) at a factor k_s. Its figures are the source's statement
    of that system's curve (e.g. GB300 falling 81% between 120 and 165 tok/s/user needs its curve end near 219).

    Backing: k_s at least k the same way (ln k_s / ln k >= 0.99, k > 1 slower, k < 1 faster): a ratio claim of
    the same source whose condition is that system's change rests on it, not on the vendor's word alone; the
    farthest such claim. Else a contradiction (``contradicts``): a claim whose every factor that brings it inside
    its interval (``range_needed``) lies on the other side of 1 (GB300 slower, where the condition needs it
    faster). {id, factor, verdict, contradicts, text} or None."""
    if abs(math.log(k)) < 1e-9:
        return None
    best, against = None, None
    for cid in catalog.ids("claims"):
        c = catalog.claim(cid)
        if (c.id == C.claim.id or c.source != C.claim.source or c.model != C.model or c.system_ids != [hw]
                or c.metric is None):
            continue
        r = judged(C, c)
        if r is None or r.get("verdict") == "implausible":
            continue
        for cond in r.get("conditions") or []:
            ks = cond.get("needed")
            if not (cond.get("kind") == "steps" and cond.get("system") == hw and cond.get("key") == key and ks):
                continue
            found = {"id": c.id, "factor": ks, "verdict": r["verdict"],
                     "text": f"`{c.id}` ({hw} alone, same source; {r['verdict']}) needs {StepFactor(hw, ks).size()}"}
            rng = cond.get("range_needed") or [ks, ks]
            if math.log(ks) / math.log(k) >= 0.99:
                if best is None or abs(math.log(ks)) > abs(math.log(best["factor"])):
                    best = {**found, "contradicts": False}
            elif (min(rng) > 1) == (k < 1) and (max(rng) < 1) == (k > 1):
                against = against or {**found, "contradicts": True}
    return best or against


NOOP = 0.02          # a step factor within 2% of 1: a no-op, the claim sits on a jump of the modeled curve


def region_band(C, fig, ev: Evaluation, hw: str) -> dict:
    """The model's own error band on ``hw``'s step factor at the claim's point: the held-out ``speed`` error of
    the region of ``hw``'s operating point there (``curve-end`` at batch-1-like points or beyond the curve's end),
    a peak's throughput (``rate``) error of its region. ``lo`` / ``hi``: exp(q10) / exp(q90), the step factors
    k = model / true speed the held-out records span (80%)."""
    from ..analyses.model_error import CURVE_END_CONCURRENCY, half_widths, region_of
    j = next(i for i, t in enumerate(fig.terms) if t.side.hardware == hw)
    row = ev["nom"]["rows"][j]
    conc = None if row is None else row.get("concurrency")
    conc = None if conc is None or not math.isfinite(float(conc)) else float(conc)
    peak_term = all(t.point.point == "peak" for t in fig.terms if t.side.hardware == hw) and fig.col != "tps_per_user"
    if peak_term:
        h = half_widths("rate", region_of(conc), C.wclass)
    else:
        reg = "curve-end" if conc is None or conc <= CURVE_END_CONCURRENCY else region_of(conc)
        h = half_widths("speed", reg, C.wclass)
    return {**h, "lo": math.exp(h["q10"]), "hi": math.exp(h["q90"])}


def _band_text(b: dict) -> str:
    what = "throughput" if b["quantity"] == "rate" else "speed"
    return f"its region's ({b['region']}) {what} error: {Band(b['lo'], b['hi']).words()}"


def ratio_shift(C, ev: Evaluation) -> dict | None:
    """For a ratio claim: the multiple of the model's ratio a condition at the claim implies, m = c / q (the
    condition reads the claimed figure c back where the model reads q), and whether it lies inside the ratio's
    own held-out error, the interval's half-widths: exp(-down) <= m <= exp(up) (e.g. x1.37 each way on agentic
    records). Two systems' speed errors move together, so the ratio's error, not each system's (about 2x), is
    what a condition on a ratio claim spends: a step factor inside its own system's band that implies a ratio
    outside the ratio band is beyond the model's error. None for other kinds or an undefined figure."""
    if C.claim.kind != "ratio":
        return None
    q, c, iv = ev["q"], ev["c"], ev["iv"]
    if not (q and math.isfinite(q) and q > 0 and c and c > 0):
        return None
    m = c / q
    inside = -iv["down"] - 1e-3 <= math.log(m) <= iv["up"] + 1e-3
    band = (f"x{math.exp(iv['up']):.3g}" if abs(iv["up"] - iv["down"]) < 5e-3 else
            f"x{math.exp(iv['down']):.3g} down / x{math.exp(iv['up']):.3g} up")
    return {"multiple": m, "inside": inside, "band": [math.exp(-iv["down"]), math.exp(iv["up"])],
            "text": f"the ratio {m:.3g}x the model's, {'inside' if inside else 'beyond'} the ratio's held-out error {band}"}


def rec_scope(C, hw: str) -> dict:
    """The records that are evidence on ``hw``'s speed for this claim: its side's engine family and the claim's
    workload class (``evidence.on_steps``)."""
    side = next(s for s in C.sides if s.hardware == hw)
    return {"engine": side.profile, "wclass": "agentic" if getattr(C, "wclass", "all") == "agentic" else "fixed"}


def itl_end(C, hw: str) -> float | None:
    """``hw``'s modeled curve end on the decode (1/ITL) axis, the axis its speed records are on."""
    s = next(s for s in C.sides if s.hardware == hw)
    e = C.store.envelope(s, C.model, C.wl, "itl", env_metric(C.col))
    return curve_end(e, "itl") if len(e) else None


def steps(C, fig, ev: Evaluation, hw: str) -> dict | None:
    """The ``steps`` condition on system ``hw`` (module docstring), or None when no k in 0.05-20 reaches it.

    The error is spent once: ``needed`` is the factor at which the model's figure equals the claim (the claim
    itself, not the interval's edge), tagged ``within error`` only when it lies inside the band of the point's
    own region (``region_band``). Beyond that band a faster step is *implausible on the evidence* when it is also
    beyond the profile's fitted fast corner and no record of ``hw`` on the model supports it; a slower one must
    leave ``hw`` the speeds the source says it reached (its stated speeds, fastest runs and maxima). The records
    of ``hw`` on the model (``evidence.py``) are named by id."""
    from .evidence import on_steps
    iv, q0, c = ev["iv"], ev["q"], ev["c"]
    edge_t, centre_t = _target(c, iv)
    if q0 is None or math.isnan(q0):
        return None
    k_need, k_edge, jump = _solve_steps(fig, hw, q0, c, iv, edge_t, centre_t)
    if k_edge is None and k_need is None:
        return _jump_result(C, hw) if jump else _unreached_result(C, fig, hw, q0, centre_t)
    at_claim = k_need is not None
    k = k_need if at_claim else k_edge
    assert k is not None       # both None returned above
    k_edge = k_edge if k_edge is not None else k
    band = region_band(C, fig, ev, hw)
    own_band = at_claim and band["lo"] <= k <= band["hi"]
    rs = ratio_shift(C, ev)
    in_band = own_band and (rs is None or rs["inside"])     # a ratio claim spends the ratio's error
    k_sol = sol_factor(C, fig, hw) if k < 1 else None
    end = end_of(ev, hw)
    v = measured_speed(C, hw)
    k_max = end / v if (v and end and math.isfinite(end)) else None
    opt_k = fast_corner(ev, fig, hw)
    rec = on_steps(hw, C.model, k, itl_end(C, hw), **rec_scope(C, hw))
    beyond_fit = k < 1 and opt_k is not None and k < opt_k
    within_err = in_band and not beyond_fit          # never 'within error' beside 'beyond the fitted ranges'
    allowed, bound = _step_bound(hw, k, k_sol, opt_k, beyond_fit, k_max, v)
    at_peak = all(t.point.point == "peak" for t in fig.terms if t.side.hardware == hw)
    key = f"{hw} steps on {C.model} ({'peak' if at_peak else 'at speed'})"
    src = (source_claim(C, hw, k, key) if at_claim and not in_band and rec["tag"] in (
        "vendor's word", "consistent with records") else None)
    tag, ev_text, allowed = _step_tag(k, allowed, in_band, beyond_fit, within_err, band, rec,
                                      rs if own_band and rs is not None and not rs["inside"] else None, src)
    if not at_claim:
        ev_text = (f"no step factor gives the claim itself; {k_edge:.3g}x only brings it to the interval's edge; "
                   + ev_text)
    what, short, new_end = _step_words(hw, k, end)
    short += f" [{tag}]"
    return {"kind": "steps", "system": hw, "key": key, "source_claim": src,
            "needed": k_need, "edge": k_edge, "factor": k, "at_claim": at_claim,
            "range_needed": _range_needed(C, k_edge, k, (centre_t > q0) == (k > 1)),
            "allowed": bool(allowed), "bound": bound, "within_model_error": bool(within_err),
            "noop": bool(at_claim and abs(math.log(k)) < math.log(1 + NOOP)),
            "band": [band["lo"], band["hi"]], "band_region": band["region"], "band_quantity": band["quantity"],
            "ratio_shift": rs,
            "sol_factor": k_sol, "fast_corner": opt_k, "beyond_fit": beyond_fit, "new_end": new_end,
            "beyond_sol": bool(k < 1 and k_sol is not None and k < k_sol),
            "records": rec, "tag": tag, "evidence": ev_text, "short": short,
            "text": f"{what} at the claim [{tag}: {ev_text}; bound: {bound}]"}


def _solve_steps(fig, hw: str, q0: float, c: float, iv: dict, edge_t: float,
                 centre_t: float) -> tuple[float | None, float | None, bool]:
    """(k at the claim, k at the interval's edge, jump): ``hw``'s step factors at which the figure, read with
    ``hw``'s operating points moved along the diagonal, reaches the claim's centre and edge (``solve_factor``).
    A solution whose read-back does not land inside the interval (``lands``) is dropped; ``jump``: the figure
    jumps past the claim itself (a curve ending at the point)."""
    def q_of(k):
        r = fig.read(shifts={hw: k}, diagonal=True)
        return r["q"] if not r["unreached"] else (0.0 if dir_down(fig, hw) else math.inf)
    k_edge = solve_factor(q_of, q0, edge_t)
    k_need = solve_factor(q_of, q0, centre_t)
    jump = k_need is not None and not lands(q_of(k_need), c, iv)
    if jump:        # the figure jumps past the claim (a curve ending at the point): no solution at the claim
        k_need = None
    if k_edge is not None and not lands(q_of(k_edge), c, iv):
        k_edge = None
    return k_need, k_edge, jump


def _jump_result(C, hw: str) -> dict:
    """The ``steps`` condition when no step factor alone gives the claim: the figure jumps past it."""
    return {"kind": "steps", "system": hw, "key": f"{hw} steps on {C.model}", "needed": None, "edge": None,
            "allowed": False, "bound": "a jump of the figure", "within_model_error": False, "sol_factor": None,
            "evidence": "no step factor alone", "jump": True,
            "short": f"{hw}'s steps alone (the figure jumps past the claim where {hw}'s curve ends at the point)",
            "text": f"no step factor of {hw} alone gives the claim: its figure jumps past it where {hw}'s curve "
                    "ends at the claim's point"}


def _unreached_result(C, fig, hw: str, q0: float, centre_t: float) -> dict:
    """The ``steps`` condition when no k in K_GRID reaches the claim: more than 1/K_GRID[0] x faster (bounded by
    the speed-of-light factor, ``sol_factor``) or K_GRID[-1] x slower than modeled."""
    faster = (centre_t > q0) == dir_down(fig, hw)
    k_sol = sol_factor(C, fig, hw) if faster else None
    lim = K_GRID[0] if faster else K_GRID[-1]
    what = (f"{hw}'s decode steps more than {1 / lim:.0f}x faster than modeled" if faster else
            f"{hw}'s decode steps more than {lim:.0f}x slower than modeled")
    bound = f"speed of light {1 / k_sol:.2g}x the modeled speed" if k_sol else "beyond the range searched"
    beyond_sol = bool(faster and k_sol and k_sol > lim)
    return {"kind": "steps", "system": hw, "key": f"{hw} steps on {C.model}", "needed": None, "edge": None,
            "allowed": False, "bound": bound, "within_model_error": False, "sol_factor": k_sol,
            "beyond_sol": beyond_sol,
            "evidence": "beyond physics" if beyond_sol else "beyond the range searched",
            "short": what, "text": f"{what} [bound: {bound}]"}


def _step_bound(hw: str, k: float, k_sol: float | None, opt_k: float | None, beyond_fit: bool,
                k_max: float | None, v: float | None) -> tuple[bool, str]:
    """(allowed by physics and the source, bound text) of step factor k: a faster step (k < 1) no faster than
    the speed-of-light profile, k >= k_sol (the fitted fast corner opt_k named beside it); a slower one leaving
    ``hw`` the fastest speed v the source states, k <= k_max (1 + 1%) with k_max = curve end / v (rule 2)."""
    if k < 1:
        allowed = k_sol is None or k >= k_sol
        bound = f"speed of light {1 / k_sol:.2g}x the modeled speed" if k_sol else "speed of light not evaluated"
        if opt_k:
            bound += (f"; the profile's fitted fast corner gives {1 / opt_k:.2g}x" +
                      (", not enough: beyond the fitted ranges" if beyond_fit else ", enough"))
        return allowed, bound
    allowed = k_max is None or k <= k_max * (1 + 0.01)      # 1%: the stated speed itself, rounded
    bound = (f"{hw} must still reach the {fmt(v)} tok/s/user the source states it reached (k <= {k_max:.2g})"
             if k_max else "no stated speed bounds it")
    return allowed, bound


def _step_tag(k: float, allowed: bool, in_band: bool, beyond_fit: bool, within_err: bool, band: dict,
              rec: dict, ratio_out: dict | None = None, src: dict | None = None) -> tuple[str, str, bool]:
    """(tag, evidence text, allowed) of step factor k, from its region's error band (``in_band``), the fitted
    fast corner (``beyond_fit``) and the records of ``hw`` on the model (``rec``). ``ratio_out``: a ratio claim
    whose factor lies inside its own system's band while the ratio it implies lies beyond the ratio's held-out
    error (``ratio_shift``): beyond the model's error, so it rests on the records or, for a faster step inside the
    profile's fitted fast corner, on the software headroom (tag ``software headroom``).

    Not allowed, *implausible on the evidence* (physics allows it, the evidence does not): a step a record of
    ``hw`` on the model contradicts (measured faster than the curve end it leaves); a faster step beyond the band
    and the fitted fast corner that no record supports; a slower step beyond the band with no record of ``hw`` on
    the model behind it (vendor's word). A slower step the source's own speeds rule out: *below the source's own
    speeds*. Beyond the band, a step the source's own claim on that system alone needs (``src``,
    ``source_claim``) rests on it (tag ``the source's own claim``), unless physics, a record or the fitted
    ranges rule it out; one that claim needs the other way is not allowed (``contradicts the source's own
    claim``, implausible on the evidence)."""
    faster = k < 1
    unsupported = rec["tag"] == "vendor's word"
    against = src is not None and src["contradicts"] and not in_band
    by_source = src is not None and not src["contradicts"] and not in_band and not (faster and beyond_fit)
    on_evidence = allowed and not in_band and not by_source and (
        (faster and beyond_fit and rec["tag"] != "supported by records") or (not faster and unsupported))
    contradicted = rec["tag"] == "contradicts records"
    if on_evidence or contradicted or against:
        allowed = False
    if against and not contradicted:
        assert src is not None
        tag = "contradicts the source's own claim"
        ev_text = ("implausible on the evidence: " + src["text"] + "; " + rec["text"])
        return tag, ev_text, allowed
    if by_source and allowed and not contradicted:
        assert src is not None
        tag = "the source's own claim"
        ev_text = ((ratio_out["text"] if ratio_out is not None else f"beyond {_band_text(band)}") + "; "
                   + src["text"] + "; " + rec["text"])
    elif contradicted:
        tag = "contradicts records"
        ev_text = (("inside " if in_band else "beyond ") + _band_text(band) + "; implausible on the evidence: "
                   + rec["text"])
    elif within_err:
        tag, ev_text = "within error", _band_text(band) + "; " + rec["text"]
    elif in_band and beyond_fit:
        tag = "beyond the fitted ranges"
        ev_text = f"inside {_band_text(band)}, beyond the profile's fitted fast corner; " + rec["text"]
    elif on_evidence and ratio_out is not None:
        tag = "implausible on the evidence"
        ev_text = (ratio_out["text"] + ("; beyond the fitted fast corner" if faster else "") + "; " + rec["text"])
    elif on_evidence:
        tag = "implausible on the evidence"
        ev_text = (f"beyond {_band_text(band)}" + (" and the fitted fast corner" if faster else "") + "; "
                   + rec["text"])
    elif ratio_out is not None and faster and rec["tag"] != "supported by records":
        tag = "software headroom"
        ev_text = ratio_out["text"] + "; inside the profile's fitted fast corner; " + rec["text"]
    elif ratio_out is not None:
        tag = {"supported by records": "supported by records", "consistent with records": "beyond error, records allow",
               "vendor's word": "vendor's word"}[rec["tag"]]
        ev_text = ratio_out["text"] + "; " + rec["text"]
    else:
        tag = {"supported by records": "supported by records", "consistent with records": "beyond error, records allow",
               "vendor's word": "vendor's word"}[rec["tag"]]
        ev_text = f"beyond {_band_text(band)}; " + rec["text"]
    if not allowed and k > 1 and not contradicted and not on_evidence:
        tag = "below the source's own speeds"
    return tag, ev_text, allowed


def why_not(c: dict) -> str:
    """Why a condition is not allowed, one of: ``beyond physics`` (faster than the speed-of-light profile, or no
    step factor in range reaches it), ``on the evidence`` (physics allows it; the model's cross-validated error,
    the records or the source's own stated speeds do not), ``on a jump`` (the figure jumps past the claim),
    ``specs`` (a power or price ratio outside the catalog's same-basis range); '' when allowed."""
    if c.get("allowed"):
        return ""
    if c.get("jump"):
        return "on a jump"
    if c["kind"] == "joint_steps":
        return "on the evidence"
    if c["kind"] in ("all-in power", "price"):
        return "specs"
    if c.get("beyond_sol"):
        return "beyond physics"
    return "on the evidence"


def _step_words(hw: str, k: float, end: float | None) -> tuple[str, str, float | None]:
    """(sentence, short form, curve end after the change in tok/s/user = end / k) of step factor k on ``hw``."""
    new_end = end / k if end and math.isfinite(end) else None
    what = f"{hw}'s decode steps {StepFactor(hw, k).size()} than modeled"
    short = what.replace("'s decode steps", " steps").replace(" than modeled", "")
    if new_end:
        what += f" (curve end {fmt(new_end)} tok/s/user; modeled {fmt(end)})"
        short += f" (end {fmt(new_end)}, modeled {fmt(end)})"
    return what, short, new_end


def _range_needed(C, k_edge: float, k: float, rising: bool) -> list[float]:
    """The step factors that bring the claim inside: [k_edge, k] sorted; for an ``at_most`` / ``at_least``
    claim a whole side of k ([0, k] or [k, inf]), as the figure rises with k (``rising``: k on a denominator
    system) or falls."""
    if C.claim.qualifier in ("at_most", "at_least"):    # a bound is met on a whole side of the claim
        below = (C.claim.qualifier == "at_most") == rising
        return [0.0, k] if below else [k, math.inf]
    return sorted([k_edge, k])


def fast_corner(ev: Evaluation, fig, hw: str) -> float | None:
    """The step factor of the profile's fast corner for ``hw`` at the claim's point (the software headroom, used
    only inside conditions): the modeled peak over the fast corner's (a peak), else the modeled curve end over
    the fast corner's."""
    nom, opt = ev["nom"], ev["opt"]
    j = next((i for i, t in enumerate(fig.terms) if t.side.hardware == hw), None)
    if j is None or is_latency(fig.col):
        return None
    peak_term = fig.terms[j].point.point == "peak" and fig.col != "tps_per_user"
    a, b = (nom["values"][j], opt["values"][j]) if peak_term else (nom["ends"][j], opt["ends"][j])
    ok = all(v is not None and math.isfinite(v) and v > 0 for v in (a, b))
    return a / b if ok and b > a else None


def steps_range(C, fig, ev: Evaluation, hw: str) -> dict | None:
    """For a claim inside its interval: the step factors k of ``hw`` that keep it inside (the model's figure
    within [c e^-up, c e^down]); a side no k in K_GRID leaves is unbounded (0 or infinity). The input of a shared
    step condition from the claims that already agree (``shared.py``)."""
    iv, q0, c = ev["iv"], ev["q"], ev["c"]
    if not (q0 and math.isfinite(q0) and q0 > 0):
        return None

    def q_of(k):
        r = fig.read(shifts={hw: k}, diagonal=True)
        return r["q"] if not r["unreached"] else (0.0 if dir_down(fig, hw) else math.inf)
    k_lo_q = solve_factor(q_of, q0, c * math.exp(-iv["up"]))      # where the figure falls to the low edge
    k_hi_q = solve_factor(q_of, q0, c * math.exp(iv["down"]))     # ... rises to the high edge
    ks = [k for k in (k_lo_q, k_hi_q) if k is not None]
    lo = min([k for k in ks if k < 1], default=0.0)
    hi = max([k for k in ks if k > 1], default=math.inf)
    at_peak = all(t.point.point == "peak" for t in fig.terms if t.side.hardware == hw)
    from .evidence import on_steps
    return {"kind": "steps", "system": hw, "key": f"{hw} steps on {C.model} ({'peak' if at_peak else 'at speed'})",
            "range_needed": [lo, hi], "allowed": True, "evidence": evidence(hw), "inside": True,
            "records": on_steps(hw, C.model, 1.0, None, **rec_scope(C, hw))}


def dir_down(fig, hw: str) -> bool:
    t = next(t for t in fig.terms if t.side.hardware == hw)
    return (t.sign > 0) != is_latency(fig.col)


def power_ratio_range(a: str, b: str) -> dict:
    """The A/B power ratio a per-MW claim may divide by, on one basis for both systems: the hull of the GPU TDP
    ratio over the catalog's TDP ranges (tdp_A low / tdp_B high .. tdp_A high / tdp_B low) and the ratio of the
    provisioned all-in powers per GPU (allin_power_w values: rack power / GPUs). A measured draw on one side
    against a provisioned figure on the other (e.g. the low end of GB300's all-in range) is no same-basis ratio
    and is left out. Returns {low, high, tdp: [low, high] | None, allin: value | None, text}."""
    from .interval import spec_bounds
    ha, hb = catalog.hardware(a), catalog.hardware(b)
    vals, tdp, allin = [], None, None
    ta, tb = ha.value("gpu_tdp_w"), hb.value("gpu_tdp_w")
    if ta and tb:
        sa, sb = spec_bounds(a, "gpu_tdp_w"), spec_bounds(b, "gpu_tdp_w")
        lo = (sa["low"] if sa else ta) / (sb["high"] if sb else tb)
        hi = (sa["high"] if sa else ta) / (sb["low"] if sb else tb)
        tdp = [lo, hi]
        vals += tdp
    pa, pb = ha.value("allin_power_w"), hb.value("allin_power_w")
    if pa and pb:
        allin = pa / pb
        vals.append(allin)
    if not vals:
        return {"low": 0.0, "high": math.inf, "tdp": None, "allin": None, "text": "no same-basis power figures"}
    parts = ([f"GPU TDP {range_text(*tdp)}x"] if tdp else []) + ([f"provisioned all-in {allin:.2f}x"] if allin else [])
    return {"low": min(vals), "high": max(vals), "tdp": tdp, "allin": allin,
            "text": f"same-basis range {min(vals):.2f}-{max(vals):.2f}x ({'; '.join(parts)})"}


def ratio_basis(C, ev: Evaluation, field: str, what: str, unit: str) -> dict | None:
    """The A/B ratio of ``field`` (allin_power_w or price_usd_per_gpu_hour) a per-MW / per-dollar ratio claim
    needs: R = R0 q / c (edge: the interval's edge), against the catalog's value and range. A power ratio is held
    to its same-basis range (``power_ratio_range``); a price ratio to the catalog's price ranges."""
    if C.claim.kind != "ratio" or len(C.sides) != 2:
        return None
    from .interval import spec_bounds
    a, b = (s.hardware for s in C.sides)
    va, vb = catalog.hardware(a).value(field), catalog.hardware(b).value(field)
    if not (va and vb):
        return None
    r0 = va / vb
    q, c, iv = ev["q"], ev["c"], ev["iv"]
    if not (q and math.isfinite(q) and q > 0):
        return None
    need = r0 * q / c
    lo_n, hi_n = r0 * q / (c * math.exp(iv["down"])), r0 * q * math.exp(iv["up"]) / c
    if C.claim.qualifier == "at_most":       # Q = G / R <= c for every R above the low end
        hi_n = math.inf
    elif C.claim.qualifier == "at_least":
        lo_n = 0.0
    if field == "allin_power_w":
        pr = power_ratio_range(a, b)
        lo, hi, basis_text = pr["low"], pr["high"], pr["text"]
    else:
        ba, bb = spec_bounds(a, field), spec_bounds(b, field)
        lo = (ba["low"] if ba else va) / (bb["high"] if bb else vb)
        hi = (ba["high"] if ba else va) / (bb["low"] if bb else vb)
        basis_text = f"range {lo:.2f}-{hi:.2f}x"
    allowed = hi_n >= lo and lo_n <= hi
    status = catalog.hardware(a).specs.__dict__[field].status if hasattr(catalog.hardware(a).specs, field) else "?"
    inside = (max(lo_n, lo), min(hi_n, hi)) if allowed else None
    verdict_t = (f"inside it: {range_text(*inside)}x" if inside else
                 "outside it: inconsistent with the specs on one basis")
    return {"kind": what, "system": f"{a}/{b}", "key": f"{a}/{b} {what} ratio", "needed": need,
            "claimed": c, "model": q, "error": [iv["down"], iv["up"]],
            "range_needed": [lo_n, hi_n], "range_allowed": list(inside) if inside else None,
            "catalog": r0, "catalog_range": [lo, hi], "allowed": bool(allowed),
            "evidence": f"unknown but checkable (catalog {unit} are {status}s)",
            "short": (f"{what} ratio {range_text(*inside) if inside else range_text(lo_n, hi_n)}x (same-basis "
                      f"{lo:.2f}-{hi:.2f}x, catalog {r0:.2f}x)"),
            "text": f"the {a}/{b} {what} ratio is {range_text(lo_n, hi_n)}x (catalog {r0:.2f}x, {basis_text}; "
                    f"{verdict_t}; unknown but checkable)"}


def range_text(lo: float, hi: float) -> str:
    """'1.6-2.1', '>= 2.2', '<= 0.7' or '1.4' (two significant digits)."""
    if math.isinf(hi):
        return f">= {lo:.2g}"
    if lo <= 0:
        return f"<= {hi:.2g}"
    a, b = f"{lo:.2g}", f"{hi:.2g}"
    return a if a == b else f"{a}-{b}"


def conditions(C, fig, ev: Evaluation) -> list[dict]:
    """Every condition that applies to a claim outside its interval, in the fixed order."""
    out = []
    if C.col.endswith("_per_mw"):
        r = ratio_basis(C, ev, "allin_power_w", "all-in power", "all-in powers")
        out += [r] if r else []
    if C.col.endswith("_per_usd"):
        r = ratio_basis(C, ev, "price_usd_per_gpu_hour", "price", "prices")
        out += [r] if r else []
    if C.col != "ttft_s":      # a TTFT does not move with the decode steps; TPOT and E2E do (latency.values)
        for hw in dict.fromkeys(t.side.hardware for t in fig.terms):
            r = steps(C, fig, ev, hw)
            out += [r] if r else []
    return out


