"""`perfmodel models import config.json`: a Hugging Face config.json -> model YAML on stdout (or -o FILE).

Every field the import had to assume (the config does not state it) or could not read is named on stderr, one
line each, ``perfmodel: models import: CONFIG: FIELD: ...``; an import that assumed anything is written with
``confidence: low``. The YAML records the config's revision (``--revision``) and the sha256 of its bytes.
"""

from __future__ import annotations

import sys


def register(sub):
    p = sub.add_parser("models", help="model utilities")
    msub = p.add_subparsers(dest="models_command", required=True)
    imp = msub.add_parser("import", help="turn a Hugging Face config.json into a model YAML",
                          description="Read a Hugging Face config.json and write the catalog YAML of the model. "
                                      "Fields the config does not state are assumed and named on stderr (the entry "
                                      "then says confidence: low); fields the importer does not read are named too.")
    imp.add_argument("config", help="path to the config.json")
    imp.add_argument("--id", dest="model_id",
                     help="catalog id of the new entry (default: the repository name in _name_or_path, else the "
                          "config's folder name)")
    imp.add_argument("-o", "--output", help="write the YAML here (e.g. models/ID.yaml) instead of stdout")
    imp.add_argument("--revision", help="the config's source revision (commit) to record in the entry")
    imp.set_defaults(func=run_import)


def run_import(args):
    from ..fileio import check_output, write_whole
    from ..importers.hf_config import import_hf_config_file
    check_output(args.output, "--output")
    report: list[str] = []
    text = import_hf_config_file(args.config, args.model_id, revision=args.revision, report=report)
    if args.output:
        write_whole(args.output, text)
    else:
        print(text, end="")
    for line in report:   # after the YAML is out: a failed write is the one error line, alone
        print(f"perfmodel: models import: {args.config}: {line}", file=sys.stderr)
    return 0
