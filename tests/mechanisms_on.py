"""Profiles with physics mechanisms switched on (perfmodel/specs/mechanisms.py), for the tests of a mechanism that
lands switched off: the catalog profile as an object, or written to a YAML file a scenario can name."""

from __future__ import annotations

from pathlib import Path

import yaml

from perfmodel import catalog
from perfmodel.specs.profile import ProfileSpec


def profile_with(profile_id: str, *mechanisms: str) -> ProfileSpec:
    """The catalog profile ``profile_id`` with ``mechanisms`` switched on (validated)."""
    data = catalog.profile(profile_id).model_dump(mode="json", exclude_none=True)
    return ProfileSpec.model_validate({**data, "mechanisms": list(mechanisms)})


def profile_file(folder: Path, profile_id: str, *mechanisms: str) -> str:
    """``profile_with`` written to ``folder``; its path (a scenario's ``profile``)."""
    path = Path(folder) / f"{profile_id}-{'-'.join(mechanisms) or 'off'}.yaml"
    path.write_text(yaml.safe_dump(profile_with(profile_id, *mechanisms).model_dump(mode="json", exclude_none=True)))
    return str(path)
