"""treegram-example-plugin: a complete third-party formalism written against `treegram.formalism`, plus an
exercise kind and an export format written against `treegram.exercises`."""

__version__ = "0.1.0"
