"""The formalism contract: everything a grammar formalism plugin supplies, in one module.

A formalism (PCFG, TSG, TIG, OSTAG, STSG, vocabgen, or a third-party one) is a :class:`Formalism` registered
through the ``register_formalisms`` hook.  The plugin supplies *what is specific to the formalism*; the core owns
the rest (the training loop, model files and the command line)::

    treebank ──► prepare(corpus, settings)        derivation data + base distribution P0      (plugin)
                   │
                   ▼
                 make_state(prepared, settings,    derivation state the chosen sampler move     (plugin)
                            kind, run, ctx)         works on ("sites": Gibbs, "items": blocked)
                   │
                   ▼
                 sampler move (--sampler)          registered moves, annealing, checkpoint/    (core:
                                                   resume, progress, trace                     treegram.training)
                   │
                   ▼
                 extract_model(state, ...)         finite grammar: elementary structures +     (plugin)
                                                   the CFG transform used for parsing
                   │
                   ▼
                 model.save / load_model           one bundle file, plugin data namespaced     (core: this module)
                 model.parse(tokens)               CFG transform -> chart decoder -> back-transform

The pieces, each a method or attribute of :class:`Formalism` below:

``Settings``
    an attrs class whose fields, declared with :func:`option`, *are* the ``treegram train NAME`` options (flag name,
    type, default, choices, help text and help group come from the field).  No argparse code in plugins.
``trains_on``
    ``"trees"``: the core adds ``--treebank/--limit/--skip-bad-trees`` and hands :meth:`Formalism.train` (or
    :meth:`Formalism.prepare`) the list of trees it read; anything else: the formalism's own ``Settings`` name its
    inputs and the corpus argument is ``None``.
``sampling``
    a :class:`Sampling` spec for formalisms trained by a sweep sampler: the core adds ``--iterations``,
    ``--sampler`` (every registered sampler move whose state kind the formalism can build; see
    ``register_sampler_moves`` in `treegram.hookspecs`), ``--anneal-start/--anneal-end``, ``--checkpoint``,
    ``--checkpoint-every`` and ``--resume``, and runs the loop (`treegram.training.run_sampler`).
``prepare(corpus, settings)``
    the derivation data built from the corpus and the base distribution(s) P0 (e.g. the TSG's binarized,
    integer-coded trees and the PCFG whose rule probabilities make up its P0).
``make_state(prepared, settings, kind, run, ctx)``
    the derivation state for a sampler move: ``kind == "sites"`` -> an object implementing
    `treegram.bayes.GibbsModel` (the optional Gibbs *site moves*: ``resample_site`` / ``sweep``);
    ``kind == "items"`` -> a `treegram.bayes.BlockedModel`, whose ``propose`` samples a whole derivation of one
    tree (or pair) through the formalism's **proposal CFG transform** and whose back-transform maps the CFG
    derivation to the formalism's derivation.  ``state_kinds`` lists the kinds a formalism can build.
``extract_model(state, prepared, settings, run, trace)``
    the final sample -> a :class:`Model`: the finite grammar and its **parsing CFG transform**; ``model.parse``
    runs the chart decoder on the CFG and maps the best derivation back (**back-transform**) to a derived tree.
``generation_view(model)``
    optional Context/Outcome/Imply view (`treegram.generation.protocol.GenerationSystem`) of a trained model.
``model_schema(meta)``
    the schema of the formalism's model files (`treegram.schema.Bundle`): the core checks it before
    ``load_model`` sees a file and before :func:`save_model` writes one (finite values, counts >= 0, known labels,
    real booleans, array shapes), so loaders need no checks of their own and no trainer writes a file that a
    later command would refuse.
``load_model(meta, arrays)``
    rebuild a model from what :func:`save_model` wrote (``meta`` is the plugin's own namespace only).
``train(corpus, settings, ctx)``
    for formalisms not trained by a sweep sampler (PCFG estimation, EM, ...): return the model directly.
``load_corpus(settings, ctx)`` / ``finish(model, corpus, settings, ctx)``
    optional first and last steps with the console: read the inputs a non-treebank formalism's settings name
    (e.g. parse the sources of sentence pairs), and finish the trained model (e.g. a compressor's deletion policy).
``run_options(settings, run)`` / ``sampled(settings)``
    optional, for a sampling formalism with other training methods too (STSG: Gibbs, EM, SVM, ...): complete the
    run options (a per-method ``--iterations`` default) and say whether these settings go through the sampling
    loop or to ``train`` (which then finds ``--iterations``/``--checkpoint``/``--resume`` in ``ctx.run``).

Models can offer capabilities beyond parsing (see :class:`Model`): a *compressor* implements the contract of
`treegram.compression.compressor` (``source_tree`` + ``decoder``) and gets the compression commands, rate control and
Dask batches from the core.

The smallest complete formalism is ``examples/treegram-example-plugin`` (a lexicalized PCFG, ~150 lines; its
``keepodds`` is the smallest compressor).
The command line of ``treegram train NAME`` is generated, never written by hand: :func:`configure_train_parser`
adds the options of ``Settings`` and ``sampling``, :func:`train_from_args` runs the pipeline above.

Model files.  :func:`save_model` writes one bundle (JSON metadata + numpy arrays, atomically; see `treegram.io`)
whose header (``format``, ``version``, ``formalism``, ``written_by``) is the core's and whose ``plugin_meta``
holds the formalism's own metadata, so no plugin field can overwrite a header field.  :func:`load_model` reads it
(files of the older flat layout too), and reports an exception raised by the plugin's loader as *that plugin's*
bug (plugin name, exception, where to report it), not as a corrupt file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, runtime_checkable

import attrs
import numpy as np

from treegram.errors import InputError, ModelFileError, ParseFailure, TreegramError
from treegram.io import load_bundle, save_bundle
# settings fields that are command-line options live in the neutral treegram.options; re-exported for plugins
from treegram.options import (  # noqa: F401
    OPTION_KEY,
    Option,
    add_settings_options,
    option,
    option_fields,
    option_group,
    settings_from_args,
)

if TYPE_CHECKING:
    from treegram.cli.ui import UI
    from treegram.trees.tree import Tree

MODEL_FORMAT = "treegram-model"
MODEL_VERSION = 1
#: the key under which a formalism's own metadata is stored in a model file (header fields stay the core's)
PLUGIN_META = "plugin_meta"
HEADER_KEYS = ("format", "version", "formalism", "written_by")


# ================================================================================================================
# The shared options the core adds (corpus, sampling run)
# ================================================================================================================
def _argtypes():
    from treegram import argtypes

    return argtypes


def add_treebank_options(parser: argparse.ArgumentParser) -> None:
    """``--treebank FILE_OR_DIR...``, ``--limit N`` and ``--skip-bad-trees`` (every ``trains_on="trees"``)."""
    from treegram.corpora.treebank import add_treebank_arguments

    add_treebank_arguments(parser)


def read_treebank_options(args: argparse.Namespace, ui: UI) -> list:
    """Read the trees named by :func:`add_treebank_options` (malformed trees reported or fatal)."""
    from treegram.corpora.treebank import load_treebanks

    return load_treebanks(args, ui)


@attrs.frozen
class Sampling:
    """A formalism trained by sweeps of a sampler move: which options the core adds and their defaults.

    ``default_move`` is the default of ``--sampler``; ``site_order`` adds ``--site-order random|fixed``;
    ``columns`` are (header, trace key) pairs shown in the per-iteration table after log-likelihood;
    ``progress`` formats the progress-bar text of one trace record.
    """

    iterations: int | None = 100  # None: the formalism's `run_options` picks it (e.g. per training method)
    default_move: str = "gibbs"
    site_order: bool = True
    group: str = "sampling"
    label: str = ""  # progress/table title (default: "<move> sampling")
    columns: tuple[tuple[str, str], ...] = ()
    progress: Callable[[dict], str] | None = None
    iterations_help: str = ""  # --iterations help text (default: "sampler sweeps over the treebank")
    anneal: tuple[float, float] = (1.0, 1.0)  # defaults of --anneal-start / --anneal-end
    checkpoint_every: int = 1  # default of --checkpoint-every


@attrs.frozen
class RunOptions:
    """How the core runs a sampler (not part of the model): the one run-options class.  `treegram train` builds it
    from the ``sampling`` options (:func:`run_options_from_args`), the core loop (`treegram.training.sample`) and
    every Python caller pass it; what is specific to a formalism (its TSG start, its parsing grammar, averaging)
    is in the formalism's ``Settings``.  ``move=None`` is the formalism's default move (``Sampling.default_move``)."""

    move: str | None = None
    iterations: int = 100
    seed: int = 0
    anneal_start: float = 1.0
    anneal_end: float = 1.0
    site_order: str = "random"
    checkpoint: Path | None = None
    checkpoint_every: int = 1
    resume: bool = False

    def __attrs_post_init__(self):
        if self.iterations is not None and self.iterations < 0:
            raise InputError("--iterations must be >= 0")

    def start(self, move, state, callback: Callable[[dict], Any] | None = None):
        """The driver of the sampler `move` over `state`, built by the move from these options: resumed from the
        checkpoint with `resume` (exactly the uninterrupted run), else fresh with this seed and annealing
        schedule (`treegram.bayes.moves.SamplerMove.start`)."""
        return move.start(state, seed=self.seed, iterations=self.iterations, anneal_start=self.anneal_start,
                          anneal_end=self.anneal_end, site_order=self.site_order, checkpoint=self.checkpoint,
                          checkpoint_every=self.checkpoint_every, resume=self.resume, callback=callback)


def add_sampling_options(parser: argparse.ArgumentParser, sampling: Sampling, moves: list[str],
                         groups: dict[str, Any] | None = None) -> None:
    """The core's sampler options (see :class:`Sampling`); ``moves`` are the ``--sampler`` choices."""
    from treegram.plugin_manager import sampler_moves

    at = _argtypes()
    g = option_group(parser, sampling.group, {} if groups is None else groups)
    g.add_argument("--iterations", type=at.nonnegative_int, default=sampling.iterations,
                   help=sampling.iterations_help or f"sampler sweeps over the treebank (default {sampling.iterations})")
    if len(moves) > 1:
        found = sampler_moves()
        g.add_argument("--sampler", choices=tuple(moves), default=sampling.default_move,
                       help="; ".join(f"{m}: {found[m].obj.help}" for m in moves)
                            + f" (default {sampling.default_move})")
    if sampling.site_order:
        g.add_argument("--site-order", choices=("random", "fixed"), default="random")
    start, end = sampling.anneal
    g.add_argument("--anneal-start", type=at.nonnegative_float, default=start,
                   help=f"temperature of the first sweep (default {start:g})")
    g.add_argument("--anneal-end", type=at.nonnegative_float, default=end,
                   help=f"temperature of the last sweep; linear schedule in between (default {end:g})")
    g.add_argument("--checkpoint", type=Path, default=None,
                   help="checkpoint file (default: OUT.ckpt); written every --checkpoint-every sweeps and on "
                        "Ctrl-C or kill")
    g.add_argument("--checkpoint-every", type=at.nonnegative_int, default=sampling.checkpoint_every,
                   help=f"sweeps between checkpoints (default {sampling.checkpoint_every}; 0 = only at the end and "
                        "on Ctrl-C or kill)")
    g.add_argument("--resume", action="store_true", help="continue the run saved in the checkpoint")


def default_checkpoint(checkpoint: Path | None, out: Path | None, resume: bool = False) -> Path | None:
    """``--checkpoint`` or ``OUT.ckpt``; None (no checkpoint) when OUT is a stream or device such as /dev/null."""
    from treegram.io import derived_path

    path = checkpoint or derived_path(out, ".ckpt")
    if path is None and resume:
        raise InputError(f"--resume needs a checkpoint, and none is kept beside --out {out}",
                         hint="name it with --checkpoint FILE")
    return path


def run_options_from_args(sampling: Sampling, args: argparse.Namespace) -> RunOptions:
    return RunOptions(move=getattr(args, "sampler", sampling.default_move), iterations=args.iterations,
                      seed=args.seed, anneal_start=args.anneal_start, anneal_end=args.anneal_end,
                      site_order=getattr(args, "site_order", "random"),
                      checkpoint=default_checkpoint(args.checkpoint, args.out, args.resume),
                      checkpoint_every=args.checkpoint_every, resume=args.resume)


def _field_defaults(settings_cls: type | None) -> dict[str, Any]:
    """Option field name -> default (fields without a default are left out)."""
    out = {}
    for field, _opt in option_fields(settings_cls) if settings_cls is not None else ():
        d = field.default
        if d is attrs.NOTHING:
            continue
        out[field.name] = d.factory() if isinstance(d, attrs.Factory) else d  # type: ignore[arg-type]
    return out


def _alias_title(flag: str, other: str) -> str:
    return f"--{flag} (= `treegram train {other}`)"


def _add_alias(parser: argparse.ArgumentParser, formalism: Formalism, flag: str, other_name: str) -> None:
    """The alias flag and the other formalism's own options (see `Formalism.aliases`); their defaults are kept
    in the parser's defaults (``_alias_<flag>``) for `_alias_target`."""
    from treegram.plugin_manager import get_formalism

    other = get_formalism(other_name)
    title = _alias_title(flag, other_name)
    own = set(_field_defaults(formalism.Settings)) if formalism.Settings is not None else set()

    def add(p: argparse.ArgumentParser) -> None:
        if other.Settings is not None:
            add_settings_options(p, other.Settings, skip=own, group=title)
        if other.sampling is not None and formalism.sampling is None:
            add_sampling_options(p, attrs.evolve(other.sampling, group=title), other.sampler_moves())

    dest = flag.replace("-", "_")
    parser.add_argument(f"--{flag}", action="store_true", dest=dest,
                        help=f"an alias of `treegram train {other_name}`: {other.description} (its options: the "
                             f"group '{title}')")
    probe = argparse.ArgumentParser(add_help=False)
    add(probe)
    add(parser)
    parser.set_defaults(**{f"_alias_{dest}": vars(probe.parse_args([]))})


def _alias_target(args: argparse.Namespace, formalism: Formalism, flag: str, other_name: str):
    """(other formalism, its arguments) when the alias flag is given, else None; a misplaced option is an
    InputError."""
    from treegram.plugin_manager import get_formalism

    dest = flag.replace("-", "_")
    extra: dict[str, Any] = getattr(args, f"_alias_{dest}", {})
    if not getattr(args, dest, False):
        given = [d for d, v in extra.items() if getattr(args, d, v) != v]
        if given:
            raise InputError(f"--{given[0].replace('_', '-')} is an option of `treegram train {other_name}`",
                             hint=f"add --{flag}, or run `treegram train {other_name}`")
        return None
    other = get_formalism(other_name)
    own, theirs = _field_defaults(formalism.Settings), _field_defaults(other.Settings)
    values = vars(args).copy()
    for name, default in own.items():
        if name == dest:
            continue
        if name not in theirs:
            if values.get(name, default) != default:
                raise InputError(f"--{name.replace('_', '-')} is not an option of `treegram train {other_name}`",
                                 hint=f"drop it, or drop --{flag}")
        elif values.get(name, default) == default:
            values[name] = theirs[name]  # left at our default: the other formalism's default
    return other, argparse.Namespace(**values)


# ================================================================================================================
# Models and formalisms
# ================================================================================================================
@runtime_checkable
class Model(Protocol):
    """A trained model.  Parsing formalisms implement `parse`; all implement `save` and `describe`."""

    formalism: str

    def save(self, path: str | Path) -> None:
        """Write the model atomically (use `save_model`)."""

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        """Summary for `treegram grammar`/`info`: sizes, settings and the `top` most frequent rules."""

    # Optional, looked up with getattr by `treegram grammar MODEL [--top K] [--aux] [--wrapping] [--json]`:
    #   render_grammar(ui, args)  draw the model's elementary structures in the terminal (after the summary table);
    #   grammar_json(args) -> dict  what `--json` prints, honouring the same options (default: describe(top=K)).
    #   generation_view() -> (GenerationModel, GenerationSystem)  the model as a Context/Outcome/Imply generation
    #       system (PCFG, TSG, TIG: `treegram.generation.cfg_view`), so `treegram generate --model` works on it;
    #   chart_input / derivation_tree / category_tree  parsing through the core charts, which gives the model
    #       every registered decoder (`treegram.charts.decoders.ChartModel`, `treegram parse --decoder`).
    #   parse(tokens) -> Tree     raises ParseFailure for a sentence the grammar cannot derive.
    #   source_tree(tokens) / decoder(tree, tokens)  a sentence compressor
    #       (`treegram.compression.compressor.Compressor`): `treegram compress` (raw text or tokens, --rate,
    #       --workers), `treegram eval-compression --model` and the core's rate control work on it.


@attrs.frozen
class TrainContext:
    """What the core hands a formalism's `train`: where the model goes, the seed, the console."""

    ui: Any
    out: Path | None = None
    seed: int = 0
    json: bool = False
    #: the sampling options (``--iterations``, ``--checkpoint``, ``--resume``, ...) of a formalism with ``sampling``,
    #: also for its methods that `train` directly (see `Formalism.run_options`)
    run: RunOptions | None = None


class Formalism:
    """Base class of formalism plugins: set the attributes and override the methods your formalism supports.

    See the module docstring for the data flow; ``examples/treegram-example-plugin`` is a complete example.
    """

    name: str = ""
    description: str = ""
    #: "trees" for treebank-trained parsers (the core reads --treebank); "pairs" / "sentences" / "none": the
    #: formalism's Settings name its own inputs.
    trains_on: str = "trees"
    #: attrs class whose :func:`option` fields are the `treegram train NAME` options (None: no own options).
    Settings: type | None = None
    #: set for formalisms trained by sweeps of a registered sampler move (see :class:`Sampling`).
    sampling: Sampling | None = None
    #: the derivation-state kinds `make_state` can build ("sites" for Gibbs site moves, "items" for blocked moves).
    state_kinds: tuple[str, ...] = ()
    #: ``{"flag": "other"}``: ``treegram train NAME --flag ...`` is a documented alias of ``treegram train other ...``
    #: (kept for older command lines): the other formalism's options are added in a help group of their own,
    #: options both declare are shared (one left at this formalism's default takes the other's), and an option of
    #: only one of them given on the wrong side is an error.
    aliases: dict[str, str] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        stale = [m for m in ("configure_train_parser", "train_from_args") if m in vars(cls)]
        if stale:  # the hand-written argparse path is gone: fail where the plugin is loaded, saying what to do
            raise TypeError(f"{cls.__name__} defines {', '.join(stale)}: `treegram train` options are generated "
                            "from the Settings class's option() fields and training runs through train()")

    # -- the command line (generated from Settings and sampling: see configure_train_parser below) -------------
    def sampler_moves(self) -> list[str]:
        """Names of the registered sampler moves this formalism can run (their state kind is in state_kinds)."""
        from treegram.plugin_manager import sampler_moves

        return [name for name, c in sampler_moves().items() if c.obj.state_kind in self.state_kinds]

    def run_options(self, settings: Any, run: RunOptions) -> RunOptions:
        """The run options from the command line, completed by the formalism (e.g. ``--iterations`` left unset
        (``Sampling.iterations`` None) -> a default per training method).  Default: as given."""
        return run

    def sampled(self, settings: Any) -> bool:
        """Whether these settings train by the core sampling loop (default: always, for a formalism with
        ``sampling``); False hands them to :meth:`train` with the run options in ``ctx.run``."""
        return True

    def load_corpus(self, settings: Any, ctx: TrainContext) -> Any:
        """The corpus of a formalism whose ``trains_on`` is not ``"trees"``, read from the inputs its settings
        name, with the console of ``ctx`` for progress (default None: `train`/`prepare` read them)."""
        return None

    def finish(self, model: Model, corpus: Any, settings: Any, ctx: TrainContext) -> Model:
        """Last step of `treegram train` after sampling or :meth:`train` (e.g. a compressor's deletion policy and
        length calibration).  Default: the model as it is."""
        return model

    # -- training ----------------------------------------------------------------------------------------------
    def train(self, corpus: Any, settings: Any, ctx: TrainContext) -> Model:
        """Train a model directly (formalisms without a sweep sampler: estimation, EM, ...)."""
        raise TreegramError(f"formalism {self.name!r} cannot be trained from the command line")

    def prepare(self, corpus: Any, settings: Any) -> Any:
        """Derivation data built from the corpus, with the base distribution(s) P0 (sampling formalisms)."""
        raise NotImplementedError

    def make_state(self, prepared: Any, settings: Any, kind: str, run: RunOptions,
                   ctx: TrainContext | None = None) -> Any:
        """A derivation state of `kind` ("sites": `treegram.bayes.GibbsModel`; "items": `BlockedModel`), seeded
        with ``run.seed``.  With ``run.resume`` the driver loads the checkpointed state into it right after, so
        skip any expensive initialisation then.  ``ctx`` (None outside the CLI) gives a console for progress."""
        raise NotImplementedError

    def extract_model(self, state: Any, prepared: Any, settings: Any, run: RunOptions,
                      trace: list[dict[str, Any]]) -> Model:
        """The final sample -> a trained model (finite grammar + parsing CFG transform and back-transform).

        A formalism that averages (see `averaging`) also takes ``samples=`` (the states' ``snapshot()`` dicts,
        newest first) and ``averaging_info=`` (the sweeps used, for the model's info)."""
        raise NotImplementedError

    def averaging(self, settings: Any):
        """Which posterior samples the model's grammar averages (`treegram.bayes.averaging.AveragingOptions`, or
        None for the final sample): by default ``settings.averaging()`` when the settings class has that method
        (the `--average K --thin T` options of `treegram.bayes.averaging.average_option` / `thin_option`)."""
        wanted = getattr(settings, "averaging", None)
        return wanted() if callable(wanted) else None

    # -- optional views ------------------------------------------------------------------------------------------
    def generation_view(self, model: Model) -> Any:
        """A Context/Outcome/Imply view of `model` or None: the default asks the model itself
        (``model.generation_view()`` -> ``(GenerationModel, GenerationSystem)``, see `treegram.generation.cfg_view`),
        which is what `treegram generate --model` uses."""
        view = getattr(model, "generation_view", None)
        return view() if callable(view) else None

    # -- model files -------------------------------------------------------------------------------------------
    def model_schema(self, meta: dict[str, Any]) -> Any:
        """The schema of this formalism's model files (a `treegram.schema.Bundle` over the plugin's own metadata
        and the arrays), or None.  The core checks it before `load_model` sees a file (a mismatch is one clear
        "corrupt model file" error naming the field) and before `save_model` writes one (a model that would not
        load again is never written).  `meta` is the plugin's metadata as read (already a dict), for
        formalisms whose variants have different schemas (e.g. ``meta["kind"]``)."""
        return None

    def load_model(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Model:
        """Rebuild a model from what `save_model` wrote (`meta`: the plugin's own metadata), after the core
        checked it against `model_schema`."""
        raise NotImplementedError


# ================================================================================================================
# Model files
# ================================================================================================================
def configure_train_parser(formalism: Formalism, parser: argparse.ArgumentParser) -> None:
    """Add `formalism`'s options to `treegram train NAME` (beyond the shared --out/--seed/--json): the corpus
    options its ``trains_on`` needs, its ``Settings`` fields and, when it samples, the run options."""
    groups: dict[str, Any] = {}
    if formalism.trains_on == "trees":
        add_treebank_options(parser)
    if formalism.Settings is not None:
        add_settings_options(parser, formalism.Settings, groups)
    if formalism.sampling is not None:
        add_sampling_options(parser, formalism.sampling, formalism.sampler_moves(), groups)
    for flag, other in formalism.aliases.items():
        _add_alias(parser, formalism, flag, other)


def train_from_args(formalism: Formalism, args: argparse.Namespace, ui: UI) -> Model:
    """Train from parsed options: settings from the generated options, corpus read by the core, then either the
    core sampling loop (``sampling`` set and ``formalism.sampled(settings)``) or ``formalism.train`` (or, with an
    alias flag, the other formalism's training); the corpus of a non-treebank formalism from its ``load_corpus``, and
    ``finish`` last."""
    for flag, other in formalism.aliases.items():
        target = _alias_target(args, formalism, flag, other)
        if target is not None:
            return train_from_args(target[0], target[1], ui)
    settings = settings_from_args(formalism.Settings, args) if formalism.Settings is not None else None
    run = None
    if formalism.sampling is not None:
        run = formalism.run_options(settings, run_options_from_args(formalism.sampling, args))
    ctx = TrainContext(ui=ui, out=getattr(args, "out", None), seed=getattr(args, "seed", 0),
                       json=bool(getattr(args, "json", False)), run=run)
    corpus = read_treebank_options(args, ui) if formalism.trains_on == "trees" else formalism.load_corpus(settings,
                                                                                                          ctx)
    if run is not None and formalism.sampled(settings):
        from treegram.training import run_sampler

        model = run_sampler(formalism, corpus, settings, run, ctx)
    else:
        model = formalism.train(corpus, settings, ctx)
    return formalism.finish(model, corpus, settings, ctx)


def _writer(formalism: str) -> dict[str, Any]:
    """Which plugin (and distribution) provides `formalism` in this process: recorded in the model header."""
    try:
        from treegram.plugin_manager import formalisms, plugin_distribution

        c = formalisms().get(formalism)
        if c is None:
            return {}
        return {"plugin": c.plugin, **plugin_distribution(c.plugin)}
    except Exception:  # noqa: BLE001 - the header is informative only; never fail a save over it
        return {}


def model_bundle(model: Model, meta: dict[str, Any]) -> dict[str, Any]:
    """The JSON metadata of a model file: the core's header plus the plugin's metadata in its own namespace."""
    return {"format": MODEL_FORMAT, "version": MODEL_VERSION, "formalism": model.formalism,
            "written_by": _writer(model.formalism), PLUGIN_META: meta}


def check_model_schema(formalism: Any, name: str, meta: dict[str, Any], arrays: dict[str, np.ndarray],
                       source: str | Path) -> None:
    """`formalism.model_schema` applied to a model file's (plugin metadata, arrays): a `ModelFileError`
    naming `source` and the first bad field."""
    from treegram.schema import check_file

    schema = formalism.model_schema(meta)
    if schema is not None:
        check_file(source, {"meta": meta, "arrays": arrays}, schema, "model", what=f"{name} model")


def save_model(path: str | Path, model: Model, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Save any formalism's model: the shared header, the formalism's own metadata (namespaced) and arrays,
    checked first against the formalism's `model_schema` -- the same check loading makes -- so a file that
    would be refused later is never written (the error is raised before the atomic rename)."""
    from treegram.plugin_manager import formalisms

    found = formalisms().get(model.formalism)
    if found is not None:
        import json

        # the schema sees what the file will hold: JSON types (tuples as lists, no numpy scalars)
        as_read = json.loads(json.dumps(meta, default=_json_default))
        arrays_as_read = {k: np.asarray(v) for k, v in arrays.items()}
        schema = found.obj.model_schema(as_read)
        if schema is not None:
            from treegram.schema import SchemaError, validate

            try:
                validate({"meta": as_read, "arrays": arrays_as_read}, schema, "model")
            except SchemaError as exc:
                raise TreegramError(f"refusing to write {path}: the {model.formalism} model fails its own schema "
                                    f"({exc})", hint="a bug in the trainer or in the options it accepted; "
                                                     "please report it") from None
    save_bundle(path, model_bundle(model, meta), arrays)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def plugin_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """The formalism's own metadata of a model file's JSON: the namespace, or (files written before the
    namespace existed) the flat dict without the header fields."""
    if isinstance(meta.get(PLUGIN_META), dict):
        return meta[PLUGIN_META]
    return {k: v for k, v in meta.items() if k not in HEADER_KEYS}


class PluginLoadError(ModelFileError):
    """A formalism plugin's loader raised on a model file that is structurally fine: the plugin's bug."""


def model_from_bundle(meta: dict[str, Any], arrays: dict[str, np.ndarray], source: str | Path) -> Model:
    """Check the header of a model file's (meta, arrays) and hand the plugin's part to its formalism."""
    from treegram.plugin_manager import formalisms, plugin_distribution

    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        raise ModelFileError(f"{source}: not a treegram model file", hint="pass a file written by `treegram train`")
    version = meta.get("version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ModelFileError(f"{source}: corrupt model header (version {version!r})",
                             hint="re-create it with `treegram train`")
    if version > MODEL_VERSION:
        raise ModelFileError(f"{source}: model format version {version} is newer than this treegram",
                             hint="upgrade treegram")
    name = meta.get("formalism")
    found = formalisms()
    if not isinstance(name, str) or name not in found:
        from treegram.plugin_manager import failure_note

        raise ModelFileError(f"{source}: model of formalism {name!r}, which no installed plugin provides"
                             f"{failure_note()}",
                             hint="install the plugin that trained it (`treegram plugins` lists installed ones)")
    contribution = found[name]
    own = plugin_meta(meta)
    if not isinstance(own, dict):
        raise ModelFileError(f"{source}: corrupt {name} model (its metadata is not an object)",
                             hint="re-create it with `treegram train`")
    check_model_schema(contribution.obj, name, own, arrays, source)
    try:
        return contribution.obj.load_model(own, arrays)
    except TreegramError:
        raise
    except (KeyError, ValueError, IndexError, TypeError, AttributeError) as exc:
        if contribution.plugin.startswith("treegram") or _is_builtin(contribution.plugin):
            # A built-in loader failing on its own keys/arrays: the file is damaged (or hand-edited).
            raise ModelFileError(f"{source}: corrupt {name} model ({type(exc).__name__}: {exc})",
                                 hint="re-create it with `treegram train`") from None
        raise _plugin_bug(contribution.plugin, name, source, exc, plugin_distribution(contribution.plugin)) from exc
    except Exception as exc:  # noqa: BLE001 - any other exception inside a plugin's loader is that plugin's bug
        raise _plugin_bug(contribution.plugin, name, source, exc, plugin_distribution(contribution.plugin)) from exc


def _is_builtin(plugin: str) -> bool:
    from treegram.plugin_manager import plugin_distribution

    return plugin_distribution(plugin).get("package") == "treegram"


def _plugin_bug(plugin: str, name: str, source, exc: BaseException, dist: dict[str, Any]) -> PluginLoadError:
    package = f" (package {dist['package']} {dist.get('package_version', '')}".rstrip() + ")" if dist.get("package") \
        else ""
    where = dist.get("url") or (f"the author of {dist['package']}" if dist.get("package") else "its author")
    return PluginLoadError(
        f"plugin {plugin!r}{package} failed to load {source} as a {name} model: {type(exc).__name__}: {exc}",
        hint=f"this is a bug in the {plugin!r} plugin, not a corrupt file; report it to {where}")


def load_model(path: str | Path) -> Model:
    """Load a model file of any registered formalism, with clear errors for missing/corrupt/foreign files."""
    meta, arrays = load_bundle(path)
    return model_from_bundle(meta, arrays, path)


def flat_fallback(tokens: list[str], label: str = "S", tag: str = "XX") -> Tree:
    """The documented fallback for a sentence a grammar cannot parse: a flat tree over the words."""
    from treegram.trees.tree import Tree

    return Tree(label, tuple(Tree(tag, (w,)) for w in tokens))


__all__ = ["Formalism", "Model", "Option", "ParseFailure", "PluginLoadError", "RunOptions", "Sampling",
           "TrainContext", "add_settings_options", "add_treebank_options", "flat_fallback", "load_model",
           "model_bundle", "model_from_bundle", "option", "plugin_meta", "read_treebank_options", "save_model",
           "settings_from_args"]
