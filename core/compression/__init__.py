"""Extractive sentence compression shared by the compression formalisms (the stsg and channel plugins).

- `align`: pair corpora and the deletion alignment (LCS; character-level re-alignment of differently tokenized text)
- `treeprep`: ROOT wrapping, target trees derived from the source parse, cached parsing with any treegram parser
- `evaluate`: compression rate, token P/R/F1, relational F1 (spaCy triples), approximate randomization
- `compressor`: the compressor contract (`Compressor`: ``source_tree`` + ``decoder``; `SentenceDecoder`), what the
  core gives every compressor (`compress_tree`, `rate_search`, `TreeChartDecoder` for tree-chart decoders),
  `Compression`, parsing a sentence with a model's parser (`parse_source`), and storing that parser inside the
  compression model's file (`embed_parser` / `embedded_parser`)
- `run`: one input line (raw text or tokens) through a compressor, with the reason for every unchanged sentence
- `batch`: `treegram compress --workers/--scheduler` on the Dask batch engine of `treegram.batchparse`
- `default`: the shipped default model (`treegram compress` without ``--model``)
- `cli`: the `treegram compress` and `treegram eval-compression` commands (any compressor model)
"""
