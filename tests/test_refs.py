"""Tests for the references the chunker extracts (scrydb.chunk.refs): real tree-sitter
parses, no mocks.

Per language a small realistic file and, read off its source by hand, the exact
references it makes in order (name, kind, qualifier, module, alias by line), then which
chunk holds which (a call through ``self``, a call inside a nested function, the same
method name in two classes), the rules every reference keeps (inside its chunk's
lines, its column pointing at its name), and the chunker's contract on hostile input.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, replace

import pytest
from test_chunk import PATHOLOGICAL, ROBUST_LANGS, _random_text, check_invariants

import scrydb.chunk.refs as refs_mod
import scrydb.chunk.reftext as reftext
from scrydb.chunk import CHUNKER_VERSION, Chunk, Ref, chunk_file
from scrydb.chunk import assemble as asm
from scrydb.chunk.code import compiled_query, group_query
from scrydb.chunk.records import REF_KINDS
from scrydb.chunk.specs import SPECS

#: (line, kind, name, qualifier, module, alias) with the trailing Nones left off.
Row = tuple[object, ...]


def row(r: Ref) -> Row:
    full = (r.line, r.kind, r.name, r.qualifier, r.module, r.alias)
    n = len(full)
    while full[n - 1] is None:
        n -= 1
    return full[:n]


def all_refs(chunks: list[Chunk]) -> list[Ref]:
    return [r for c in chunks for r in c.refs]


def check_refs(text: str, chunks: list[Chunk]) -> None:
    """Every reference lies in its chunk's lines, in source order, its column at its
    name (an import at its name, its alias, ``self``, Scala's ``_`` or the quoted
    path)."""
    lines = text.split("\n")
    for c in chunks:
        assert len(c.refs) <= refs_mod.MAX_REFS_PER_CHUNK
        prev = (0, 0)
        for r in c.refs:
            assert c.start_line <= r.line <= c.end_line, (r, c.start_line, c.end_line)
            assert (r.line, r.column) > prev, "refs out of order or twice at one place"
            prev = (r.line, r.column)
            assert r.kind in REF_KINDS and r.name
            at = lines[r.line - 1][r.column - 1 :]
            if r.kind == "import":
                starts = (r.name, r.alias or r.name, "self", "_", '"', "'", "<", "`")
                assert at.startswith(starts), (r, at[:30])
            else:
                assert at.startswith(r.name.rstrip("!")), (r, at[:30])
            assert r.module is None or r.kind == "import"
            assert r.alias is None or r.kind == "import"


@dataclass
class Case:
    lang: str
    path: str
    source: str
    refs: list[Row]

    @property
    def text(self) -> str:
        return textwrap.dedent(self.source).lstrip("\n")


CASES = [
    Case(
        "python",
        "client.py",
        '''
        """Client."""

        import os.path as osp
        from collections import OrderedDict as OD, deque
        from . import util
        from ..pkg.base import Base, Mixin


        class Client(Base, Mixin):
            """A client."""

            def send(self, data: bytes) -> Response:
                self.log(data)
                payload = util.encode(data).strip()
                return Response(payload)

            def log(self, msg):
                def inner(x):
                    return osp.join(x, "log")
                print(inner(msg))


        class Server:
            def send(self, data):
                return self.transport.send(data)


        @register
        def main(argv: list[str]) -> None:
            Client().send(b"x")
        ''',
        [
            (3, "import", "path", None, "os.path", "osp"),
            (4, "import", "OrderedDict", None, "collections", "OD"),
            (4, "import", "deque", None, "collections"),
            (5, "import", "util", None, "."),
            (6, "import", "Base", None, "..pkg.base"),
            (6, "import", "Mixin", None, "..pkg.base"),
            (9, "inherit", "Base"),
            (9, "inherit", "Mixin"),
            (12, "type", "Response"),
            (13, "call", "log", "self"),
            (14, "call", "encode", "util"),
            (14, "call", "strip", "util.encode()"),
            (15, "call", "Response"),
            (19, "call", "join", "osp"),
            (20, "call", "print"),
            (20, "call", "inner"),
            (25, "call", "send", "self.transport"),
            (28, "decorator", "register"),
            (30, "call", "Client"),
            (30, "call", "send", "Client()"),
        ],
    ),
    Case(
        "javascript",
        "app.js",
        """
        import React, { useState as useS } from "react";
        import * as path from "node:path";
        const { join } = require("./util.js");

        class Widget extends Base {
          render() {
            this.draw();
            return new Frame(path.resolve("x"));
          }
        }

        class Panel extends ui.Box {
          render() {
            return items.filter(ok).map(toLabel);
          }
        }

        export function start() {
          function tick() {
            return schedule(tick);
          }
          new Widget().render();
        }
        """,
        [
            (1, "import", "default", None, "react", "React"),
            (1, "import", "useState", None, "react", "useS"),
            (2, "import", "*", None, "node:path", "path"),
            (3, "import", "join", None, "./util.js"),
            (3, "import", "util", None, "./util.js"),
            (5, "inherit", "Base"),
            (7, "call", "draw", "this"),
            (8, "call", "Frame"),
            (8, "call", "resolve", "path"),
            (12, "inherit", "Box", "ui"),
            (14, "call", "filter", "items"),
            (14, "call", "map", "items.filter()"),
            (20, "call", "schedule"),
            (22, "call", "Widget"),
            (22, "call", "render", "new Widget()"),
        ],
    ),
    Case(
        "typescript",
        "users.ts",
        """
        import { Injectable } from "@angular/core";
        import type { User } from "./models";

        @Injectable()
        export class UserService extends BaseService implements OnInit {
          private cache: Map<string, User>;

          load(id: string): Promise<User> {
            return this.http.get<User>(`/users/${id}`);
          }
        }
        """,
        [
            (1, "import", "Injectable", None, "@angular/core"),
            (2, "import", "User", None, "./models"),
            (4, "decorator", "Injectable"),
            (5, "inherit", "BaseService"),
            (5, "inherit", "OnInit"),
            (6, "type", "Map"),
            (6, "type", "User"),
            (8, "type", "Promise"),
            (8, "type", "User"),
            (9, "call", "get", "this.http"),
            (9, "type", "User"),
        ],
    ),
    Case(
        "tsx",
        "App.tsx",
        """
        import { Button } from "./Button";

        export function App(props: AppProps) {
          const [n, setN] = useState(0);
          return <Button onClick={() => setN(n + 1)} label={format(n)} />;
        }
        """,
        [
            (1, "import", "Button", None, "./Button"),
            (3, "type", "AppProps"),
            (4, "call", "useState"),
            (5, "call", "setN"),
            (5, "call", "format"),
        ],
    ),
    Case(
        "go",
        "server.go",
        """
        package server

        import (
        \t"fmt"
        \tlog "github.com/sirupsen/logrus"
        )

        type Server struct {
        \tBase
        \t*http.Client
        \tname string
        }

        func (s *Server) Start(port int) error {
        \ts.listen(port)
        \tlog.Info("start")
        \treturn fmt.Errorf("x: %w", NewErr().Wrap())
        }

        func (c *Client) Start() {
        \tgo func() {
        \t\tc.run()
        \t}()
        }
        """,
        [
            (4, "import", "fmt", None, "fmt"),
            (5, "import", "logrus", None, "github.com/sirupsen/logrus", "log"),
            (9, "inherit", "Base"),
            (10, "inherit", "Client", "http"),
            (14, "type", "Server"),
            (15, "call", "listen", "s"),
            (16, "call", "Info", "log"),
            (17, "call", "Errorf", "fmt"),
            (17, "call", "NewErr"),
            (17, "call", "Wrap", "NewErr()"),
            (20, "type", "Client"),
            (22, "call", "run", "c"),
        ],
    ),
    Case(
        "rust",
        "pool.rs",
        """
        use std::collections::HashMap;
        use crate::net::{self, Conn as Connection};

        #[derive(Debug, Clone)]
        pub struct Pool {
            conns: HashMap<String, Connection>,
        }

        impl Default for Pool {
            fn default() -> Self {
                Pool::new()
            }
        }

        impl Pool {
            pub fn new() -> Self {
                let map = HashMap::new();
                println!("new pool");
                Pool { conns: map }
            }

            pub fn get(&self, key: &str) -> Option<&Connection> {
                self.conns.get(key).map(|c| net::check(c)).flatten()
            }
        }
        """,
        [
            (1, "import", "HashMap", None, "std::collections"),
            (2, "import", "net", None, "crate"),
            (2, "import", "Conn", None, "crate::net", "Connection"),
            (4, "inherit", "Debug"),
            (4, "inherit", "Clone"),
            (6, "type", "HashMap"),
            (6, "type", "Connection"),
            (9, "inherit", "Default"),
            (11, "call", "new", "Pool"),
            (17, "call", "new", "HashMap"),
            (18, "call", "println!"),
            (19, "type", "Pool"),
            (22, "type", "Option"),
            (22, "type", "Connection"),
            (23, "call", "get", "self.conns"),
            (23, "call", "map", "self.conns.get()"),
            (23, "call", "check", "net"),
            (23, "call", "flatten", "self.conns.get().map()"),
        ],
    ),
    Case(
        "java",
        "UserRepo.java",
        """
        package app;

        import java.util.List;
        import static java.util.Objects.requireNonNull;

        @Repository
        public class UserRepo extends BaseRepo<User> implements Repo, java.io.Closeable {
            private final Db db;

            public List<User> all(Query q) {
                requireNonNull(q);
                this.db.open();
                return db.query(q).rows().stream().map(User::new).toList();
            }

            public void close() {
                new Cleaner(db).run();
            }
        }
        """,
        [
            (3, "import", "List", None, "java.util"),
            (4, "import", "requireNonNull", None, "java.util.Objects"),
            (6, "decorator", "Repository"),
            (7, "inherit", "BaseRepo"),
            (7, "type", "User"),
            (7, "inherit", "Repo"),
            (7, "inherit", "Closeable", "java.io"),
            (8, "type", "Db"),
            (10, "type", "List"),
            (10, "type", "User"),
            (10, "type", "Query"),
            (11, "call", "requireNonNull"),
            (12, "call", "open", "this.db"),
            (13, "call", "query", "db"),
            (13, "call", "rows", "db.query()"),
            (13, "call", "stream", "db.query().rows()"),
            (13, "call", "map", "db.query().rows().stream()"),
            (13, "call", "toList", "db.query().rows().stream().map()"),
            (17, "call", "Cleaner"),
            (17, "call", "run", "new Cleaner()"),
        ],
    ),
    Case(
        "csharp",
        "OrderService.cs",
        """
        using System.Linq;
        using Log = Serilog.Log;

        namespace App
        {
            [Service]
            public class OrderService : BaseService, IOrders
            {
                private readonly IRepo repo;

                public Order Find(int id)
                {
                    Log.Information("find");
                    return this.repo.Get<Order>(id) ?? new Order();
                }
            }
        }
        """,
        [
            (1, "import", "Linq", None, "System.Linq"),
            (2, "import", "Log", None, "Serilog"),
            (6, "decorator", "Service"),
            (7, "inherit", "BaseService"),
            (7, "inherit", "IOrders"),
            (9, "type", "IRepo"),
            (11, "type", "Order"),
            (13, "call", "Information", "Log"),
            (14, "call", "Get", "this.repo"),
            (14, "type", "Order"),
            (14, "call", "Order"),
        ],
    ),
    Case(
        "c",
        "buf.c",
        """
        #include <stdlib.h>
        #include "buf.h"

        struct buf {
            char *data;
            size_t len;
            alloc_fn alloc;
        };

        static struct buf *buf_new(size_t cap, alloc_fn alloc) {
            struct buf *b = alloc(sizeof(struct buf));
            b->data = malloc(cap);
            b->alloc = alloc;
            buf_reset(b);
            return b;
        }

        void buf_free(struct buf *b) {
            b->alloc->release(b->data);
        }
        """,
        [
            (1, "import", "stdlib.h", None, "stdlib.h"),
            (2, "import", "buf.h", None, "buf.h"),
            (7, "type", "alloc_fn"),
            (10, "type", "buf"),
            (10, "type", "alloc_fn"),
            (11, "type", "buf"),
            (11, "call", "alloc"),
            (12, "call", "malloc"),
            (14, "call", "buf_reset"),
            (18, "type", "buf"),
            (19, "call", "release", "b->alloc"),
        ],
    ),
    Case(
        "cpp",
        "button.cpp",
        """
        #include "widget.h"
        #include <memory>

        namespace ui {

        class Button : public Widget, private detail::Clickable {
        public:
            void draw(Canvas &canvas) override {
                this->layout();
                canvas.fill(color_);
                auto p = std::make_unique<Painter>(canvas);
                p->paint();
            }
        };

        void Label::draw(Canvas &canvas) {
            Widget::draw(canvas);
        }

        }  // namespace ui
        """,
        [
            (1, "import", "widget.h", None, "widget.h"),
            (2, "import", "memory", None, "memory"),
            (6, "inherit", "Widget"),
            (6, "inherit", "Clickable", "detail"),
            (8, "type", "Canvas"),
            (9, "call", "layout", "this"),
            (10, "call", "fill", "canvas"),
            (11, "call", "make_unique", "std"),
            (12, "call", "paint", "p"),
            (16, "type", "Canvas"),
            (17, "call", "draw", "Widget"),
        ],
    ),
    Case(
        "ruby",
        "shop.rb",
        """
        require "json"
        require_relative "models/cart"

        class Shop < Base::Store
          include Comparable

          def checkout(cart)
            total = cart.items.sum(&:price)
            self.log(total)
            Receipt.new(total).to_json
          end
        end
        """,
        [
            (1, "import", "json", None, "json"),
            (2, "import", "cart", None, "./models/cart"),
            (4, "inherit", "Store", "Base"),
            (5, "inherit", "Comparable"),
            (8, "call", "items", "cart"),
            (8, "call", "sum", "cart.items"),
            (9, "call", "log", "self"),
            (10, "call", "new", "Receipt"),
            (10, "call", "to_json", "Receipt.new()"),
        ],
    ),
    Case(
        "php",
        "UserController.php",
        """
        <?php
        namespace App\\Http;

        use App\\Models\\User;
        use Foo\\Bar as Baz;

        #[Route("/users")]
        class UserController extends Controller implements Jsonable
        {
            public function show(Request $r): User
            {
                $this->authorize($r);
                $u = User::find(1);
                return new UserResource(helper($u));
            }
        }
        """,
        [
            (4, "import", "User", None, "App\\Models"),
            (5, "import", "Bar", None, "Foo", "Baz"),
            (7, "decorator", "Route"),
            (8, "inherit", "Controller"),
            (8, "inherit", "Jsonable"),
            (10, "type", "Request"),
            (10, "type", "User"),
            (12, "call", "authorize", "$this"),
            (13, "call", "find", "User"),
            (14, "call", "UserResource"),
            (14, "call", "helper"),
        ],
    ),
    Case(
        "kotlin",
        "Repo.kt",
        """
        package app

        import kotlinx.coroutines.launch
        import java.io.File as JFile

        @Serializable
        class Repo(private val db: Db) : Base(), Closeable {
            fun load(id: Int, opts: Map<String, io.Opts>): User? {
                this.check(id)
                val u = db.query(id).first()
                return User(u)
            }
        }
        """,
        [
            (3, "import", "launch", None, "kotlinx.coroutines"),
            (4, "import", "File", None, "java.io", "JFile"),
            (6, "decorator", "Serializable"),
            (7, "type", "Db"),
            (7, "inherit", "Base"),
            (7, "inherit", "Closeable"),
            (8, "type", "Map"),
            (8, "type", "Opts", "io"),
            (8, "type", "User"),
            (9, "call", "check", "this"),
            (10, "call", "query", "db"),
            (10, "call", "first", "db.query()"),
            (11, "call", "User"),
        ],
    ),
    Case(
        "swift",
        "Repo.swift",
        """
        import Foundation

        @MainActor
        class Repo: Base, Codable {
            func load(id: Int, tags: [String: Tag.Kind]) -> User? {
                self.check(id)
                let u = db.query(id).first()
                return User(u)
            }
        }
        """,
        [
            (1, "import", "Foundation", None, "Foundation"),
            (3, "decorator", "MainActor"),
            (4, "inherit", "Base"),
            (4, "inherit", "Codable"),
            (5, "type", "Kind", "Tag"),
            (5, "type", "User"),
            (6, "call", "check", "self"),
            (7, "call", "query", "db"),
            (7, "call", "first", "db.query()"),
            (8, "call", "User"),
        ],
    ),
    Case(
        "scala",
        "Repo.scala",
        """
        import scala.collection.mutable
        import app.model.{User, Tag => Label, _}

        @deprecated
        class Repo(db: Db) extends Base with io.Closeable {
          def load(id: Int): User = {
            this.check(id)
            val u = db.query(id).head
            new Cache(u)
            User(u)
          }
        }
        """,
        [
            (1, "import", "mutable", None, "scala.collection"),
            (2, "import", "User", None, "app.model"),
            (2, "import", "Tag", None, "app.model", "Label"),
            (2, "import", "*", None, "app.model"),
            (4, "decorator", "deprecated"),
            (5, "type", "Db"),
            (5, "inherit", "Base"),
            (5, "inherit", "Closeable", "io"),
            (6, "type", "User"),
            (7, "call", "check", "this"),
            (8, "call", "query", "db"),
            (9, "call", "Cache"),
            (10, "call", "User"),
        ],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.lang for c in CASES])
def test_language_refs(case: Case) -> None:
    chunks = chunk_file(case.path, case.text, case.lang)
    check_invariants(case.text, chunks)
    check_refs(case.text, chunks)
    assert [row(r) for r in all_refs(chunks)] == case.refs


@pytest.mark.parametrize("case", CASES, ids=[c.lang for c in CASES])
def test_refs_follow_their_lines_into_small_chunks(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At limits that split classes member by member, the same references, each in
    the chunk that holds its line."""
    monkeypatch.setattr(asm, "MAX_CHUNK_BYTES", 120)
    monkeypatch.setattr(asm, "TARGET_CHUNK_BYTES", 60)
    chunks = chunk_file(case.path, case.text, case.lang)
    check_invariants(case.text, chunks)
    check_refs(case.text, chunks)
    assert [row(r) for r in all_refs(chunks)] == case.refs


def _chunk_defining(chunks: list[Chunk], qualname: str) -> Chunk:
    found = [c for c in chunks if any(d.qualname == qualname for d in c.defs)]
    assert len(found) == 1, qualname
    return found[0]


def test_same_method_name_in_two_classes_self_calls_and_nested_functions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(asm, "MAX_CHUNK_BYTES", 120)
    monkeypatch.setattr(asm, "TARGET_CHUNK_BYTES", 60)
    case = CASES[0]
    chunks = chunk_file(case.path, case.text, case.lang)
    client_send = _chunk_defining(chunks, "Client.send")
    server_send = _chunk_defining(chunks, "Server.send")
    assert client_send is not server_send
    in_client = [row(r) for r in client_send.refs]
    in_server = [row(r) for r in server_send.refs]
    client_calls = [(13, "call", "log", "self"), (14, "call", "encode", "util")]
    server_call = (25, "call", "send", "self.transport")
    assert set(client_calls) <= set(in_client) and server_call not in in_client
    assert server_call in in_server and not set(client_calls) & set(in_server)
    # A call inside a nested function belongs to the chunk holding its line.
    log = _chunk_defining(chunks, "Client.log")
    assert (19, "call", "join", "osp") in [row(r) for r in log.refs]
    # No definition's own name is a reference.
    defined = {(d.line, d.name) for c in chunks for d in c.defs}
    assert not defined & {(r.line, r.name) for r in all_refs(chunks)}


def test_js_methods_of_the_same_name_and_a_nested_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(asm, "MAX_CHUNK_BYTES", 120)
    monkeypatch.setattr(asm, "TARGET_CHUNK_BYTES", 60)
    case = CASES[1]
    chunks = chunk_file(case.path, case.text, case.lang)
    widget = _chunk_defining(chunks, "Widget.render")
    panel = _chunk_defining(chunks, "Panel.render")
    assert widget is not panel
    assert ("call", "draw", "this") in [(r.kind, r.name, r.qualifier) for r in widget.refs]
    assert ("call", "map", "items.filter()") in [(r.kind, r.name, r.qualifier) for r in panel.refs]
    start = _chunk_defining(chunks, "start")
    assert (20, "call", "schedule") in [row(r) for r in start.refs]


def test_columns_count_characters() -> None:
    text = 'def f():\n    "é".join(ümlaut()).strip()\n    a.b().c()\n'
    refs = all_refs(chunk_file("u.py", text, "python"))
    assert [(r.name, r.line, r.column, r.qualifier) for r in refs] == [
        ("join", 2, 9, '""'),
        ("ümlaut", 2, 14, None),
        ("strip", 2, 24, '"".join()'),
        ("b", 3, 7, "a"),
        ("c", 3, 11, "a.b()"),
    ]


def test_qualifiers_as_written() -> None:
    text = textwrap.dedent(
        """\
        def f():
            (Builder()
                .with_x(1)
                .build())
            table[key].update(x)
            ", ".join(parts)
            fetch(url, lambda r: (r.ok, {"a": 1})).then(done)
        """
    )
    refs = all_refs(chunk_file("q.py", text, "python"))
    assert [(r.name, r.qualifier) for r in refs] == [
        ("Builder", None),
        ("with_x", "Builder()"),
        ("build", "Builder().with_x()"),
        ("update", "table[]"),
        ("join", '""'),
        ("fetch", None),
        ("then", "fetch()"),
    ]
    long_receiver = "def g():\n    " + "x" * 300 + ".go()\n"
    (ref,) = all_refs(chunk_file("q.py", long_receiver, "python"))
    assert ref.name == "go" and ref.qualifier is not None
    assert ref.qualifier.startswith("…") and len(ref.qualifier) <= reftext.MAX_QUALIFIER + 1
    # Only the tail of a long receiver is read: what follows its last unmatched bracket.
    js = "f(function () {\n" + "  step();\n" * 60 + "}).then(done);\n"
    then = [r for r in all_refs(chunk_file("q.js", js, "javascript")) if r.name == "then"]
    assert [r.qualifier for r in then] == ["…()"]


def test_import_forms() -> None:
    cases = {
        ("python", "from a.b import c as d\nimport x.y.z\nfrom .. import up\n"): [
            (1, "import", "c", None, "a.b", "d"),
            (2, "import", "z", None, "x.y.z"),
            (3, "import", "up", None, ".."),
        ],
        ("go", 'package p\nimport (\n\t"gopkg.in/yaml.v3"\n\t. "lib/dot"\n)\n'): [
            (3, "import", "yaml", None, "gopkg.in/yaml.v3"),
            (4, "import", "dot", None, "lib/dot", "."),
        ],
        ("rust", "use a::{b::{c, d as e}, f};\nuse ::serde;\nuse g::*;\n"): [
            (1, "import", "c", None, "a::b"),
            (1, "import", "d", None, "a::b", "e"),
            (1, "import", "f", None, "a"),
            (2, "import", "serde"),
            (3, "import", "*", None, "g"),
        ],
        ("java", "import a.b.*;\nimport c.D;\nclass X {}\n"): [
            (1, "import", "*", None, "a.b"),
            (2, "import", "D", None, "c"),
        ],
        ("typescript", 'import fs = require("fs");\nexport { a as b } from "./c";\n'): [
            (1, "import", "fs", None, "fs"),
            (2, "import", "a", None, "./c", "b"),
        ],
        ("cpp", "using namespace std;\nusing foo::Bar;\nint x;\n"): [
            (1, "import", "std", None, "std"),
            (2, "import", "Bar", None, "foo"),
        ],
    }
    for (lang, text), want in cases.items():
        chunks = chunk_file("f", text, lang)
        check_refs(text, chunks)
        assert [row(r) for r in all_refs(chunks)] == want, lang


def test_macros_and_paths() -> None:
    text = "fn f() {\n    tokio::select! {}\n    a::b::c::<u8>(1);\n    vec![1];\n}\n"
    refs = all_refs(chunk_file("m.rs", text, "rust"))
    assert [row(r) for r in refs] == [
        (2, "call", "select!", "tokio"),
        (3, "call", "c", "a::b"),
        (4, "call", "vec!"),
    ]


def test_builtin_types_are_left_out() -> None:
    py = "def f(a: int, b: str, c: Path) -> dict[str, Node]:\n    pass\n"
    assert [r.name for r in all_refs(chunk_file("t.py", py, "python"))] == ["Path", "Node"]
    go = "package p\nfunc f(a int, b string, c Conn) error { return nil }\n"
    assert [r.name for r in all_refs(chunk_file("t.go", go, "go"))] == ["Conn"]


def test_refs_are_capped_per_chunk() -> None:
    text = "def f():\n    " + "; ".join(f"g{i}()" for i in range(3000)) + "\n"
    chunks = chunk_file("big.py", text, "python")
    assert sum(len(c.refs) for c in chunks) == refs_mod.MAX_REFS_PER_CHUNK
    check_refs(text, chunks)


def test_refs_past_the_deadline_keep_the_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Extraction that runs out of time stops; the chunks stay tree-sitter chunks."""
    case = CASES[0]
    whole = chunk_file(case.path, case.text, case.lang)

    monkeypatch.setattr(refs_mod, "budget_clock", lambda: float("inf"))
    late = chunk_file(case.path, case.text, case.lang)
    assert [(c.start_line, c.end_line, c.kind, c.symbol) for c in late] == [
        (c.start_line, c.end_line, c.kind, c.symbol) for c in whole
    ]
    assert all_refs(late) == []


def test_refs_are_frozen_values() -> None:
    (chunk,) = chunk_file("v.py", "def f():\n    g.h()\n", "python")
    (ref,) = chunk.refs
    assert ref == Ref("h", "call", 2, 7, "g") == replace(ref)
    assert hash(ref) == hash(Ref("h", "call", 2, 7, "g"))
    with pytest.raises(AttributeError):
        ref.name = "x"  # type: ignore[misc]


def test_every_language_with_refs_compiles_and_is_tested() -> None:
    for spec in SPECS.values():
        compiled_query(spec)  # raises on an unknown node type or field
        group_query(spec)
    tested = {c.lang for c in CASES}
    with_refs = {lang for lang, spec in SPECS.items() if spec.refs.strip()}
    assert tested <= with_refs
    assert {"python", "javascript", "typescript", "tsx", "go", "rust", "java"} <= tested
    assert {"c", "cpp", "csharp", "ruby", "php", "kotlin", "swift", "scala"} <= tested


def test_chunker_version_counts_refs() -> None:
    assert int(CHUNKER_VERSION) >= 7


@pytest.mark.parametrize("lang", ROBUST_LANGS)
def test_hostile_inputs_never_raise_and_refs_stay_inside(lang: str | None) -> None:
    for name, text in PATHOLOGICAL.items():
        chunks = chunk_file(f"{name}.x", text, lang)
        check_invariants(text, chunks)
        check_refs(text, chunks)
    for seed in range(3):
        text = _random_text(seed)
        chunks = chunk_file("r.x", text, lang)
        check_invariants(text, chunks)
        check_refs(text, chunks)


@pytest.mark.parametrize("case", CASES, ids=[c.lang for c in CASES])
def test_refs_under_edits(case: Case) -> None:
    """Truncated and line-dropped versions of every fixture (broken syntax): the
    contract holds and every reference stays in its chunk at its name."""
    text = case.text
    for cut in range(0, len(text), max(1, len(text) // 20)):
        part = text[:cut]
        chunks = chunk_file(case.path, part, case.lang)
        check_invariants(part, chunks)
        check_refs(part, chunks)
    lines = text.split("\n")
    for drop in range(0, len(lines), 3):
        part = "\r\n".join(lines[:drop] + lines[drop + 1 :])
        chunks = chunk_file(case.path, part, case.lang)
        check_invariants(part, chunks)
        check_refs(part, chunks)
