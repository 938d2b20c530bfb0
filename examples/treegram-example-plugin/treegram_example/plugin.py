"""Hook implementations: the module named by the `treegram` entry point in pyproject.toml."""

import treegram


@treegram.hookimpl
def register_formalisms(register):
    from treegram_example.keepodds import KeepOdds
    from treegram_example.lapcfg import LatentPCFG

    register(LatentPCFG())
    register(KeepOdds())  # a compressor: the contract of treegram.compression.compressor
