"""The core's own contributions to the hooks of :mod:`treegram.hookspecs`, gathered in one place.

The core registers its commands, corpus readers, metrics, generation systems, sampler moves and decoders through
the same ``treegram`` entry-point group as every plugin (``core = "treegram.corehooks"`` in pyproject.toml), so
:mod:`treegram.plugin_manager` imports nothing above it and ``treegram plugins`` lists the core like any plugin.
The imports sit inside the hooks: a command pays only for the registries it asks for.
"""

from __future__ import annotations

from treegram.plugin_manager import hookimpl


@hookimpl
def register_commands(register):
    from treegram.cli.commands import core_commands
    from treegram.compression.cli import compression_commands

    for command in (*core_commands(), *compression_commands()):
        register(command)


@hookimpl
def register_corpus_readers(register):
    from treegram.corpora.registry import core_readers

    for reader in core_readers():
        register(reader)


@hookimpl
def register_metrics(register):
    from treegram.evaluation.metrics import parseval_metric

    register("parseval", parseval_metric)


@hookimpl
def register_generation_systems(register):
    from treegram.generation.registry import BUILTIN_SYSTEMS

    for name, factory in BUILTIN_SYSTEMS.items():
        register(name, factory)


@hookimpl
def register_sampler_moves(register):
    from treegram.bayes.moves import CORE_MOVES

    for move in CORE_MOVES:
        register(move)


@hookimpl
def register_decoders(register):
    from treegram.charts.decoders import CORE_DECODERS

    for decoder in CORE_DECODERS:
        register(decoder)
