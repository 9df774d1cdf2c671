"""Find, load and validate catalog YAML files (hardware, models, profiles, workloads, claims).

Search order for an id: user catalogs (``--catalog DIR``, then ``$PERFMODEL_CATALOG``, a
path-separated list), then the built-in catalog. A user catalog DIR has the built-in layout
(DIR/hardware/*.yaml, DIR/models/*.yaml, ...). Wherever an id is expected, a path to a YAML file works.
Hardware and profile ids accept a variant suffix: ``vr200-nvl72@first-shipments``, ``trtllm@min-latency``.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import json
import os
import re
from functools import lru_cache
from pathlib import Path

from pydantic import ValidationError

from . import fileio
from .errors import SpecError, pydantic_to_spec_error

KINDS: dict[str, str] = {
    "hardware": "perfmodel.specs.hardware:HardwareSpec",
    "models": "perfmodel.specs.model:ModelSpec",
    "profiles": "perfmodel.specs.profile:ProfileSpec",
    "workloads": "perfmodel.specs.workload:WorkloadSpec",
    "claims": "perfmodel.specs.claim:ClaimSpec",
}

_user_dirs: list[Path] = []


def builtin_root() -> Path:
    """The shipped catalog: perfmodel/_catalog in a wheel, the repository root in a checkout."""
    here = Path(__file__).resolve().parent
    shipped = here / "_catalog"
    return shipped if shipped.is_dir() else here.parent


def add_user_catalog(path: str | os.PathLike) -> None:
    p = Path(path)
    if not p.is_dir():
        raise SpecError(f"catalog directory {str(p)!r} does not exist", field="--catalog")
    if p not in _user_dirs:
        _user_dirs.append(p)
    _index.cache_clear()


def catalog_roots() -> list[Path]:
    env = [Path(p) for p in os.environ.get("PERFMODEL_CATALOG", "").split(os.pathsep) if p]
    return [*_user_dirs, *env, builtin_root()]


def _schema(kind: str):
    mod, cls = KINDS[kind].split(":")
    return getattr(importlib.import_module(mod), cls)


def load_yaml(path: Path) -> dict:
    """Parse one YAML file into a mapping; bad bytes, malformed or deeply nested YAML and duplicate keys
    become a one-line SpecError naming the file (perfmodel.fileio)."""
    data = fileio.load_yaml(path)
    if not isinstance(data, dict):
        raise SpecError("expected a mapping of fields at the top level", file=str(path))
    return data


def kind_of(path: str | os.PathLike) -> str:
    """The catalog kind of a YAML file: its folder's name (hardware/, models/, ...) or else its fields
    (the schema that knows every top-level key, most keys shared on a tie)."""
    p = Path(path)
    if p.parent.name in KINDS:
        return p.parent.name
    data = load_yaml(p)
    keys = set(data)

    def score(kind):
        fields = _schema(kind).model_fields
        names = set(fields) | {f.alias for f in fields.values() if f.alias}
        required = {n for n, f in fields.items() if f.is_required()}
        return (keys <= names, required <= keys, len(keys & names))
    return max(KINDS, key=score)


def validate(kind: str, data: dict, file: str | None = None):
    """Validate a mapping against the schema of ``kind``; errors name the file and the field."""
    try:
        return _schema(kind).model_validate(data)
    except ValidationError as exc:
        raise pydantic_to_spec_error(exc, file=file) from None
    except SpecError as exc:
        raise exc.in_file(file or "") from None


@lru_cache(maxsize=None)
def _index(kind: str, roots: tuple[Path, ...]) -> tuple[dict[str, Path], frozenset[str]]:
    """(id and aliases -> file, primary ids); the first root wins."""
    out: dict[str, Path] = {}
    primary: set[str] = set()
    for root in roots:
        for f, ids in _root_ids(kind, root):
            if ids[0] not in out:
                primary.add(ids[0])
            for i in ids:
                out.setdefault(i, f)
    return out, frozenset(primary)


def _file_ids(f: Path) -> list[str]:
    """The ids of one catalog file: its ``id`` (else its name) and its aliases; an unreadable file is indexed by
    its name (loading it reports the problem)."""
    ids = [f.stem]
    try:
        data = fileio.load_yaml(f) or {}
        if isinstance(data, dict) and data:
            _parsed[(str(f), f.stat().st_mtime)] = data      # loading it validates this parse
        if isinstance(data, dict):
            aliases = data.get("aliases", []) or []
            ids = [str(data.get("id", f.stem)), *map(str, aliases if isinstance(aliases, list) else [aliases])]
    except SpecError:
        pass
    return ids


def _root_ids(kind: str, root: Path) -> list[tuple[Path, list[str]]]:
    """(file, its ids) for each YAML file of ``root/kind``, in name order. The built-in catalog's are kept in
    the cache directory (``$PERFMODEL_CACHE``, as the compiled equations) under the files' names, sizes and
    modification times, so a new process reads one small file instead of parsing every YAML of the kind."""
    d = root / kind
    if not d.is_dir():
        return []
    files = sorted(d.glob("*.y*ml"))
    path = _index_cache_path(kind, root)
    stamp = None
    if path is not None:
        try:
            stamp = [[f.name, st.st_mtime_ns, st.st_size] for f in files for st in (f.stat(),)]
            cached = json.loads(path.read_text())
            if cached["files"] == stamp:
                return [(d / name, ids) for name, ids in cached["ids"]]
        except (OSError, ValueError, KeyError, TypeError):
            pass
    entries = [(f, _file_ids(f)) for f in files]
    if path is not None and stamp is not None:
        try:
            fileio.write_whole(path, json.dumps({"files": stamp, "ids": [[f.name, ids] for f, ids in entries]}))
        except (OSError, SpecError):
            pass
    return entries


def _index_cache_path(kind: str, root: Path) -> Path | None:
    """Where the ids of the built-in catalog's ``kind`` are kept (None: user catalogs, or the cache is off)."""
    if root != builtin_root():
        return None
    base = fileio.cache_dir()
    if base is None:
        return None
    where = hashlib.sha1(str(root.resolve()).encode()).hexdigest()[:16]
    return base / f"catalog-{kind}-{where}.json"


def ids(kind: str) -> list[str]:
    """Catalog ids of one kind (aliases excluded)."""
    return sorted(_index(kind, tuple(catalog_roots()))[1])


def _spelled_as_published(kind: str, name: str, idx: dict[str, Path]) -> Path | None:
    """An entry named as results spell it: any case (``GLM-5.3``, ``B200``, ``GB300-NVL72``) and, for a model, a
    Hugging Face repository id (``zai-org/GLM-5.3``, the part after the one slash). None when no catalog id or
    alias matches."""
    lowered = {k.lower(): v for k, v in idx.items()}
    if kind != "models":
        return None if name.endswith((".yaml", ".yml")) or os.sep in name else lowered.get(name.lower())
    repo = name.rsplit("/", 1)[-1] if name.count("/") == 1 and not name.endswith((".yaml", ".yml")) else name
    found = lowered.get(repo.lower())
    stripped = repo.lower()
    while found is None and (shorter := _CHECKPOINT_SUFFIX.sub("", stripped)) != stripped:
        stripped = shorter
        found = lowered.get(stripped)
    return found


_CHECKPOINT_SUFFIX = re.compile(r"[-_](fp8|fp8-dynamic|fp8-block|dynamic|block|nvfp4|mxfp8|mxfp4|fp4|int4|int8|w4afp8|"
                                r"w4a8|w4a16|w8a8|awq|gptq|gptq-int4|bf16|fp16|quantized|gguf|mlx)$")
"""A quantized checkpoint's suffix on a repository name (``nvidia/Kimi-K2.6-NVFP4``, ``MiniMaxAI/MiniMax-M3-MXFP8``,
``Qwen/Qwen3.5-122B-A10B-FP8``, ``...-FP8-Dynamic``): the same architecture, so the name reads as the entry it
suffixes when the full name is no catalog id or alias; the record's or deployment's ``weights`` says the format."""


def resolve_path(kind: str, name: str) -> Path:
    """The YAML file for an id or a path; unknown ids suggest the closest names."""
    if name.endswith((".yaml", ".yml")) or os.sep in name:
        p = Path(name)
        if not p.is_file():
            found = _spelled_as_published(kind, name, _index(kind, tuple(catalog_roots()))[0])
            if found is not None:
                return found
            if kind == "models" and not name.endswith((".yaml", ".yml")):
                raise SpecError(f"unknown model {name!r} (no catalog id, alias or file); to add it from its "
                                f"Hugging Face config.json: {IMPORT_HINT}", field=kind)
            raise SpecError(f"no such file {name!r}", field=kind)
        return p
    idx = _index(kind, tuple(catalog_roots()))[0]
    if name in idx:
        return idx[name]
    found = _spelled_as_published(kind, name, idx)
    if found is not None:
        return found
    close = difflib.get_close_matches(name, list(idx), n=3, cutoff=0.4)   # same kind only
    known = sorted(idx)
    listed = ", ".join(known[:12]) + (f", ... ({len(known)} in all; perfmodel list {kind})" if len(known) > 12 else "")
    hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {listed}"
    label = kind[:-1] if kind.endswith("s") else kind            # 'models' -> 'model'
    if kind == "models":   # a new model: its config.json is one command away from a catalog entry
        hint += f"; to add it from its Hugging Face config.json: {IMPORT_HINT}"
    raise SpecError(f"unknown {label} id {name!r}{hint}", field=kind)


def canonical_id(kind: str, name: str) -> str:
    """The catalog id ``name`` spells as results write it (any case; a model's Hugging Face repository id; a
    hardware or profile ``@variant`` kept): ``B200`` -> ``b200``, ``MiniMaxAI/MiniMax-M3`` -> ``minimax-m3``.
    ``name`` itself when it is an id or alias already, a path, or unknown (loading it then says why)."""
    if name.endswith((".yaml", ".yml")) or Path(name).is_file():
        return name
    base, at, variant = name.partition("@") if kind in ("hardware", "profiles") else (name, "", "")
    idx = _index(kind, tuple(catalog_roots()))[0]
    if base in idx:
        return name
    path = _spelled_as_published(kind, base, idx)
    if path is None:
        return name
    return str(_load_cached(kind, str(path), path.stat().st_mtime).id) + at + variant


IMPORT_HINT = "perfmodel models import CONFIG.json --id ID -o models/ID.yaml"
"""The command that adds a model from its Hugging Face config.json (named where an unknown model id is met)."""

_parsed: dict[tuple[str, float], dict] = {}   # files the index parsed, by (path, mtime), until loaded once


@lru_cache(maxsize=256)
def _load_cached(kind: str, path: str, mtime: float):
    data = _parsed.pop((path, mtime), None)
    if data is None:
        data = load_yaml(Path(path))
    return validate(kind, data, file=path)


def load(kind: str, name: str):
    """Load and validate one catalog entry by id or path."""
    variant = None
    if kind in ("hardware", "profiles") and "@" in name and not name.endswith((".yaml", ".yml")):
        name, variant = name.split("@", 1)
    path = resolve_path(kind, name)
    spec = _load_cached(kind, str(path), path.stat().st_mtime)
    if kind in ("hardware", "profiles"):
        try:
            spec = spec.with_variant(variant)
        except SpecError as exc:
            raise exc.in_file(str(path)) from None
    return spec


def hardware_base(name: str):
    """The hardware spec as its file states it, no variant applied (``name`` may carry an ``@variant``)."""
    if "@" in name and not name.endswith((".yaml", ".yml")):
        name = name.split("@", 1)[0]
    path = resolve_path("hardware", name)
    return _load_cached("hardware", str(path), path.stat().st_mtime)


def load_all(kind: str) -> list:
    return [load(kind, i) for i in ids(kind)]


def hardware(name: str):
    return load("hardware", name)


def model(name: str):
    return load("models", name)


def profile(name: str):
    return load("profiles", name)


def workload(name: str):
    return load("workloads", name)


def claim(name: str):
    return load("claims", name)
