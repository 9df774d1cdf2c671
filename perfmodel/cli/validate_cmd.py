"""`perfmodel validate FILE.csv` and `perfmodel calibrate`: predicted vs measured records, fitted profiles."""

from __future__ import annotations

from pathlib import Path

from ..errors import SpecError
from ..fileio import check_output, check_output_dir, write_whole

DEFAULT_DATA = "data/shared/calibration.csv"


def default_calibration_files() -> list[str]:
    """The shipped copy of the shared data (data/shared/: calibration.csv, curve-end.csv,
    inferencex-silicon.csv, agentic.csv) plus every measured-record CSV written into the project (data/measured/*.csv)."""
    import os

    from ..specs.records import project_measured_files, shared_data_files
    return [os.path.relpath(p) for p in (*shared_data_files(), *project_measured_files())]


MAX_SAMPLES = 10_000
"""Most Monte Carlo samples per row ``validate --samples`` accepts (the default 200 gives the 5-95% band to a few
percent; 10,000 takes about 50x as long)."""


def check_samples(samples: int, seed: int) -> None:
    """One-line errors for --samples outside 1..MAX_SAMPLES and --seed outside 0..2^32-1."""
    if not 1 <= samples <= MAX_SAMPLES:
        raise SpecError(f"must be between 1 and {MAX_SAMPLES:,} Monte Carlo samples per row, got {samples}",
                        field="--samples")
    if not 0 <= seed < 2 ** 32:
        raise SpecError(f"must be an integer in [0, 2^32), got {seed}", field="--seed")


def _add_data_argument(parser) -> None:
    """--data FILE (repeatable), defaulting to the calibration set (``default_calibration_files``)."""
    parser.add_argument("--data", action="append", default=[], metavar="FILE",
                        help="record CSV (repeatable; default data/shared/{calibration,curve-end,"
                             "inferencex-silicon,agentic}.csv plus data/measured/*.csv)")


def register(sub):
    p = sub.add_parser("validate", help="predict measured records (CSV, data/shared/README.md format) and "
                                        "report the error")
    p.add_argument("file", nargs="+", help="record CSV (several: one report with a section per file)")
    p.add_argument("--out", help="write one row per record (id, metric, measured, predicted, low, high, "
                                 "error_pct, status) to this CSV")
    p.add_argument("--plot", help="predicted-vs-measured PNG (log-log, one marker per hardware)")
    p.add_argument("--report", help="write a Markdown report (also writes the CSV and plot beside it)")
    p.add_argument("--samples", type=int, default=200,
                   help="Monte Carlo samples per row for the band (1-10,000; default 200)")
    p.add_argument("--seed", type=int, default=0, help="random seed, 0 to 2^32-1 (default 0)")
    p.add_argument("--explain", metavar="FILE.csv",
                   help="also write, per point row, what the model runs there (running batch, decode and prefill "
                        "tokens per step, prefill share, prefix hit, queue wait, the binding limit, the record's "
                        "stated hit and running cap: perfmodel/validation/explain.py) and print its summary by "
                        "client band")
    p.set_defaults(func=run_validate)

    x = sub.add_parser("crossval", help="cross-validation of the calibration by whole configuration (minutes): "
                                        "each concurrency sweep predicted by profiles fitted without it")
    _add_data_argument(x)
    x.add_argument("--folds", type=int, default=5, help="number of folds (whole configurations per fold)")
    x.add_argument("--by", choices=("config", "family"), default="config",
                   help="hold out whole configurations (default) or one whole data family at a time")
    x.add_argument("--out", help="per-record CSV")
    x.add_argument("--report", help="Markdown report (e.g. reports/crossval.md), and FILE.csv beside it")
    x.set_defaults(func=run_crossval)

    c = sub.add_parser("calibrate", help="fit shared profile parameters per engine family and write "
                                         "<engine>.yaml into --out-dir DIR (the catalog's profiles/ only with "
                                         "--in-place); deterministic, about 2-3 minutes on 2 cores",
                       description="Fit shared profile parameters per engine family on the record CSVs. The fit "
                                   "starts from the middle of the search ranges, so its output depends only on the "
                                   "code and the data (running it twice gives the same files). It writes "
                                   "DIR/<engine>.yaml for --out-dir DIR (use the result with --catalog on DIR's "
                                   "parent, e.g. --out-dir out/calibrated/profiles then --catalog out/calibrated), "
                                   "rewrites the catalog's profiles/ only with --in-place, and writes nothing with "
                                   "--dry-run.")
    _add_data_argument(c)
    c.add_argument("--seed", type=int, default=0, help="seed (the least-squares fit is deterministic; kept for the record)")
    where = c.add_mutually_exclusive_group()
    where.add_argument("--out-dir", default=None, metavar="DIR", help="directory for the fitted <engine>.yaml files")
    where.add_argument("--in-place", action="store_true",
                       help="rewrite the catalog's profiles/<engine>.yaml (the shipped profiles)")
    c.add_argument("--dry-run", action="store_true", help="print the fit, write nothing")
    c.set_defaults(func=run_calibrate)


def run_validate(args):
    import pandas as pd

    from ..specs.records import read_records
    from ..validation import report
    from ..validation.predict_rows import predict_rows, summary
    check_output(args.out, "--out")
    check_output(args.plot, "--plot", (".png",))
    check_output(args.report, "--report", (".md",))
    check_output(args.explain, "--explain", (".csv",))
    check_samples(args.samples, args.seed)
    per_file = {}
    for f in args.file:
        recs_f = read_records(f)
        per_file[f] = (recs_f, predict_rows(recs_f, n_samples=args.samples, seed=args.seed,
                                            desc=f"validate {Path(f).name}"))
    recs = [r for rs, _ in per_file.values() for r in rs]
    df = pd.concat([d.assign(file=f) for f, (_, d) in per_file.items()], ignore_index=True)
    s = summary(df)
    if not s["predicted"]:
        print(report.table_text(df))
        raise SpecError(f"no row of {s['rows']} could be predicted (every status is 'unsupported: <reason>', "
                        "above)", file=", ".join(args.file))
    # every output is rendered first and written last: a failure on the way leaves no file half-updated
    outputs = {}
    if args.out:
        outputs[Path(args.out)] = df.to_csv(index=False, float_format="%.6g")
    if args.plot:
        outputs[Path(args.plot)] = report.render_png(df)
    if args.explain:
        from ..validation.explain import band_summary, explain_rows
        table = explain_rows(recs)
        outputs[Path(args.explain)] = table.to_csv(index=False, float_format="%.6g")
    if args.report:
        outputs.update(report.render_report(
            df, s, Path(args.report), data_file=" ".join(args.file), recs=recs,
            extras=_extra_sections(args.samples, args.seed),
            files={f: (rs, d, summary(d)) for f, (rs, d) in per_file.items()} if len(per_file) > 1 else None,
            samples=args.samples, seed=args.seed, inputs=[*args.file, *_extra_files()]))
    for path, content in outputs.items():
        write_whole(path, content)
    print(report.table_text(df))
    print(report.summary_text(s))
    _print_percentiles(per_file, args.samples, args.seed)
    if args.explain:
        print(f"\nwhat the model runs at each point row: {args.explain}; by client band (point rows predicted):")
        print(band_summary(table).to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    return 0


def _print_percentiles(per_file: dict, samples: int, seed: int) -> None:
    """TTFT and TPOT by percentile (validation/percentiles.py): each row's own statistic, and the P99s MLPerf runs
    quote at the submitted load, predicted from the queue's P99 at the same Poisson rate."""
    import pandas as pd

    from ..validation.percentiles import by_percentile, p99_records
    from ..validation.predict_rows import predict_rows
    recs = [r for rs, _ in per_file.values() for r in rs]
    derived = p99_records(recs)
    frames = [d for _, d in per_file.values()]
    if derived:
        frames.append(predict_rows(derived, n_samples=samples, seed=seed, desc="validate quoted P99s"))
    table = by_percentile(recs + derived, pd.concat(frames, ignore_index=True))
    if table.empty:
        return
    print("latency by percentile (error = predicted / measured - 1; P99 rows derived from the runs' quoted P99s):")
    for _, t in table.iterrows():
        print(f"  {t['metric']:>8} {t['percentile']:>5}  {int(t['rows']):>3} rows  median {t['median_error_pct']:+.1f}%"
              f"  median |error| {t['median_abs_error_pct']:.1f}%")


EXTRA_NOTES = {
    "measured": ("Measured data written into the project", "Fitted beside the records above "
                 "(`perfmodel calibrate` reads them by default); in-sample."),
    "holdout": ("Held-out data: out-of-sample check", "Never fitted (`data/holdout/README.md`): how the "
                "calibrated model does on results it has not seen."),
}


def _extra_files() -> list:
    """The project's own record files the report adds a section for (data/measured, data/holdout)."""
    from ..specs.records import project_record_files
    return [f for kind in EXTRA_NOTES for f in project_record_files(kind)]


def _extra_sections(samples: int, seed: int) -> list:
    """Report sections for the project's own record files: data/measured (fitted) and data/holdout (never)."""
    from ..specs.records import project_record_files, read_records
    from ..validation.predict_rows import predict_rows, summary
    out = []
    for kind, (title, note) in EXTRA_NOTES.items():
        for f in project_record_files(kind):
            df = predict_rows(read_records(f), n_samples=samples, seed=seed, desc=f"validate data/{kind}/{f.name}")
            out.append((f"{title}: {f.name}", f"data/{kind}/{f.name}", df, summary(df), note))
    return out


def run_crossval(args):
    from .. import progress
    from ..specs.records import read_records
    from ..validation.crossval import FOLDS, cross_validate, cv_markdown
    check_output(args.out, "--out")
    check_output(args.report, "--report", (".md",))
    files = args.data or default_calibration_files()
    recs = {f: read_records(f) for f in files}
    targets = [r for f in files for r in recs[f]]
    df = cross_validate(targets, k=args.folds, progress=progress.note, by=args.by)
    df["file"] = [f for f in files for _ in recs[f]]
    ok = df[df["status"] == "ok"]
    if ok.empty:
        raise SpecError(f"no row of {len(df)} could be predicted", file=", ".join(files))
    if args.out:
        write_whole(args.out, df.to_csv(index=False, float_format="%.6g"))
    if args.report:       # the Markdown and, beside it, the per-record CSV (data/model-error/ derives from it)
        from .. import provenance
        cmd = "perfmodel crossval" + "".join(f" --data {f}" for f in args.data) + \
              (f" --folds {args.folds}" if args.folds != FOLDS else "") + \
              (f" --by {args.by}" if args.by != "config" else "") + f" --report {args.report}"
        report = Path(args.report)
        text = provenance.header(cmd, [*files]) + "\n" + cv_markdown(df, targets, files, cmd)
        write_whole(report.with_suffix(".csv"), df.to_csv(index=False, float_format="%.6g"))
        write_whole(report, text)
    for met, g in ok.groupby("metric"):
        print(f"{met}: {len(g)} rows, median |error| {g['error_pct'].abs().median():.1f}%, signed median "
              f"{g['error_pct'].median():+.1f}%")
    for fam, g in ok.groupby("family"):
        print(f"family {fam}: {len(g)} rows, median |error| {g['error_pct'].abs().median():.1f}%")
    how = "leaving one data family out" if args.by == "family" else f"by configuration ({args.folds} folds)"
    print(f"cross-validated {how}: {len(ok)}/{len(df)} rows predicted; median "
          f"|error| {ok['error_pct'].abs().median():.1f}%")
    return 0


def run_calibrate(args):
    from .. import catalog, progress
    from ..specs.records import read_records
    from ..validation.calibrate import calibrate, render_profile
    check_output_dir(args.out_dir, "--out-dir")
    if not (args.out_dir or args.in_place or args.dry_run):
        raise SpecError("say where the fitted profiles go: --out-dir DIR (e.g. out/calibrated/profiles), "
                        "--in-place (rewrite the catalog's profiles/) or --dry-run (write nothing)",
                        field="calibrate")
    files = args.data or default_calibration_files()
    recs = [r for f in files for r in read_records(f)]
    import time
    t0 = time.perf_counter()
    progress.note(f"calibrating on {len(recs):,} records from {len(files)} files (about 3-5 minutes on 2 cores) ...")
    res = calibrate(recs, neutral_start=True)     # from the code and data alone, never from the last output
    print(f"fitted in {time.perf_counter() - t0:.0f} s")
    out_dir = Path(args.out_dir) if args.out_dir else catalog.builtin_root() / "profiles"
    cmd = "perfmodel calibrate " + " ".join(f"--data {f}" for f in files) + f" --seed {args.seed}"
    written = {}
    for pid, r in res.items():
        vals = ", ".join(f"{k}={v:.3g} [{r['ranges'][k][0]:.3g}, {r['ranges'][k][1]:.3g}]"
                         for k, v in r["values"].items())
        print(f"{pid}: {r['basis']}; rms ln error {r['rms_log_error']:.3f}\n  {vals}")
        if r["at_upper_bound"]:
            print(f"  MODELING GAP: {', '.join(r['at_upper_bound'])} pinned at the physical limit 1.0")
        if r.get("at_range_edge"):
            print(f"  AT RANGE EDGE: {', '.join(r['at_range_edge'])} (the data pull past the plausible range)")
        worst = sorted(r["row_errors"].items(), key=lambda kv: -kv[1])[:3]
        print("  worst |ln(pred/meas)|: " + ", ".join(f"{i} {e:.2f}" for i, e in worst))
        if not args.dry_run:
            written[pid] = render_profile(pid, r, cmd)          # every file rendered (and validated) first
    for pid, text in written.items():
        out = write_whole(out_dir / f"{pid}.yaml", text)
        print(f"wrote {out}")
    return 0
