"""The MCP tools of ``scry serve`` (search, read, related, locate, status) over a
:class:`~scrydb.mcp_server.service.ScryService`; their descriptions live in
``present.TOOL_DESCRIPTIONS``."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import ToolAnnotations
from pydantic import Field, ValidationError

from scrydb import langs, present
from scrydb.errors import ScryError
from scrydb.mcp_server.repos import ReposArg, RepoSearch
from scrydb.mcp_server.service import MAX_HITS, MAX_MATCHES, ScryService, _Cancel
from scrydb.paths import split_target

# -- the tools ---------------------------------------------------------------------------


_RO = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

Limit = Annotated[int, Field(ge=1, le=MAX_HITS, description="Most hits to return.")]
LangFilter = Annotated[
    str | None,
    Field(
        description=(
            "Only these languages, comma-separated ids or aliases, e.g. 'python', 'py', "
            "'ts,tsx', 'c++'. Known ids: " + ", ".join(langs.known_ids()) + "."
        )
    ),
]
PathFilter = Annotated[
    str | None,
    Field(description="Only paths under this directory prefix or matching this glob."),
]
FileArg = Annotated[
    str,
    Field(
        description="Path relative to the repository root, as search prints it (path:line works)."
    ),
]


def tool_error_line(name: str, err: ToolError) -> str:
    """A tool error as one line an agent can act on: argument validation reads
    ``search: limit: Input should be greater than or equal to 1 (got 0)`` instead of
    pydantic's multi-line report with a documentation URL."""
    cause = err.__cause__
    if isinstance(cause, ValidationError):
        parts = []
        for e in cause.errors():
            where = ".".join(str(x) for x in e.get("loc", ())) or "arguments"
            parts.append(f"{where}: {e.get('msg', 'invalid')} (got {e.get('input')!r:.40})")
        return present.show_name(f"{name}: " + "; ".join(parts))
    text = str(err)
    prefix = f"Error executing tool {name}: "
    if text.startswith(prefix):
        text = text[len(prefix) :]
    return present.show_name(f"{name}: {text}")


class _Server(MCPServer):
    """The SDK's server, with tool errors shortened to one line. A crash (the SDK's
    UnexpectedToolError) passes as it is: the SDK logs its traceback and tells the agent
    only that the tool failed; made a ToolError it was logged as an expected error, with
    no traceback (seen with tests/fuzz/mcp.py)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as e:
            raise ToolError(tool_error_line(name, e)) from None


def build_server(svc: ScryService) -> MCPServer:
    """The MCP server with scry's tools over ``svc``."""
    mcp = _Server(
        "scry",
        instructions=present.TOOL_INSTRUCTIONS.format(root=svc.root),
        version=_version(),
        log_level="WARNING",
    )
    _add_search(mcp, svc)
    _add_read(mcp, svc)
    _add_related(mcp, svc)
    _add_locate(mcp, svc)
    _add_status(mcp, svc)
    _add_graph(mcp, svc)
    return mcp


def _add_search(mcp: MCPServer, svc: ScryService) -> None:
    """Register the ``search`` tool on ``mcp``."""
    across = RepoSearch(svc)

    @mcp.tool(
        annotations=_RO, structured_output=False, description=present.TOOL_DESCRIPTIONS["search"]
    )
    async def search(
        query: Annotated[
            str,
            Field(
                description="A question, keywords or an identifier, e.g. 'where is the retry backoff computed'."
            ),
        ],
        limit: Limit = 10,
        lang: LangFilter = None,
        path: PathFilter = None,
        repos: ReposArg = None,
        ctx: Context | None = None,
    ) -> str:
        """The ``search`` tool (description: present.TOOL_DESCRIPTIONS)."""

        def work(cancel: _Cancel) -> str:
            if repos:
                return across.answer(cancel, repos, query, limit, lang, path)
            notes = svc.await_index(cancel)
            res = svc.with_reader(
                cancel, lambda ix: ix.search(query, k=limit, lang=lang, path=path)
            )
            return present.format_search(res, limit, notes, svc.embedding_now())

        return await svc.run(ctx, "search", work)


def _add_read(mcp: MCPServer, svc: ScryService) -> None:
    """Register the ``read`` tool on ``mcp``."""

    @mcp.tool(
        annotations=_RO, structured_output=False, description=present.TOOL_DESCRIPTIONS["read"]
    )
    async def read(
        file: FileArg,
        start_line: Annotated[
            int | None, Field(ge=1, description="First line; alone, the whole chunk around it.")
        ] = None,
        end_line: Annotated[int | None, Field(ge=1, description="Last line (inclusive).")] = None,
        ctx: Context | None = None,
    ) -> str:
        """The ``read`` tool (description: present.TOOL_DESCRIPTIONS)."""

        def work(cancel: _Cancel) -> str:
            svc.await_index(cancel)
            return svc.with_reader(
                cancel, lambda ix: present.read_text(ix, file, start_line, end_line)
            )

        return await svc.run(ctx, "read", work)


def _add_related(mcp: MCPServer, svc: ScryService) -> None:
    """Register the ``related`` tool on ``mcp``."""

    @mcp.tool(
        annotations=_RO, structured_output=False, description=present.TOOL_DESCRIPTIONS["related"]
    )
    async def related(
        file: FileArg,
        line: Annotated[
            int | None,
            Field(ge=1, description="A line inside the chunk (or give file as path:line)."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_HITS, description="Most hits to return.")] = 5,
        ctx: Context | None = None,
    ) -> str:
        """The ``related`` tool (description: present.TOOL_DESCRIPTIONS)."""

        def work(cancel: _Cancel) -> str:
            svc.await_index(cancel)
            path, a, _b = split_target(file, line, None)
            if a is None:
                raise ScryError(f"give a line: related(file={path!r}, line=N)")
            res = svc.with_reader(cancel, lambda ix: ix.related(path, a, limit))
            return present.format_search(res, limit, embedding=svc.embedding_now())

        return await svc.run(ctx, "related", work)


def _add_locate(mcp: MCPServer, svc: ScryService) -> None:
    """Register the ``locate`` tool on ``mcp``."""

    @mcp.tool(
        annotations=_RO, structured_output=False, description=present.TOOL_DESCRIPTIONS["locate"]
    )
    async def locate(
        text: Annotated[
            str,
            Field(
                description="Literal text within one line (no regex), e.g. an identifier or an error message."
            ),
        ],
        limit: Annotated[int, Field(ge=1, le=MAX_MATCHES, description="Most matches.")] = 50,
        lang: LangFilter = None,
        path: PathFilter = None,
        ignore_case: bool = False,
        ctx: Context | None = None,
    ) -> str:
        """The ``locate`` tool (description: present.TOOL_DESCRIPTIONS)."""

        def work(cancel: _Cancel) -> str:
            svc.await_index(cancel)
            matches = svc.with_reader(
                cancel,
                lambda ix: ix.locate(text, k=limit, lang=lang, path=path, ignore_case=ignore_case),
            )
            return present.locate_text(matches, text, limit)

        return await svc.run(ctx, "locate", work)


def _add_status(mcp: MCPServer, svc: ScryService) -> None:
    """Register the ``status`` tool on ``mcp``."""

    @mcp.tool(
        annotations=_RO, structured_output=False, description=present.TOOL_DESCRIPTIONS["status"]
    )
    async def status(ctx: Context | None = None) -> str:
        """The ``status`` tool (description: present.TOOL_DESCRIPTIONS)."""

        def work(cancel: _Cancel) -> str:
            return "\n".join(present.status_lines(svc.status(), svc.service_lines()))

        return await svc.run(ctx, "status", work)


Target = Annotated[
    str,
    Field(description="A symbol (`parse`, `Client.send`) or a definition's `path:line`."),
]
Depth = Annotated[int, Field(ge=1, le=5, description="Steps to follow (callers of callers).")]


def _add_graph(mcp: MCPServer, svc: ScryService) -> None:
    """Register the code-graph tools (``callers``, ``callees``, ``refs``, ``map``)."""

    def answer(ctx: Context | None, label: str, fn: Any) -> Any:
        def work(cancel: _Cancel) -> str:
            svc.await_index(cancel)
            return str(svc.with_reader(cancel, fn))

        return svc.run(ctx, label, work)

    @mcp.tool(
        annotations=_RO, structured_output=False, description=present.TOOL_DESCRIPTIONS["callers"]
    )
    async def callers(target: Target, depth: Depth = 1, ctx: Context | None = None) -> str:
        """The ``callers`` tool."""
        return await answer(
            ctx,
            "callers",
            lambda ix: present.format_graph("callers", *ix.graph.callers(target, depth)),
        )

    @mcp.tool(
        annotations=_RO, structured_output=False, description=present.TOOL_DESCRIPTIONS["callees"]
    )
    async def callees(target: Target, depth: Depth = 1, ctx: Context | None = None) -> str:
        """The ``callees`` tool."""
        return await answer(
            ctx,
            "callees",
            lambda ix: present.format_graph("callees", *ix.graph.callees(target, depth)),
        )

    @mcp.tool(
        annotations=_RO, structured_output=False, description=present.TOOL_DESCRIPTIONS["refs"]
    )
    async def refs(target: Target, ctx: Context | None = None) -> str:
        """The ``refs`` tool."""
        return await answer(ctx, "refs", lambda ix: present.format_refs(ix.graph.refs(target)))

    @mcp.tool(
        annotations=_RO, structured_output=False, description=present.TOOL_DESCRIPTIONS["map"]
    )
    async def map(
        path: PathFilter = None,
        symbols: Annotated[list[str] | None, Field(description="Symbols to focus on.")] = None,
        budget: Annotated[
            int, Field(ge=50, le=20_000, description="About this many tokens.")
        ] = 1024,
        ctx: Context | None = None,
    ) -> str:
        """The ``map`` tool."""
        from scrydb.search.repomap import format_map

        return await answer(
            ctx,
            "map",
            lambda ix: (
                format_map(ix.graph.map(path, symbols, budget)) or "(no definitions indexed)"
            ),
        )


def _version() -> str:
    from scrydb import __version__

    return __version__
