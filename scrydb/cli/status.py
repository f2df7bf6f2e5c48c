"""``scry status``."""

from __future__ import annotations

from pathlib import Path

import click

from scrydb import present
from scrydb.cli.common import (
    db_option,
    deliberate_skips,
    emit_json,
    json_option,
    open_index,
)
from scrydb.errors import ScryError


@click.command("status")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--fast", is_flag=True, help="Skip the working-tree and git checks.")
@click.option(
    "--skipped", "list_skipped", is_flag=True, help="List every path left out, per reason."
)
@json_option
@db_option
def status_cmd(
    path: str | None,
    fast: bool,
    list_skipped: bool,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Show where the index is, what it holds, how fresh it is, and what was skipped.

    Counts files, chunks, symbols and vectors, chunks still waiting for embeddings,
    skipped paths per reason, files git tracks that the index lacks (loudly, when more
    than a few: a .gitignore mistake must not pass silently), the last sync, the
    fingerprint, and what changed in the working tree since. Never writes.

    \b
    Example:
      scry status
      scry status --json | jq .pending
      scry status --skipped            # every path left out, per reason
    """
    from scrydb.paths import default_db_path, find_root

    root = find_root(path)
    where = Path(db) if db else default_db_path(root)
    if not where.exists():
        raise ScryError(f"no index of {root} yet (looked for {where}); run `scry index`")
    with open_index(str(root) if path or not db else None, db, config, readonly=True) as ix:
        if list_skipped:
            from scrydb.present import show_name

            skipped = ix.skipped_paths()
            if as_json:
                emit_json({"root": str(ix.root), "skipped": skipped})
            else:
                for reason, paths in skipped.items():
                    click.echo(f"{reason} ({len(paths)})")
                    click.echo("\n".join(f"  {show_name(p)}" for p in paths))
            return
        st = ix.status(check_stale=not fast, check_git=not fast)
    if as_json:
        emit_json(st.to_json())
        return
    click.echo("\n".join(present.status_lines(st)))
    if st.git_missing_count:
        reasons = ", ".join(
            f"{k} {v}" for k, v in st.git_tracked_skipped.items() if k not in deliberate_skips()
        )
        click.echo(
            f"{'WARNING' if st.git_warning else 'note'}: {st.git_missing_count} files tracked by "
            f"git are not indexed ({reasons}); check .gitignore, .scryignore and [index] "
            "exclude: "
            + ", ".join(st.git_missing[:5])
            + (", …" if st.git_missing_count > 5 else ""),
            err=True,
        )
