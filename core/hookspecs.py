"""Every hook a treegram plugin can implement.

A plugin is any module or object with functions marked `@treegram.hookimpl` whose names match the functions
below.  Installed packages expose plugins through the ``treegram`` entry-point group (in ``pyproject.toml``:
``[project.entry-points.treegram] myname = "mypackage.module"``); the built-in formalisms are registered
exactly that way.  In a script or a test, ``treegram.plugin_manager.get_plugin_manager().register(obj)`` does the
same at run time.

Each ``register_*`` hook receives a ``register`` callable; call it once per thing you contribute.  Registration
names must be unique across all plugins (a clash is reported with both plugin names).
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("treegram")


@hookspec
def register_formalisms(register):
    """Contribute grammar formalisms.

    Call ``register(formalism)`` with an instance of a :class:`treegram.formalism.Formalism` subclass: the
    contract documented in ``treegram.formalism`` (one module) -- a name, a settings class whose ``option``
    fields become the ``treegram train NAME`` options, the derivation data and base distribution P0 built from
    a corpus (``prepare``), the derivation state a sampler move works on (``make_state``), the trained model with
    its parsing CFG transform and back-transform (``extract_model``), and ``load_model`` for saved models; or
    ``train`` for formalisms that are estimated rather than sampled.  Models implement
    :class:`treegram.formalism.Model` (``parse``, ``save``, ``describe``), which makes ``treegram parse`` and
    ``treegram grammar`` work for them; a model implementing :class:`treegram.compression.compressor.Compressor`
    (``source_tree``, ``decoder``) is a sentence compressor, which gets ``treegram compress``, ``treegram
    eval-compression --model``, rate control and Dask batch compression from the core.
    """


@hookspec
def register_sampler_moves(register):
    """Contribute sampler moves that every formalism gets.

    Call ``register(move)`` with a :class:`treegram.bayes.moves.SamplerMove`: a name (the value of
    ``treegram train NAME --sampler``), a one-line help text, the derivation-state kind it works on (``"sites"``:
    a `treegram.bayes.GibbsModel`, resampled site by site; ``"items"``: a `treegram.bayes.BlockedModel`, whole
    trees resampled through the formalism's CFG transform) and the sweep driver class that runs it (annealing,
    checkpoint/resume and the trace come with `treegram.bayes.driver.SweepDriver`).  Every formalism whose
    ``state_kinds`` include the move's kind offers it; the core registers ``gibbs`` and ``blocked`` this way.
    """


@hookspec
def register_decoders(register):
    """Contribute decoders: ways to turn a sentence's chart into one output tree, which every formalism whose
    parsing goes through the core charts then gets (`treegram parse --decoder NAME`).

    Call ``register(decoder)`` with a :class:`treegram.charts.decoders.Decoder`: a name, a one-line help text,
    ``decode(model, tokens, samples=N) -> Tree`` (raise ``ParseFailure`` when there is no parse) and whether
    ``--samples`` means anything to it.  ``model`` implements :class:`treegram.charts.decoders.ChartModel`
    (``chart_input`` gives the CFG, lexical input and pruning; ``derivation_tree`` is the formalism's
    back-transform of a CFG derivation; ``category_tree`` finishes a tree over the CFG's categories).  The core
    registers ``mpd`` (Viterbi), ``mpp`` (sampled most probable parse), ``maxrule`` and ``maxrule-sum``.
    """


@hookspec
def register_commands(register):
    """Contribute top-level CLI commands.

    Call ``register(command)`` with a :class:`treegram.cli.commands.Command`: a name, a one-line help text, a
    function that adds its arguments to an ``argparse`` parser, and ``run(args, ui) -> int`` (exit code).
    ``ui`` is the shared rich console wrapper (progress bars, tables, ``--json`` output, errors).  It prints every
    string literally (never as Rich markup, so paths and words from the user's data are safe); style with
    ``treegram.cli.ui.styled`` / ``rich.text.Text`` or ``ui.note(text, label="note")``.  Paths a command derives
    from its outputs (a checkpoint or work folder beside ``--out``) are declared with
    ``parser.set_defaults(_derived=fn)``, ``fn(args) -> (files, folders)`` by label, so the core checks them like
    named outputs before the command runs (`treegram.io.derived_path` gives none beside a stream or device).
    """


@hookspec
def register_corpus_readers(register):
    """Contribute readers for corpus formats.

    Call ``register(reader)`` with a :class:`treegram.corpora.registry.CorpusReader`: a name, the file
    patterns it claims (e.g. ``("*.mrg", "*.ptb")``), what it yields (``"trees"``, ``"dependencies"``,
    ``"sentences"``, ``"pairs"``) and ``read(path) -> iterable``.
    """


@hookspec
def register_generation_systems(register):
    """Contribute Context/Outcome/Imply generation systems (SPINEDEP, n-gram, ...).

    Call ``register(name, factory)`` where ``factory(**options)`` returns an object implementing
    :class:`treegram.generation.protocol.GenerationSystem`.  Systems read off a trained grammar are not
    registered here: a model offers its own view as the method ``generation_view()`` (PCFG, TSG and TIG models;
    ``treegram generate --model FILE``).
    """


@hookspec
def register_smoothers(register):
    """Contribute word-class functions used to smooth generation models (WordNet hypernyms, clusters, ...).

    Call ``register(name, factory)`` where ``factory(**options)`` returns a callable ``word -> class label``
    (or ``None`` for words it does not know).
    """


@hookspec
def register_metrics(register):
    """Contribute evaluation metrics over parsed trees, reported by ``treegram evalb --metric NAME``.

    Call ``register(name, metric)`` where ``metric(gold_trees, predicted_trees) -> dict[str, float]`` computes
    corpus-level scores over two aligned lists of `treegram.trees.Tree` (a predicted tree is ``None`` where the
    parse failed or its line was unreadable).  The core registers ``"parseval"`` (precision/recall/F1 over
    labeled brackets), which ``evalb`` reports by default with its full EVALB table.
    """


@hookspec
def register_exercise_kinds(register):
    """Contribute exercise kinds for ``treegram exercises --kind NAME`` and the ``treegram serve`` page.

    Call ``register(kind)`` with an instance of a :class:`treegram.exercises.ExerciseKind` subclass: a name (and
    aliases), the section title and the pupil's instructions, ``make(sentence, word, rng, request) -> Item |
    None`` that builds one item from a chosen sentence (``request.item(...)`` fills in the sentence's fields), and
    its rendering where a format has a question type of its own (``question``/``key_line`` for plain text,
    ``html``, ``anki``, ``gift``, ``moodle_xml``; the defaults give a short-answer question).  Every export format
    then renders the kind.  ``trains`` names what ``--from-corrections`` may use it for.  The vocabgen plugin
    registers ``cloze``, ``choice``, ``reorder`` and ``translate`` this way.
    """


@hookspec
def register_export_formats(register):
    """Contribute export formats for exercise sheets (``treegram exercises --format NAME``, the web page's
    downloads).

    Call ``register(fmt)`` with a :class:`treegram.exercises.ExportFormat`: a name, a file extension, whether the
    output is binary, its media type and ``render(sheet) -> str | bytes`` over a
    :class:`treegram.exercises.Sheet` (items render through their kinds: ``item.question()``, ``item.key()``,
    ``item.key_line()``, ``item.spec`` for the kind's other renderers).  The vocabgen plugin registers ``md``,
    ``html``, ``pdf``, ``gift``, ``moodle-xml``, ``anki`` and ``json`` this way.
    """
