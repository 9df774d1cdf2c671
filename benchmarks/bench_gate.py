"""Speed benchmark of the calibration gate (issue 47 item 2): `perfmodel calibrate` and `perfmodel crossval --by
family` as fresh CLI processes on the shipped records, wall seconds.

- ``calibrate_s``: ``python -m perfmodel calibrate --dry-run`` (the fit of every engine family on the records the
  profiles' calibration notes name; the independent own fits in forked workers, ``$PERFMODEL_JOBS``, default 2);
- ``crossval_family_s``: ``python -m perfmodel crossval --by family`` on the same records (the fit on every record,
  then one fold per data family, each refitting only the engine families whose records it leaves out; folds in
  forked workers), unless ``--skip-crossval``.

Targets (issue 47, 2 cores): calibrate <= 60 s, crossval by family <= 6 min. The figures depend on the load of
the machine: the line ``load=`` gives the 1-minute load average before the runs.
Run: python benchmarks/bench_gate.py [--skip-crossval]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ("data/shared/calibration.csv", "data/shared/curve-end.csv", "data/shared/inferencex-silicon.csv",
        "data/shared/agentic.csv", "data/shared/mlperf.csv", "data/measured/trtllm-blog01-mtp-depth.csv",
        "data/measured/vllm-blog-deepseek.csv")


def timed(args: list[str]) -> float:
    """Wall seconds of ``python -m perfmodel -q ARGS`` run from the checkout (its package, not an installed one)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "perfmodel", "-q", *args], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-crossval", action="store_true", help="time the calibration only")
    args = ap.parse_args(argv)
    data = [a for f in DATA for a in ("--data", f)]
    print(f"load={os.getloadavg()[0]:.2f} cores={os.cpu_count()} jobs={os.environ.get('PERFMODEL_JOBS', '2')}")
    print(f"calibrate_s={timed(['calibrate', *data, '--dry-run']):.1f}")
    if not args.skip_crossval:
        out = Path(os.environ.get("TMPDIR", "/tmp")) / "bench_gate_crossval_family.csv"
        print(f"crossval_family_s={timed(['crossval', *data, '--by', 'family', '--out', str(out)]):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
