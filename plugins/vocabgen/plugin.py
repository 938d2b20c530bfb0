"""The vocabgen plugin's hook implementations (registered through the `treegram` entry-point group)."""

from __future__ import annotations

from treegram.plugin_manager import hookimpl


@hookimpl
def register_formalisms(register):
    from treegram.plugins.vocabgen.formalism import VocabgenFormalism

    register(VocabgenFormalism())


@hookimpl
def register_commands(register):
    from treegram.plugins.vocabgen.cli import COMMANDS

    for command in COMMANDS:
        register(command)


@hookimpl
def register_generation_systems(register):
    from treegram.plugins.vocabgen.spinedep import SpineDepSystem

    register("spinedep", SpineDepSystem)


@hookimpl
def register_smoothers(register):
    from treegram.plugins.vocabgen.classes import SMOOTHERS

    for name, factory in SMOOTHERS.items():
        register(name, factory)


@hookimpl
def register_exercise_kinds(register):
    from treegram.plugins.vocabgen.kinds import builtin_kinds

    for kind in builtin_kinds():
        register(kind)


@hookimpl
def register_export_formats(register):
    from treegram.plugins.vocabgen.formats import builtin_formats

    for fmt in builtin_formats():
        register(fmt)
