#!/usr/bin/env bash
# Regenerate every committed generated report, in dependency order (issue 25 item 4). Each report's first line
# holds a hash of its inputs (perfmodel/provenance.py); tests/test_reports_current.py fails until this has run
# after a change of code, catalog or data. About 10 minutes on 2 cores. Run from anywhere in the checkout.
# A refit of the profiles comes first when wanted: python -m perfmodel calibrate --in-place
set -euo pipefail
cd "$(dirname "$0")/.."

# 1. in-sample accuracy: reports/validation.md, .csv, .png
python -m perfmodel validate data/shared/calibration.csv data/shared/curve-end.csv \
    data/shared/inferencex-silicon.csv data/shared/agentic.csv data/shared/mlperf.csv --report reports/validation.md
# 2. cross-validated accuracy: reports/crossval.md and reports/crossval.csv (several minutes)
python -m perfmodel crossval --report reports/crossval.md
# 3. the model-error table the claim intervals read, derived from reports/crossval.csv and the agentic rows of
#    reports/validation.csv (records no profile is fitted to)
python -m perfmodel.claims.error_table reports/crossval.csv reports/validation.csv
# 4. the claims report (reads data/model-error/crossval-spread.csv): reports/claims.md and reports/claims/
python -m perfmodel report
# 5. the README's accuracy table, from reports/validation.csv and reports/crossval.csv
python -m perfmodel.validation.readme_table --write
