"""treegram-example-plugin: a complete third-party formalism written against `treegram.formalism`."""

__version__ = "0.1.0"
