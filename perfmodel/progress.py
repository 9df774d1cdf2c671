"""Progress bars for long work (tqdm), on stderr and only on a terminal.

A bar says what is being done, items done of total, the rate and the time left (tqdm's estimate from the
items done so far: elapsed / done x (total - done)). The rule, for bars and for status lines (``note``):

- shown only when stderr is a terminal (``sys.stderr.isatty()``), so logs, pipes and notebooks get nothing;
- never with ``--quiet`` on the command line (``set_quiet(True)`` from Python);
- ``PERFMODEL_PROGRESS=1`` (or on/always/yes/true) shows them even when stderr is not a terminal,
  ``PERFMODEL_PROGRESS=0`` (or off/never/no/false) hides them; quiet wins over both;
- a bar appears only once its work has run ``DELAY_S`` seconds, so quick commands print nothing (at once,
  ``at_once=True``, for work whose every item takes seconds: calibrate, crossval, report);
- everything goes to stderr, never stdout: ``--json`` / ``--csv`` output on stdout stays clean.

Bars are transient (``leave=False``): a finished bar clears its line, so the command's own output follows.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tqdm import tqdm

DELAY_S = 1.0                      # seconds of work before a bar is drawn
MIN_INTERVAL_S = 0.5               # seconds between redraws
ENV = "PERFMODEL_PROGRESS"
_ON = {"1", "on", "always", "yes", "true"}
_OFF = {"0", "off", "never", "no", "false"}
_quiet = False


def set_quiet(quiet: bool = True) -> None:
    """Hide every bar and status line (the CLI's ``--quiet``); ``set_quiet(False)`` restores the rule."""
    global _quiet
    _quiet = bool(quiet)


def is_quiet() -> bool:
    return _quiet


def enabled() -> bool:
    """True if bars and status lines are shown now: not quiet, and stderr a terminal or forced by $PERFMODEL_PROGRESS."""
    if _quiet:
        return False
    forced = os.environ.get(ENV, "").strip().lower()
    if forced in _OFF:
        return False
    if forced in _ON:
        return True
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):       # no stderr, or a closed one
        return False


def _fixed_size() -> tuple[int, int] | None:
    """None when stderr reports its size (the bar follows it), else 80 columns x 24 rows: a terminal of unknown
    size (a pty opened as 0 x 0, where tqdm would hide the bar) or a stream without a file descriptor."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):
        return 80, 24
    return None if size.columns > 0 and size.lines > 0 else (80, 24)


@lru_cache(maxsize=1)
def _bar_class() -> type[tqdm]:
    """tqdm without a monitor thread (report.parallel forks workers while bars may exist), imported on first use."""
    from tqdm import tqdm

    class _Bar(tqdm):
        monitor_interval = 0
    return _Bar


def bar(iterable: Iterable | None = None, *, desc: str, total: int | None = None, unit: str = "item",
        at_once: bool = False) -> tqdm:
    """A tqdm bar on stderr over ``iterable`` (or updated by hand with ``.update(n)`` when ``total`` is given).

    ``desc`` names the work, ``unit`` the items counted (record, family, fold, step, system). ``at_once``: draw
    it now rather than after DELAY_S, for work whose items each take many seconds (a bar is only redrawn when
    an item completes). Returns the bar; it iterates like ``iterable`` and is a context manager. Disabled
    (a no-op) unless ``enabled()``."""
    size = _fixed_size()
    return _bar_class()(iterable, desc=desc, total=total, unit=unit, file=sys.stderr, disable=not enabled(), leave=False,
                delay=0.0 if at_once else DELAY_S, mininterval=MIN_INTERVAL_S, dynamic_ncols=size is None,
                ncols=size and size[0], nrows=size and size[1])


def note(message: str) -> None:
    """A status line on stderr (an estimate, a step done) under the same rule as the bars; printed above any
    running bar without breaking it."""
    if enabled():
        from tqdm import tqdm
        tqdm.write(message, file=sys.stderr)


__all__ = ["DELAY_S", "bar", "enabled", "is_quiet", "note", "set_quiet"]
