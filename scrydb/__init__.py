"""scrydb: local hybrid code search in one SQLite file.

import scrydb
with scrydb.open("path/to/repo") as ix:
    ix.sync()
    hits = ix.search("where is the retry backoff computed", k=5)
"""

from scrydb.config import Config
from scrydb.errors import ScryError
from scrydb.index import Index, Status, find_root, open
from scrydb.results import Hit, ReadResult, Results
from scrydb.sync import SyncReport

__version__ = "0.1.0"

__all__ = [
    "Config",
    "Hit",
    "Index",
    "ReadResult",
    "Results",
    "ScryError",
    "Status",
    "SyncReport",
    "__version__",
    "find_root",
    "open",
]
