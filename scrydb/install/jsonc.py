"""Edit one entry of a JSON file in place, keeping every other byte.

Agents keep their MCP servers in JSON files that people also edit by hand, some of them
with comments and trailing commas (VS Code's ``mcp.json``, Zed's ``settings.json`` and
opencode's ``opencode.jsonc`` are JSONC). Loading such a file and dumping it again would
drop the comments and reflow the rest, so this module parses the text into spans
(:class:`Node`, :class:`Entry`) and splices the one entry in or out of the text.

An insertion goes right after the container's last value, in the file's own indentation
and line endings; a removal cuts exactly what an insertion added, so install then
uninstall gives back the original bytes. Every edit is checked by parsing the result
again and comparing it with the intended value; an edit that would change anything else
raises :class:`EditError` instead of producing it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: Indentation when a file has none to copy (a new or one-line file).
DEFAULT_INDENT = "  "
#: A list of plain values up to this many characters is written on one line.
INLINE_LIST_MAX = 72
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}
#: After a value: an optional comma, then a comment that ends the line (``comment`` ends
#: where the line break starts).
_COMMENTED_TAIL = re.compile(
    r"[ \t]*(?P<comma>,?)[ \t]*(?P<comment>//[^\r\n]*|/\*[^\r\n]*?\*/[ \t]*)(?=\r?\n)[\r\n]*[ \t]*"
)


class JsoncError(ValueError):
    """The text is not JSON (comments and trailing commas allowed): ``line``/``column``
    say where."""

    def __init__(self, message: str, text: str, pos: int) -> None:
        self.line = text.count("\n", 0, pos) + 1
        self.column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        super().__init__(f"{message} at line {self.line}, column {self.column}")


class EditError(ValueError):
    """An in-place edit would not have produced the intended value (a layout this module
    cannot splice safely); nothing should be written."""


@dataclass
class Node:
    """A value's span in the text; containers keep their entries."""

    kind: str  #: "object", "array" or "scalar"
    start: int  #: its first character
    end: int  #: one past its last character
    value: Any = None  #: a scalar's value
    entries: list[Entry] = field(default_factory=list)

    def get(self, key: str) -> Node | None:
        """The value of ``key`` in an object (the last one when a key repeats, as JSON
        parsers do), else None."""
        for e in reversed(self.entries):
            if e.key == key:
                return e.node
        return None

    def index(self, key: str) -> int | None:
        """The position of ``key`` among an object's entries (the last one), else None."""
        for i in range(len(self.entries) - 1, -1, -1):
            if self.entries[i].key == key:
                return i
        return None


@dataclass
class Entry:
    """An object member (``key`` set, ``start`` at its key) or an array item."""

    key: str | None
    start: int
    node: Node


class _Parser:
    def __init__(self, text: str) -> None:
        self.t = text
        self.i = 0

    def fail(self, message: str, pos: int | None = None) -> JsoncError:
        return JsoncError(message, self.t, self.i if pos is None else pos)

    def skip(self) -> None:
        """Whitespace and comments."""
        t, n = self.t, len(self.t)
        while self.i < n:
            c = t[self.i]
            if c in " \t\r\n\ufeff":
                self.i += 1
            elif t.startswith("//", self.i):
                nl = t.find("\n", self.i)
                self.i = n if nl < 0 else nl + 1
            elif t.startswith("/*", self.i):
                close = t.find("*/", self.i + 2)
                if close < 0:
                    raise self.fail("unterminated comment")
                self.i = close + 2
            else:
                return

    def peek(self) -> str:
        if self.i >= len(self.t):
            raise self.fail("unexpected end of file")
        return self.t[self.i]

    def value(self) -> Node:
        self.skip()
        c = self.peek()
        start = self.i
        if c == "{":
            return self.container("object", "}")
        if c == "[":
            return self.container("array", "]")
        if c == '"':
            s = self.string()
            return Node("scalar", start, self.i, s)
        m = _NUMBER.match(self.t, self.i)
        if m:
            self.i = m.end()
            return Node("scalar", start, self.i, json.loads(m.group()))
        for word, val in _LITERALS.items():
            if self.t.startswith(word, self.i):
                self.i += len(word)
                return Node("scalar", start, self.i, val)
        raise self.fail(f"unexpected character {c!r}")

    def string(self) -> str:
        start = self.i
        j = start + 1
        t = self.t
        while True:
            if j >= len(t):
                raise self.fail("unterminated string", start)
            if t[j] == "\\":
                j += 2
            elif t[j] == '"':
                break
            else:
                j += 1
        self.i = j + 1
        try:
            out = json.loads(t[start : j + 1])
        except ValueError:
            raise self.fail("invalid string", start) from None
        assert isinstance(out, str)
        return out

    def container(self, kind: str, close: str) -> Node:
        node = Node(kind, self.i, -1)
        self.i += 1
        expecting = True  # an entry or the end may come next
        while True:
            self.skip()
            if self.peek() == close:
                self.i += 1
                node.end = self.i
                return node
            if not expecting:
                raise self.fail(f"expected ',' or {close!r}")
            start = self.i
            key = None
            if kind == "object":
                if self.peek() != '"':
                    raise self.fail("expected a string key")
                key = self.string()
                self.skip()
                if self.peek() != ":":
                    raise self.fail("expected ':'")
                self.i += 1
            node.entries.append(Entry(key, start, self.value()))
            self.skip()
            expecting = self.peek() == ","
            if expecting:
                self.i += 1


def parse(text: str) -> Node | None:
    """The root object of ``text``; None when it holds nothing (a new or blank file).

    Raises :class:`JsoncError` for anything that is not JSON with comments and trailing
    commas, or whose top level is not an object."""
    p = _Parser(text)
    p.skip()
    if p.i >= len(text):
        return None
    root = p.value()
    p.skip()
    if p.i < len(text):
        raise p.fail("unexpected text after the top-level value")
    if root.kind != "object":
        raise JsoncError("the top level is not an object", text, root.start)
    return root


def to_python(node: Node | None) -> Any:
    """The plain value of a node (None -> an empty object)."""
    if node is None:
        return {}
    if node.kind == "scalar":
        return node.value
    if node.kind == "array":
        return [to_python(e.node) for e in node.entries]
    out: dict[str, Any] = {}
    for e in node.entries:
        assert e.key is not None
        out[e.key] = to_python(e.node)
    return out


def find(root: Node | None, path: Sequence[str]) -> Node | None:
    """The node at ``path`` (object keys) from the root; None when missing."""
    node = root
    for key in path:
        if node is None or node.kind != "object":
            return None
        node = node.get(key)
    return node


def get(text: str, path: Sequence[str]) -> Any:
    """The plain value at ``path`` in ``text`` (None when missing)."""
    node = find(parse(text), path)
    return None if node is None else to_python(node)


# -- edits ----------------------------------------------------------------------------


def set_entry(text: str, path: Sequence[str], key: str, value: Any) -> str:
    """``text`` with ``path...[key] = value``; missing objects along ``path`` are created.
    Unchanged text when the value is already there."""
    root = parse(text)
    want = to_python(root)
    _assign(want, [*path, key], value)
    if root is None:
        return _fresh(want, _newline(text))
    node, depth = root, 0
    while depth < len(path):
        nxt = node.get(path[depth])
        if nxt is None:
            break
        if nxt.kind != "object":
            raise EditError(f"{'.'.join(path[: depth + 1])} is not an object")
        node, depth = nxt, depth + 1
    if depth == len(path):
        existing = node.get(key)
        if existing is not None:
            if to_python(existing) == value:
                return text
            new = _replace(text, existing, value)
            return _checked(new, want)
    chain = [*path[depth:], key]  # the first missing key, then what goes inside it
    member_value: Any = value
    for k in reversed(chain[1:]):
        member_value = {k: member_value}
    new = _insert(text, node, json.dumps(chain[0], ensure_ascii=False), member_value)
    return _checked(new, want)


def append_item(text: str, path: Sequence[str], value: Any) -> str:
    """``text`` with ``value`` appended to the array at ``path`` (created when missing)."""
    root = parse(text)
    want = to_python(root)
    arr = _lookup(want, path)
    if arr is None:
        _assign(want, list(path), [value])
    elif not isinstance(arr, list):
        raise EditError(f"{'.'.join(path)} is not an array")
    else:
        arr.append(value)
    node = find(root, path)
    if node is None:
        return set_entry(text, path[:-1], path[-1], [value])
    return _checked(_insert(text, node, None, value), want)


def replace_item(text: str, path: Sequence[str], index: int, value: Any) -> str:
    """``text`` with item ``index`` of the array at ``path`` replaced by ``value``."""
    root = parse(text)
    want = to_python(root)
    _lookup(want, path)[index] = value
    node = find(root, path)
    assert node is not None and node.kind == "array"
    item = node.entries[index].node
    if to_python(item) == value:
        return text
    return _checked(_replace(text, item, value), want)


def remove_entry(text: str, path: Sequence[str], key: str | int) -> str:
    """``text`` without ``path...[key]`` (an object key or an array index); containers
    along ``path`` left empty are removed too (never the root). Unchanged when missing."""
    root = parse(text)
    container = find(root, path)
    if container is None:
        return text
    idx = container.index(key) if isinstance(key, str) else key
    if idx is None or idx >= len(container.entries):
        return text
    want = to_python(root)
    parent = _lookup(want, path)
    del parent[key if isinstance(key, str) else idx]
    text = _checked(_cut(text, container, idx), want)
    left = find(parse(text), path)
    if path and left is not None and not text[left.start + 1 : left.end - 1].strip():
        return remove_entry(text, path[:-1], path[-1])  # nothing left in it, not a comment
    return text


# -- splicing ---------------------------------------------------------------------------


def _checked(new: str, want: Any) -> str:
    try:
        got = to_python(parse(new))
    except JsoncError as e:
        raise EditError(f"an in-place edit broke the file ({e})") from None
    if got != want:
        raise EditError("an in-place edit would change more than the scry entry")
    return new


def _assign(obj: dict[str, Any], path: Sequence[str], value: Any) -> None:
    for k in path[:-1]:
        nxt = obj.get(k)
        if not isinstance(nxt, dict):
            nxt = obj[k] = {}
        obj = nxt
    obj[path[-1]] = value


def _lookup(obj: Any, path: Sequence[str]) -> Any:
    for k in path:
        if not isinstance(obj, dict) or k not in obj:
            return None
        obj = obj[k]
    return obj


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _fresh(value: Any, nl: str) -> str:
    return _render(value, "", DEFAULT_INDENT, nl) + nl


def _line_indent(text: str, pos: int) -> str:
    """The leading whitespace of the line holding ``pos``."""
    start = text.rfind("\n", 0, pos) + 1
    m = re.match(r"[ \t]*", text[start:pos])
    return m.group() if m else ""


def _unit(text: str, root_like: Node) -> str:
    """The file's indentation step: the first nested entry's indentation beyond its
    container's, else :data:`DEFAULT_INDENT`."""
    for node in _walk(root_like):
        if node.entries and "\n" in text[node.start : node.entries[0].start]:
            inner = _line_indent(text, node.entries[0].start)
            outer = _line_indent(text, node.start)
            if len(inner) > len(outer) and inner.startswith(outer):
                return inner[len(outer) :]
    return DEFAULT_INDENT


def _walk(node: Node) -> list[Node]:
    out = [node]
    for e in node.entries:
        if e.node.kind != "scalar":
            out.extend(_walk(e.node))
    return out


def _render(value: Any, indent: str, unit: str, nl: str) -> str:
    """``value`` as JSON at ``indent``: objects one member a line, a short list of plain
    values on one line (``"args": ["serve", "--root", "/src/app"]``)."""
    flat = json.dumps(value, ensure_ascii=False)
    if isinstance(value, list) and len(flat) <= INLINE_LIST_MAX:
        if not any(isinstance(v, dict | list) for v in value):
            return flat
    if isinstance(value, dict) and value:
        inner = indent + unit
        members = [
            f"{json.dumps(k, ensure_ascii=False)}: {_render(v, inner, unit, nl)}"
            for k, v in value.items()
        ]
        return "{" + nl + inner + ("," + nl + inner).join(members) + nl + indent + "}"
    if isinstance(value, list) and value:
        inner = indent + unit
        items = [_render(v, inner, unit, nl) for v in value]
        return "[" + nl + inner + ("," + nl + inner).join(items) + nl + indent + "]"
    return flat


def _root_of(text: str) -> Node:
    root = parse(text)
    assert root is not None
    return root


def _insert(text: str, node: Node, key_json: str | None, value: Any) -> str:
    """Add an entry (``key_json: value`` in an object, ``value`` in an array) after the
    container's last one, or as its only one."""
    nl = _newline(text)
    unit = _unit(text, _root_of(text))
    head = "" if key_json is None else f"{key_json}: "
    if node.entries:
        last = node.entries[-1]
        multiline = "\n" in text[node.start : node.entries[0].start]
        pos = last.node.end
        if not multiline:
            return text[:pos] + f", {head}{json.dumps(value, ensure_ascii=False)}" + text[pos:]
        ind = _line_indent(text, last.start)
        entry = f"{head}{_render(value, ind, unit, nl)}"
        tail = _COMMENTED_TAIL.match(text, pos)
        if tail is None:  # right after the last value: its comma (if any) now follows ours
            return text[:pos] + f",{nl}{ind}{entry}" + text[pos:]
        # The last line ends in a comment: the new entry goes on the next line, and keeps
        # the file's trailing-comma habit (which tells the removal whose comma is whose).
        eol = tail.end("comment")
        if tail.group("comma"):
            return text[:eol] + f"{nl}{ind}{entry}," + text[eol:]
        return text[:pos] + "," + text[pos:eol] + f"{nl}{ind}{entry}" + text[eol:]
    outer = _line_indent(text, node.start)
    ind = outer + unit
    body = f"{head}{_render(value, ind, unit, nl)}"
    interior = text[node.start + 1 : node.end - 1]
    if not interior.strip():
        return text[: node.start + 1] + f"{nl}{ind}{body}{nl}{outer}" + text[node.end - 1 :]
    # Only comments inside: the entry goes after them.
    pos = node.start + 1 + len(interior.rstrip())
    return text[:pos] + f"{nl}{ind}{body}" + text[pos:]


def _replace(text: str, node: Node, value: Any) -> str:
    nl = _newline(text)
    ind = _line_indent(text, node.start)
    unit = _unit(text, _root_of(text))
    multiline = "\n" in text[node.start : node.end] or node.kind == "scalar"
    rendered = _render(value, ind, unit, nl) if multiline else json.dumps(value, ensure_ascii=False)
    return text[: node.start] + rendered + text[node.end :]


def _cut(text: str, node: Node, idx: int) -> str:
    """Remove entry ``idx`` of ``node``: exactly the bytes :func:`_insert` added when the
    layout is the one it writes; otherwise the entry and one comma next to it."""
    entries = node.entries
    e = entries[idx]
    if len(entries) == 1:
        before = text[node.start + 1 : e.start]
        a = node.start + 1 if not before.strip() else e.start
        b = _after_comma(text, e.node.end)
        if a == node.start + 1 and not text[b : node.end - 1].strip():
            b = node.end - 1
        elif a != node.start + 1:  # comments before it: also the whitespace it sat in
            a = e.start - len(_line_indent(text, e.start))
            a = a - 1 if a > 0 and text[a - 1] == "\n" else a
            a = a - 1 if a > 0 and text[a - 1] == "\r" else a
        return text[:a] + text[b:]
    if idx > 0:
        prev = entries[idx - 1]
        gap = text[prev.node.end : e.start]
        if gap.strip() == ",":
            return text[: prev.node.end] + text[e.node.end :]
        tail = _COMMENTED_TAIL.match(text, prev.node.end)
        if (
            tail is not None
            and tail.group("comma")
            and not gap[tail.end() - prev.node.end :].strip()
        ):
            eol = tail.end("comment")
            b = _after_comma(text, e.node.end)
            if b != e.node.end:  # its own trailing comma: the one before was there already
                return text[:eol] + text[b:]
            comma = tail.start("comma")
            return text[:comma] + text[comma + 1 : eol] + text[e.node.end :]
        # Comments between: cut the entry (and its own comma, or the one before it).
        b = _after_comma(text, e.node.end)
        if b != e.node.end:
            return text[: e.start] + text[b:].lstrip(" \t")
        sep = prev.node.end + gap.index(",") if "," in gap else None
        out = text[: e.start] + text[e.node.end :]
        if sep is not None:
            out = out[:sep] + out[sep + 1 :]
        return out
    nxt = entries[1]
    gap = text[e.node.end : nxt.start]
    if gap.strip() == ",":
        return text[: e.start] + text[nxt.start :]
    b = _after_comma(text, e.node.end)
    return text[: e.start] + text[b:].lstrip(" \t")


def _after_comma(text: str, pos: int) -> int:
    """Past the comma that follows ``pos`` (whitespace allowed before it), else ``pos``."""
    j = pos
    while j < len(text) and text[j] in " \t\r\n":
        j += 1
    return j + 1 if j < len(text) and text[j] == "," else pos
