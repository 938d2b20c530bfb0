"""The built-in exercise kinds, one module each (construction from a sentence and rendering per format), registered
by the vocabgen plugin through the ``register_exercise_kinds`` hook like any plugin's kind (see
`treegram.exercises.ExerciseKind`)."""

from __future__ import annotations


def builtin_kinds():
    from treegram.plugins.vocabgen.kinds.choice import Choice
    from treegram.plugins.vocabgen.kinds.cloze import Cloze
    from treegram.plugins.vocabgen.kinds.reorder import Reorder
    from treegram.plugins.vocabgen.kinds.translate import Translate

    return [Cloze(), Choice(), Reorder(), Translate()]
