"""Error types and messages in pasted text, and a message's constant fragments.

An error line states a type and a message: ``ValueError: bad value for x``,
``TypeError [ERR_X]: ...``, ``panic: ...``, ``Exception in thread "main"
java.lang.IllegalStateException: ...``, ``error[E0599]: ...``. :func:`message_pattern`
turns a message into the fragments worth a literal search of the code that raises or
formats it, its quoted values, numbers, paths and ids left out as wildcards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Longest line parsed for frames or errors: no traceback line is longer (one-line pastes
#: are split at their frames first); longer lines are minified code or data.
MAX_LINE_CHARS = 2000
#: Longest error message kept (a message is one line; past this it is a data dump).
MAX_MESSAGE_CHARS = 500
#: Constant fragments of a message worth a literal search: at least this many letters.
MIN_FRAGMENT_LETTERS = 4
#: At most this many fragments per message (the longest message still reads in a few).
MAX_FRAGMENTS = 8


@dataclass(frozen=True)
class ErrorMessage:
    """An error type and message (``ValueError: bad value for x``)."""

    type: str  #: ``ValueError``, ``java.lang.IllegalStateException``, ``panic``, ...
    message: str  #: the text after the type ('' when none)
    code: str = ""  #: Node's ``ERR_X`` or rustc's ``E0599`` ('' when none)
    patterns: tuple[str, ...] = ()  #: :func:`message_pattern` of the message
    trace: int | None = None  #: the traceback it belongs to, None when it stands alone


#: The variable parts of a message: quoted values, reprs, bracketed values, URLs, paths,
#: numbers, versions, hex ids. Each alternative starts only where its run starts, and a
#: delimited one excludes its opening delimiter, so every character is scanned O(1) times.
_VARIABLE = re.compile(
    r"(?<!\w)'[^'\n]*'(?!\w)"
    r"|(?<!\w)\"[^\"\n]*\""
    r"|`[^`\n]*`"
    r"|\u2018[^\u2018\u2019\n]*\u2019|\u201c[^\u201c\u201d\n]*\u201d"
    r"|<[^<>\n]*>"
    r"|\{[^{}\n]*\}"
    r"|\[[^\[\]\n]*\]"
    r"|(?<!\S)\S*[/\\]\S*"
    r"|(?<![\w.:-])0x[0-9A-Fa-f]+"
    r"|(?<![\w.:-])[0-9][\w.:-]*"
    r"|\b(?=[0-9A-Fa-f]{7,}\b)[A-Fa-f]*[0-9][0-9A-Fa-f]*\b"
)


def message_pattern(msg: str) -> list[str]:
    """The constant fragments of an error message, for a literal search of the code that
    raises or formats it: quoted values, numbers, paths and ids become wildcards and the
    text between them is kept as written, when it has at least
    :data:`MIN_FRAGMENT_LETTERS` letters ("Expected 3 arguments but got 5" ->
    ``["Expected ", " arguments but got "]``)."""
    msg = msg[:MAX_MESSAGE_CHARS]
    out: list[str] = []
    start = 0
    for m in _VARIABLE.finditer(msg):
        out.append(msg[start : m.start()])
        start = m.end()
    out.append(msg[start:])
    kept = [f for f in out if sum(ch.isalpha() for ch in f) >= MIN_FRAGMENT_LETTERS]
    return kept[:MAX_FRAGMENTS]


# -- error lines ------------------------------------------------------------------------

_ERR_LEAD = (
    r"^\s*(?:E\s+|Uncaught\s+(?:\(in promise\)\s+)?|Unhandled [Ee]xception[.:]?\s+"
    r"|Caused by:\s+|Suppressed:\s+|Exception in thread \"[^\"\n]*\"\s+|--->\s+)?"
)
#: An error line whose type names itself one (``...Error``, ``...Exception``).
_ERROR = re.compile(
    _ERR_LEAD + r"(?P<type>(?:[A-Za-z_$][\w$]*(?:\.|::|\\))*(?:[A-Z][\w$]*)?"
    r"(?:Error|Exception|Exit|Interrupt|Warning|Panic|Failure|Fault)|KeyboardInterrupt"
    r"|StopIteration|error(?=\[E[0-9]{4}\]))"
    r"(?:\s*\[(?P<code>[A-Z][A-Z0-9_]{1,60})\])?(?::\s*(?P<msg>.*))?$"
)
#: An error line beside a traceback, where any class name is one (``Http404``,
#: ``django...ImproperlyConfigured: ...``).
_ERROR_RELAXED = re.compile(
    _ERR_LEAD + r"(?P<type>[A-Za-z_$][\w$]*(?:(?:\.|::|\\)[A-Za-z_$][\w$]*)*)"
    r"(?:\s*\[(?P<code>[A-Z][A-Z0-9_]{1,60})\])?(?::\s+(?P<msg>.*))?$"
)
_GO_PANIC = re.compile(r"^\s*(?P<type>panic|fatal error): (?P<msg>.+?)(?: \[recovered\])?\s*$")


def make_error(type_: str, msg: str, code: str = "") -> ErrorMessage:
    msg = msg.strip()[:MAX_MESSAGE_CHARS]
    return ErrorMessage(type_, msg, code, tuple(message_pattern(msg)))


def _class_like(name: str) -> bool:
    """``pkg.Problem``, ``ImproperlyConfigured``, ``Http404``: not a prose word (``Note``)."""
    return (
        any(sep in name for sep in (".", "::", "\\"))
        or sum(ch.isupper() for ch in name) >= 2
        or (name[:1].isupper() and any(ch.isdigit() for ch in name))
    )


def parse_error(line: str, relaxed: bool = False) -> ErrorMessage | None:
    """The error a line states (``TypeError [ERR_X]: ...``, ``panic: ...``), or None.
    ``relaxed`` (the line sits beside a traceback) takes any class name as the type."""
    if len(line) > MAX_LINE_CHARS:
        return None
    m = _GO_PANIC.match(line)
    if m:
        return make_error(m["type"], m["msg"])
    m = _ERROR.match(line)
    if m:
        code = m["code"] or ""
        msg = m["msg"] or ""
        if m["type"] == "error" and msg.startswith("["):  # rustc: error[E0599]: ...
            code, _, msg = msg[1:].partition("]:")
        return make_error(m["type"], msg, code)
    if relaxed:
        m = _ERROR_RELAXED.match(line)
        if m and _class_like(m["type"]):
            return make_error(m["type"], m["msg"] or "", m["code"] or "")
    return None
