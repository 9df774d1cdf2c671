"""`perfmodel` entry point. Each sub-command lives in its own module and registers itself here.

Bad input of any kind (SpecError) prints one line, ``perfmodel: error: <file>: <field>: <problem>``,
and exits with status 2. No traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ..errors import SpecError

COMMANDS = ["listing", "predict_cmd", "models_cmd", "explain_cmd"]
OPTIONAL_COMMANDS = ["analyses_cmd", "validate_cmd", "claims_cmd", "kernels_cmd", "plan_cmd", "simulate_cmd"]


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``perfmodel: error: ...``, status 2) like every other bad input."""

    def error(self, message):
        from ..errors import cut_value
        self.exit(2, f"{self.prog}: error: {cut_value(message, 400)} (see {self.prog} --help)\n")


def finite_float(text: str) -> float:
    """argparse type: a finite number (float() alone accepts 'nan' and 'inf')."""
    import math
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text[:40]!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text[:40]!r}")
    return v


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (GPUs, parallel widths, batch, grid sizes)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text[:40]!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {v}")
    return v


def relative_paths(line: str) -> str:
    """An error line with paths inside the working directory or the built-in catalog written relative to them
    (``models/x.yaml``, not ``/home/.../models/x.yaml``)."""
    import os

    from ..catalog import builtin_root
    for base in sorted({os.getcwd(), str(builtin_root())}, key=len, reverse=True):
        line = line.replace(base.rstrip(os.sep) + os.sep, "")
    return line


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__
    from ..defaults import RULE
    p = Parser(prog="perfmodel", description="Analytical roofline model of LLM inference serving", epilog=RULE)
    p.add_argument("--version", action="version", version=f"perfmodel {__version__}")
    p.add_argument("--catalog", action="append", default=[], metavar="DIR",
                   help="extra catalog directory (hardware/, models/, ...); repeatable; also $PERFMODEL_CATALOG")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bars or status lines on stderr (they are shown only on a terminal anyway)")
    sub = p.add_subparsers(dest="command", required=True)
    for name in COMMANDS + OPTIONAL_COMMANDS:
        try:
            mod = importlib.import_module(f"perfmodel.cli.{name}")
        except ModuleNotFoundError as exc:
            if name in OPTIONAL_COMMANDS and exc.name == f"perfmodel.cli.{name}":
                continue
            raise
        mod.register(sub)
    # --catalog is accepted after the subcommand too (perfmodel predict --catalog DIR ...)
    for sp_ in sub.choices.values():
        sp_.add_argument("--catalog", action="append", dest="catalog_after", default=[], metavar="DIR",
                         help="extra catalog directory (also accepted before the subcommand)")
        sp_.add_argument("-q", "--quiet", action="store_true", dest="quiet_after",
                         help="no progress bars or status lines on stderr (also accepted before the subcommand)")
    return p


def main(argv: list[str] | None = None) -> int:
    import warnings
    parser = build_parser()
    args = parser.parse_args(argv)
    from .. import progress
    progress.set_quiet(args.quiet or getattr(args, "quiet_after", False))
    with warnings.catch_warnings():
        # floating-point RuntimeWarnings (overflow in an absurd input) never print beside the one-line error or
        # the numbers: bad values are refused by the loaders, and outputs are checked for NaN/inf
        warnings.simplefilter("ignore", RuntimeWarning)
        return _run(parser, args)


def _run(parser, args) -> int:
    try:
        from .. import catalog
        for d in [*args.catalog, *getattr(args, "catalog_after", [])]:
            catalog.add_user_catalog(d)
        return int(args.func(args) or 0)
    except SpecError as exc:
        print(f"perfmodel: error: {relative_paths(exc.line())}", file=sys.stderr)
        return 2
    except RecursionError:  # a nested input that slipped past the loaders' depth limit (perfmodel.fileio)
        print("perfmodel: error: input nested too deeply", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
