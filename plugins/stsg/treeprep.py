"""Moved to `treegram.compression.treeprep` (shared by the compression plugins); re-exported for old imports."""

from treegram.compression.treeprep import *  # noqa: F401,F403
from treegram.compression.treeprep import __all__  # noqa: F401
