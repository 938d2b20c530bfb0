"""Extractive sentence compression shared by the compression formalisms (the stsg and channel plugins).

- `align`: pair corpora and the deletion alignment (LCS; character-level re-alignment of differently tokenized text)
- `treeprep`: ROOT wrapping, target trees derived from the source parse, cached parsing with any treegram parser
- `evaluate`: compression rate, token P/R/F1, relational F1 (spaCy triples), approximate randomization
- `compressor`: `Compression` (a decoded compression), the compressor protocol `treegram compress` relies on
  (`source_tree` / `compress_tree`), parsing a sentence with a model's parser (`parse_source`), and storing that
  parser inside the compression model's file (`embed_parser` / `embedded_parser`)
- `cli`: the `treegram compress` and `treegram eval-compression` commands (any compressor model)
"""
