"""Module- and class-level bindings in the symbol table (issue 42, row 3).

Constants, variables, fields and exported values are definitions an identifier query
should find first: per language, a real parse of a small file lists exactly the
bindings it makes at module and class level (never a local inside a function), as
symbol-only definitions (kinds ``constant``/``variable``) that never form a chunk of
their own. Then the whole way through: ``scry NAME --json`` on a small repository
whose ``signals.py`` is a module of assignments puts that module's chunk first.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import run_scry

from scrydb.chunk import chunk_file
from scrydb.chunk.specs import SYMBOL_ONLY_KINDS

Binding = tuple[str, str, int]  # (qualname, kind, line)


@dataclass
class BindingCase:
    lang: str
    path: str
    source: str
    bindings: list[Binding]

    @property
    def text(self) -> str:
        return textwrap.dedent(self.source).lstrip("\n")


CASES = [
    BindingCase(
        "python",
        "signals.py",
        """
        import os
        template_rendered = _signals.signal("template-rendered")
        MAX_RETRIES: int = 3
        a, b = 1, 2
        obj.attr = 1
        __all__ = ["template_rendered"]
        if TYPE_CHECKING:
            Alias = int
        try:
            HAS_UJSON = True
        except ImportError:
            HAS_UJSON = False


        class Config:
            name = "app"
            debug: bool
            __slots__ = ()

            def load(self):
                local = 1
                return local


        def build():
            inner = 2
            return inner
        """,
        [
            ("template_rendered", "variable", 2),
            ("MAX_RETRIES", "constant", 3),
            ("a", "variable", 4),
            ("b", "variable", 4),
            ("Alias", "variable", 8),
            ("HAS_UJSON", "constant", 10),
            ("HAS_UJSON", "constant", 12),
            ("Config.name", "variable", 16),
            ("Config.debug", "variable", 17),
        ],
    ),
    BindingCase(
        "javascript",
        "config.js",
        """
        const LIMIT = 3;
        let counter = 0, total;
        var legacy = true;
        export const apiBase = "/api";
        exports.version = "1.0";
        module.exports.mode = "strict";
        const { readFile } = require("fs");
        app.port = 8080;

        class Store {
          static MAX = 10;
          items = [];
          #secret = 1;
        }

        function handler() {
          const local = 1;
          return local;
        }
        """,
        [
            ("LIMIT", "constant", 1),
            ("counter", "variable", 2),
            ("total", "variable", 2),
            ("legacy", "variable", 3),
            ("apiBase", "constant", 4),
            ("version", "variable", 5),
            ("mode", "variable", 6),
            ("Store.MAX", "constant", 11),
            ("Store.items", "variable", 12),
            ("Store.secret", "variable", 13),
        ],
    ),
    BindingCase(
        "typescript",
        "env.ts",
        """
        export const DEFAULT_PORT: number = 8080;
        declare const VERSION: string;
        export let current: string | undefined;

        export class Server {
          private readonly host: string = "localhost";
          static instances = 0;

          start(): void {
            const local = 1;
          }
        }
        """,
        [
            ("DEFAULT_PORT", "constant", 1),
            ("VERSION", "constant", 2),
            ("current", "variable", 3),
            ("Server.host", "variable", 6),
            ("Server.instances", "variable", 7),
        ],
    ),
    BindingCase(
        "go",
        "errors.go",
        """
        package store

        const Limit = 10

        const (
            KindA = iota
            KindB
        )

        var ErrClosed = errors.New("closed")

        var (
            mu    sync.Mutex
            cache = map[string]int{}
        )

        var x, y = 1, 2

        func f() {
            var local = 1
            const lc = 2
            _ = local
        }
        """,
        [
            ("Limit", "constant", 3),
            ("KindA", "constant", 6),
            ("KindB", "constant", 7),
            ("ErrClosed", "variable", 10),
            ("mu", "variable", 13),
            ("cache", "variable", 14),
            ("x", "variable", 17),
            ("y", "variable", 17),
        ],
    ),
    BindingCase(
        "rust",
        "lib.rs",
        """
        pub const LIMIT: usize = 10;
        static NAME: &str = "store";

        impl Store {
            const CAPACITY: usize = 64;
        }
        """,
        [("LIMIT", "constant", 1), ("NAME", "constant", 2), ("Store.CAPACITY", "constant", 5)],
    ),
    BindingCase(
        "java",
        "Limits.java",
        """
        public class Limits {
            public static final int MAX = 3;
            private String name, owner = "x";

            void run() {
                int local = 1;
            }
        }

        interface Codes {
            int OK = 0;
        }
        """,
        [
            ("Limits.MAX", "constant", 2),
            ("Limits.name", "variable", 3),
            ("Limits.owner", "variable", 3),
            ("Codes.OK", "constant", 11),
        ],
    ),
    BindingCase(
        "csharp",
        "Limits.cs",
        """
        public class Limits
        {
            public const int Max = 3;
            private static readonly string Name = "x";
            private int _count;

            void Run() { int local = 1; }
        }
        """,
        [
            ("Limits.Max", "constant", 3),
            ("Limits.Name", "constant", 4),
            ("Limits._count", "variable", 5),
        ],
    ),
    BindingCase(
        "kotlin",
        "Limits.kt",
        """
        const val MAX = 3
        val defaultName = "app"

        class Limits {
            var count: Int = 0

            fun run() {
                val local = 1
            }
        }
        """,
        [
            ("MAX", "constant", 1),
            ("defaultName", "variable", 2),
            ("Limits.count", "variable", 5),
        ],
    ),
    BindingCase(
        "ruby",
        "version.rb",
        """
        MAX = 3
        module Shop
          VERSION = "1.0"
          class Cart
            LIMIT = 5
            def add(item)
              count = 1
            end
          end
        end
        """,
        [
            ("MAX", "constant", 1),
            ("Shop.VERSION", "constant", 3),
            ("Shop.Cart.LIMIT", "constant", 5),
        ],
    ),
    BindingCase(
        "php",
        "Limits.php",
        """
        <?php
        const MAX = 3;
        class Limits {
            const A = 1, B = 2;
            public $name = "x";
            function run() { $local = 1; }
        }
        """,
        [
            ("MAX", "constant", 2),
            ("Limits.A", "constant", 4),
            ("Limits.B", "constant", 4),
            ("Limits.name", "variable", 5),
        ],
    ),
    BindingCase(
        "c",
        "limits.c",
        """
        #define MAX_ITEMS 64
        static const int limit = 3;
        int counter;
        char *names[] = {"a"};
        int (*handler)(int);
        int prototype(void);
        void run(void) { int local = 1; }
        """,
        [
            ("limit", "constant", 2),
            ("counter", "variable", 3),
            ("names", "variable", 4),
            ("handler", "variable", 5),
        ],
    ),
    BindingCase(
        "cpp",
        "limits.cpp",
        """
        namespace net {
        constexpr int kMax = 3;
        std::string host = "localhost";
        }
        """,
        [("net.kMax", "constant", 2), ("net.host", "variable", 3)],
    ),
    BindingCase(
        "swift",
        "Limits.swift",
        """
        let maxRetries = 3
        class Cache {
            var store: [String: Int] = [:]
            func get() { let local = 1 }
        }
        """,
        [("maxRetries", "constant", 1), ("Cache.store", "variable", 3)],
    ),
    BindingCase(
        "scala",
        "Limits.scala",
        """
        object Limits {
          val Max = 3
          var count: Int = 0
          def f(): Int = { val local = 1; local }
        }
        """,
        [("Limits.Max", "constant", 2), ("Limits.count", "variable", 3)],
    ),
    BindingCase(
        "bash",
        "env.sh",
        """
        LOG_DIR=/var/log/app
        export APP_HOME=/opt/app
        setup() {
          local inner=1
          other=2
        }
        """,
        [("LOG_DIR", "constant", 1), ("APP_HOME", "constant", 2)],
    ),
]


def _bindings(lang: str, path: str, text: str) -> list[Binding]:
    chunks = chunk_file(path, text, lang)
    return [
        (d.qualname, d.kind, d.line) for c in chunks for d in c.defs if d.kind in SYMBOL_ONLY_KINDS
    ]


@pytest.mark.parametrize("case", CASES, ids=[c.lang for c in CASES])
def test_module_and_class_level_bindings_are_symbols(case: BindingCase) -> None:
    """Exactly the module- and class-level bindings, with their kind and line; no local
    of a function, no attribute or destructuring target, no dunder."""
    assert _bindings(case.lang, case.path, case.text) == case.bindings


def test_bindings_never_form_a_chunk_nor_a_scope() -> None:
    """A module of assignments is one ``code`` chunk holding every binding; a method in
    an object bound to a name is ``api.list`` (the binding is no scope)."""
    text = "\n".join(f'signal_{i} = _signals.signal("signal-{i}")' for i in range(12)) + "\n"
    chunks = chunk_file("signals.py", text, "python")
    assert [(c.kind, c.symbol) for c in chunks] == [("code", None)]
    assert [d.qualname for d in chunks[0].defs] == [f"signal_{i}" for i in range(12)]
    js = "const api = {\n  list() {\n    return [];\n  },\n};\n"
    defs = [(d.qualname, d.kind) for c in chunk_file("a.js", js, "javascript") for d in c.defs]
    assert defs == [("api", "constant"), ("api.list", "method")]


SIGNALS_PY = """\
from __future__ import annotations

from blinker import Namespace

# Signals sent by the framework itself; applications make their own namespace.
_signals = Namespace()

template_rendered = _signals.signal("template-rendered")
before_render_template = _signals.signal("before-render-template")
request_started = _signals.signal("request-started")
request_finished = _signals.signal("request-finished")
got_request_exception = _signals.signal("got-request-exception")
message_flashed = _signals.signal("message-flashed")
"""

TEMPLATING_PY = '''\
from __future__ import annotations

from .signals import before_render_template
from .signals import template_rendered


def _render(app, template, context):
    """Render a template with the context, sending the signals around it."""
    app.update_template_context(context)
    before_render_template.send(app, template=template, context=context)
    rv = template.render(context)
    template_rendered.send(app, template=template, context=context)
    return rv


def stream_template(template_name_or_list, **context):
    """Render a template as a stream; template_rendered is sent when it finishes."""
    app = current_app()
    template = app.jinja_env.get_or_select_template(template_name_or_list)
    def generate():
        yield from template.generate(context)
        template_rendered.send(app, template=template, context=context)
    return generate()
'''

APP_PY = '''\
from __future__ import annotations

from .signals import request_finished
from .signals import request_started


class App:
    """The application object: dispatches requests and sends the request signals."""

    def full_dispatch_request(self):
        """Dispatch the request, with request_started before and request_finished after."""
        request_started.send(self)
        rv = self.preprocess_request()
        if rv is None:
            rv = self.dispatch_request()
        return self.finalize_request(rv)

    def finalize_request(self, rv):
        """Turn the view's return value into a response and send request_finished."""
        response = self.make_response(rv)
        request_finished.send(self, response=response)
        return response
'''

HELPERS_PY = '''\
from __future__ import annotations

from .signals import message_flashed


def flash(message, category="message"):
    """Flash a message to the next request; sends message_flashed."""
    flashes = session.get("_flashes", [])
    flashes.append((category, message))
    session["_flashes"] = flashes
    message_flashed.send(current_app(), message=message, category=category)
'''

TEST_SIGNALS_PY = """\
from flaskish.signals import message_flashed
from flaskish.signals import request_started
from flaskish.signals import template_rendered


def test_template_rendered(app, client):
    recorded = []
    template_rendered.connect(lambda sender, template, context: recorded.append(template), app)
    client.get("/")
    assert len(recorded) == 1


def test_request_started(app, client):
    calls = []
    request_started.connect(lambda sender: calls.append(sender), app)
    client.get("/")
    assert calls == [app]


def test_message_flashed(app, client):
    recorded = []
    message_flashed.connect(lambda sender, message, category: recorded.append(message), app)
    client.get("/flash")
    assert recorded == ["hello"]
"""


@pytest.mark.slow
def test_identifier_query_finds_a_module_level_assignment_first(tmp_path: Path) -> None:
    """Issue 42: ``scry template_rendered`` (and ``request_started``, ``message_flashed``)
    ranked the uses above ``signals.py``, where the name is assigned; with module-level
    assignments in the symbol table the definition comes first, anchored at its line."""
    repo = tmp_path / "flaskish"
    pkg = repo / "src" / "flaskish"
    pkg.mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / ".scry.toml").write_text("", encoding="utf-8")
    for name, text in (
        ("signals.py", SIGNALS_PY),
        ("templating.py", TEMPLATING_PY),
        ("app.py", APP_PY),
        ("helpers.py", HELPERS_PY),
    ):
        (pkg / name).write_text(text, encoding="utf-8")
    (repo / "tests" / "test_signals.py").write_text(TEST_SIGNALS_PY, encoding="utf-8")
    env = {"SCRY_CACHE_DIR": str(tmp_path / "cache")}
    r = run_scry("index", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    lines = SIGNALS_PY.split("\n")
    for name in ("template_rendered", "request_started", "message_flashed"):
        r = run_scry(name, "--json", "-n", "5", cwd=repo, env=env)
        assert r.returncode == 0, r.stderr
        hits = json.loads(r.stdout)["hits"]
        top = hits[0]
        assert top["path"] == "src/flaskish/signals.py", (name, hits)
        assert lines[top["anchor_line"] - 1].startswith(f"{name} = "), (name, top)


def test_class_fields_are_symbols_but_not_in_the_lexical_symbol_column() -> None:
    # A class's fields are found by identifier queries through the symbol table, but
    # the BM25 symbol column (weight 4) names what a chunk is about: fields there lifted
    # class chunks over the function a question asked for (evals/RESULTS.md, 7 December).
    src = textwrap.dedent(
        '''\
        TIMEOUT = 3


        class RpcError(Exception):
            """An error with a code."""

            code = "INTERNAL"
            cause = None

            def describe(self):
                return f"{self.code}: {self.cause}"
        '''
    )
    chunks = chunk_file("errors.py", src, "python")
    defs = {d.qualname for c in chunks for d in c.defs}
    assert {"TIMEOUT", "RpcError.code", "RpcError.cause"} <= defs
    names = [n for c in chunks for n in c.index_names()]
    assert "TIMEOUT" in names and "RpcError" in names
    assert "RpcError.code" not in names and "RpcError.cause" not in names
