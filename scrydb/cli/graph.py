"""``scry callers``, ``scry callees`` and ``scry refs``: the code graph (search/graph.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from scrydb import present
from scrydb.cli.common import (
    EXIT_NO_RESULTS,
    auto_sync,
    db_option,
    emit_json,
    json_option,
    no_sync_option,
    open_index,
)

#: Deepest ``--depth`` (search.graph.MAX_DEPTH, repeated here so --help needs no import).
MAX_DEPTH = 5


def _depth_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--depth",
        type=click.IntRange(1, MAX_DEPTH),
        default=1,
        show_default=True,
        help="Follow the graph this many steps (callers of callers, ...).",
    )(f)


def _run(
    what: str,
    target: str,
    depth: int,
    no_sync: bool,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    with open_index(None, db, config, must_exist=no_sync) as ix:
        auto_sync(ix, no_sync, quiet=True, embed=False)
        if what == "refs":
            result = ix.graph.refs(target)
            rows = result.references
            payload = result.to_json()
            text = present.format_refs(result, present.use_colour(sys.stdout))
        else:
            defs, rows = (
                ix.graph.callers(target, depth)
                if what == "callers"
                else ix.graph.callees(target, depth)
            )
            payload = {
                "symbol": target,
                "definitions": [d.to_json() for d in defs],
                what: [r.to_json() for r in rows],
            }
            text = present.format_graph(what, defs, rows, present.use_colour(sys.stdout))
    if as_json:
        emit_json(payload)
    else:
        click.echo(text)
    if not rows:
        raise SystemExit(EXIT_NO_RESULTS)


@click.command("callers")
@click.argument("target")
@_depth_option
@no_sync_option()
@json_option
@db_option
def callers_cmd(
    target: str, depth: int, no_sync: bool, as_json: bool, db: str | None, config: str | None
) -> None:
    """Who calls a definition: SYMBOL (parse, Client.send) or FILE:LINE.

    Each caller is the reference site (path:line) and the definition around it, with the
    confidence of the resolution (1.0 same file or class, 0.9 through an import, 0.7 the
    only definition of that name, lower: ambiguous, its candidates listed). Exit 1 when
    nothing calls it; an unknown symbol is exit 1 with close names suggested.

    \b
    Example:
      scry callers load_config
      scry callers src/app.py:120 --depth 2 --json
    """
    _run("callers", target, depth, no_sync, as_json, db, config)


@click.command("callees")
@click.argument("target")
@_depth_option
@no_sync_option()
@json_option
@db_option
def callees_cmd(
    target: str, depth: int, no_sync: bool, as_json: bool, db: str | None, config: str | None
) -> None:
    """What a definition calls: SYMBOL or FILE:LINE, each call resolved to its definition.

    \b
    Example:
      scry callees Server.start
      scry callees src/app.py:120 --json
    """
    _run("callees", target, depth, no_sync, as_json, db, config)


@click.command("refs")
@click.argument("target")
@no_sync_option()
@json_option
@db_option
def refs_cmd(target: str, no_sync: bool, as_json: bool, db: str | None, config: str | None) -> None:
    """A symbol's definitions and every reference to it (calls, imports, bases, types).

    \b
    Example:
      scry refs RetryPolicy
      scry refs Client.send --json
    """
    _run("refs", target, 1, no_sync, as_json, db, config)


@click.command("map")
@click.argument("path", required=False)
@click.option("--symbol", "names", multiple=True, help="Personalise to this symbol (repeatable).")
@click.option(
    "--budget",
    type=click.IntRange(50, 100_000),
    default=1024,
    show_default=True,
    help="Fit the map into about N tokens.",
)
@no_sync_option()
@json_option
@db_option
def map_cmd(
    path: str | None,
    names: tuple[str, ...],
    budget: int,
    no_sync: bool,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """A map of the repository: its most central definitions with their signatures.

    Definitions are ranked by PageRank over the resolved references (a much-used one
    first); PATH or --symbol personalise the ranking to a part of the tree or to names.
    The first thing to read in an unfamiliar repository.

    \b
    Example:
      scry map --budget 800
      scry map src/server/ --json
    """
    from scrydb.cli.common import search_scope
    from scrydb.search.repomap import format_map

    with open_index(None, db, config, near=path, must_exist=no_sync) as ix:
        auto_sync(ix, no_sync, quiet=True, embed=False)
        scope = search_scope(ix, path, None) if path else None
        entries = ix.graph.map(scope, list(names) or None, budget)
    if as_json:
        emit_json({"path": scope, "budget": budget, "map": [e.to_json() for e in entries]})
    elif entries:
        click.echo(format_map(entries))
    if not entries:
        raise SystemExit(EXIT_NO_RESULTS)
