"""`treegram` entry point: builds the argparse tree from registered commands and turns errors into one red line."""

from __future__ import annotations

import argparse
import os
import sys

from treegram import __version__
from treegram.cli.ui import UI
from treegram.errors import TreegramError
from treegram.io import OUTPUT_DESTS, check_args_distinct


class _Parser(argparse.ArgumentParser):
    """Usage errors as one red line (what was wrong, and where to look), exit 2 -- not a usage block."""

    def error(self, message: str):  # type: ignore[override]
        UI().error(f"{self.prog}: {message}", f"see `{self.prog} -h`")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    from treegram.plugin_manager import commands

    parser = _Parser(prog="treegram", description="Bayesian tree grammars: parse, compress, generate.")
    parser.add_argument("--version", action="version", version=f"treegram {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or notes")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, contribution in sorted(commands().items()):
        cmd = contribution.obj
        p = sub.add_parser(name, help=cmd.help, description=cmd.help)
        p.set_defaults(_run=cmd.run)
        cmd.configure(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    ui = UI()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if getattr(args, "_run", None) is None:
            parser.print_help()
            return 2
        ui = UI(json_mode=bool(getattr(args, "json", False)), quiet=args.quiet)
        # Before any work: no output may be the same file as an input (or as another output).
        check_args_distinct(args, getattr(args, "_outputs", OUTPUT_DESTS))
        return int(args._run(args, ui) or 0)
    except TreegramError as exc:
        ui.error(str(exc), exc.hint)
        return 2
    except RecursionError:  # a safety net: tree walks are iterative, so this would be a bug, still not a traceback
        ui.error("input nested too deeply for this operation", "please report this with the input that caused it")
        return 2
    except KeyboardInterrupt:
        ui.error("interrupted", "long runs leave a checkpoint; rerun with --resume to continue")
        return 130
    except BrokenPipeError:
        # `treegram parse ... | head`: the reader went away; exit quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        ui.error(f"{exc.filename or ''}: {exc.strerror or exc}", "check the path and permissions")
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
