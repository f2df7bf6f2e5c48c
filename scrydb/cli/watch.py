"""``scry watch``: keep the index fresh (the watcher itself is :mod:`scrydb.watch`)."""

from __future__ import annotations

import signal
import time
from typing import Any

import click

from scrydb.cli.common import db_option, open_index, root_of
from scrydb.watch import DEBOUNCE_S, Watcher, describe


@click.command("watch")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--no-embed", is_flag=True, help="Keep the lexical index only (no model).")
@click.option(
    "--debounce",
    type=click.FloatRange(0.05, 60.0),
    default=DEBOUNCE_S,
    show_default=True,
    help="Seconds of quiet after a change before syncing.",
)
@db_option
def watch_cmd(
    path: str | None, no_embed: bool, debounce: float, db: str | None, config: str | None
) -> None:
    """Keep the index fresh: sync about half a second after files change.

    Syncs once at start, then on every burst of file events (saves, checkouts,
    deletions), honouring the same ignore rules as `scry index`. One line per sync goes
    to stderr; Ctrl-C stops cleanly (everything committed is kept).

    \b
    Example:
      scry watch                  # the repository containing the current directory
      scry watch ~/src/project --no-embed
    """

    def say(msg: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        click.echo(f"scry watch {stamp}: {msg}", err=True)

    w = Watcher(
        lambda: open_index(root_of(path), db, config),
        on_sync=lambda rep: say(describe(rep)),
        on_error=lambda e: say(f"sync failed: {e}"),
        warn=lambda msg: say(f"warning: {msg}"),
        embed=not no_embed,
        debounce=debounce,
    )
    w.start()
    assert w.index is not None and w.changes is not None
    say(f"watching {w.index.root} (index {w.index.db_path}, {w.changes.kind}); Ctrl-C stops")
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        while w.running:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        say("stopping…")
        w.stop()
    click.echo("scry watch: stopped", err=True)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
