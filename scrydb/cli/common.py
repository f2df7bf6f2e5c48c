"""What the ``scry`` commands share: the ``--db``/``--config``/``--json`` options, opening
the index a command works on (the repository you are in; never a new root from a search
PATH), first-use indexing, progress bars and one-line errors."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scrydb import present
from scrydb.errors import ScryError

if TYPE_CHECKING:
    from scrydb.index import Index

EXIT_NO_RESULTS = 1
EXIT_ERROR = 2


def db_option(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option(
        "--config",
        "config",
        type=click.Path(dir_okay=False),
        default=None,
        help="Config file (default: ROOT/.scry.toml).",
    )(f)
    return click.option(
        "--db",
        "db",
        type=click.Path(dir_okay=False),
        default=None,
        envvar="SCRY_DB",
        help="Index file (default: per-user cache; env SCRY_DB).",
    )(f)


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON on stdout.")(
        f
    )


def limit_option(
    most: int, default: int | None, help: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``-n/--limit N`` (the ``limit`` parameter), from 1 to ``most``; each command keeps
    its own range, default (shown when there is one) and help."""
    return click.option(
        "-n",
        "--limit",
        "limit",
        type=click.IntRange(1, most),
        default=default,
        show_default=default is not None,
        help=help,
    )


def lang_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--lang LANGS`` (the ``lang`` parameter): only these languages."""
    return click.option(
        "--lang", default=None, help="Only these languages, e.g. python or ts,tsx."
    )(f)


def path_filter_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--path PREFIX|GLOB`` (the ``path_filter`` parameter; a search's PATH argument is
    ``path``): only paths under a prefix or matching a glob (:func:`search_scope`)."""
    return click.option(
        "--path",
        "path_filter",
        default=None,
        help="Only paths under this prefix or matching this glob.",
    )(f)


def no_sync_option(
    help: str = "Don't sync changed files first.",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--no-sync`` (the ``no_sync`` parameter): answer from the index as it is."""
    return click.option("--no-sync", is_flag=True, help=help)


def open_index(
    root: str | None,
    db: str | None,
    config: str | None,
    readonly: bool = False,
    recover: bool = False,
    near: str | None = None,
    must_exist: bool = False,
) -> Index:
    """Open the index a command works on.

    ``root`` given: that tree (``scry index PATH`` / ``status PATH`` pass the repository
    above PATH). Otherwise the repository of the current directory; outside any
    repository, the one containing ``near`` (a search's PATH); and with neither, a
    search refuses rather than index an arbitrary directory (``scry index`` does that).
    """
    from scrydb.index import Index
    from scrydb.paths import no_repository, repo_root

    if root is None and db and Path(db).is_file():
        owner = db_root(Path(db))
        if owner is not None:
            root = str(owner)  # --db names an existing index: search the tree it indexes
    if root is not None:
        r = Path(root)
        if not r.exists():
            raise ScryError(f"no such directory: {root}")
        if not r.is_dir():
            raise ScryError(f"not a directory: {root}")
    else:
        found = repo_root(None)
        if found is None and near is not None:
            p = Path(near)
            found = repo_root(p if p.is_dir() else p.parent)
        if found is None:
            if not (db or os.environ.get("SCRY_DB")):
                raise no_repository(Path.cwd(), "run `scry index` to index this directory")
            found = Path.cwd()
        r = found
    if near is not None:
        from scrydb.paths import scope_in

        scope_in(r, near)  # a PATH outside the repository: refused before anything opens
    if must_exist:
        from scrydb.paths import default_db_path

        where = Path(db) if db else default_db_path(r.resolve())
        if not where.exists():
            raise ScryError(
                f"no index of {r} yet (--no-sync does not create one): run `scry index`"
            )
    return Index(r, db=db, config=config, readonly=readonly, recover=recover)


def root_of(path: str | None) -> str | None:
    """The repository a ``scry index``/``status`` PATH belongs to: a directory inside a
    repository is part of that repository's index, never a root of its own."""
    from scrydb.paths import find_root

    if path is None:
        return None
    return str(find_root(path))


def db_root(db: Path) -> Path | None:
    """The root recorded in an existing index file, if it is readable and still exists."""
    from scrydb.store import Store

    try:
        st = Store(db, readonly=True)
    except ScryError:
        return None
    try:
        owner = st.meta("root")
    finally:
        st.close()
    return Path(owner) if owner and Path(owner).is_dir() else None


@contextlib.contextmanager
def progress_bar(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A rich progress bar on stderr on a terminal; off one, a plain line every few
    seconds (:mod:`scrydb.cli.progress`)."""
    if not enabled:
        yield None
        return
    if not sys.stderr.isatty():
        from scrydb.cli.progress import PlainProgress

        yield PlainProgress()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True, no_color="NO_COLOR" in os.environ)
    with Progress(
        TextColumn("{task.description:>8}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}
        labels = {"chunk": "chunk", "embed": "embed"}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(labels.get(phase, phase), total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield update


def warn(msg: str) -> None:
    click.echo(f"scry: warning: {msg}", err=True)


def emit_json(obj: Any) -> None:
    click.echo(present.json_text(obj))


def check_broad_root(root: Path, yes: bool) -> None:
    """``/``, ``$HOME`` or above: ask on a terminal, refuse off one (unless --yes)."""
    from scrydb.paths import is_broad_root

    if yes or not is_broad_root(root):
        return
    what = f"{root} is {'the file system root' if root == Path(root.anchor) else 'a home directory (or above one)'}"
    if sys.stdin.isatty() and sys.stderr.isatty():
        if click.confirm(f"scry: {what}: index all of it?", default=False, err=True):
            return
        raise SystemExit(EXIT_NO_RESULTS)
    raise ScryError(f"{what}: not indexing it without --yes (cd into a repository instead)")


#: Seconds to load the packaged model before the first vector (torch + weights, 2 cores).
MODEL_LOAD_SECONDS = 10


def confirm_first_index(ix: Index, ask: bool, embed: bool = True, full: bool = False) -> None:
    """Print what a first index (or a --full rebuild) will cost; on a terminal, ask when
    it is large."""
    est = ix.estimate()
    how = "measured here" if est.rate_measured else "typical for 2 cores"
    what = "full rebuild" if full else "first index"
    line = (
        f"scry: {what} of {ix.root}: {est.files} files ({est.bytes / 1e6:.1f} MB), "
        f"~{est.chunks} chunks; lexical search ready in ~{present.duration(est.seconds_lexical)}"
    )
    if embed:
        local = ix.config.embed.provider == "local"
        load = MODEL_LOAD_SECONDS if local and est.cached < 1.0 else 0
        line += (
            f", embeddings ~{present.duration(est.seconds_embed + load)} "
            f"(~{est.to_embed} texts at {est.rate:.0f} texts/s, "
            f"{how}{', with ~10s to load the model' if load else ''}"
            + (
                f"; {est.cached:.0%} of the texts are in the shared vector cache"
                if est.cached
                else ""
            )
            + ")"
        )
    else:
        line += " (no embeddings now)"
    click.echo(line, err=True)
    if (
        ask
        and est.chunks > ix.config.index.confirm_chunks
        and sys.stdin.isatty()
        and sys.stderr.isatty()
    ):
        click.echo(
            "scry: Ctrl-C at any time keeps what is done; `scry index --no-embed` "
            "builds the lexical index alone",
            err=True,
        )
        if not click.confirm("Continue?", default=True, err=True):
            raise SystemExit(EXIT_NO_RESULTS)


def search_scope(ix: Index, path: str | None, path_filter: str | None) -> str | None:
    """A search's PATH and ``--path`` as one filter inside the repository: both are
    relative to the current directory (or absolute) and must stay inside the root."""
    from scrydb.paths import scope_in

    parts = [scope_in(ix.root, p) for p in (path, path_filter) if p]
    parts = [p for p in parts if p]
    if not parts:
        return None
    if len(parts) == 2 and not parts[1].startswith(parts[0]):
        # --path relative to the current directory already includes it; a glob under PATH
        return f"{parts[0]}/{parts[1]}"
    return parts[-1]


def auto_sync(
    ix: Index,
    no_sync: bool,
    quiet: bool,
    embed: bool = True,
    no_background: bool = False,
    config: str | None = None,
) -> None:
    """Run the first-use policy (:mod:`scrydb.firstuse`) before a command answers.

    A first index (never indexed, or a first index that was stopped) builds the lexical
    index here and, unless ``[index] background = false`` or ``--no-background``, leaves
    the embeddings to a detached ``scry index``; searches meanwhile answer lexically and
    then use whatever vectors exist. An existing index gets a cheap incremental sync if
    nobody else writes. ``embed=False`` (``locate``) never loads the model.
    """
    from scrydb import firstuse
    from scrydb.errors import LockedError
    from scrydb.store import IndexWriteError

    if ix.store.readonly:
        if ix.store.write_denied and not no_sync:
            click.echo(f"scry: note: {ix.store.write_denied}: answering from it unsynced", err=True)
        return
    plan = firstuse.plan(ix, embed=embed, no_sync=no_sync, allow_background=not no_background)
    if plan.first:
        if not quiet:
            click.echo(f"scry: {plan.notice(ix.root)}", err=True)
            if not ix.store.writer_active():
                confirm_first_index(ix, ask=True, embed=embed)
        with progress_bar(not quiet) as prog:
            ix.sync(progress=prog, warn=warn, embed=plan.embed_now)
        if plan.background and ix.store.has_chunks():
            from scrydb import background

            bg = background.start(ix.root, ix.db_path, config)
            if not quiet:
                click.echo(
                    f"scry: lexical results now; embeddings are computed in the background "
                    f"(pid {bg.pid}, log {bg.log}): `scry status` shows progress, "
                    "`scry index --cancel` stops it",
                    err=True,
                )
        return
    if not plan.sync:
        return
    try:
        rep = ix.sync(embed=False, wait=False, warn=warn, probe=embed)
        if firstuse.embed_after_sync(rep.pending, embed):
            ix.sync(wait=False, warn=warn)
    except LockedError:
        pass  # someone is indexing: search what is committed
    except IndexWriteError as e:  # disk full, file gone read-only: search what is committed
        click.echo(f"scry: note: not synced: {e}", err=True)


def repo_path(ix: Index, path: str) -> str:
    """A file as the user typed it: relative to the current directory (like a search's
    PATH) when it exists there, else as the index names it (repository-relative)."""
    from scrydb.paths import scope_in

    if not path:
        raise ScryError("empty path: name a file, e.g. scry read src/app.py:10-40")
    p = Path(path)
    if (p if p.is_absolute() else Path.cwd() / p).exists():
        return scope_in(ix.root, path, purpose="read")
    return path


def deliberate_skips() -> frozenset[str]:
    from scrydb.status import DELIBERATE_SKIPS

    return DELIBERATE_SKIPS


def one_line(msg: str) -> str:
    """An error message as one line: control characters a path or query brought in
    (newlines, escapes) are shown escaped."""
    from scrydb.present import show_name

    return show_name(msg)


def file_error(e: BaseException) -> ScryError | None:
    """An SQLite error about the index file as a one-line error (None: not one)."""
    if type(e).__module__ != "apsw":
        return None
    from scrydb.store import translate_error

    return translate_error(e, os.environ.get("SCRY_DB"))
