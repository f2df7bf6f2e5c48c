"""One parser per traceback format, reading a line (and, for two-line formats, the next):

* Python: ``File "x.py", line 12, in fn`` (and pytest's ``x.py:12: in fn``);
* JavaScript/Node (V8): ``at fn (file:12:5)``, ``at file:12:5``, Node's throw-site lines;
* Java/Kotlin (JVM): ``at pkg.Class.method(File.java:123)``;
* Go panics: ``pkg.Func(...)`` then ``\\t/path/file.go:123 +0x..``;
* Rust backtraces: ``N: crate::mod::fn`` then ``at src/x.rs:12:5``; ``thread 'main'
  panicked at ...``;
* Ruby: ``file.rb:12:in 'meth'`` (with ``from`` and ``N: from`` leads);
* PHP: ``#0 /path/file.php(12): Class->meth()`` and ``Fatal error: ... in file.php:12``;
* C#: ``at NS.Class.Method() in C:\\path\\File.cs:line 12``.

Every pattern is anchored or starts only where a run starts, and lines over
:data:`~scrydb.search.errormessages.MAX_LINE_CHARS` are not parsed, so the time is linear
in the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from scrydb.search.errormessages import MAX_LINE_CHARS, ErrorMessage, make_error, parse_error

#: The traceback formats a frame can come from.
FORMATS = ("python", "javascript", "java", "go", "rust", "ruby", "php", "csharp")

_N = r"[0-9]{1,9}"  # a line number: never more digits than int() takes, never non-ASCII
_JVM_EXT = r"(?:java|kt|kts|scala|groovy|clj|cljc|jsp)"
_PY_FILE = re.compile(rf'^\s*File "(?P<path>[^"\n]+)", line (?P<line>{_N})(?:, in (?P<func>.+))?$')
#: Django's old debug page, "copy-and-paste view": ``File "x.py" in fn`` then ``  223. src``.
_PY_DJANGO = re.compile(r'^\s*File "(?P<path>[^"\n]+)" in (?P<func>\S+)\s*$')
_PY_DJANGO_LINE = re.compile(rf"^\s*(?P<line>{_N})\.\s")
_PY_PYTEST = re.compile(rf"^(?P<path>[^\s:]+\.py):(?P<line>{_N}): in (?P<func>\S+)\s*$")
_PY_PYTEST_ERR = re.compile(
    rf"^(?P<path>[^\s:]+\.py):(?P<line>{_N}): (?P<type>[A-Za-z_][\w.]*(?:Error|Exception))\s*$"
)
_JAVA = re.compile(
    rf"^\s*at (?P<func>[\w$./<>@-]+)\((?P<file>[\w$.-]+\.{_JVM_EXT}|Native Method|Unknown Source)"
    rf"(?::(?P<line>{_N}))?\)"
)
_CSHARP = re.compile(
    rf"^\s*at (?P<func>[^\s()]+)\((?P<args>[^()\n]*)\)(?: in (?P<path>.+?):line (?P<line>{_N}))?\s*$"
)
_AT = re.compile(r"^\s*at (?P<rest>\S.*)$")
_LOC_TAIL = re.compile(rf":(?P<line>{_N})(?::{_N})?$")
_GO_LOC = re.compile(rf"^\s+(?P<path>\S+\.(?:go|s)):(?P<line>{_N})(?: \+0x[0-9a-fA-F]+)?\s*$")
_RUST_FN = re.compile(r"^\s*(?P<n>[0-9]{1,6}):\s+(?:0x[0-9a-fA-F]+ - )?(?P<func>\S.*)$")
_RUST_AT = re.compile(rf"^\s+at (?P<path>\S.*?):(?P<line>{_N})(?::{_N})?\s*$")
_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")
_RUST_PANIC_OLD = re.compile(
    rf"^\s*thread '[^'\n]*' panicked at '(?P<msg>.*)', (?P<path>[^\s'][^:\n']*):(?P<line>{_N})"
    rf"(?::{_N})?\s*$"
)
_RUST_PANIC_NEW = re.compile(
    rf"^\s*thread '[^'\n]*' panicked at (?P<path>[^\s'][^:\n]*):(?P<line>{_N}):{_N}:?\s*$"
)
_RUBY = re.compile(
    rf"^\s*(?:(?P<n>[0-9]{{1,6}}): )?(?:from )?(?P<path>(?:[A-Za-z]:)?[^\s:][^:\n]*):"
    rf"(?P<line>{_N}):in (?:[`'\u2018](?P<func>[^`'\u2019\n]*)['\u2019]|(?P<bare>[^:\n]*[^:\s]))"
    r"(?P<rest>:\s.*)?$"
)
_RUBY_BLOCK = re.compile(r"^(?:(?:block|rescue|ensure)(?: \([0-9]+ levels\))? in )+")
_RUBY_TYPE = re.compile(r"\s\((?P<type>[A-Z][\w:]*)\)\s*$")
_RUBY_HONEYBADGER = re.compile(rf"^\s*line (?P<line>{_N}) of (?P<path>\S+): (?P<func>.+)$")
_PHP = re.compile(
    rf"^\s*#(?P<n>[0-9]{{1,6}})\s+(?P<path>[^\s(#][^(\n]*?)\((?P<line>{_N})\)(?::\s*(?P<func>[^\s(]+))?"
)
_PHP_FATAL = re.compile(
    r"^\s*(?:PHP )?(?:Fatal error|Catchable fatal error|Warning|Notice|Parse error|Deprecated):"
    r"\s+(?:Uncaught (?P<type>[\w\\]+):\s*)?(?P<msg>.*?) in (?P<path>\S+\.php)"
    rf"(?::(?P<line>{_N})| on line (?P<line2>{_N}))\s*$"
)
#: Node's throw site before the error line: ``/app/x.js:12`` (then the source line and a
#: caret line).
_NODE_SITE = re.compile(rf"^(?P<path>(?:node:)?[^\s:]+|[A-Za-z]:\\[^:\n]+):(?P<line>{_N})\s*$")
_CARET = re.compile(r"^\s*[~^]*\^[~^]*\s*$")
#: Lines that start a new traceback (and end the one before).
HEADER = re.compile(
    r"^\s*(?:Traceback \(most recent call last\):?"
    r"|During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:"
    r"|goroutine [0-9]+ \[[^\]\n]*\]:"
    r"|(?:[A-Z]\w* )+Backtrace:"  # "Bundler Error Backtrace:": another error's frames
    r"|--- End of inner exception stack trace ---)\s*$"
)
#: Lines inside a traceback that carry no frame.
TRACE_NOISE = re.compile(
    r"^\s*(?:stack backtrace:|(?:PHP )?Stack trace:|Backtrace:|\[stacktrace\]"
    r"|\.\.\. [0-9]+ (?:more|common frames omitted)"
    r"|--- End of stack trace from previous location[^\n]*---"
    r"|#[0-9]+ (?:\{main\}|\[internal function\].*)"
    r"|thrown in \S+ on line [0-9]+"
    r"|note: run with `RUST_BACKTRACE=[^\n]*|note: Some details are omitted[^\n]*"
    r"|\[signal [^\n]*\]|exit status [0-9]+|code: '[A-Z0-9_]+'|\}|Node\.js v[0-9.]+)\s*$"
)
_CS_ASYNC = re.compile(r"\.<(\w+)>d__[0-9]+\.MoveNext$")
_GENERIC_ARGS = re.compile(r"\[[^\[\]]*\]|`[0-9]+")
#: One-line pastes (issue titles): split before each frame.
_INLINE_JVM = re.compile(
    r"(?:(?<=\S\s)|(?<=Exception)|(?<=Error))"
    rf"(?=at [\w$./<>@-]+\([\w$.-]+\.{_JVM_EXT}(?::[0-9]+)?\))"
)
_INLINE_JS = re.compile(
    r"(?<=\S)\s+(?=at (?:[^\s()]+ \([^\s()]+:[0-9]+:[0-9]+\)|[^\s()]+:[0-9]+:[0-9]+)(?:\s|$))"
)
_INLINE_PHP = re.compile(r"\s+(?=(?:PHP )?Stack trace:|#[0-9]+ |thrown in )")


def split_inline(line: str) -> list[str]:
    """A line that holds a whole traceback (a one-line paste or an issue title) as one line
    per frame; any other line unchanged."""
    if len(line) < 40 or ("at " not in line and "#0 " not in line):
        return [line]
    if "#0 " in line and "Stack trace:" in line:
        return _INLINE_PHP.sub("\n", line).split("\n")
    out = _INLINE_JVM.sub("\n", line)
    out = _INLINE_JS.sub("\n", out)
    return out.split("\n") if "\n" in out else [line]


# -- parsing one line -----------------------------------------------------------------------


@dataclass
class Hit:
    """A frame as its format's parser read it (``traces.py`` orders and numbers them)."""

    format: str
    path: str
    line: int | None
    function: str
    consumed: int = 1
    number: int | None = None  #: the frame's own number (PHP #N, Rust N:, Ruby N: from)
    module_path: str = ""
    error: ErrorMessage | None = None
    site: bool = False  #: a throw-site line that comes before its error line (Node)


def _int(text: str | None) -> int | None:
    if not text:
        return None
    n = int(text)
    return n if n > 0 else None


def parse_frame(lines: Sequence[str], i: int) -> Hit | None:
    """The frame starting at line ``i`` (with the lines it spans), or None."""
    line = lines[i]
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    s = line.lstrip()
    if ".go:" in nxt or ".s:" in nxt:
        hit = _go(line, nxt)
        if hit:
            return hit
    if s.startswith("File "):
        return _python(lines, i)
    if s.startswith("at "):
        return _jvm(line) or _csharp(line) or _javascript(line)
    if s.startswith("#"):
        return _php(line)
    if s.startswith("thread '"):
        return _rust_panic(lines, i)
    m = _RUST_FN.match(line)
    if m and not s.split(":", 1)[1].lstrip().startswith("from "):
        hit = _rust(m, nxt)
        if hit:
            return hit
    if ":in " in line:
        return _ruby(line)
    if ".py:" in line:
        return _pytest(line)
    if ".php" in line:
        return _php_fatal(line)
    if s.startswith("line "):
        m = _RUBY_HONEYBADGER.match(line)
        if m:
            return Hit("ruby", m["path"], _int(m["line"]), m["func"].strip())
    return _node_site(lines, i)


def _python(lines: Sequence[str], i: int) -> Hit | None:
    m = _PY_FILE.match(lines[i])
    if not m:
        return _django(lines, i)
    hit = Hit("python", m["path"], _int(m["line"]), (m["func"] or "").strip())
    indent = _indent(lines[i])
    j = i + 1
    if j < len(lines) and lines[j].strip():
        src = lines[j]
        if (
            not _PY_FILE.match(src)
            and not HEADER.match(src)
            and (_indent(src) > indent or not parse_error(src))
        ):
            j += 1
    while j < len(lines) and _CARET.match(lines[j]):  # 3.11+: ~~~^^^ under the source
        j += 1
    hit.consumed = j - i
    return hit


def _django(lines: Sequence[str], i: int) -> Hit | None:
    m = _PY_DJANGO.match(lines[i])
    n = _PY_DJANGO_LINE.match(lines[i + 1]) if m and i + 1 < len(lines) else None
    if not m or not n:
        return None
    return Hit("python", m["path"], _int(n["line"]), m["func"], consumed=2)


def _pytest(line: str) -> Hit | None:
    m = _PY_PYTEST.match(line)
    if m:
        return Hit("python", m["path"], _int(m["line"]), m["func"])
    m = _PY_PYTEST_ERR.match(line)
    if m:
        return Hit("python", m["path"], _int(m["line"]), "", error=make_error(m["type"], ""))
    return None


def _jvm(line: str) -> Hit | None:
    m = _JAVA.match(line)
    if not m:
        return None
    func = m["func"].rsplit("/", 1)[-1]  # java.base/java.lang.Thread.run
    file = m["file"]
    if " " in file:  # Native Method, Unknown Source
        return Hit("java", "", None, func)
    package: list[str] = []
    for part in func.split(".")[:-1]:
        if not part[:1].islower():
            break
        package.append(part)
    module = "/".join([*package, file]) if package else ""
    return Hit("java", file, _int(m["line"]), func, module_path=module)


def _csharp(line: str) -> Hit | None:
    m = _CSHARP.match(line)
    if not m or "." not in m["func"]:
        return None
    func = _CS_ASYNC.sub(r".\1", _GENERIC_ARGS.sub("", m["func"]))
    return Hit("csharp", (m["path"] or "").strip(), _int(m["line"]), func)


def _javascript(line: str) -> Hit | None:
    m = _AT.match(line)
    if not m:
        return None
    rest = m["rest"].rstrip()
    if rest.endswith(" {"):  # Node prints the error's own properties after the last frame
        rest = rest[:-2].rstrip()
    func = ""
    loc = rest
    if rest.endswith(")") and " (" in rest:
        k = rest.rfind(" (")
        func, loc = rest[:k], rest[k + 2 : -1]
    elif rest.startswith("async "):
        loc = rest[6:]
    if "(" in loc or ")" in loc or len(loc) > 1000:
        return None
    tail = _LOC_TAIL.search(loc)
    if not tail or tail.start() == 0:
        return None
    func = func.removeprefix("async ").removeprefix("new ")
    if func.endswith("]") and " [as " in func:
        func = func[: func.rfind(" [as ")]
    path = loc[: tail.start()]
    if not any(ch in path for ch in "/\\.:"):  # "at 12:45" is a time, not a frame
        return None
    if path.endswith(".rs"):  # a Rust backtrace's "at" line whose frame line was cut off
        return Hit("rust", path, _int(tail["line"]), func.strip())
    return Hit("javascript", path, _int(tail["line"]), func.strip())


def _go(line: str, nxt: str) -> Hit | None:
    loc = _GO_LOC.match(nxt)
    if not loc:
        return None
    s = line.strip().removeprefix("created by ")
    k = s.find(" in goroutine ")
    if k > 0:
        s = s[:k]
    if s.endswith(")"):
        s = s[: s.rfind("(")]
    if not s or " " in s or "\t" in s:
        return None
    return Hit("go", loc["path"], _int(loc["line"]), s, consumed=2)


def _rust(m: re.Match[str], nxt: str) -> Hit | None:
    func = _RUST_HASH.sub("", m["func"].strip())
    at = _RUST_AT.match(nxt)
    if not at and "::" not in func and not func.startswith(("rust_", "__rust")):
        return None
    number = int(m["n"])
    if at:
        return Hit("rust", at["path"], _int(at["line"]), func, consumed=2, number=number)
    return Hit("rust", "", None, func, number=number)


def _rust_panic(lines: Sequence[str], i: int) -> Hit | None:
    m = _RUST_PANIC_OLD.match(lines[i])
    if m:
        err = make_error("panic", m["msg"])
        return Hit("rust", m["path"], _int(m["line"]), "", error=err, number=-1)
    m = _RUST_PANIC_NEW.match(lines[i])
    if not m:
        return None
    consumed = 1
    msg = ""
    if i + 1 < len(lines) and lines[i + 1].strip() and len(lines[i + 1]) <= MAX_LINE_CHARS:
        msg = lines[i + 1].strip()
        consumed = 2
    return Hit("rust", m["path"], _int(m["line"]), "", consumed, -1, error=make_error("panic", msg))


def _ruby(line: str) -> Hit | None:
    m = _RUBY.match(line)
    if not m:
        return None
    func = m["func"] if m["func"] is not None else (m["bare"] or "")
    err = None
    rest = m["rest"]
    if rest:  # the innermost line: file:12:in 'meth': message (Type)
        msg = rest[1:].strip()
        t = _RUBY_TYPE.search(msg)
        err = make_error(t["type"] if t else "", msg[: t.start()] if t else msg)
    number = int(m["n"]) if m["n"] else None
    func = _RUBY_BLOCK.sub("", func.strip())
    return Hit("ruby", m["path"].strip(), _int(m["line"]), func, number=number, error=err)


def _php(line: str) -> Hit | None:
    m = _PHP.match(line)
    if not m:
        return None
    func = (m["func"] or "").replace("\\\\", "\\")
    return Hit("php", m["path"].strip(), _int(m["line"]), func, number=int(m["n"]))


def _php_fatal(line: str) -> Hit | None:
    m = _PHP_FATAL.match(line)
    if not m:
        return None
    err = make_error((m["type"] or "Fatal error").replace("\\\\", "\\"), m["msg"])
    return Hit("php", m["path"], _int(m["line"] or m["line2"]), "", number=-1, error=err)


def _node_site(lines: Sequence[str], i: int) -> Hit | None:
    """``/app/x.js:12`` then the source line then a caret line: where Node threw."""
    if i + 2 >= len(lines) or not _CARET.match(lines[i + 2]):
        return None
    m = _NODE_SITE.match(lines[i])
    if not m:
        return None
    return Hit("javascript", m["path"], _int(m["line"]), "", consumed=3, site=True)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
