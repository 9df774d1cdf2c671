"""Schema of fitted kernel curves kept in the catalog (``perfmodel kernels --write``).

``kernel_fits`` in a hardware file holds, per kernel family, engine and kernel variant, the parameters of
the family's closed-form latency curve (perfmodel/kernels/<family>.py documents each parameter and its unit)
fitted on that GPU's measured kernel table; in a profile it holds the engine's values over all table GPUs
(the median of each parameter), for hardware without tables. Each curve carries its source (the kernel table
at the aiconfigurator commit it came from, Apache-2.0) and status: ``fitted`` (least squares on the table) or
``physics`` (derived for a GPU without tables from a fitted GPU and the catalog's physics, see ``note``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from .common import Strict


class KernelCurve(Strict):
    """One fitted curve: parameter name -> value (units in perfmodel/kernels/<family>.py)."""

    params: dict[str, float] = Field(description="Curve parameters, named as in perfmodel/kernels/<family>.py")
    status: Literal["fitted", "physics"] = Field(description="fitted on a kernel table | derived from physics")
    source: str = Field(description="Kernel table URL at the aiconfigurator commit (Apache-2.0)")
    held_out_median_abs_err_pct: float | None = Field(None, ge=0, description="Median |error| on held-out shapes, %")
    low: dict[str, float] | None = Field(None, description="Lower ends of physics-derived parameters")
    high: dict[str, float] | None = Field(None, description="Upper ends of physics-derived parameters")
    note: str | None = None

    @field_validator("source")
    @classmethod
    def _url(cls, v: str) -> str:
        if not any(p.strip().startswith(("http://", "https://")) for p in v.split(";")):
            raise ValueError("source must contain an http(s) URL")
        return v


class KernelFits(Strict):
    """Fitted kernel curves: family -> engine -> kernel variant -> curve."""

    notice: str = Field(description="Licence notice of the kernel tables the curves were fitted on")
    command: str = Field(description="Command that wrote this block")
    families: dict[str, dict[str, dict[str, KernelCurve]]]
