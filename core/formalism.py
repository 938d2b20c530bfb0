"""What a formalism plugin provides, and the model file format every formalism shares.

A formalism (PCFG, TSG, TIG, OSTAG, STSG, vocabgen, or a third-party one) is registered through the
``register_formalisms`` hook.  `treegram train NAME` asks it to add its options to an argparse parser and to
train; the model it returns is saved as one bundle file (JSON metadata + numpy arrays, see `treegram.io`) whose
metadata names the formalism, so `treegram parse`, `treegram grammar` and friends can load any model.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from treegram.errors import ModelFileError, ParseFailure, TreegramError
from treegram.io import load_bundle, save_bundle

if TYPE_CHECKING:
    from treegram.cli.ui import UI
    from treegram.trees.tree import Tree

MODEL_FORMAT = "treegram-model"
MODEL_VERSION = 1


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


class Formalism:
    """Base class for formalism plugins; override what your formalism supports."""

    name: str = ""
    description: str = ""
    #: "trees" for treebank-trained parsers; "pairs" for compression; "sentences" for generation.
    trains_on: str = "trees"

    def configure_train_parser(self, parser: argparse.ArgumentParser) -> None:
        """Add this formalism's options to `treegram train NAME` (beyond the shared --out/--seed)."""

    def train_from_args(self, args: argparse.Namespace, ui: UI) -> Model:
        """Train a model from parsed CLI options, reporting progress through `ui`."""
        raise TreegramError(f"formalism {self.name!r} cannot be trained from the command line")

    def load_model(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Model:
        """Rebuild a model from what `save_model` wrote."""
        raise NotImplementedError


def save_model(path: str | Path, model: Model, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Save any formalism's model: the shared header plus the formalism's own metadata and arrays."""
    header = {"format": MODEL_FORMAT, "version": MODEL_VERSION, "formalism": model.formalism}
    save_bundle(path, {**header, **meta}, arrays)


def load_model(path: str | Path) -> Model:
    """Load a model file of any registered formalism, with clear errors for missing/corrupt/foreign files."""
    from treegram.plugin_manager import formalisms

    meta, arrays = load_bundle(path)
    if meta.get("format") != MODEL_FORMAT:
        raise ModelFileError(f"{path}: not a treegram model file", hint="pass a file written by `treegram train`")
    if meta.get("version", 0) > MODEL_VERSION:
        raise ModelFileError(f"{path}: model format version {meta.get('version')} is newer than this treegram",
                             hint="upgrade treegram")
    name = meta.get("formalism")
    found = formalisms()
    if name not in found:
        raise ModelFileError(f"{path}: model of formalism {name!r}, which no installed plugin provides",
                             hint="install the plugin that trained it (`treegram plugins` lists installed ones)")
    try:
        return found[name].obj.load_model(meta, arrays)
    except (KeyError, ValueError, IndexError, TypeError) as exc:
        raise ModelFileError(f"{path}: corrupt {name} model ({type(exc).__name__}: {exc})",
                             hint="re-create it with `treegram train`") from None


def flat_fallback(tokens: list[str], label: str = "S", tag: str = "XX") -> Tree:
    """The documented fallback for a sentence a grammar cannot parse: a flat tree over the words."""
    from treegram.trees.tree import Tree

    return Tree(label, tuple(Tree(tag, (w,)) for w in tokens))


__all__ = ["Formalism", "Model", "ParseFailure", "flat_fallback", "load_model", "save_model"]
