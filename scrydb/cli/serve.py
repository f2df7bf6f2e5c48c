"""``scry serve``: the MCP server over stdio (the server itself is :mod:`scrydb.mcp_server`)."""

from __future__ import annotations

import os
import sys
import threading

import click

from scrydb.cli.common import db_option


@click.command("serve")
@click.option(
    "--root",
    type=click.Path(file_okay=False),
    default=None,
    help="Repository to serve (default: the one containing the working directory).",
)
@click.option("--no-embed", is_flag=True, help="Lexical only: never load the embedding model.")
@click.option("--no-watch", is_flag=True, help="Sync once at start; don't watch for changes.")
@db_option
def serve_cmd(
    root: str | None, no_embed: bool, no_watch: bool, config: str | None, db: str | None
) -> None:
    """Serve one repository to coding agents over MCP (stdio).

    Tools: search, read, related, locate, status. The server answers at once: it syncs
    in the background (lexical first, then embeddings) and watches files. Client
    configuration for Claude Code, Cursor and Codex: docs/agents.md.

    \b
    Example:
      scry serve                          # the repository you are in
      scry serve --root ~/src/project
      claude mcp add scry -- scry serve   # register it with Claude Code
    """
    from scrydb.mcp_server import ScryService, build_server

    svc = ScryService(root, db, config, embed=not no_embed, watch=not no_watch)
    try:
        server = build_server(svc)
        svc.start()
        server.run("stdio")
    finally:
        svc.stop()
    # The client closed the connection. A thread still inside a model load (or waiting
    # for another process's writer lock) would hold up interpreter shutdown for seconds;
    # everything worth keeping is committed, so leave at once.
    if any(t.is_alive() for t in threading.enumerate() if t.daemon):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
