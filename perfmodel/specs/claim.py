"""Claims as data: a published performance statement the tool can check.

A claim names the systems (A first; every ratio is A/B), the model and workload, the metric (which tokens,
per what), the operating point (peak, a per-user speed, the fastest speed both systems reach, ...) and the
number claimed. What the source leaves unstated is listed in ``unstated``: such a field is either left
empty or holds an assumption explained in ``notes``, so a checker can report which parts of a verdict rest on
assumptions rather than on the claim's own words.

Kinds:

``ratio``
    metric of system A over system B (two systems), each read on its own curve at ``at``.
``absolute``
    one system's figure (throughput, per-user speed, TTFT) at ``at``.
``delta``
    relative change of one system's metric between two operating points ``from`` -> ``to``
    (``claimed`` = to/from - 1, e.g. -0.81 for "fell by 81%").
``spec_ratio``
    a hardware datasheet ratio A/B of one ``spec_field`` (no model, workload or operating point).
``max_interactivity``
    one system's top per-user speed for a model (the end of its curve), in tokens/s/user.
"""

from __future__ import annotations

import ast
import datetime as _dt
import operator
import re
from typing import Callable, Literal, overload

from pydantic import ConfigDict, Field, field_validator, model_validator

from .common import Strict
from .hardware import HARDWARE_FIELDS

ClaimKind = Literal["ratio", "absolute", "delta", "spec_ratio", "max_interactivity"]

_ID = re.compile(r"^[a-z0-9][a-z0-9._\-]*(@[a-z0-9._\-]+)?$")

# systems per kind: exactly this many
_N_SYSTEMS = {"ratio": 2, "spec_ratio": 2, "absolute": 1, "delta": 1, "max_interactivity": 1}


@overload
def _check_id(kind: str, v: str) -> str: ...


@overload
def _check_id(kind: str, v: str | None) -> str | None: ...


def _check_id(kind: str, v: str | None) -> str | None:
    if v is not None and not _ID.match(v):
        raise ValueError(f"{kind} id {v!r} must be a lowercase catalog id (letters, digits, '.', '-', '_')")
    return v


class SystemRef(Strict):
    """One system of the claim: a hardware id, optionally the software profile and the engine as published.

    In YAML a bare string is accepted as shorthand for ``{hardware: <id>}``.
    """

    hardware: str = Field(description="Hardware catalog id (optionally id@variant), e.g. vr200-nvl72")
    profile: str | None = Field(None, description="Software profile id, e.g. vllm, dynamo-trtllm; None: not stated")
    engine: str | None = Field(None, description="The engine/software as the source describes it (free text)")
    decode_speedup: float | None = Field(
        None, gt=0, description="Decode-step speed-up of this system's software over its profile that the source "
                                "itself reports (e.g. 1.25 for 'decode steps about 25% faster'); None: none stated")
    prefill_speedup: float | None = Field(
        None, gt=0, description="Prefill-step speed-up the source reports for this system's software; None: none")
    gpus_per_system: int | None = Field(
        None, gt=0, description="GPUs in one system as the claim counts them (a 72-GPU rack, an 8-GPU node): a "
                                "per-system (per: rack) multiple is the per-GPU one times A's over B's; the "
                                "hardware's packaging, never the serving instance's size; None: the catalog's "
                                "NVLink domain (scaleup_domain_gpus)")
    weights: str | None = Field(
        None, description="This system's weight format where the source compares two formats (B200 NVFP4 against "
                          "H200 INT4); None: the claim's ``weights``")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, v):
        return {"hardware": v} if isinstance(v, str) else v

    @field_validator("hardware")
    @classmethod
    def _hw_id(cls, v: str) -> str:
        return _check_id("hardware", v)

    @field_validator("profile")
    @classmethod
    def _profile_id(cls, v: str | None) -> str | None:
        return _check_id("profile", v)

    @field_validator("weights")
    @classmethod
    def _system_weights(cls, v: str | None) -> str | None:
        from ..formats import weight_format_problem
        if v is not None and (problem := weight_format_problem(v)):
            raise ValueError(problem)
        return v


class Metric(Strict):
    """What is measured.

    ``quantity: throughput`` needs ``per`` and (unless unstated) ``tokens``; its DataFrame column is
    ``{tokens}_tps_per_{per}`` (``{tokens}_tokens_per_dollar`` for cost). ``tps_per_user`` and the latencies
    (``ttft_s``, ``tpot_ms``, ``e2e_s``) take neither.
    """

    quantity: Literal["throughput", "tps_per_user", "ttft_s", "tpot_ms", "e2e_s", "agents_per_gpu"] = Field(
        "throughput", description="throughput (aggregate tokens/s), tps_per_user (interactivity), a latency (ttft_s: "
                                  "time to first token, s; tpot_ms: time per output token = the inter-token latency "
                                  "ITL, ms; e2e_s: one request's end-to-end latency, s; each at ``percentile``, P50 "
                                  "unless stated, as the record format defines them; read at the load the claim "
                                  "states: a concurrency hint, or point max_speed for one request), or "
                                  "agents_per_gpu (AA-AgentPerf: most concurrent sessions per GPU within an SLO; "
                                  "read at point 'speed' = the speed floor, with the TTFT limit at.ttft_ms)")
    tokens: Literal["total", "output"] | None = Field(
        None, description="Tokens counted: total = input incl. cached + output; output = generated only")
    per: Literal["gpu", "mw", "dollar", "rack"] | None = Field(
        None, description="Normaliser: per GPU, per MW of all-in power, per dollar, per rack (per system: a rack, a "
                          "node; its GPUs from systems[i].gpus_per_system, else the catalog's NVLink domain)")
    percentile: float | None = Field(
        None, gt=0, lt=100, description="Statistic of the metric itself, e.g. 50 for 'median TTFT'")
    power_basis: Literal["measured-allin", "provisioned-allin", "gpu-tdp"] | None = Field(
        None, description="per: mw only. The power the source divides by: measured all-in draw, provisioned all-in "
                          "(rack) power, or GPU TDP; None: unstated")
    price_basis: Literal["rental", "capex", "tco"] | None = Field(
        None, description="per: dollar only. The price the source divides by: rental per GPU-hour, purchase "
                          "(capex) or total cost of ownership; None: unstated")

    @model_validator(mode="after")
    def _shape(self):
        if self.power_basis is not None and self.per != "mw":
            raise ValueError("metric.power_basis is only for per: mw")
        if self.price_basis is not None and self.per != "dollar":
            raise ValueError("metric.price_basis is only for per: dollar")
        if self.quantity == "throughput":
            if self.per is None:
                raise ValueError("metric.per is required for a throughput metric (gpu, mw, dollar or rack)")
        else:
            if self.tokens is not None or self.per is not None:
                raise ValueError(f"metric.quantity {self.quantity!r} takes no 'tokens' or 'per' "
                                 "(those describe throughput metrics)")
        return self

    @property
    def column(self) -> str | None:
        """DataFrame column name, e.g. total_tps_per_gpu; None while the token count is unstated."""
        if self.quantity != "throughput":
            return self.quantity
        if self.tokens is None:
            return None
        if self.per == "dollar":
            return f"{self.tokens}_tokens_per_dollar"
        return f"{self.tokens}_tps_per_{self.per}"


PointKind = Literal["peak", "speed", "fastest_common", "max_speed", "matched"]


class OperatingPoint(Strict):
    """Where on the throughput-vs-interactivity curve a figure is read.

    - ``peak``: each system at its own highest throughput (the ratio of two peaks).
    - ``speed``: at ``tps_per_user`` tokens/s/user.
    - ``fastest_common``: the highest per-user speed both systems reach (the end of the shorter curve);
      what "up to Nx" multiples usually mean.
    - ``max_speed``: the end of one system's curve (its top per-user speed, e.g. a single session).
    - ``matched``: some per-user speed both systems reach that the source does not give.

    In YAML a bare string is shorthand for ``{point: <kind>}``, e.g. ``at: peak``.

    Its limits (``ttft_ms``, ms; the speed floor ``tps_per_user`` of an agents_per_gpu SLO or ``min_tps_per_user``
    of a usable peak, tokens/s per user) are the YAML input schema only: they are read into the one SLO type
    (search.SLO, speed form) in exactly one place, claims/fields.slo.
    """

    point: PointKind = Field(description="peak | speed | fastest_common | max_speed | matched")
    tps_per_user: float | None = Field(None, gt=0, description="Per-user speed, tokens/s/user (point: speed)")
    approx: bool = Field(False, description="The source gives the speed as approximate ('roughly 165')")
    percentile: float | None = Field(
        None, gt=0, lt=100, description="Percentile of the per-user speed distribution, e.g. 90 for P90")
    interactivity: Literal["itl", "e2e"] | None = Field(
        None, description="itl: 1/ITL (decode only); e2e: OSL / end-to-end latency (incl. TTFT and queueing)")
    ttft_ms: float | None = Field(
        None, gt=0, description="TTFT limit, ms: of an SLO (metric agents_per_gpu; the speed floor is tps_per_user), "
                                "or the benchmark's TTFT limit a usable peak must meet (point peak)")
    min_tps_per_user: float | None = Field(
        None, gt=0, description="point peak: the slowest per-user speed a usable point may have (the benchmark's "
                                "slowest SLO tier), tokens/s/user; None: not stated (any speed)")
    tested_range: tuple[float, float] | None = Field(
        None, description="fastest_common / matched: [slowest, fastest] per-user speed the source tested, "
                          "tokens/s/user, where the source gives them; None: the speeds both systems reach")
    scenario: str | None = Field(
        None, description="point peak: a benchmark scenario of the workload (its ``scenarios``, e.g. MLPerf "
                          "'Server', 'Interactive'), whose TTFT and TPOT limits at their percentile (P99) the usable "
                          "points meet; None: the limits given here, if any")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, v):
        return {"point": v} if isinstance(v, str) else v

    @model_validator(mode="after")
    def _speed(self):
        if self.point == "speed" and self.tps_per_user is None:
            raise ValueError("point 'speed' needs tps_per_user")
        if self.point != "speed" and self.tps_per_user is not None:
            raise ValueError(f"tps_per_user is only for point 'speed' (got point {self.point!r})")
        if self.min_tps_per_user is not None and self.point != "peak":
            raise ValueError(f"min_tps_per_user is only for point 'peak' (got point {self.point!r})")
        if self.scenario is not None and self.point != "peak":
            raise ValueError(f"scenario is only for point 'peak' (got point {self.point!r})")
        if self.tested_range is not None:
            if self.point not in ("fastest_common", "matched"):
                raise ValueError(f"tested_range is only for points 'fastest_common' and 'matched' (got {self.point!r})")
            if not 0 < self.tested_range[0] <= self.tested_range[1]:
                raise ValueError(f"tested_range must be [slowest, fastest] > 0, got {list(self.tested_range)}")
        return self

    @property
    def needs_axis(self) -> bool:
        """Whether the reading depends on the interactivity definition (everything but peak)."""
        return self.point != "peak"


class DeploymentHints(Strict):
    """What the source says about the measured deployment. Hints, not constraints: a checker may use them
    to restrict its search. ``system`` names the claim's system they describe (None: every system)."""

    system: str | None = Field(None, description="Hardware id of one of the claim's systems; None: all")
    gpus: int | None = Field(None, gt=0, description="GPUs in the measured serving instance, e.g. 4 (a packaging "
                                                     "figure, GPUs per tray or board, goes in tray_gpus)")
    tray_gpus: int | None = Field(None, gt=0, description="GPUs per tray, board or node as the hardware is packaged "
                                                          "(e.g. 4 per compute tray): kept apart from the serving "
                                                          "layout, never read as the instance's size")
    tp: int | None = Field(None, gt=0)
    ep: int | None = Field(None, gt=0)
    concurrency: int | None = Field(None, gt=0, description="Requests in flight (1: a single session)")
    spec_tokens: int | None = Field(None, ge=0, description="Draft tokens per decode step")
    spec_tokens_range: tuple[int, int] | None = Field(
        None, description="Draft tokens tuned between [low, high] by concurrency")
    max_output_tokens: int | None = Field(None, gt=0, description="Output cap per request")
    serving: Literal["aggregated", "disaggregated"] | None = None
    kv_placement: Literal["hbm", "hbm+host"] | None = Field(None, description="hbm+host: a host-memory KV tier")
    note: str | None = None

    @field_validator("spec_tokens_range")
    @classmethod
    def _range(cls, v):
        if v is not None and not (0 <= v[0] <= v[1]):
            raise ValueError(f"spec_tokens_range must be [low, high] with 0 <= low <= high, got {list(v)}")
        return v


_OPS: dict[type[ast.AST], Callable[..., float]] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos}


def eval_arithmetic(expr: str) -> float:
    """Evaluate a pure arithmetic expression (numbers, + - * / ** and parentheses); anything else is an error."""
    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.operand))
        raise ValueError(f"expression {expr!r} may hold only numbers, + - * / ** and parentheses")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise ValueError(f"expression {expr!r} is not valid arithmetic") from None
    try:
        return ev(tree)
    except ZeroDivisionError:
        raise ValueError(f"expression {expr!r} divides by zero") from None


class Arithmetic(Strict):
    """A number the claim's own figures imply, e.g. GB300's peak from Rubin's peak and the multiple.

    ``expression`` is pure arithmetic and must evaluate to ``value`` within ``rel_tol`` (published figures are
    rounded), so a typo is caught when the catalog loads.
    """

    expression: str = Field(description="Pure arithmetic, e.g. '2.52e6 / 2.7'")
    value: float = Field(description="The result as stated (rounded)")
    meaning: str = Field(description="What the number is, with its unit, e.g. 'GB300 total tok/s/GPU at peak'")
    by: str | None = Field(None, description="Who did this arithmetic: the seed article, or this catalog")
    rel_tol: float = Field(0.02, gt=0, lt=1, description="Allowed relative difference for rounding")

    @model_validator(mode="after")
    def _evaluates(self):
        got = eval_arithmetic(self.expression)
        scale = max(abs(got), abs(self.value), 1e-300)
        if abs(got - self.value) / scale > self.rel_tol:
            raise ValueError(f"arithmetic {self.expression!r} = {got:.6g}, not the stated {self.value:g} "
                             f"(tolerance {self.rel_tol:.0%})")
        return self


CLAIMED_RANGE = {"ratio": (1e-3, 1e4), "spec_ratio": (1e-3, 1e4), "delta": (0.0, 1e4),
                 "absolute": (1e-6, 1e15), "max_interactivity": (1e-3, 1e6)}
"""Magnitudes a published claim can have, by kind: a multiple between 0.001x and 10,000x, a fractional change
up to +10,000x, a value (tokens/s, per MW, per dollar, seconds) between 1e-6 and 1e15 in its unit; outside them
the number is a typo or a unit slip, and the intervals and conditions would print as 1e+294x."""


class ClaimSpec(Strict):
    """One published claim. Ratio convention: A/B, A the first of ``systems``."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    id: str = Field(description="Catalog id (the file name without .yaml)")
    title: str
    source: str = Field(description="Where the claim comes from: a URL, a seed file plus the original publication "
                                    "it reports, or any text for a user's own claim (e.g. 'our load test, 3 Dec')")
    date: _dt.date | None = Field(None, description="Publication date of the claim; None: not stated")
    quote: str = Field(description="The sentence claimed, as published")
    kind: ClaimKind = Field(description="ratio | absolute | delta | spec_ratio | max_interactivity")
    systems: list[SystemRef] = Field(min_length=1, description="A first; ratios are A/B")
    model: str | None = Field(None, description="Model catalog id; None only if listed in unstated")
    workload: str | None = Field(None, description="Workload catalog id; None only if listed in unstated")
    metric: Metric | None = Field(None, description="What is measured (not for spec_ratio)")
    at: OperatingPoint | None = Field(None, description="Operating point (ratio, absolute, max_interactivity)")
    from_: OperatingPoint | None = Field(None, alias="from", description="delta: the starting operating point")
    to: OperatingPoint | None = Field(None, description="delta: the end operating point")
    spec_field: str | None = Field(None, description="spec_ratio: the hardware field compared, e.g. hbm_bandwidth_tbps")
    claimed: float = Field(description="The number: a multiple (ratio, spec_ratio), a value in the metric's unit "
                                       "(absolute, max_interactivity) or a fractional change (delta, -0.81 = -81%). "
                                       "For a range claim, the headline end of claimed_range")
    claimed_range: tuple[float, float] | None = Field(None, description="[low, high] for a range claim, e.g. 9x-21x")
    qualifier: Literal["about", "exact", "up_to", "at_least", "at_most"] = Field(
        "about", description="about: a rounded figure; up_to: the maximum over the compared range; "
                             "at_least / at_most: a bound")
    weights: str | None = Field(
        None, description="Number format of the weights the source quotes (e.g. fp8, nvfp4): the claim is checked in "
                          "it; None: not stated (claims are then checked in nvfp4, the format vendors state them in)")
    deployment_hints: list[DeploymentHints] = Field(default_factory=list)
    arithmetic: list[Arithmetic] = Field(default_factory=list, description="Checks the claim's own numbers imply")
    unstated: list[str] = Field(
        default_factory=list,
        description="Fields the source does not state (e.g. 'model', 'metric.tokens', 'at.percentile', "
                    "'systems[1].hardware'): left empty, or holding an assumption explained in notes")
    notes: str | None = None

    @field_validator("model", "workload")
    @classmethod
    def _ids(cls, v, info):
        return _check_id(info.field_name, v)

    @field_validator("source")
    @classmethod
    def _source(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("source is empty: name where the claim comes from (a URL, a seed file, or any text "
                             "for your own claim)")
        return v

    @property
    def published(self) -> bool:
        """Whether the source names a publication (a URL or a seed file); else a user's own claim."""
        return "http://" in self.source or "https://" in self.source or "seeds/" in self.source

    @field_validator("weights")
    @classmethod
    def _weights(cls, v: str | None) -> str | None:
        from ..formats import WEIGHT_BYTES
        if v is not None and v not in WEIGHT_BYTES:
            raise ValueError(f"unknown weight format {v!r}; choose one of {', '.join(sorted(WEIGHT_BYTES))}")
        return v

    @field_validator("deployment_hints", mode="before")
    @classmethod
    def _hints_list(cls, v):
        return [v] if isinstance(v, dict) else v

    @field_validator("spec_field")
    @classmethod
    def _spec_field(cls, v: str | None) -> str | None:
        if v is not None and v not in HARDWARE_FIELDS:
            raise ValueError(f"unknown hardware field {v!r}; choose one of {', '.join(HARDWARE_FIELDS)}")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        k = self.kind
        hw = [s.hardware for s in self.systems]
        n = _N_SYSTEMS[k]
        if len(self.systems) != n:
            what = "compares two systems (A/B, A first)" if n == 2 else "describes one system"
            raise ValueError(f"systems: a {k} claim {what}; got {len(hw)}: {hw}")
        if n == 2 and self.systems[0] == self.systems[1]:
            raise ValueError(f"systems: a {k} claim needs two different systems; both are {hw[0]!r}")

        if k == "spec_ratio":
            if self.spec_field is None:
                raise ValueError("spec_field: a spec_ratio claim names the hardware field it compares")
            for name in ("metric", "at", "from_", "to", "model", "workload"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name.rstrip('_')}: a spec_ratio claim compares datasheet numbers; "
                                     f"it takes no {name.rstrip('_')}")
        else:
            if self.spec_field is not None:
                raise ValueError(f"spec_field is only for spec_ratio claims (this one is {k})")
            if self.metric is None:
                raise ValueError(f"metric: a {k} claim needs a metric")
        if k == "delta":
            if self.from_ is None or self.to is None:
                raise ValueError("from/to: a delta claim needs both a 'from' and a 'to' operating point")
            if self.at is not None:
                raise ValueError("at: a delta claim uses 'from' and 'to', not 'at'")
            if self.claimed <= -1:
                raise ValueError(f"claimed: a delta is a fractional change above -1 (-0.81 = -81%), got {self.claimed}")
        elif k != "spec_ratio":
            if self.at is None:
                raise ValueError(f"at: a {k} claim needs an operating point (e.g. 'peak' or a tps_per_user)")
            if self.from_ is not None or self.to is not None:
                raise ValueError(f"from/to are only for delta claims (this one is {k})")
        if k == "max_interactivity":
            assert self.metric is not None and self.at is not None     # required above for every kind but two
            if self.metric.quantity != "tps_per_user":
                raise ValueError("metric: a max_interactivity claim is in tps_per_user")
            if self.at.point != "max_speed":
                raise ValueError("at: a max_interactivity claim is read at point 'max_speed'")
        if self.metric is not None and self.metric.quantity == "agents_per_gpu":
            for name, op in (("at", self.at), ("from", self.from_), ("to", self.to)):
                if op is not None and op.point != "speed":
                    raise ValueError(f"{name}: an agents_per_gpu claim is read at an SLO: point 'speed' with "
                                     "tps_per_user (the speed floor) and ttft_ms (the TTFT limit)")
        if k in ("ratio", "spec_ratio", "absolute", "max_interactivity") and self.claimed <= 0:
            raise ValueError(f"claimed: a {k} claim needs a positive number, got {self.claimed}")
        lo_hi = CLAIMED_RANGE.get(k)
        if lo_hi and not lo_hi[0] <= abs(self.claimed) <= lo_hi[1]:
            raise ValueError(f"claimed: {self.claimed:g} is out of range for a {k} claim ({lo_hi[0]:g} to "
                             f"{lo_hi[1]:g}; check the unit)")

        if self.claimed_range is not None:
            lo, hi = self.claimed_range
            if lo > hi:
                raise ValueError(f"claimed_range must be [low, high], got [{lo}, {hi}]")
            if not lo <= self.claimed <= hi:
                raise ValueError(f"claimed {self.claimed} lies outside claimed_range [{lo}, {hi}]")

        for h in self.deployment_hints:
            if h.system is not None and h.system not in hw:
                raise ValueError(f"deployment_hints: system {h.system!r} is not one of the claim's systems {hw}")

        for path in self.unstated:
            _resolve(self, path)  # raises on a path that names no field
        missing = [p for p in self._required_paths() if _resolve(self, p) is None and p not in self.unstated]
        if missing:
            raise ValueError(f"{missing[0]} is not set: give it, or list '{missing[0]}' under unstated "
                             "if the source does not say (and explain any assumption in notes)")
        return self

    def _required_paths(self) -> list[str]:
        if self.kind == "spec_ratio":
            return ["date"]
        out = ["date", "model", "workload"]
        if self.metric is not None and self.metric.quantity == "throughput":
            out.append("metric.tokens")
        for name in ("at", "from", "to"):
            p = getattr(self, "from_" if name == "from" else name)
            if p is not None and p.needs_axis:
                out += [f"{name}.interactivity", f"{name}.percentile"]
        return out

    # convenience
    @property
    def system_ids(self) -> list[str]:
        return [s.hardware for s in self.systems]

    @property
    def assumed(self) -> list[str]:
        """Unstated fields that nonetheless hold a value: assumptions the verdict rests on."""
        return [p for p in self.unstated if _resolve(self, p) is not None]

    def hints_for(self, hardware: str) -> list[DeploymentHints]:
        """Deployment hints that describe one system (its own, then those for every system)."""
        return [h for h in self.deployment_hints if h.system == hardware] + \
               [h for h in self.deployment_hints if h.system is None]


_PATH = re.compile(r"^([a-z_]+)(?:\[(\d+)\])?$")


def _resolve(obj, path: str):
    """Value at a dotted path such as 'at.percentile' or 'systems[1].hardware'; ValueError if no such field."""
    cur = obj
    for part in path.split("."):
        m = _PATH.match(part)
        if not m:
            raise ValueError(f"unstated: {path!r} is not a field path (e.g. 'at.percentile', 'systems[1].hardware')")
        name, idx = m.group(1), m.group(2)
        attr = "from_" if name == "from" else name
        if cur is None:
            return None
        fields = type(cur).model_fields
        if attr not in fields:
            raise ValueError(f"unstated: {path!r} names no field ({name!r} is not among {sorted(fields)})")
        cur = getattr(cur, attr)
        if idx is not None:
            if not isinstance(cur, list) or int(idx) >= len(cur):
                raise ValueError(f"unstated: {path!r}: {name} has no item {idx}")
            cur = cur[int(idx)]
    return cur
