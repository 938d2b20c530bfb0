"""Moved to `treegram.compression.evaluate` (shared by the compression plugins); re-exported for old imports."""

from treegram.compression.evaluate import *  # noqa: F401,F403
from treegram.compression.evaluate import __all__  # noqa: F401
