"""``scry repos``: the indexed repositories of the cache directory."""

from __future__ import annotations

import click

from scrydb import present
from scrydb.cli.common import EXIT_NO_RESULTS, emit_json, json_option


@click.command("repos")
@json_option
def repos_cmd(as_json: bool) -> None:
    """List the indexed repositories: root, last sync, chunks, model.

    Every index file in the per-user cache directory (`SCRY_CACHE_DIR`), with the root it
    indexes, whether that root still exists, when it was last synced, its chunks and the
    model of its vectors. These are what `scry search --repo NAME` and `--all-repos`
    search. Never writes; exits 1 when there is none.

    \b
    Example:
      scry repos
      scry repos --json | jq -r '.[] | select(.root_exists) | .root'
    """
    from scrydb.catalog import indexed_repos
    from scrydb.paths import cache_dir

    entries = indexed_repos()
    if as_json:
        emit_json([e.to_json() for e in entries])
    elif entries:
        click.echo("\n".join(present.repos_lines(entries)))
    else:
        click.echo(f"no indexed repositories in {cache_dir()}", err=True)
    if not entries:
        raise SystemExit(EXIT_NO_RESULTS)
