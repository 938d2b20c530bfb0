"""Moved to `treegram.compression.align` (shared by the compression plugins); re-exported for old imports."""

from treegram.compression.align import *  # noqa: F401,F403
from treegram.compression.align import __all__  # noqa: F401
