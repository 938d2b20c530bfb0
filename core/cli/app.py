"""`treegram` entry point: builds the argparse tree from registered commands and turns errors into one red line."""

from __future__ import annotations

import argparse
import os
import sys

from treegram import __version__

# `treegram --version` imports nothing else (no numpy, rich or plugins): the console UI, errors and I/O checks are
# imported in the functions that use them (benchmarks/RESULTS.md `coldstart`).
_TOP_LEVEL_FLAGS = frozenset({"--version", "-q", "--quiet"})


class _Parser(argparse.ArgumentParser):
    """Usage errors as one red line (what was wrong, and where to look), exit 2 -- not a usage block."""

    def error(self, message: str):  # type: ignore[override]
        from treegram.cli.ui import UI

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


def derived_outputs(args: argparse.Namespace) -> tuple[dict, dict]:
    """(files, work folders) a command derives from its arguments, by label (``OUT.ckpt``, ``OUT.batches/``):
    declared next to each command's options with ``parser.set_defaults(_derived=fn)``, checked like named
    outputs."""
    fn = getattr(args, "_derived", None)
    if fn is None:
        return {}, {}
    files, dirs = fn(args)
    return dict(files), dict(dirs)


def stdout_is_output(args: argparse.Namespace) -> bool:
    """True when one of the command's outputs is this process's stdout (``--out -``, ``/dev/stdout``)."""
    from treegram.io import OUTPUT_DESTS, writes_stdout

    outputs = getattr(args, "_outputs", OUTPUT_DESTS)
    return any(writes_stdout(v) for k, v in vars(args).items() if k in outputs and isinstance(v, (str, os.PathLike)))


def _interrupt_hint(args) -> str | None:
    """What an interrupted command left behind: a checkpoint to resume, streamed lines to continue, or nothing."""
    from pathlib import Path

    if args is None:
        return None
    command = getattr(args, "command", None)
    out = getattr(args, "out", None)
    if command == "train":
        from treegram.io import derived_path

        ck = getattr(args, "checkpoint", None) or derived_path(out, ".ckpt")
        if ck is not None and Path(ck).is_file():
            return f"the last checkpoint is {ck}; rerun the same command with --resume to continue"
        return "no checkpoint was written yet, so there is nothing to resume; rerun to start again"
    if hasattr(args, "resume") and out not in (None, "-") and Path(str(out)).is_file():
        return f"the results so far are in {out}; rerun the same command with --resume to continue"
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--version" in argv and all(a in _TOP_LEVEL_FLAGS for a in argv):
        print(f"treegram {__version__}")
        return 0
    from treegram.cli.ui import UI
    from treegram.errors import TreegramError
    from treegram.io import OUTPUT_DESTS, check_args_distinct

    ui = UI()
    args = None
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if getattr(args, "_run", None) is None:
            parser.print_help()
            return 2
        ui = UI(json_mode=bool(getattr(args, "json", False)), quiet=args.quiet, stdout_is_output=stdout_is_output(args))
        if not args.quiet:
            from treegram.jit import announce_compilation

            announce_compilation()  # one stderr line if this run must compile numba kernels (empty cache)
        # Before any work: no output -- named or derived from one -- may be the same file as an input (or as
        # another output); no input may lie in a folder the command writes into.
        files, dirs = derived_outputs(args)
        check_args_distinct(args, getattr(args, "_outputs", OUTPUT_DESTS), derived=files, derived_dirs=dirs)
        return int(args._run(args, ui) or 0)
    except SystemExit as exc:  # argparse: usage errors (2), --help / --version (0); in-process callers get a code
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except TreegramError as exc:
        ui.error(str(exc), exc.hint)
        return 2
    except RecursionError:  # a safety net: tree walks are iterative, so this would be a bug, still not a traceback
        ui.error("input nested too deeply for this operation", "please report this with the input that caused it")
        return 2
    except KeyboardInterrupt:
        ui.error("interrupted", _interrupt_hint(args))
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
