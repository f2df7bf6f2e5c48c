"""``scry check``: do the model, the endpoints and the index file work
(the probes are :mod:`scrydb.check`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click

from scrydb.check import format_verdicts, run_checks
from scrydb.cli.common import EXIT_ERROR, db_option, emit_json, json_option


@click.command("check")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@json_option
@db_option
def check_cmd(path: str | None, as_json: bool, db: str | None, config: str | None) -> None:
    """Check that the model, the configured endpoints and the index file work.

    One verdict per probe: config, SQLite (FTS5 + sqlite-vec), index integrity, embedder
    (loads, dimension matches the index), reranker (on-topic beats off-topic) and chat
    model (returns code). Exit 0 when all are ok, 2 otherwise. Only configured endpoints
    are contacted.

    \b
    Example:
      scry check
      scry check --config team.scry.toml --json
    """
    from scrydb.paths import default_db_path, expand_user, find_root

    root = find_root(path)
    db_path = expand_user(str(db)).resolve() if db else default_db_path(root)
    verdicts = run_checks(root, db_path, config)
    ok = all(v.status != "FAIL" for v in verdicts)
    if as_json:
        report: dict[str, Any] = {
            "root": str(root),
            "db": str(db_path),
            "ok": ok,
            "checks": [asdict(v) for v in verdicts],
        }
        emit_json(report)
    else:
        click.echo(format_verdicts(verdicts))
    if not ok:
        raise SystemExit(EXIT_ERROR)
