"""Set or remove one ``[a.b]`` table of a TOML file (Codex's ``config.toml``), keeping every
other byte.

The usual layout, a ``[mcp_servers.NAME]`` header with its keys, is spliced as text: a new
table is appended at the end of the file and a removal cuts exactly what was appended, so
install then uninstall gives back the original bytes (comments included). A table that
the file defines some other way (``mcp_servers`` as an inline table, dotted keys) is
edited with tomlkit, which keeps comments and formatting but may move blank lines. Every
result is parsed again with :mod:`tomllib` and compared with the intended value; a
mismatch raises :class:`~scrydb.install.jsonc.EditError` instead of writing it.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from typing import Any

from scrydb.install.jsonc import EditError

#: A table or array-of-tables header line: where the previous table's lines end.
_HEADER = re.compile(r"^[ \t]*\[", re.M)


def parse(text: str) -> dict[str, Any]:
    """The TOML document as plain values; :class:`tomllib.TOMLDecodeError` when malformed."""
    return tomllib.loads(text)


def get(text: str, path: tuple[str, ...]) -> Any:
    """The value at ``path`` (None when missing)."""
    node: Any = parse(text)
    for k in path:
        if not isinstance(node, dict) or k not in node:
            return None
        node = node[k]
    return node


def set_table(text: str, path: tuple[str, ...], value: dict[str, Any]) -> str:
    """``text`` with the table ``path`` (e.g. ``("mcp_servers", "scry")``) set to ``value``
    (strings, numbers, booleans and lists of them). Unchanged when already so."""
    if len(path) != 2:
        raise ValueError("a table path is two keys: (parent, name)")
    data = parse(text)
    parent = data.get(path[0])
    if parent is not None and not isinstance(parent, dict):
        raise EditError(f"{path[0]} is not a table")
    if isinstance(parent, dict) and parent.get(path[1]) == value:
        return text
    want = copy.deepcopy(data)
    want.setdefault(path[0], {})[path[1]] = value
    nl = "\r\n" if "\r\n" in text else "\n"
    block = _render(path, value, nl)
    span = _table_span(text, path)
    if span is not None:
        a, b = span
        kept = text[a:b]
        trailing = kept[len(kept.rstrip("\r\n")) :]  # the blank lines before the next table
        new = text[:a] + block.rstrip("\r\n") + (trailing or nl) + text[b:]
    elif (isinstance(parent, dict) and path[1] in parent) or _inline(text, path[0]):
        new = _tomlkit_set(text, path, value)
    else:
        new = text + _separator(text, nl) + block
    return _checked(new, want)


def remove_table(text: str, path: tuple[str, ...]) -> str:
    """``text`` without the table ``path``; unchanged when it is not there."""
    data = parse(text)
    parent = data.get(path[0])
    if not isinstance(parent, dict) or path[1] not in parent:
        return text
    want = copy.deepcopy(data)
    del want[path[0]][path[1]]
    span = _table_span(text, path)
    if span is None:
        new = _tomlkit_remove(text, path)
    else:
        a, b = span
        if b == len(text):  # appended by set_table: drop the line break it added too
            before = text[:a]
            cut = 2 if before.endswith("\r\n") else 1 if before.endswith("\n") else 0
            new = before[: len(before) - cut]
        else:
            new = text[:a] + text[b:]
    got = parse(new)
    if not want[path[0]] and path[0] not in got:
        del want[path[0]]  # the table alone had made its parent
    if got != want:
        raise EditError("an in-place edit would change more than the scry entry")
    return new


def _checked(new: str, want: dict[str, Any]) -> str:
    try:
        got = parse(new)
    except tomllib.TOMLDecodeError as e:
        raise EditError(f"an in-place edit broke the file ({e})") from None
    if got != want:
        raise EditError("an in-place edit would change more than the scry entry")
    return new


def _separator(text: str, nl: str) -> str:
    """What goes between the file's end and an appended table: one line break (a blank
    line after a complete last line), nothing in an empty file; :func:`remove_table`
    takes it away again."""
    return nl if text else ""


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k, ensure_ascii=False)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        # A JSON string is a TOML basic string (the same escapes).
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def _render(path: tuple[str, ...], value: dict[str, Any], nl: str) -> str:
    lines = [f"[{'.'.join(_key(k) for k in path)}]"]
    lines += [f"{_key(k)} = {_value(v)}" for k, v in value.items()]
    return nl.join(lines) + nl


def _table_span(text: str, path: tuple[str, ...]) -> tuple[int, int] | None:
    """From the ``[path]`` header line to the next header (or the end of the file)."""
    parts = r"[ \t]*\.[ \t]*".join(rf"(?:{re.escape(k)}|\"{re.escape(k)}\")" for k in path)
    m = re.search(rf"^[ \t]*\[[ \t]*{parts}[ \t]*\][ \t]*(?:#[^\n]*)?$", text, re.M)
    if m is None:
        return None
    nxt = _HEADER.search(text, m.end())
    return m.start(), nxt.start() if nxt else len(text)


def _inline(text: str, key: str) -> bool:
    """Whether the root table assigns ``key`` directly (an inline table or dotted keys)."""
    return re.search(rf"^[ \t]*\"?{re.escape(key)}\"?[ \t]*[.=]", text, re.M) is not None


def _tomlkit_set(text: str, path: tuple[str, ...], value: dict[str, Any]) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    parent = doc.get(path[0])
    if parent is None:
        parent = doc[path[0]] = tomlkit.table(is_super_table=True)
    inline = tomlkit.inline_table()
    inline.update(value)
    parent[path[1]] = inline if isinstance(parent, tomlkit.items.InlineTable) else value
    return tomlkit.dumps(doc)


def _tomlkit_remove(text: str, path: tuple[str, ...]) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    del doc[path[0]][path[1]]
    return tomlkit.dumps(doc)
