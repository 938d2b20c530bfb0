"""Glue between instances, tags and features: tag every distinct corrected sentence once (batched spaCy), then
build the Figure-2 feature dicts."""

from __future__ import annotations

from treegram.plugins.corrections.features import features
from treegram.plugins.corrections.resources import tagger


def tag_sentences(sentences, ui=None) -> list[tuple[str, ...]]:
    tg = tagger()
    distinct = list(dict.fromkeys(tuple(s) for s in sentences))
    todo = [s for s in distinct if s not in tg.cache]
    if ui is not None and len(todo) > 200:
        with ui.task("tagging corrected sentences (spaCy)", len(todo)) as advance:
            tg.tag_many(todo, progress=advance)
    else:
        tg.tag_many(todo)
    return tg.tag_many(sentences)


def instance_features(instances, *, lexical: bool = True, ui=None) -> list[dict[str, float]]:
    tags = tag_sentences([i.y for i in instances], ui)
    return [features(i.x, i.y, t, lexical=lexical) for i, t in zip(instances, tags)]
