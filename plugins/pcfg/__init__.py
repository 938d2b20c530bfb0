"""The treebank PCFG baseline formalism (`treegram train pcfg`); its model is `treegram.grammar.pcfg`."""
