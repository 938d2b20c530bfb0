"""Revision mining (Yamangil & Nelken 2008, section 2): sentence compressions and expansions mined from MediaWiki
XML history dumps, distributed over dump chunks with Dask.  `treegram mine-revisions`."""
