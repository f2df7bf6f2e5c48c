"""What an agent is told about scry: when to search with it and when grep is still right.

This is the one copy of the text. ``scry install`` writes it into each agent's
instruction file between markers (:mod:`scrydb.install.markers`), ``scry install AGENT
--dry-run`` shows it, and docs/agents.md points here rather than keeping a second copy.
"""

from __future__ import annotations

#: The usage instructions (Markdown), as written into CLAUDE.md, AGENTS.md, GEMINI.md, a
#: Cursor or Windsurf rule, ...
USAGE = """\
## Code search: use scry before grep

This repository is indexed by scry (MCP server `scry`; the same on the command line as `scry`).

- For any question about the code — where something is defined, configured or started, how
  a feature works, what handles X, where a pasted error message or stack trace comes from —
  call `search` first (`scry "question"` in a shell). It returns the few most likely places
  with their line ranges, and it finds identifiers however they are spelled
  (`fetch_request_handler` finds `fetchRequestHandler`).
- Then `read` a hit (`read(file, start_line)` gives the whole function) instead of opening
  whole files.
- `locate` finds an exact string (an identifier, an error message, a config key) with
  file:line; `related(file, line)` finds sibling implementations and tests of code you
  are changing; `status` tells you whether the index has caught up.

Use grep / ripgrep instead when:
- you need every occurrence — renaming, removing an API, counting call sites: `search`
  ranks and stops at its limit, so run `rg -n NAME` and go through the whole list;
- you need a regular expression, a match across lines, or the exact bytes of a string;
- you already know the file: read it, or grep inside it;
- the text lives in files scry does not index: generated or vendored code, build output,
  lock files, files over 1 MB, anything .gitignored (`status` lists what was skipped);
- `status` says a sync is still running and the file you want was just written.
"""
