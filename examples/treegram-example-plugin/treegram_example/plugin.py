"""Hook implementations: the module named by the `treegram` entry point in pyproject.toml."""

import treegram


@treegram.hookimpl
def register_formalisms(register):
    from treegram_example.keepodds import KeepOdds
    from treegram_example.lapcfg import LatentPCFG

    register(LatentPCFG())
    register(KeepOdds())  # a compressor: the contract of treegram.compression.compressor


@treegram.hookimpl
def register_exercise_kinds(register):
    from treegram_example.sheets import Unscramble

    register(Unscramble())  # `treegram exercises --kind unscramble`, in every format


@treegram.hookimpl
def register_export_formats(register):
    from treegram_example.sheets import CSV

    register(CSV)  # `treegram exercises --format csv`, for every kind
