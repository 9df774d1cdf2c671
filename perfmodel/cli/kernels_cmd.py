"""`perfmodel kernels`: fit each kernel family's closed-form curve on the measured kernel tables.

Prints one line per family and GPU, ``kernel_fit family=F gpu=G held_out=N median_abs_err_pct=E`` (N held-out
rows of whole shape groups, E the median |predicted / measured - 1| on them, in percent). ``--report FILE.md``
writes the fit tables and one measured-against-fitted plot per family; ``--write`` stores the fitted parameters
in the hardware catalog and the profiles (nothing in the catalog changes without it).
"""

from __future__ import annotations

import sys

FAMILY_ORDER = ["gemm", "moe", "attention", "mla", "allreduce", "prefill_attention", "all_gather"]


def register(sub):
    p = sub.add_parser("kernels", help="fit kernel efficiency curves on the measured kernel tables "
                                      "(NVIDIA aiconfigurator's, not shipped: docs/kernels.md) and print held-out "
                                      "errors")
    p.add_argument("--data", metavar="DIR", help="kernel table directory (default: data/kernels in the checkout "
                                                  "if present, else shared/data/kernels beside it; without "
                                                  "them the one error line says where to get them)")
    p.add_argument("--gpu", action="append", metavar="GPU", help="fit only this table GPU (repeatable), e.g. gb200")
    p.add_argument("--report", metavar="FILE.md", help="write fit tables and one PNG per family")
    p.add_argument("--write", action="store_true", help="store the fitted parameters in hardware/*.yaml "
                                                        "(kernel_fits) and profiles/*.yaml (kernel_fits)")
    p.add_argument("--launch", action="store_true", help="only the per-GPU launch costs (graph node period, the "
                                                         "tables' per-call overhead; no curve fits): print them, "
                                                         "and with --write store them in kernel_fits.launch")
    p.add_argument("--workers", type=int, default=2, help="processes (default 2; 1 = in this process)")
    p.set_defaults(func=run)


def run(args):
    from ..errors import SpecError
    from ..kernels import loader, runner
    data = args.data or str(loader.default_data_dir())
    gpus = tuple(args.gpu) if args.gpu else loader.GPUS
    for g in gpus:
        if g not in loader.GPUS:
            raise SpecError(f"unknown GPU {g!r}; choose one of {', '.join(loader.GPUS)}", field="--gpu")
    loader.read_index(data)          # a missing index is a one-line error before any work
    if args.launch:
        return run_launch(data, args.write)
    fits = runner.fit_all(data, gpus, workers=max(1, args.workers))
    order = {f: i for i, f in enumerate(FAMILY_ORDER)}
    rows = sorted(runner.summary(fits), key=lambda r: (order.get(r[0], 99), gpus.index(r[1])))
    for fam, gpu, n, err in rows:
        print(f"kernel_fit family={fam} gpu={gpu} held_out={n} median_abs_err_pct={err:.1f}")
    sys.stdout.flush()
    if args.report:
        from ..kernels.report import write_report
        write_report(fits, rows, args.report, data)
        print(f"wrote {args.report}", file=sys.stderr)
    if args.write:
        from ..kernels.write import write_catalog
        for path in write_catalog(fits, data):
            print(f"wrote {path}", file=sys.stderr)
    return 0


def run_launch(data: str, write: bool) -> int:
    """``perfmodel kernels --launch``: one line per hardware, ``launch hardware=H graph_node_us=V (LO-HI)
    harness_call_us=V``; with ``write`` the blocks go into the catalog."""
    from ..kernels.write import launch_of, write_launch
    for hw, b in launch_of(data).items():
        n, h = b["graph_node_us"], b["harness_call_us"]
        print(f"launch hardware={hw} graph_node_us={n['value']:g} ({n['low']:g}-{n['high']:g}) "
              f"harness_call_us={h['value']:g}")
    if write:
        for path in write_launch(data):
            print(f"wrote {path}", file=sys.stderr)
    return 0
