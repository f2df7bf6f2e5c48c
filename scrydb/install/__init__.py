"""Installing scry into coding agents: ``scry install AGENT`` / ``scry uninstall AGENT``.

``agents.py`` is the one table of agents (where each keeps its MCP servers and its
instructions, in which format, at which scope); ``jsonc.py`` and ``tomlfile.py`` merge one
entry into a configuration file without touching the rest of it; ``markers.py`` keeps the
usage text between begin/end markers in an instruction file; ``instructions.py`` holds that
text; ``plan.py`` turns an install or uninstall into file changes, written with a backup;
``hookconfig.py`` adds the hooks to Claude Code, Codex CLI and Gemini CLI and ``hook.py`` is
the hook itself (``python -m scrydb.install.hook``), which must start fast: nothing here is
imported by it but ``hookquery.py``.

This package never imports click (the commands live in ``scrydb.cli.install``).
"""
