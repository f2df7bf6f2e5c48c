"""The ``scry`` command line: a thin layer over :mod:`scrydb.index`.

Results go to stdout, progress and diagnostics to stderr. Exit codes: 0 results,
1 no results, 2 errors (one clean line, never a traceback; ``SCRY_DEBUG=1`` shows it).
click is imported under ``scrydb.cli`` and nowhere else; nothing else imports it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback

import click

from scrydb.cli.common import EXIT_ERROR, file_error, one_line
from scrydb.errors import ScryError

#: Commands that live in their own modules, imported only when used (the MCP SDK,
#: watchdog and HTTP clients must not slow down ``scry search``): name -> module:attr.
LAZY_COMMANDS = {
    "serve": "scrydb.cli.serve:serve_cmd",
    "watch": "scrydb.cli.watch:watch_cmd",
    "check": "scrydb.cli.check:check_cmd",
    "install": "scrydb.cli.install:install_cmd",
    "uninstall": "scrydb.cli.install:uninstall_cmd",
}
#: Their one-line help for ``scry --help``, which must not import them (the MCP SDK alone
#: takes over a second); a test keeps these equal to the commands' own.
LAZY_HELP = {
    "serve": "Serve one repository to coding agents over MCP (stdio).",
    "watch": "Keep the index fresh: sync about half a second after files change.",
    "check": "Check that the model, the configured endpoints and the index file work.",
    "install": "Install scry into a coding agent: MCP server, usage instructions, hooks.",
    "uninstall": "Remove what `scry install` added to a coding agent.",
}


class DefaultGroup(click.Group):
    """A group whose unknown first word means ``search``: ``scry "QUERY" [PATH]``.

    Commands in LAZY_COMMANDS are imported on first use.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands:
            return self.commands[name]
        target = LAZY_COMMANDS.get(name)
        if target is None:
            return None
        import importlib

        module, _, attr = target.partition(":")
        try:
            cmd = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            return None  # not built yet
        self.commands[name] = cmd
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.commands.get(name)
            if cmd is not None:
                if not cmd.hidden:
                    rows.append((name, cmd.get_short_help_str(formatter.width - 6 - len(name))))
            elif name in LAZY_HELP:
                rows.append((name, LAZY_HELP[name]))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        known = {*self.commands, *LAZY_COMMANDS}
        if args and args[0] not in known and args[0] not in ("--help", "-h", "--version"):
            args = ["search", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="scrydb", prog_name="scry")
def cli() -> None:
    """Local code search: ask a question about a repository, get the ranked code chunks.

    \b
    Example:
      scry index                       # index the repository you are in
      scry "where is the retry backoff computed"
      scry search UserRepository --json

    A one-word query that is also a command name (index, watch, status, ...) runs that
    command: search for such a word with `scry search WORD`.
    """


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``scry`` script."""
    try:
        rc = cli.main(args=argv, prog_name="scry", standalone_mode=False)
    except ScryError as e:
        click.echo(f"scry: error: {one_line(str(e))}", err=True)
        sys.exit(e.exit_code)
    except click.exceptions.Abort:  # click's form of Ctrl-C (and of a declined prompt)
        click.echo("scry: interrupted (the index keeps everything committed so far)", err=True)
        sys.exit(130)
    except click.exceptions.NoArgsIsHelpError as e:  # bare ``scry``: the help, as --help
        click.echo(e.ctx.get_help() if e.ctx is not None else e.format_message())
        sys.exit(EXIT_ERROR)
    except click.UsageError as e:
        where = e.ctx.command_path if e.ctx is not None else "scry"
        click.echo(f"scry: error: {one_line(e.format_message())} (see `{where} --help`)", err=True)
        sys.exit(EXIT_ERROR)
    except click.ClickException as e:
        click.echo(f"scry: error: {one_line(e.format_message())}", err=True)
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        click.echo("scry: interrupted (the index keeps everything committed so far)", err=True)
        sys.exit(130)
    except SystemExit:
        raise
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        sys.exit(EXIT_ERROR)
    except Exception as e:  # a bug: still one line, unless asked for the traceback
        mapped = file_error(e)
        if mapped is not None:  # an SQLite error about the index file outside Index's methods
            click.echo(f"scry: error: {one_line(str(mapped))}", err=True)
            sys.exit(mapped.exit_code)
        if os.environ.get("SCRY_DEBUG"):
            traceback.print_exc()
        click.echo(
            f"scry: internal error: {type(e).__name__}: {e} (SCRY_DEBUG=1 shows the traceback)",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    sys.exit(rc if isinstance(rc, int) else 0)


def _register() -> None:
    from scrydb.cli.eval import eval_cmd
    from scrydb.cli.graph import callees_cmd, callers_cmd, map_cmd, refs_cmd
    from scrydb.cli.index import index_cmd
    from scrydb.cli.repos import repos_cmd
    from scrydb.cli.search import locate_cmd, read_cmd, related_cmd, search_cmd
    from scrydb.cli.status import status_cmd

    for cmd in (
        index_cmd,
        search_cmd,
        status_cmd,
        read_cmd,
        related_cmd,
        locate_cmd,
        callers_cmd,
        callees_cmd,
        refs_cmd,
        map_cmd,
        eval_cmd,
    ):
        cli.add_command(cmd)
    cli.add_command(repos_cmd)


_register()
