"""Shared schema pieces: sourced values and strict base models."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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
    low: float | None = Field(default=None, description="Lowest value the sources leave open (estimate/announced), "
                              "same unit as value; claim intervals propagate it")
    high: float | None = Field(default=None, description="Highest value the sources leave open, same unit as value")
    range_note: str | None = Field(default=None, description="Where low and high come from (required with them)")

    @field_validator("source")
    @classmethod
    def _source_is_url(cls, v: str) -> str:
        if not any(part.strip().startswith(("http://", "https://")) for part in v.split(";")):
            raise ValueError("source must contain an http(s) URL")
        return v

    @model_validator(mode="after")
    def _range(self):
        """low <= value <= high, both or neither, with a range_note; a datasheet value has no range."""
        if (self.low is None) != (self.high is None):
            raise ValueError("low and high go together (give both or neither)")
        if self.low is not None and self.high is not None:     # both or neither (checked above)
            if not self.low <= self.value <= self.high:
                raise ValueError(f"range low={self.low:g}, high={self.high:g} must contain value={self.value:g}")
            if not self.range_note:
                raise ValueError("a low/high range needs range_note (where the range comes from)")
            if self.status == "datasheet":
                raise ValueError("a datasheet value takes no low/high range (status estimate or announced only)")
        return self

    def bounds(self) -> tuple[float, float]:
        """(low, high): the stated range, or (value, value) when none is stated."""
        return (self.low, self.high) if self.low is not None and self.high is not None else (self.value, self.value)


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
