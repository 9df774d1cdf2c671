"""Shared schema pieces: sourced values and strict base models."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Status = Literal["datasheet", "announced", "estimate"]


class Strict(BaseModel):
    """Base for every spec: unknown keys are errors (a typo must not pass silently); numbers are finite."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)   # no NaN or inf in any spec


class Sourced(Strict):
    """A number with its provenance.

    ``status``: datasheet (vendor datasheet or official document), announced (preliminary, may
    change), estimate (analyst figure or arithmetic derived from other sourced numbers).
    """

    value: float = Field(description="The number, in the unit named by the field that holds it")
    status: Status = Field(description="datasheet | announced | estimate")
    source: str = Field(description="URL of the source (or several, separated by ' ; ')")
    note: str | None = Field(default=None, description="Caveats, the derivation, disagreeing sources")

    @field_validator("source")
    @classmethod
    def _source_is_url(cls, v: str) -> str:
        if not any(part.strip().startswith(("http://", "https://")) for part in v.split(";")):
            raise ValueError("source must contain an http(s) URL")
        return v


class SourcedText(Strict):
    """A published reference figure used to check derived numbers (e.g. total parameters)."""

    value: float
    source: str
    note: str | None = None


def check_range(name: str, value: float, lo: float, hi: float, unit: str) -> None:
    """Raise ValueError unless lo <= value <= hi (catches GB/s written where TB/s is meant)."""
    if not (value == value) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value}")
    if not lo <= value <= hi:
        raise ValueError(f"{name}={value} is outside the sane range {lo}-{hi} {unit} (check the unit)")
