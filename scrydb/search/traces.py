"""Traceback frames grouped into tracebacks, each ordered outermost first.

:func:`scan` walks the lines once with the parsers of ``traceformats.py``: a header such
as ``Traceback (most recent call last):``, ``Caused by:`` or ``goroutine 1 [running]:``,
a change of format or two lines of other text end a traceback. Its frames are ordered
outermost first, so that its last frame is the innermost (Python prints that order; the
others print innermost first, or number their frames). Error lines are read beside them:
Python's below its frames, the others' above.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from scrydb.search.errormessages import MAX_LINE_CHARS, ErrorMessage, parse_error
from scrydb.search.framepath import is_library_path
from scrydb.search.traceformats import HEADER, TRACE_NOISE, Hit, parse_frame

#: Lines of other text that end a traceback (one stray line, e.g. "(3 frames hidden)", does
#: not).
TRACE_GAP_LINES = 2

#: Function-name prefixes of runtime frames that print no path (or a bare file name).
_LIBRARY_FUNCTIONS = (
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "com.sun.",
    "kotlin.",
    "kotlinx.",
    "scala.",
    "android.",
    "androidx.",
    "dalvik.",
    "com.android.internal.",
    "System.",
    "Microsoft.",
    "std::",
    "core::",
    "alloc::",
    "__rust",
    "rust_begin_unwind",
    "<std",
    "<core",
    "<alloc",
)


@dataclass(frozen=True)
class Frame:
    """One frame of a pasted traceback."""

    path: str  #: the path as written ('' when the format printed none)
    line: int | None  #: 1-based line number, None when the format printed none
    function: str  #: qualified name as written, arguments and hashes stripped ('' if none)
    format: str  #: one of :data:`~scrydb.search.traceformats.FORMATS`
    library: bool  #: installed/runtime code (site-packages, node_modules, GOROOT, java.*)
    trace: int = 0  #: which traceback of the report (text order, from 0)
    depth: int = 0  #: 0 for the innermost frame of its traceback, 1 for its caller, ...
    module_path: str = ""  #: JVM: the path the package implies (``com/x/Y.java``), else ''


# -- grouping frames into tracebacks -------------------------------------------------------


@dataclass
class _Trace:
    format: str
    hits: list[Hit] = field(default_factory=list)


@dataclass
class TraceScan:
    """What :func:`scan` found: frames, errors, and which lines belong to a traceback."""

    frames: list[Frame] = field(default_factory=list)
    errors: list[ErrorMessage] = field(default_factory=list)
    trace_lines: set[int] = field(default_factory=set)


class _Scanner:
    """One pass over the lines: the traceback being read, the errors above the next."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.out = TraceScan()
        self.traces = 0
        self.current: _Trace | None = None
        self.gap = 0
        #: errors waiting for the traceback below them: (error, its line)
        self.pending: list[tuple[ErrorMessage, int]] = []
        self.pending_gap = 0
        #: errors that stand alone: (error, its line)
        self.loose: list[tuple[ErrorMessage, int]] = []

    def run(self) -> TraceScan:
        lines = self.lines
        i = 0
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            if len(line) > MAX_LINE_CHARS:
                self.other()
                i += 1
                continue
            hit = parse_frame(lines, i)
            if hit is not None:
                self.frame(hit, i)
                i += hit.consumed
                continue
            if HEADER.match(line):
                self.close()
                self.out.trace_lines.add(i)
            elif TRACE_NOISE.match(line):
                self.out.trace_lines.add(i)
            else:
                self.line_error(i)
            i += 1
        self.close()
        self.flush_pending()
        # An error stated again above its traceback (an error tracker's excerpt) is part of
        # it, not prose or code.
        attached = {(e.type, e.message) for e in self.out.errors if e.trace is not None}
        self.out.trace_lines.update(
            at for err, at in self.loose if (err.type, err.message) in attached
        )
        return self.out

    def frame(self, hit: Hit, i: int) -> None:
        cur = self.current
        if (
            cur is None
            or cur.format != hit.format
            or (cur.hits and cur.hits[-1].error and hit.format == "python")  # pytest's end
        ):
            self.close()
            cur = self.current = _Trace(hit.format)
            self.traces += 1
            for err, at in self.pending:  # with the message's continuation lines
                self.add_error(err, at, self.traces - 1)
                self.out.trace_lines.update(range(at, i))
            self.pending = []
        cur.hits.append(hit)
        self.out.trace_lines.update(range(i, i + hit.consumed))
        if hit.error:
            self.add_error(hit.error, None, self.traces - 1)
        self.gap = 0

    def line_error(self, i: int) -> None:
        line = self.lines[i]
        cur = self.current
        beside = cur is not None and self.gap == 0 and cur.format == "python"
        ahead = self.frame_ahead(i)
        err = parse_error(line, relaxed=beside or ahead)
        if err is None:
            self.other()
            return
        if beside and not ahead and cur is not None and cur.hits:
            self.add_error(err, i, self.traces - 1)  # Python's error line ends its traceback
            self.close()
        elif cur is not None and cur.hits and all(h.site for h in cur.hits):
            self.add_error(err, i, self.traces - 1)  # Node: the throw site, then the error
            self.gap = 0
        else:
            self.close()  # an error above frames starts the next traceback ("Caused by:")
            self.pending.append((err, i))  # C#: the outer exception, then " ---> inner"
            self.pending_gap = 0

    def frame_ahead(self, i: int) -> bool:
        """A frame of an innermost-first format within three lines below: the error on
        line ``i`` heads that traceback (its message may take a line: C#'s "Parameter
        name: x")."""
        for j in range(i + 1, min(i + 4, len(self.lines))):
            if self.lines[j].lstrip().startswith(("at ", "#0 ")):
                return True
        return False

    def other(self) -> None:
        self.gap += 1
        if self.gap >= TRACE_GAP_LINES:
            self.close()
        self.pending_gap += 1
        if self.pending_gap >= TRACE_GAP_LINES:
            self.flush_pending()

    def add_error(self, err: ErrorMessage, line: int | None, trace: int | None) -> None:
        self.out.errors.append(ErrorMessage(err.type, err.message, err.code, err.patterns, trace))
        if line is not None and trace is not None:
            self.out.trace_lines.add(line)

    def flush_pending(self) -> None:
        for err, at in self.pending:
            self.out.errors.append(err)
            self.loose.append((err, at))
        self.pending = []

    def close(self) -> None:
        cur = self.current
        self.current = None
        if cur is None or not cur.hits:
            return
        hits = _outermost_first(cur)
        trace = self.traces - 1
        last = len(hits) - 1
        for k, h in enumerate(hits):
            library = is_library_path(h.path) or (
                not h.path.replace("\\", "/").count("/")
                and h.function.startswith(_LIBRARY_FUNCTIONS)
            )
            self.out.frames.append(
                Frame(h.path, h.line, h.function, h.format, library, trace, last - k, h.module_path)
            )


def _outermost_first(trace: _Trace) -> list[Hit]:
    """A traceback's frames, outermost first: Python's order; numbered formats by their
    numbers (the highest is outermost; a throw site, unnumbered, is innermost); the other
    formats print innermost first."""
    hits = trace.hits
    if trace.format == "python":
        return hits
    numbered = any(h.number is not None and h.number >= 0 for h in hits)
    if trace.format in ("php", "rust") or (trace.format == "ruby" and numbered):
        return sorted(hits, key=lambda h: -(h.number if h.number is not None else -1))
    return hits[::-1]


def scan(lines: Sequence[str]) -> TraceScan:
    """Frames (each traceback outermost first, :attr:`Frame.depth` 0 innermost), errors
    and the lines that belong to a traceback, in one pass over ``lines``."""
    return _Scanner(lines).run()
