"""``scry search`` (the default command), ``read``, ``related`` and ``locate``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scrydb import present
from scrydb.cli.common import (
    EXIT_NO_RESULTS,
    auto_sync,
    db_option,
    emit_json,
    json_option,
    lang_option,
    limit_option,
    no_sync_option,
    open_index,
    path_filter_option,
    repo_path,
    search_scope,
)
from scrydb.errors import ScryError
from scrydb.results import Results

#: Most bytes a query read from stdin or a file may have: a long issue with its tracebacks
#: is tens of KB; a bigger input is a log or the wrong file.
MAX_QUERY_BYTES = 1 << 20


def read_query(query: str | None, query_file: str | None) -> str:
    """The query text: QUERY itself, stdin for ``-``, or the file ``--query-file`` names
    (UTF-8 text, at most :data:`MAX_QUERY_BYTES`); a missing, unreadable or binary file
    is a one-line error. '' when no query was given (the empty-query error follows)."""
    if query_file is None and query != "-":
        return query or ""
    where = "stdin" if query_file is None else query_file
    try:
        if query_file is None:
            data = sys.stdin.buffer.read(MAX_QUERY_BYTES + 1)
        else:
            with open(query_file, "rb") as f:
                data = f.read(MAX_QUERY_BYTES + 1)
    except FileNotFoundError:
        raise ScryError(f"no such query file: {query_file}") from None
    except IsADirectoryError:
        raise ScryError(f"the query file is a directory: {query_file}") from None
    except OSError as e:
        raise ScryError(f"cannot read the query from {where}: {e.strerror or e}") from None
    if len(data) > MAX_QUERY_BYTES:
        raise ScryError(f"the query from {where} is over {MAX_QUERY_BYTES >> 20} MiB")
    if b"\0" in data:
        raise ScryError(f"the query from {where} is not text (a binary file?)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ScryError(f"the query from {where} is not UTF-8 text") from None


@click.command("search")
@click.argument("query", required=False)
@click.argument("path", required=False)
@click.option(
    "--query-file",
    "query_file",
    metavar="FILE",
    default=None,
    help="Read the query from FILE (a whole issue or traceback is welcome); QUERY `-` reads stdin.",
)
@limit_option(1000, None, "Number of hits (default 10).")
@lang_option
@path_filter_option
@click.option(
    "--explain", is_flag=True, help="Show each hit's lexical/dense ranks, votes and factors."
)
@click.option(
    "--budget",
    type=click.IntRange(50, 1_000_000),
    default=None,
    help="Fit the output into about N tokens.",
)
@no_sync_option("Don't sync changed files before searching.")
@click.option(
    "--mode",
    type=click.Choice(["fused", "lexical", "dense"]),
    default="fused",
    help="One leg alone (for debugging).",
)
@click.option("--no-rerank", is_flag=True, help="Skip a configured reranker leg.")
@click.option(
    "--no-background",
    is_flag=True,
    help="A first index waits for its embeddings instead of leaving them to a background indexer.",
)
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="PATH|NAME",
    help="Search this repository instead (repeatable): a directory, an index file, or the "
    "name of an indexed repository; the lists merge by rank.",
)
@click.option(
    "--all-repos", is_flag=True, help="Search every indexed repository whose root exists."
)
@json_option
@db_option
def search_cmd(
    query: str | None,
    path: str | None,
    query_file: str | None,
    limit: int | None,
    lang: str | None,
    path_filter: str | None,
    explain: bool,
    budget: int | None,
    no_sync: bool,
    mode: str,
    no_rerank: bool,
    no_background: bool,
    repos: tuple[str, ...],
    all_repos: bool,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Search the repository you are in (the default command).

    PATH scopes the search to a part of this repository. The index is created on first
    use (lexical at once, embeddings by a background indexer) and synced before each
    search (changed files only). QUERY `-` reads the query from stdin and
    `--query-file FILE` from a file: a whole issue, error message or traceback.

    `--repo` (repeatable) and `--all-repos` search other indexed repositories instead,
    each with its own index and model, as they are (no sync; `scry repos` lists them),
    the lists merged by rank; each hit names its repository (`repo:path:start-end`) and
    `--path` is relative to each root.

    \b
    Example:
      scry search "where does the CLI start"
      scry "how are retries scheduled" src/ -n 5
      scry search parseConfig --lang ts --json
      pbpaste | scry search -
      scry search --query-file issue.md src/
      scry search "retry backoff" --repo . --repo ../client-lib
      scry search TokenBucket --all-repos --json
    """

    from scrydb.search.query import clean_query

    if query_file is not None and query is not None and path is None and query != "-":
        query, path = None, query  # scry search --query-file F PATH
    elif query_file is not None and query is not None:
        raise ScryError("give the query as QUERY or with --query-file, not both")
    if query is None and query_file is None:  # a usage error, as for any missing argument
        raise click.UsageError("Missing argument 'QUERY' (or --query-file FILE, or - for stdin).")
    text = read_query(query, query_file)
    clean_query(text)  # an empty query is an error before any index is opened
    if repos or all_repos:
        if path:
            raise ScryError(
                "PATH narrows a search of one repository; with --repo or --all-repos narrow "
                "with --path (relative to each root)"
            )
        if db:
            raise ScryError("--db names one repository's index; give an index file as --repo FILE")
        res = _search_repos(
            text, repos, all_repos, limit, lang, path_filter, explain, mode, not no_rerank
        )
        _emit(res, as_json, budget, explain)
        return
    if path and not Path(path).exists() and not any(ch in path for ch in "*?["):
        raise ScryError(f"no such path: {path}")
    with open_index(None, db, config, near=path, must_exist=no_sync) as ix:
        scope = search_scope(ix, path, path_filter)
        auto_sync(ix, no_sync, quiet=as_json, no_background=no_background, config=config)
        res = ix.search(
            text,
            k=limit or ix.config.search.limit,
            lang=lang,
            path=scope,
            explain=explain,
            mode=mode,
            rerank=not no_rerank,
        )
        _emit(res, as_json, budget, explain)


def _emit(res: Results, as_json: bool, budget: int | None, explain: bool) -> None:
    """A search's answer: JSON or text on stdout (fitted to ``budget`` tokens), notes on
    stderr; exit 1 when nothing was found or the name asked for exists nowhere."""
    if budget:
        render = (lambda r: present.json_text(r.to_json())) if as_json else None
        present.fit_budget(res, budget, render=render)
    if as_json:
        emit_json(res.to_json())
    else:
        if res:
            click.echo(present.format_results(res, present.use_colour(sys.stdout), explain=explain))
        for line in present.format_notes(res):
            click.echo(line, err=True)
    if not res or res.missing:  # nothing, or the name asked for exists nowhere
        raise SystemExit(EXIT_NO_RESULTS)


def _search_repos(
    text: str,
    repos: tuple[str, ...],
    all_repos: bool,
    limit: int | None,
    lang: str | None,
    path_filter: str | None,
    explain: bool,
    mode: str,
    rerank: bool,
) -> Results:
    """``--repo``/``--all-repos``: the repositories named (a name that matches none is an
    error) searched together (:func:`scrydb.multi.search_many`); one that cannot be
    searched is a note, and none at all an error."""
    from scrydb import catalog
    from scrydb.config import SearchConfig
    from scrydb.multi import search_many

    sources = [catalog.resolve_repo(r) for r in repos]
    if all_repos:
        sources += catalog.all_repo_sources()
        if not sources:
            from scrydb.paths import cache_dir

            raise ScryError(f"no indexed repository in {cache_dir()}: run `scry index` in one")
    res = search_many(
        sources,
        text,
        k=limit or SearchConfig().limit,
        lang=lang,
        path=path_filter,
        explain=explain,
        mode=mode,
        rerank=rerank,
    )
    if not res.repos:
        raise ScryError("no repository could be searched: " + "; ".join(res.notes))
    return res


@click.command("read")
@click.argument("target")
@click.option("--no-numbers", is_flag=True, help="Plain text, no line numbers.")
@no_sync_option()
@json_option
@db_option
def read_cmd(
    target: str, no_numbers: bool, no_sync: bool, as_json: bool, db: str | None, config: str | None
) -> None:
    """Print indexed lines of a file: PATH, PATH:LINE or PATH:A-B (from the index).

    \b
    Example:
      scry read src/app.py:40-80
    """
    from scrydb.paths import parse_target

    path, a, b = parse_target(target)
    with open_index(None, db, config, must_exist=no_sync) as ix:
        auto_sync(ix, no_sync, quiet=True)
        r = ix.read(repo_path(ix, path), a, b)
    if as_json:
        emit_json(r.to_json())
    else:
        click.echo(present.format_read(r, numbers=not no_numbers))
        if r.truncated:
            click.echo(f"note: {present.read_more(r)}", err=True)


@click.command("related")
@click.argument("target")
@limit_option(100, 10, "Number of related chunks.")
@no_sync_option()
@json_option
@db_option
def related_cmd(
    target: str, limit: int, no_sync: bool, as_json: bool, db: str | None, config: str | None
) -> None:
    """Chunks most similar to the one at FILE:LINE (other files first).

    \b
    Example:
      scry related src/client.py:120
    """
    from scrydb.paths import parse_target

    path, a, _b = parse_target(target)
    if a is None:
        raise ScryError(f"give a line: {target}:LINE")
    with open_index(None, db, config, must_exist=no_sync) as ix:
        auto_sync(ix, no_sync, quiet=True)
        res = ix.related(repo_path(ix, path), a, limit)
    if as_json:
        emit_json(res.to_json())
    else:
        if res:
            click.echo(present.format_results(res, present.use_colour(sys.stdout)))
        for line in present.format_notes(res):
            click.echo(line, err=True)
    if not res:
        raise SystemExit(EXIT_NO_RESULTS)


@click.command("locate")
@click.argument("text")
@click.option("-i", "--ignore-case", is_flag=True, help="Match regardless of case.")
@limit_option(10000, 50, "Most matches listed.")
@lang_option
@path_filter_option
@no_sync_option()
@json_option
@db_option
def locate_cmd(
    text: str,
    ignore_case: bool,
    limit: int,
    lang: str | None,
    path_filter: str | None,
    no_sync: bool,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Exact literal matches in the indexed code, with line numbers (grep over the index).

    \b
    Example:
      scry locate "DEFAULT_TIMEOUT"
      scry locate "todo" -i --lang python
    """

    with open_index(None, db, config, must_exist=no_sync) as ix:
        auto_sync(ix, no_sync, quiet=as_json, embed=False)  # the notice on stderr
        matches = ix.locate(
            text,
            k=limit,
            lang=lang,
            path=search_scope(ix, None, path_filter),
            ignore_case=ignore_case,
        )
    if as_json:
        emit_json({"text": text, "matches": [m.to_json() for m in matches]})
    elif matches:
        click.echo(present.format_locate(matches, present.use_colour(sys.stdout)))
    if not matches:
        if not as_json:
            click.echo("no matches", err=True)
        raise SystemExit(EXIT_NO_RESULTS)
