"""Importers: turn third-party model descriptions into catalog YAML (``perfmodel models import``)."""

from .hf_config import SUPPORTED_ARCHITECTURES, import_hf_config, import_hf_config_file, to_yaml

__all__ = ["SUPPORTED_ARCHITECTURES", "import_hf_config", "import_hf_config_file", "to_yaml"]
