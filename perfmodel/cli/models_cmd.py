"""`perfmodel models import config.json`: a Hugging Face config.json -> model YAML on stdout (or -o FILE)."""

from __future__ import annotations


def register(sub):
    p = sub.add_parser("models", help="model utilities")
    msub = p.add_subparsers(dest="models_command", required=True)
    imp = msub.add_parser("import", help="turn a Hugging Face config.json into a model YAML")
    imp.add_argument("config")
    imp.add_argument("--id", dest="model_id")
    imp.add_argument("-o", "--output")
    imp.set_defaults(func=run_import)


def run_import(args):
    from ..fileio import check_output, write_whole
    from ..importers.hf_config import import_hf_config_file
    check_output(args.output, "--output")
    text = import_hf_config_file(args.config, args.model_id)
    if args.output:
        write_whole(args.output, text)
    else:
        print(text, end="")
    return 0
