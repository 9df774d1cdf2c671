"""One loader per input format, one check per output path and one writer of every output file; every failure is a
one-line SpecError.

Inputs (YAML, JSON, CSV, catalog files, record files, Hugging Face configs) go through ``read_text``
and the parsers below: undecodable bytes, syntax errors, nesting deeper than ``MAX_DEPTH``, duplicate keys
and non-finite JSON constants become ``FILE: line N: problem``. Outputs go through ``check_output`` before
any work starts (a directory given as a file, a wrong suffix, a parent that is a file) and are written whole by
``write_whole``, the one writer of every file the tool writes (profiles, models, CSVs, plots, reports, caches): a
temporary file beside the output, flushed to disk, then renamed over it, so a reader, a run killed mid-write or two
commands writing the same output find the old file or the new one, never part of one. Missing parent directories
are created (``ensure_parent``: the user named them).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import yaml

from .errors import SpecError, short

MAX_DEPTH = 64
"""Deepest nesting of mappings/lists accepted in a YAML or JSON input (the shipped files use < 10)."""


def read_text(path: str | Path) -> str:
    """The file's text, decoded as UTF-8 (a leading BOM is dropped)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except IsADirectoryError:
        raise SpecError("is a directory, expected a file", file=str(path)) from None
    except OSError as exc:
        raise SpecError(f"cannot read file ({exc.strerror or exc})", file=str(path)) from None
    except ValueError as exc:  # e.g. an embedded NUL byte in the path
        raise SpecError(f"bad file name ({exc})", file=repr(str(path))) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise SpecError(f"not valid UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
                        file=str(path), field=f"line {line}") from None


MAX_VALUES = 1_000_000
"""Most values (scalars, mappings, lists) a YAML or JSON input may hold once its aliases are expanded: a document
of nested aliases (nine levels of nine: 9^9 values) is refused before anything walks it."""


def _shape(node, limit: int) -> tuple[int, int]:
    """(nesting depth, values once aliases are expanded) of parsed data, each stopping early past its limit
    (``limit`` levels, MAX_VALUES values). A YAML alias is the same Python object at several places, so each object
    is measured once (memo by id): linear in the document's text, not in its expansion."""
    memo: dict[int, tuple[int, int]] = {}

    def walk(n, d: int) -> tuple[int, int]:
        if not isinstance(n, (dict, list, tuple)):
            return 0, 1
        if d > limit:
            return limit + 1, 1
        key = id(n)
        if key in memo:
            return memo[key]
        deepest, count = 0, 1
        for c in (n.values() if isinstance(n, dict) else n):
            cd, cc = walk(c, d + 1)
            deepest, count = max(deepest, cd), count + cc
            if deepest + 1 > limit or count > MAX_VALUES:
                break
        memo[key] = (deepest + 1, min(count, MAX_VALUES + 1))
        return memo[key]

    return walk(node, 1)


def _depth(node, limit: int) -> int:
    """Nesting depth of parsed data, stopping early past ``limit``."""
    return _shape(node, limit)[0]


def _check_expansion(data, file: str | None, kind: str):
    """``data`` unless its aliases expand past MAX_VALUES values (then a one-line SpecError)."""
    if _shape(data, MAX_DEPTH)[1] > MAX_VALUES:
        raise SpecError(f"malformed {kind}: its aliases expand to more than {MAX_VALUES:,} values", file=file)
    return data


class _UniqueKeys(yaml.constructor.SafeConstructor):
    """Refuses duplicate mapping keys (mixed into the pure-Python and the libyaml loaders)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[object, int] = {}    # key -> its line
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<: *base` may be overridden by explicit keys
                try:
                    key = self.construct_object(key_node, deep=True)
                    hash(key)
                except TypeError:
                    continue  # the base class reports unhashable keys
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {short(key)} (first on line {seen[key] + 1})",
                        key_node.start_mark)
                seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


class UniqueKeyLoader(_UniqueKeys, yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys and nesting deeper than MAX_DEPTH."""

    def compose_node(self, parent, index):
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise yaml.constructor.ConstructorError(None, None, f"nested deeper than {MAX_DEPTH} levels", mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_CLoader: type | None = None
if getattr(yaml, "__with_libyaml__", False):
    class _CUniqueKeyLoader(_UniqueKeys, yaml.CSafeLoader):  # type: ignore[misc,name-defined]
        """libyaml's parser with the same constructor: the fast path of ``parse_yaml``."""

    _CLoader = _CUniqueKeyLoader


def _flow_depth(text: str) -> tuple[int, int]:
    """(deepest [ / { nesting outside quotes and comments, its line): a cheap pre-check, since PyYAML's
    scanner takes quadratic time on deeply nested flow collections."""
    depth = deepest = line = where = 0
    quote = None
    comment = False
    for ch in text:
        if ch == "\n":
            line += 1
            comment = False
            continue
        if comment:
            continue
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            comment = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, line
        elif ch in "]}":
            depth = max(0, depth - 1)
    return deepest, where + 1


_SLOW = object()


def _parse_fast(text: str):
    """The document parsed by libyaml (the same resolver and constructor, ~10x faster than PyYAML's parser), or
    ``_SLOW`` where only the pure-Python loader decides: libyaml missing, text PyYAML's reader refuses, any
    parser error (its message and line come from the pure-Python loader) or nesting past MAX_DEPTH."""
    if _CLoader is None or yaml.reader.Reader.NON_PRINTABLE.search(text):
        return _SLOW
    try:
        data = yaml.load(text, Loader=_CLoader)  # noqa: S506 - a CSafeLoader subclass
    except Exception:  # noqa: BLE001 - the pure-Python loader reports it
        return _SLOW
    return data if _depth(data, MAX_DEPTH) <= MAX_DEPTH else _SLOW


def parse_yaml(text: str, file: str | None = None):
    """Parse YAML text with UniqueKeyLoader; any parser failure is a one-line SpecError naming ``file``."""
    if text.count("[") + text.count("{") > MAX_DEPTH:
        deepest, line = _flow_depth(text)
        if deepest > MAX_DEPTH:
            raise SpecError(f"malformed YAML: nested deeper than {MAX_DEPTH} levels", file=file, field=f"line {line}")
    fast = _parse_fast(text)
    if fast is not _SLOW:
        return _check_expansion(fast, file, "YAML")
    try:
        return _check_expansion(yaml.load(text, Loader=UniqueKeyLoader), file, "YAML")  # noqa: S506 - SafeLoader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "YAML"
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise SpecError(f"malformed YAML: {problem}", file=file, field=where) from None
    except RecursionError:
        raise SpecError(f"malformed YAML: nested deeper than {MAX_DEPTH} levels", file=file) from None


def cache_dir() -> Path | None:
    """The directory of the caches that spare a new process work (compiled equations, catalog ids):
    ``$PERFMODEL_CACHE``, default ``~/.cache/perfmodel``; None where it is ``off``."""
    d = os.environ.get("PERFMODEL_CACHE", "")
    if d.lower() == "off":
        return None
    return Path(d) if d else Path.home() / ".cache" / "perfmodel"


def load_yaml(path: str | Path):
    """Read and parse one YAML file (any top-level type; callers check the shape)."""
    return parse_yaml(read_text(path), str(path))


def _pairs(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {short(k)}")
        out[k] = v
    return out


def _no_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text):
    v = float(text)
    if v != v or v in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]} is out of range")
    return v


def parse_json(text: str, file: str | None = None):
    """Strict JSON: duplicate keys, NaN/Infinity and nesting beyond MAX_DEPTH are one-line SpecErrors."""
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant,
                          parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise SpecError(f"malformed JSON: {exc.msg}", file=file, field=f"line {exc.lineno}") from None
    except ValueError as exc:
        raise SpecError(f"malformed JSON: {exc}", file=file) from None
    except RecursionError:
        raise SpecError(f"malformed JSON: nested deeper than {MAX_DEPTH} levels", file=file) from None
    if _depth(data, MAX_DEPTH) > MAX_DEPTH:
        raise SpecError(f"malformed JSON: nested deeper than {MAX_DEPTH} levels", file=file)
    return data


def load_json(path: str | Path):
    return parse_json(read_text(path), str(path))


# ------------------------------------------------------------------ outputs
def json_clean(o):
    """Data made strict-JSON-safe: NaN and inf -> None (null), numpy/pandas scalars -> Python, tuples -> lists,
    other objects -> str."""
    import math
    if isinstance(o, bool) or o is None or isinstance(o, (int, str)):
        return o
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {str(k): json_clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple, set, frozenset)):
        return [json_clean(v) for v in o]
    if hasattr(o, "tolist"):       # numpy arrays and scalars
        return json_clean(o.tolist())
    if hasattr(o, "item"):
        return json_clean(o.item())
    if hasattr(o, "to_dict"):      # pandas Series
        return json_clean(o.to_dict())
    try:
        import pandas as pd
        if pd.isna(o):
            return None
    except (TypeError, ValueError, ImportError):
        pass
    return str(o)


def dumps_json(o, indent: int | None = 1) -> str:
    """Strict JSON (never NaN/Infinity): absent values are null (``json_clean``)."""
    return json.dumps(json_clean(o), indent=indent, allow_nan=False)



def check_output(path: str | None, option: str, suffixes: tuple[str, ...] | None = None) -> None:
    """Fail before any work when ``path`` cannot be an output file: a directory, a wrong suffix, a parent
    that is a file. A missing parent is fine (``ensure_parent`` creates it)."""
    if not path:
        return
    p = Path(path)
    if "\0" in str(path):
        raise SpecError("file name contains a NUL byte", field=option)
    if p.is_dir() or str(path).endswith(("/", "\\")):
        raise SpecError(f"{short(str(path))} is a directory; give a file name", field=option)
    if suffixes and p.suffix.lower() not in suffixes:
        raise SpecError(f"file must end in {' or '.join(suffixes)}, got {short(str(path))}", field=option)
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise SpecError(f"{short(str(parent))} is a file, not a directory", field=option)
            break


def check_output_dir(path: str | None, option: str) -> None:
    """Fail before any work when ``path`` cannot be an output directory (it, or an ancestor, is a file)."""
    if not path:
        return
    if "\0" in str(path):
        raise SpecError("directory name contains a NUL byte", field=option)
    p = Path(path)
    for q in (p, *p.parents):
        if q.exists():
            if not q.is_dir():
                raise SpecError(f"{short(str(q))} is a file, not a directory", field=option)
            break


def ensure_parent(path: str | Path) -> str | Path:
    """Create the missing parent directories of an output file; returns ``path``."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SpecError(f"cannot create directory ({exc.strerror or exc})", file=str(Path(path).parent)) from None
    return path


WRITE_CHUNK = 1 << 16
"""Bytes per write call of ``write_whole`` (a large file is streamed into its temporary file)."""

TEMP_SUFFIX = ".part"
"""The suffix of ``write_whole``'s temporary files (``.<name>.<random>.part`` beside the output)."""


def _new_file_mode() -> int:
    """The permission bits a plain ``open(path, "w")`` would give a new file: 0o666 less the umask."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_whole(path: str | Path, content: str | bytes | Iterable[bytes]) -> Path:
    """Write ``content`` (text as UTF-8, bytes, or an iterable of byte chunks) to ``path`` whole.

    The bytes go into a temporary file with a unique name in the same directory (``tempfile.mkstemp``: two
    processes writing the same output never share one), are flushed to disk (``os.fsync``), and the temporary file
    is renamed over ``path`` (``os.replace``, atomic on one file system): a reader or a run killed at any moment
    finds the old file or the new one, never a torn one, and of two concurrent writers the last rename wins whole.
    The new file keeps the old one's permission bits (a new file gets the umask's). On any failure the temporary
    file is removed, ``path`` is left as it was, and an OSError becomes a one-line SpecError naming the file."""
    p = Path(path)
    if p.is_symlink():        # the file a link names is rewritten, the link stays
        p = p.resolve()
    ensure_parent(p)
    chunks: Iterable[bytes]
    if isinstance(content, str):
        content = content.encode("utf-8")
    if isinstance(content, (bytes, bytearray, memoryview)):
        data = bytes(content)
        chunks = (data[i:i + WRITE_CHUNK] for i in range(0, len(data), WRITE_CHUNK))
    else:
        chunks = content
    try:
        mode = p.stat().st_mode & 0o7777 if p.is_file() else _new_file_mode()
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=TEMP_SUFFIX, dir=p.parent)
    except OSError as exc:
        raise SpecError(f"cannot write file ({exc.strerror or exc})", file=str(p)) from None
    try:
        with open(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise SpecError(f"cannot write file ({exc.strerror or exc})", file=str(p)) from None
        raise
    return p


def write_figure(fig, path: str | Path, **savefig_kw) -> Path:
    """A matplotlib figure rendered as PNG (``fig.savefig(..., format="png", **savefig_kw)``) and written whole
    (``write_whole``)."""
    import io
    buf = io.BytesIO()
    fig.savefig(buf, format="png", **savefig_kw)
    return write_whole(path, buf.getvalue())
