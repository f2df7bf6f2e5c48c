"""Reading a bug report into its parts (search/report.py, traces.py, framepath.py): real
tracebacks pasted into public bug reports (tests/report_samples.py, each with its
address), frames mapped to indexed files, error messages as literal fragments, prose
segments; bounded on large and hostile input."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest
import report_samples as S
from conftest import run_scry, slow_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrydb.search.framepath import PathMapper, is_library_path, map_frame_path
from scrydb.search.report import (
    SEGMENT_CHARS,
    Frame,
    Report,
    analyse_report,
    message_pattern,
)


def report(text: str) -> Report:
    r = analyse_report(text)
    assert r is not None
    return r


def innermost(r: Report, trace: int = 0) -> Frame:
    (f,) = [f for f in r.frames if f.trace == trace and f.depth == 0]
    return f


def in_trace(r: Report, trace: int) -> list[Frame]:
    frames = [f for f in r.frames if f.trace == trace]
    assert [f.depth for f in frames] == list(range(len(frames) - 1, -1, -1))
    return frames


# -- tracebacks, one format at a time ---------------------------------------------------


def test_python_chained_traceback() -> None:
    r = report(S.PYTHON_CHAINED)
    first, second = in_trace(r, 0), in_trace(r, 1)
    assert len(first) == 7 and len(second) == 2
    assert first[-1] == Frame("/plugins/orvibo_alert.py", 5, "<module>", "python", False, 0, 0)
    assert first[0].function == "bootstrap_plugins" and first[0].library
    assert all(f.library for f in first[1:6])  # imp.py and <frozen importlib._bootstrap>
    assert second[0].path == "/run_will.py" and not second[0].library
    assert r.frames[-1].function == "wrapped_f"  # the innermost frame of the last traceback
    (err,) = r.errors
    assert (err.type, err.message, err.trace) == ("ImportError", "cannot import name 'Orvibo'", 0)
    assert err.patterns == ("cannot import name ",)
    assert r.segments == () and r.code == ()  # all of it is traceback


def test_python_frames_with_blank_lines_between() -> None:
    r = report("The forum view fails:\n\n" + S.PYTHON_SPACED)
    frames = in_trace(r, 0)
    assert [(f.function, f.line) for f in frames] == [
        ("get_response", 115),
        ("get_thread", 285),
        ("read_thread", 388),
        ("create", 376),
    ]
    assert frames[0].library and not any(f.library for f in frames[1:])
    assert r.errors[0].type == "AttributeError" and r.errors[0].trace == 0
    assert r.segments == ("The forum view fails:",)
    assert r.code == ()  # the fenced block held only the traceback


def test_python_django_debug_page_and_error_tracker_excerpt() -> None:
    r = report(S.PYTHON_DJANGO)
    assert [(f.function, f.line, f.depth, f.library) for f in r.frames] == [
        ("get_response", 223, 1, True),
        ("process_response", 31, 0, True),
    ]
    sentry = report(S.PYTHON_SENTRY)
    (f,) = sentry.frames
    assert (f.path, f.line, f.function, f.library) == ("webapp/views.py", 15, "repos", False)
    (err,) = sentry.errors  # stated twice: once, as the traceback's
    assert (err.type, err.trace) == ("AttributeError", 0)
    assert err.patterns == (" object has no attribute ",)
    assert sentry.code == ("(8 additional frame(s) were not displayed)\n...",)


def test_node_throw_site_error_code_and_windows_paths() -> None:
    r = report(S.NODE_WINDOWS)
    frames = in_trace(r, 0)
    assert frames[-1] == Frame("node:internal/errors", 490, "", "javascript", True, 0, 0)
    assert frames[-2].function == "NodeError" and frames[-2].line == 399
    assert frames[0].path == "D:\\Shmily\\Shmily-Get-MobileQQ-Andriod-main\\index.js"
    assert frames[0].function == "" and frames[0].line == 37  # "at async D:\...:37:20"
    ours = [f for f in frames if not f.library]
    assert [f.function for f in ours] == ["", "ToMsg", "typeMap", "audio"]
    assert ours[-1].path.endswith("decode\\typeHandle\\audio.js") and ours[-1].line == 51
    (err,) = r.errors
    assert (err.type, err.code) == ("TypeError", "ERR_INVALID_ARG_TYPE")
    assert err.message == 'The "path" argument must be of type string. Received undefined'
    assert err.patterns == (" argument must be of type string. Received undefined",)
    assert r.code == () and r.segments == ()  # the "code: '...'" and "Node.js v18" lines too


def test_node_quoted_esm_frames() -> None:
    r = report(S.NODE_QUOTED_ESM)
    frames = in_trace(r, 0)
    assert frames[-1].path == "internal/process/esm_loader.js" and frames[-1].line == 74
    assert [f.path for f in frames if not f.library] == [
        "file:///home/caleb/roamexport/roam-export/index.mjs"
    ]
    assert {f.path for f in frames if f.library} >= {"fs.js", "internal/modules/esm/loader.js"}
    assert r.errors[0].code == "ERR_INVALID_ARG_TYPE" and r.errors[0].trace == 0
    assert r.segments == ("command run:\nnode index.mjs\nError received:",)


def test_java_trace_with_message_and_package_path() -> None:
    r = report("Health checks fail after the session closes.\n\n" + S.JAVA)
    frames = in_trace(r, 0)
    assert len(frames) == 4
    f = frames[-1]
    assert (f.path, f.line, f.function) == (
        "DataSourceUtils.java",
        86,
        "org.springframework.jdbc.datasource.DataSourceUtils.getConnection",
    )
    assert f.module_path == "org/springframework/jdbc/datasource/DataSourceUtils.java"
    (err,) = r.errors
    assert err.type == "org.springframework.jdbc.CannotGetJdbcConnectionException"
    assert err.patterns == ("Failed to obtain JDBC Connection: ", " is closed")
    assert err.trace == 0


def test_java_frame_glued_to_the_exception() -> None:
    r = report(S.JAVA_GLUED)
    frames = in_trace(r, 0)
    assert [(f.function.rsplit(".", 1)[-1], f.line) for f in frames] == [
        ("main", 18),
        ("calculate", 52),
        ("getAllDirs", 11),
        ("getAllDirs", 23),
    ]
    assert r.errors[0].type == "java.lang.NullPointerException" and r.errors[0].trace == 0


def test_kotlin_trace_and_one_line_title() -> None:
    r = report(S.KOTLIN)
    f = innermost(r)
    assert (f.path, f.line, f.format) == ("ReplEvaluator.kt", 37, "java")
    assert f.module_path == "com/github/khud/kshell/repl/ReplEvaluator.kt"
    lam = next(f for f in r.frames if "$lambda$" in f.function)
    assert lam.module_path == "com/github/khud/sparklin/kshell/KShell.kt"
    assert r.errors[0].type == "kotlin.KotlinNullPointerException"
    assert r.code == ("[3] null\nRuntime Error: Interrupted",)

    title = report(S.KOTLIN_TITLE)  # one line, under 300 characters: a report for its frames
    assert [(f.path, f.line, f.depth) for f in title.frames] == [
        ("Charlatano.kt", 45, 1),
        ("CSGO.kt", 86, 0),
    ]
    assert title.errors[0].type == "java.lang.NullPointerException"


def test_go_panic() -> None:
    r = report(S.GO)
    frames = in_trace(r, 0)
    assert [f.function for f in frames] == [
        "main.main",
        "github.com/spf13/cobra.(*Command).execute",
        "github.com/k1LoW/tbls/cmd.glob..func4",
        "github.com/k1LoW/tbls/output/config.(*Config).OutputSchema",
    ]
    assert frames[-1].line == 46 and frames[-1].path.endswith("output/config/config.go")
    assert [f.library for f in frames] == [False, True, False, False]  # cobra: /pkg/mod/
    (err,) = r.errors
    assert (err.type, err.message, err.trace) == ("panic", "assignment to entry in nil map", 0)


def test_go_goroutines_are_tracebacks_of_their_own() -> None:
    r = report(S.GO_GOROUTINES)
    assert [(f.function, f.line, f.trace, f.depth) for f in r.frames] == [
        ("main.main", 25, 0, 0),
        ("main.main", 20, 1, 1),  # created by main.main
        ("main.chanSender", 36, 1, 0),
    ]
    assert r.errors[0].message.startswith("runtime error: invalid memory address")


def test_rust_backtrace() -> None:
    r = report(S.RUST_BACKTRACE)
    frames = in_trace(r, 0)
    assert [f.function for f in frames] == [
        "std::sys::backtrace::__rust_begin_short_backtrace",  # the hash is gone
        "core::ops::function::FnOnce::call_once",
        "metta_repl::main",
        "",  # an "at" line whose frame line the paste cut off: frame 49, innermost here
    ]
    assert [f.library for f in frames] == [True, True, False, False]
    assert frames[2].path.endswith("repl/src/main.rs") and frames[2].line == 87
    assert frames[3].line == 161 and frames[3].format == "rust"


def test_rust_panic_message() -> None:
    r = report(S.RUST_PANIC)
    (f,) = r.frames
    assert (f.path, f.line, f.format) == ("src\\explorer_modinfo.rs", 45, "rust")
    (err,) = r.errors
    assert err.type == "panic" and err.message == "called `Option::unwrap()` on a `None` value"
    assert r.segments == ()


def test_ruby_backtraces() -> None:
    r = report(S.RUBY)
    first, second = in_trace(r, 0), in_trace(r, 1)
    assert [(f.path, f.function) for f in first] == [
        ("bin/rails", "<main>"),
        ("bin/rails", "load"),
        ("/home/f/appname/bin/spring", "<top (required)>"),
        (
            "/home/f/.rbenv/versions/2.4.1/lib/ruby/2.4.0/rubygems/core_ext/kernel_require.rb",
            "require",
        ),
    ]
    assert first[-1].library and not first[0].library
    assert second[-1].function == "require" and second[-1].line == 90  # "block (2 levels) in"
    assert second[0].path == "/home/f/appname/config/application.rb"

    airbrake = report(S.RUBY_AIRBRAKE)
    assert [(f.path, f.function) for f in in_trace(airbrake, 0)][-2:] == [
        ("[PROJECT_ROOT]/app/jobs/card_monitor_job.rb", "perform"),
        ("[PROJECT_ROOT]/app/models/list.rb", "funnel"),
    ]
    assert "NoMethodError" in airbrake.identifiers
    assert [e.type for e in airbrake.errors] == ["NoMethodError"]

    numbered = report(S.RUBY_NUMBERED)  # "N: from", outermost first
    assert innermost(numbered).path == "/Users/afuno/apps/app1/config/environment.rb"


def test_php_traces() -> None:
    one = report(S.PHP_ONE_LINE)
    frames = in_trace(one, 0)
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.function) for f in frames] == [
        ("template.php", 688, "require_once"),
        ("header.php", 14, "include_once"),
        ("index_wp.php", 47, "umc_set_environment"),
        ("core_include.php", 107, "umc_wp_get_vars"),
        ("wordpress.inc.php", 60, ""),  # where it was thrown
    ]
    (err,) = one.errors
    assert (err.type, err.trace) == ("Error", 0)
    assert err.message == "Call to undefined function umc_get_uuid_level()"

    multi = report(S.PHP)
    frames = in_trace(multi, 0)
    assert frames[0].path == "/var/www/cp.tmasha.com/artisan"
    assert frames[-1].path == "/var/www/cp.tmasha.com/app/Exceptions/Handler.php"
    assert frames[-1].function == "Illuminate\\Foundation\\Exceptions\\Handler->report"
    assert [f.library for f in frames] == [False, True, True, True, False]  # vendor/


def test_csharp_traces() -> None:
    r = report(S.CSHARP)
    (f,) = r.frames
    assert (f.path, f.line, f.function) == (
        "E:\\temp\\hello\\Program.cs",
        10,
        "ConsoleApplication.Program.Main",
    )
    assert r.errors[0].type == "System.Exception" and r.errors[0].trace == 0

    a = report(S.CSHARP_ASYNC)
    frames = in_trace(a, 0)
    assert frames[-1] == Frame("", None, "System.Linq.Enumerable.Where", "csharp", True, 0, 0)
    assert frames[-2].function == "SimplCommerce.Module.Localization.EfStringLocalizer.GetString"
    assert not frames[-2].library
    razor = next(f for f in frames if f.line == 9)
    assert razor.function == "AspNetCore._Views_Shared__LoginPartial_cshtml.ExecuteAsync"
    assert razor.path == "/Views/Shared/_LoginPartial.cshtml"
    assert a.errors[0].message == "Value cannot be null."
    assert a.segments == ()  # "Parameter name: source" belongs to the error


def test_frames_lines_are_positive() -> None:
    for text in (S.PYTHON_CHAINED, S.NODE_WINDOWS, S.GO, S.RUST_BACKTRACE, S.PHP, S.CSHARP):
        for f in report(text).frames:
            assert f.line is None or f.line > 0


# -- error messages as literal fragments --------------------------------------------------


def test_message_pattern_placeholders_become_wildcards() -> None:
    assert message_pattern("Expected 3 arguments but got 5") == ["Expected ", " arguments but got "]
    # https://github.com/TheSpeedX/TBomb/issues/18; CPython formats it as "%R is not in list"
    assert message_pattern("'38' is not in list") == [" is not in list"]
    assert message_pattern("'foo'") == []
    assert message_pattern("Failed to open /tmp/x/cache.db (errno 13, id 9f8e7d6c5b)") == [
        "Failed to open ",
        " (errno ",
    ]  # ", id " has too few letters to search for
    assert message_pattern("can't find module 'lodash'") == ["can't find module "]


def test_message_fragments_are_found_in_the_code_that_formats_them() -> None:
    source = 'raise TypeError(f"Expected {len(params)} arguments but got {len(args)}")'
    r = report(
        "Calling the handler with extra arguments fails.\n\nTypeError: Expected 3 arguments "
        "but got 5\n"
    )
    (err,) = r.errors
    assert err.trace is None  # no traceback: the message stands alone
    assert err.patterns and all(p in source for p in err.patterns)


# -- a report without a traceback ----------------------------------------------------------

# https://github.com/pvlib/pvlib-python/issues/1706
PVLIB_1706 = """\
regression: iam.physical returns nan for aoi > 90° when n = 1

**Describe the bug**
For pvlib==0.9.5, when n = 1 (no reflection) and aoi > 90°, we get nan as result.

**To Reproduce**
```python
import pvlib
pvlib.iam.physical(aoi=100, n=1)
```
returns `nan`.

**Expected behavior**
The result should be `0`, as it was for pvlib <= 0.9.4.

**Versions:**
 - ``pvlib.__version__``: '0.9.5'
 - ``pandas.__version__``:  '1.5.3'
 - python: 3.10.4
"""

# https://github.com/pvlib/pvlib-python/issues/1338 (code in backticks, an error message
# in backticks, a file named in the text)
PVLIB_1338 = """\
**To Reproduce**
Steps to reproduce the behavior:
`test_sys = pvsystem.PVSystem()`
`test_sys.get_irradiance(0.0, 0.0, 0.0, 0.0, 0.0)`

**Error message**
`AttributeError: 'float' object has no attribute 'index'`

The `PVSystem.get_irradiance` method is a convenience wrapper for `irradiance.get_total_irradiance`
"""


def test_report_without_a_traceback() -> None:
    r = report(PVLIB_1706)
    assert r.frames == () and r.errors == ()
    assert r.code == ("import pvlib\npvlib.iam.physical(aoi=100, n=1)",)
    assert r.code_names == ("pvlib.iam.physical", "pvlib")
    assert "nan" in r.identifiers and "pvlib.__version__" in r.identifiers
    (seg,) = r.segments
    assert seg.startswith("regression: iam.physical returns nan for aoi > 90° when n = 1")
    assert "Describe the bug" in seg and "import pvlib" not in seg  # code is not prose

    r2 = report(PVLIB_1338)
    assert "pvsystem.PVSystem" in r2.identifiers and "test_sys.get_irradiance" in r2.identifiers
    assert "PVSystem.get_irradiance" in r2.identifiers
    (err,) = r2.errors
    assert (err.type, err.message, err.trace) == (
        "AttributeError",
        "'float' object has no attribute 'index'",
        None,
    )


def test_mentions_of_files() -> None:
    r = report(
        "The bug is in `pvlib/iam.py` around pvlib/iam.py:301, see "
        "https://github.com/pvlib/pvlib-python/blob/v0.9.5/pvlib/iam.py#L280 and "
        "docs/sphinx/source/whatsnew/v0.9.5.rst; node.js and example.com are not files.\n"
        "Second line so that this is a report."
    )
    assert [(m.path, m.line) for m in r.mentions] == [
        ("pvlib/iam.py", 280),
        ("pvlib/iam.py", None),
        ("pvlib/iam.py", 301),
        ("docs/sphinx/source/whatsnew/v0.9.5.rst", None),
        ("node.js", None),
    ]


def test_short_query_is_not_a_report() -> None:
    assert analyse_report("where is the config loaded") is None
    assert analyse_report("ValueError: bad value for x") is None  # one short line, no frames
    assert analyse_report("") is None and analyse_report(" \n\t") is None
    assert analyse_report("where is\nthe config loaded") is not None  # several lines


def test_segments_fit_the_window_on_sentence_boundaries() -> None:
    sentence = "The parser drops the trailing comment when the line ends with a backslash. "
    text = "First paragraph is short.\n\n" + sentence * 40
    r = report(text)
    assert len(r.segments) > 2
    assert all(len(s) <= SEGMENT_CHARS for s in r.segments)
    assert r.segments[0].startswith("First paragraph is short.\nThe parser")
    assert all(s.endswith("backslash.") for s in r.segments)


def test_prose_cleaned_of_markup() -> None:
    r = report(
        "<!-- Please fill in the template -->\n### Summary\n"
        "See the ![shot](https://x.io/a.png) and [the docs](https://x.io/docs) at "
        "https://x.io/page for **details**.\n<details><summary>Log</summary>\nok\n</details>"
    )
    assert r.segments == ("Summary\nSee the and the docs at for details. Log ok",)


# -- path mapping -----------------------------------------------------------------------

INDEXED = [
    "src/marshmallow/schema.py",
    "src/marshmallow/fields.py",
    "tests/test_schema.py",
    "forum/prototypes.py",
    "accounts/prototypes.py",
    "setup.py",
    "docs/setup.py",
    "app/models/list.rb",
    "src/components/Table.tsx",
    "decode/typeHandle/audio.js",
    "output/config/config.go",
    "src/main/java/com/github/mauricioaniche/ck/FileUtils.java",
    "util/__init__.py",
    "lib/__init__.py",
]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # an installed copy of the repository's package
        ("/usr/lib/python3.11/site-packages/marshmallow/schema.py", "src/marshmallow/schema.py"),
        ("C:\\Python311\\Lib\\site-packages\\marshmallow\\fields.py", "src/marshmallow/fields.py"),
        # a CI's checkout and a deployment path
        ("/home/runner/work/marshmallow/marshmallow/tests/test_schema.py", "tests/test_schema.py"),
        ("/home/the-tale/project/forum/prototypes.py", "forum/prototypes.py"),
        ("/home/runner/work/x/x/setup.py", "setup.py"),  # the root file, not docs/setup.py
        # bundlers and URLs
        ("webpack://app/./src/components/Table.tsx", "src/components/Table.tsx"),
        ("webpack:///src/components/Table.tsx", "src/components/Table.tsx"),
        ("file:///D:/build/src/components/Table.tsx", "src/components/Table.tsx"),
        ("D:\\Shmily\\main\\decode\\typeHandle\\audio.js", "decode/typeHandle/audio.js"),
        ("[PROJECT_ROOT]/app/models/list.rb", "app/models/list.rb"),
        (
            "/Users/k1low/src/github.com/k1LoW/tbls/output/config/config.go",
            "output/config/config.go",
        ),
        # a JVM frame's package path
        (
            "com/github/mauricioaniche/ck/FileUtils.java",
            "src/main/java/com/github/mauricioaniche/ck/FileUtils.java",
        ),
        ("FileUtils.java", "src/main/java/com/github/mauricioaniche/ck/FileUtils.java"),
        # ambiguous or absent: never a guess
        ("prototypes.py", None),  # two files of that name, nothing else to go by
        ("setup.py", None),
        ("/opt/app/util/helpers/__init__.py", None),  # directories disagree with both
        ("/usr/lib/python3.11/json/__init__.py", None),
        ("/usr/lib/python3.11/json/decoder.py", None),
        ("<frozen importlib._bootstrap>", None),
        ("node:internal/errors", None),
        ("", None),
    ],
)
def test_map_frame_path(raw: str, expected: str | None) -> None:
    assert map_frame_path(raw, INDEXED) == expected


def test_path_mapper_maps_a_reports_frames() -> None:
    mapper = PathMapper(["forum/views.py", "forum/prototypes.py", "base.py"])
    r = report(S.PYTHON_SPACED)
    assert [mapper.map(f.path) for f in r.frames] == [
        None,  # django's base.py: its directories disagree with the root base.py
        "forum/views.py",
        "forum/prototypes.py",
        "forum/prototypes.py",
    ]


@pytest.mark.parametrize(
    ("raw", "library"),
    [
        ("/usr/local/lib/python3.6/site-packages/will/main.py", True),
        ("/usr/lib/python3.11/json/decoder.py", True),
        ("<frozen importlib._bootstrap>", True),
        ("/app/node_modules/react-dom/cjs/react-dom.development.js", True),
        ("node:internal/errors", True),
        ("internal/modules/cjs/loader.js", True),
        ("/usr/local/go/src/runtime/panic.go", True),
        ("/Users/k1low/go/pkg/mod/github.com/spf13/cobra@v0.0.5/command.go", True),
        ("/rustc/f1edd0429582dd29cccacaf50fd134b05593bd9c/library/core/src/ops/function.rs", True),
        ("/var/www/site/vendor/laravel/framework/src/Illuminate/Pipeline/Pipeline.php", True),
        ("/home/the-tale/project/forum/views.py", False),
        ("/go/src/github.com/buildkite/publisher/main.go", False),  # GOPATH: the user's code
        ("src/main.rs", False),
    ],
)
def test_library_paths(raw: str, library: bool) -> None:
    assert is_library_path(raw) is library


# -- bounded and never raising --------------------------------------------------------------

_WORDS = (
    "the a parser index query returns wrong value when called with empty list config file "
    "cache retry timeout user session token expected actual result because error however "
    "should would line path module function class method argument"
).split()


def _prose(n_chars: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < n_chars:
        sentence = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 18))).capitalize()
        end = rng.choice([". ", "? ", ".\n", ".\n\n", ": ", ", and `x.y` "])
        out.append(sentence + end)
        size += len(sentence) + len(end)
    return "".join(out)[:n_chars]


def _best_time(text: str, runs: int = 3) -> float:
    """The least CPU time of a few runs (CPU time: other processes on a loaded machine
    do not count)."""
    best = float("inf")
    for _ in range(runs):
        t = time.process_time()
        analyse_report(text)
        best = min(best, time.process_time() - t)
    return best


@pytest.mark.timeout(60)
def test_large_report_linear_and_without_tracebacks() -> None:
    small, large = _prose(10_000), _prose(100_000)
    r = report(large)
    assert r.frames == () and r.errors == ()
    assert all(len(s) <= SEGMENT_CHARS for s in r.segments)
    assert sum(len(s) for s in r.segments) > 80_000  # the prose is all there
    # Growth ratio, not an absolute time (CONTRIBUTING: speed lives in bench/): ten times
    # the text may cost at most ten times the time, with test_scale's 1.8x slack.
    assert _best_time(large) <= 10 * 1.8 * _best_time(small) + 0.01


#: Inputs that make a backtracking pattern quadratic or worse, if any is.
_HOSTILE = [
    "a." * 1000,
    "[" * 2000,
    "<" * 2000,
    "'" * 2000,
    "`" * 2000,
    "at " * 700,
    "at (" * 500,
    'File "' * 400,
    "1:" * 1000,
    "x" * 2000 + ":1",
    "/" * 2000,
    "#0 " * 700,
    "\t" * 2000 + "x.go:1",
    "a/" * 1000 + "b",
    "Error" * 400,
    "a::" * 700,
    " (" * 1000,
    "http://" * 300,
    "![" * 1000,
    "thread 'm' panicked at '" + "', x" * 500,
    "Fatal error: x" + " in a.php" * 200,
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("unit", _HOSTILE, ids=range(len(_HOSTILE)))
def test_hostile_lines_stay_linear(unit: str) -> None:
    def text(n: int) -> str:  # n lines of the unit, and one line of n/5 units
        return "\n".join([unit] * n) + "\n" + unit * (n // 5)

    small, large = text(5), text(50)
    assert _best_time(large, 2) <= 10 * 1.8 * _best_time(small, 2) + 0.02


_TRACE_BLOCKS = [
    S.PYTHON_CHAINED,
    S.NODE_WINDOWS,
    S.JAVA_GLUED,
    S.GO,
    S.RUST_PANIC,
    S.RUBY,
    S.PHP,
    S.CSHARP_ASYNC,
]
_EXAMPLES = 400 if slow_run() else 60


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=3000))
def test_never_raises(text: str) -> None:
    r = analyse_report(text)
    if r is not None:
        assert all(f.line is None or f.line > 0 for f in r.frames)
        assert all(len(s) <= SEGMENT_CHARS for s in r.segments)


_SENTENCES = st.lists(st.sampled_from(_WORDS), min_size=3, max_size=12).map(
    lambda ws: " ".join(ws).capitalize() + "."
)


@settings(max_examples=_EXAMPLES, deadline=None)
@given(
    st.lists(
        st.one_of(_SENTENCES, st.sampled_from(range(len(_TRACE_BLOCKS)))),
        min_size=1,
        max_size=12,
    )
)
def test_segments_hold_only_prose(parts: list[str | int]) -> None:
    """Prose sentences and real tracebacks mixed: every traceback's frames are read, and
    the segments hold the prose words and nothing from a traceback."""
    text = "\n\n".join(p if isinstance(p, str) else _TRACE_BLOCKS[p] for p in parts)
    r = analyse_report(text)
    if r is None:
        return
    prose = {w.lower().strip(".") for p in parts if isinstance(p, str) for w in p.split()}
    for seg in r.segments:
        assert {w.lower().strip(".") for w in seg.split()} <= prose
    blocks = [p for p in parts if isinstance(p, int)]
    if blocks:
        assert r.frames and all(f.line is None or f.line > 0 for f in r.frames)
        assert max(f.trace for f in r.frames) + 1 >= len(set(blocks))


# -- the CLI: a report from stdin or a file ----------------------------------------------

ISSUE = """Retries never stop growing

The backoff before the next attempt keeps growing past the cap when `compute_backoff`
gets a large attempt number, and `RetryPolicy.call` sleeps for minutes.
"""


@pytest.fixture(scope="module")
def lexical_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The sample repository with a lexical index (no model: these tests are about input)."""
    from sample_repo import write_repo

    base = tmp_path_factory.mktemp("report-cli")
    repo = write_repo(base / "shop")
    env = {"SCRY_CACHE_DIR": str(base / "cache")}
    r = run_scry("index", "--no-embed", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    return repo, env


def _hits(stdout: str) -> list[tuple[str, int, float]]:
    return [(h["path"], h["start_line"], h["score"]) for h in json.loads(stdout)["hits"]]


@pytest.mark.slow
def test_query_from_stdin_and_file_searches_the_same_text(
    lexical_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, env = lexical_repo
    args = ("--json", "--no-sync", "-n", "5")
    direct = run_scry("search", ISSUE, *args, cwd=repo, env=env)
    assert direct.returncode == 0, direct.stderr
    assert _hits(direct.stdout)[0][0] == "app/retry.py"

    piped = run_scry("search", "-", *args, cwd=repo, env=env, input=ISSUE)
    assert piped.returncode == 0, piped.stderr
    assert _hits(piped.stdout) == _hits(direct.stdout)
    default = run_scry("-", *args, cwd=repo, env=env, input=ISSUE)  # search is the default
    assert _hits(default.stdout) == _hits(direct.stdout)

    issue = tmp_path / "issue.md"
    issue.write_text(ISSUE, encoding="utf-8")
    from_file = run_scry("search", "--query-file", str(issue), *args, cwd=repo, env=env)
    assert from_file.returncode == 0, from_file.stderr
    assert _hits(from_file.stdout) == _hits(direct.stdout)

    scoped = run_scry("--query-file", str(issue), "svc", *args, cwd=repo, env=env)  # PATH
    assert scoped.returncode == 0, scoped.stderr
    assert _hits(scoped.stdout) and all(p.startswith("svc/") for p, _, _ in _hits(scoped.stdout))


@pytest.mark.slow
def test_query_file_errors_are_one_line(
    lexical_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, env = lexical_repo
    binary = tmp_path / "shot.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("café crashes".encode("latin-1"))
    empty = tmp_path / "empty.md"
    empty.write_text(" \n\n", encoding="utf-8")
    issue = tmp_path / "issue.md"
    issue.write_text(ISSUE, encoding="utf-8")
    cases = [
        (["--query-file", str(tmp_path / "missing.md")], None, "no such query file"),
        (["--query-file", str(tmp_path)], None, "is a directory"),
        (["--query-file", str(binary)], None, "is not text"),
        (["--query-file", str(latin1)], None, "is not UTF-8 text"),
        (["--query-file", str(empty)], None, "empty query"),
        (["-"], "", "empty query"),
        (["-"], "\x00\x01binary", "from stdin is not text"),
        (["retries", "web", "--query-file", str(issue)], None, "not both"),
    ]
    for args, stdin, msg in cases:
        r = run_scry("search", *args, "--no-sync", cwd=repo, env=env, input=stdin)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert msg in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_search_help_shows_stdin_and_query_file() -> None:
    r = run_scry("search", "--help")
    assert r.returncode == 0
    assert "--query-file FILE" in r.stdout and "scry search -" in r.stdout
