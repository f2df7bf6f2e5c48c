"""``scry serve``: the index as an MCP server over stdio, for coding agents.

One repository per server. Tools: ``search`` (ranked chunks, about 1,500 tokens for 10
hits), ``read`` (indexed lines, whole chunks), ``related`` (dense neighbours),
``locate`` (exact literal matches) and ``status``. Built on the official ``mcp`` SDK
(v2: ``mcp.server.mcpserver.MCPServer``).

The server answers at once. The index is kept fresh by :class:`scrydb.watch.Watcher`,
the loop ``scry watch`` runs: a lexical sync first (search works as soon as it is
committed), embeddings behind it, a re-sync about 500 ms after the last file change
(embedding gives way to it), a changed ``.scry.toml`` reloaded, another process's
writer lock waited for. Requests use a second, reader Index (WAL: readers never wait
for the writer), one request at a time; query vectors come from the watcher's model.
While embeddings are pending, search answers lexically and says so in a note.

Each tool runs in a worker thread. When the client asked for progress (a
``progressToken``) a long call reports it about once a second; a cancelled call stops
waiting at once and interrupts its SQL statement (``sqlite3_interrupt``).
"""

from scrydb.mcp_server.service import FIRST_INDEX_WAIT_S, MAX_HITS, MAX_MATCHES, ScryService
from scrydb.mcp_server.tools import build_server, tool_error_line

__all__ = [
    "FIRST_INDEX_WAIT_S",
    "MAX_HITS",
    "MAX_MATCHES",
    "ScryService",
    "build_server",
    "tool_error_line",
]
