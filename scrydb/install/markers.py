"""The usage text in an agent's instruction file (CLAUDE.md, AGENTS.md, a Cursor rule, ...),
between begin/end markers, so that an uninstall removes exactly what an install added.

A new block goes at the end of the file, after one line break (a blank line when the file
ends with a complete line); :func:`remove_block` takes that line break away again, so the
file gets back its original bytes. A block that is already there is replaced in place when
its text changed (a newer scry), and left alone when it did not.
"""

from __future__ import annotations

BEGIN = "<!-- BEGIN scry: written by `scry install`; `scry uninstall` removes this block -->"
END = "<!-- END scry -->"


def block(body: str, nl: str = "\n") -> str:
    """The marked block holding ``body`` (ending with a line break)."""
    return nl.join([BEGIN, *body.strip("\n").split("\n"), END]) + nl


def span(text: str) -> tuple[int, int] | None:
    """Where the marked block is: from its BEGIN line to past its END line's line break."""
    a = text.find(BEGIN)
    if a < 0:
        return None
    a = text.rfind("\n", 0, a) + 1  # the whole line
    e = text.find(END, a)
    if e < 0:
        return None
    b = e + len(END)
    if text.startswith("\r\n", b):
        b += 2
    elif text.startswith("\n", b):
        b += 1
    return a, b


def malformed(text: str) -> bool:
    """A BEGIN marker without its END (a hand edit): refuse to touch the file."""
    return BEGIN in text and span(text) is None


def set_block(text: str, body: str, prefix: str = "") -> str:
    """``text`` with the block holding ``body``: replaced where it is, else appended;
    ``prefix`` starts a file that is created (e.g. a rule file's front matter)."""
    nl = "\r\n" if "\r\n" in text else "\n"
    new_block = block(body, nl)
    where = span(text)
    if where is not None:
        a, b = where
        return text[:a] + new_block + text[b:]
    if not text:
        return prefix + new_block
    return text + nl + new_block


def remove_block(text: str) -> str:
    """``text`` without the block (and the line break :func:`set_block` put before it)."""
    where = span(text)
    if where is None:
        return text
    a, b = where
    before, after = text[:a], text[b:]
    if not after:  # the block ended the file: it was appended after one line break
        if before.endswith("\r\n"):
            before = before[:-2]
        elif before.endswith("\n"):
            before = before[:-1]
    return before + after
