"""The options every model script shares: --name, --out, --build and --quick."""
import os

from . import report, runs


def add_common(parser, name, quick_help):
    parser.add_argument("--name", default=name, help="report file name (NAME.md, NAME*.png)")
    parser.add_argument("--out", help="results folder (default ~/r1pi-results/<date>-<host>, or $R1PI_RESULTS_DIR/<date>-<host>)")
    parser.add_argument("--build", help="build folder (default build/)")
    parser.add_argument("--quick", action="store_true", help=quick_help)


def resolve(args, quick):
    """Finds the build, makes the results folder; with --quick writes the tiny preset there and
    calls quick(args) to shrink the run. Refuses a run without a model."""
    args.build = runs.build_dir(args.build)
    args.out = report.results_dir(args.out)
    if args.quick:
        args.model = runs.make_model(args.build, "tiny", os.path.join(args.out, "tiny.gguf"))
        quick(args)
    if not args.model:
        runs.die("give -m MODEL (or --quick)")
    return args
