"""The code graph (issue 44): callers, callees, refs and the repository map over real
tree-sitter parses and real index files, on small repositories with known call graphs.
The CLI through real subprocesses; incremental sync keeps the graph exact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_scry
from synth_repo import WordEmbedder

import scrydb
from scrydb.search.graph import Reference, UnknownSymbol, module_files

PY = {
    "app/__init__.py": "",
    "app/util.py": (
        "def parse(text):\n"
        '    """Parse a config text."""\n'
        "    return dict(line.split('=') for line in text.splitlines())\n"
        "\n\n"
        "def render(data):\n"
        "    return '\\n'.join(f'{k}={v}' for k, v in data.items())\n"
    ),
    "app/other.py": (
        'def parse(blob):\n    """A different parse: bytes to words."""\n    return blob.split()\n'
    ),
    "app/client.py": (
        "from app.util import parse\n"
        "from app import other\n"
        "\n\n"
        "class Base:\n"
        "    def send(self, msg):\n"
        "        return self.encode(msg)\n"
        "\n"
        "    def encode(self, msg):\n"
        "        return msg.encode()\n"
        "\n\n"
        "class Client(Base):\n"
        "    def send(self, msg):\n"
        "        data = parse(msg)\n"
        "        words = other.parse(msg)\n"
        "        return self.encode(str(data)) + self.close(words)\n"
        "\n"
        "    def close(self, words):\n"
        "        return len(words)\n"
        "\n\n"
        "class Server:\n"
        "    def send(self, msg):\n"
        "        return msg\n"
        "\n\n"
        "def main():\n"
        "    c = Client()\n"
        "    c.send('a=1')\n"
        "    return Server().send('x')\n"
    ),
    "app/use.py": (
        "from app.client import Client, Server\n"
        "\n\n"
        'def use(c: Client, s: "Server", p):\n'
        "    c.send(1)\n"
        "    with Server() as srv:\n"
        "        srv.send(2)\n"
        "    path = Path(p)\n"
        "    path.send(3)\n"
        "    return s.send(4)\n"
        "\n\n"
        "def loose(x):\n"
        "    return x.send(5)\n"
        "\n\n"
        "class Holder:\n"
        "    def __init__(self, server: Server):\n"
        "        self.server = server\n"
        "        self.client = Client()\n"
        "\n"
        "    def go(self):\n"
        "        self.client.send(6)\n"
        "        return self.server.send(7)\n"
        "\n\n"
        'def make() -> "Server":\n'
        "    return Server()\n"
        "\n\n"
        "def via():\n"
        "    srv = make()\n"
        "    return srv.send(8)\n"
    ),
}

TS = {
    "src/math.ts": (
        "export function add(a: number, b: number): number {\n"
        "  return a + b;\n"
        "}\n"
        "\n"
        "export function twice(x: number): number {\n"
        "  return add(x, x);\n"
        "}\n"
    ),
    "src/calc.ts": (
        "import { add as plus, twice } from './math';\n"
        "\n"
        "export class Calc {\n"
        "  total = 0;\n"
        "  push(x: number): number {\n"
        "    this.total = plus(this.total, x);\n"
        "    return this.double();\n"
        "  }\n"
        "  double(): number {\n"
        "    return twice(this.total);\n"
        "  }\n"
        "}\n"
    ),
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (root / ".git").mkdir(exist_ok=True)
    return root


@pytest.fixture
def pyrepo(tmp_path: Path) -> Path:
    return _write(tmp_path / "py", PY)


def _open(repo: Path, tmp_path: Path) -> scrydb.Index:
    ix = scrydb.open(repo, db=tmp_path / f"{repo.name}.db", embedder=WordEmbedder())
    ix.sync()
    return ix


def _sites(rows: list[Reference]) -> set[tuple[str, int, str | None]]:
    return {(r.path, r.line, r.symbol) for r in rows}


def test_callers_resolve_imports_and_never_guess(pyrepo: Path, tmp_path: Path) -> None:
    with _open(pyrepo, tmp_path) as ix:
        defs, rows = ix.graph.callers("app/util.py:1")  # util.parse, by FILE:LINE
        assert [d.symbol for d in defs] == ["parse"] and defs[0].path == "app/util.py"
        # Client.send calls util.parse (imported by name); other.parse(msg) is not it.
        assert _sites(rows) == {("app/client.py", 15, "Client.send")}
        assert rows[0].confidence == pytest.approx(0.9)
        _d, rows = ix.graph.callers("app/other.py:1")
        assert _sites(rows) == {("app/client.py", 16, "Client.send")}  # through the module


def test_self_calls_resolve_in_the_class_then_its_bases(pyrepo: Path, tmp_path: Path) -> None:
    with _open(pyrepo, tmp_path) as ix:
        _d, rows = ix.graph.callers("Base.encode")
        assert _sites([r for r in rows if r.confidence >= 0.7]) == {
            ("app/client.py", 7, "Base.send"),
            ("app/client.py", 17, "Client.send"),  # self.encode in Client: Base's
        }
        # msg.encode() may be str.encode: kept, as an ambiguous candidate, never as a call.
        (other,) = [r for r in rows if r.confidence < 0.7]
        assert (other.line, other.target, other.confidence) == (10, None, 0.25)
        _d, rows = ix.graph.callers("Client.close")
        assert _sites(rows) == {("app/client.py", 17, "Client.send")}
        assert rows[0].confidence == pytest.approx(1.0)


def test_same_method_name_in_two_classes_is_ambiguous_not_guessed(
    pyrepo: Path, tmp_path: Path
) -> None:
    with _open(pyrepo, tmp_path) as ix:
        _defs, calls = ix.graph.callees("loose")
        (x_send,) = calls  # x.send(...): Base.send, Client.send or Server.send
        assert x_send.target is None and len(x_send.candidates) == 3
        assert x_send.confidence < 0.5
        _defs, calls = ix.graph.callees("main")
        by_line = {r.line: r for r in calls}
        assert by_line[29].target is not None and by_line[29].target.symbol == "Client"
        server = [r for r in calls if r.line == 31 and r.name == "send"]
        assert server and server[0].target is not None
        assert server[0].target.symbol == "Server.send"  # Server().send: the class's
        refs = ix.graph.refs("Server.send")
        assert [d.symbol for d in refs.definitions] == ["Server.send"]
        assert {(r.path, r.line) for r in refs.references} == {
            ("app/client.py", 31),
            ("app/use.py", 7),
            ("app/use.py", 10),
            ("app/use.py", 14),  # x.send: one of the candidates
            ("app/use.py", 24),  # self.server, bound to a parameter annotated Server
            ("app/use.py", 33),  # srv = make(), and make() -> "Server"
        }


def test_a_receiver_typed_in_its_function_resolves_to_its_class(
    pyrepo: Path, tmp_path: Path
) -> None:
    with _open(pyrepo, tmp_path) as ix:
        _defs, calls = ix.graph.callees("main")
        c_send = {r.line: r for r in calls}[30]  # c = Client(); c.send(...)
        assert c_send.target is not None and c_send.target.symbol == "Client.send"
        assert c_send.confidence == pytest.approx(0.9)
        _defs, calls = ix.graph.callees("use")
        got = {r.line: (r.target.symbol if r.target else None, len(r.candidates)) for r in calls}
        assert got[5] == ("Client.send", 0)  # a parameter annotated c: Client
        assert got[7] == ("Server.send", 0)  # with Server() as srv
        assert got[9] == (None, 0)  # path = Path(p): a class the repository lacks
        assert got[10] == ("Server.send", 0)  # s: "Server"
        _defs, calls = ix.graph.callees("Holder.go")  # every binding of self.x says it
        got = {r.line: (r.target.symbol if r.target else None, len(r.candidates)) for r in calls}
        assert got == {23: ("Client.send", 0), 24: ("Server.send", 0)}
        _defs, calls = ix.graph.callees("via")  # srv = make(); make() -> "Server"
        assert [(r.line, r.target.symbol if r.target else None) for r in calls] == [
            (32, "make"),
            (33, "Server.send"),
        ]


def test_unknown_symbol_suggests(pyrepo: Path, tmp_path: Path) -> None:
    with _open(pyrepo, tmp_path) as ix:
        with pytest.raises(UnknownSymbol) as e:
            ix.graph.callers("encod")
        assert "encode" in " ".join(e.value.suggestions).lower() or e.value.suggestions == []
        assert e.value.exit_code == 1


def test_sync_keeps_the_graph_exact(pyrepo: Path, tmp_path: Path) -> None:
    with _open(pyrepo, tmp_path) as ix:
        assert ix.graph.callers("render")[1] == []
        client = pyrepo / "app/client.py"
        # Rename util.parse -> load (definition and the call), and call render.
        (pyrepo / "app/util.py").write_text(PY["app/util.py"].replace("def parse", "def load"))
        client.write_text(
            PY["app/client.py"]
            .replace("from app.util import parse", "from app.util import load, render")
            .replace("data = parse(msg)", "data = render(load(msg))")
        )
        rep = ix.sync()
        assert rep.files_changed == 2
        _d, rows = ix.graph.callers("load")
        assert _sites(rows) == {("app/client.py", 15, "Client.send")}
        assert _sites(ix.graph.callers("render")[1]) == {("app/client.py", 15, "Client.send")}
        assert [d.path for d in ix.graph.refs("parse").definitions] == ["app/other.py"]
        # Delete the callee's file: its callers resolve to nothing, nothing stale remains.
        (pyrepo / "app/util.py").unlink()
        ix.sync()
        with pytest.raises(UnknownSymbol):
            ix.graph.callers("load")
        stale = ix.store.scalar(
            "SELECT count(*) FROM refs WHERE file_id NOT IN (SELECT id FROM files)"
        )
        assert stale == 0


def test_typescript_alias_import_and_this(tmp_path: Path) -> None:
    repo = _write(tmp_path / "ts", TS)
    with _open(repo, tmp_path) as ix:
        _d, rows = ix.graph.callers("add")
        assert _sites(rows) == {
            ("src/math.ts", 6, "twice"),
            ("src/calc.ts", 6, "Calc.push"),  # plus(...) is add, imported under an alias
        }
        _d, rows = ix.graph.callers("Calc.double")
        assert _sites(rows) == {("src/calc.ts", 7, "Calc.push")}


def test_cli_callers_callees_refs_json(pyrepo: Path, tmp_path: Path) -> None:
    env = {"SCRY_CACHE_DIR": str(tmp_path / "cache")}
    assert run_scry("index", "--no-embed", cwd=pyrepo, env=env).returncode == 0
    r = run_scry("callers", "Client.close", "--json", cwd=pyrepo, env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [(c["path"], c["line"], c["symbol"]) for c in out["callers"]] == [
        ("app/client.py", 17, "Client.send")
    ]
    assert all({"path", "line", "symbol", "confidence"} <= set(c) for c in out["callers"])
    r = run_scry("callees", "main", "--json", cwd=pyrepo, env=env)
    assert r.returncode == 0 and {c["name"] for c in json.loads(r.stdout)["callees"]} >= {
        "Client",
        "send",
        "Server",
    }
    r = run_scry("refs", "parse", "--json", cwd=pyrepo, env=env)
    out = json.loads(r.stdout)
    assert {d["path"] for d in out["definitions"]} == {"app/util.py", "app/other.py"}
    assert out["references"]
    text = run_scry("callers", "Client.close", cwd=pyrepo, env=env)
    assert "app/client.py:17  Client.send" in text.stdout
    missing = run_scry("callers", "Cliant.clos", cwd=pyrepo, env=env)
    assert missing.returncode == 1 and "no definition named" in missing.stderr
    assert "Traceback" not in missing.stderr
    m = run_scry("map", "--json", "--budget", "200", cwd=pyrepo, env=env)
    assert m.returncode == 0, m.stderr
    entries = json.loads(m.stdout)["map"]
    assert entries and all({"path", "line", "symbol", "signature"} <= set(e) for e in entries)
    # the most central definition: one that is called or inherited, never a leaf caller
    called = {"Base", "Client", "Server", "Base.encode", "parse", "Client.send", "Base.send"}
    assert entries[0]["symbol"] in called | {"Server.send", "make"}


def test_module_files_reads_each_languages_imports() -> None:
    paths = {
        "pkg/__init__.py": 1,
        "pkg/util.py": 2,
        "src/math.ts": 3,
        "src/lib/index.ts": 4,
        "cmd/server/main.go": 5,
        "cmd/server/run.go": 6,
        "src/net/mod.rs": 7,
        "include/x.h": 8,
    }
    assert module_files("pkg.util", "app/main.py", paths) == [2]
    assert module_files(".util", "pkg/cli.py", paths) == [2]
    assert module_files("./math", "src/calc.ts", paths) == [3]
    assert module_files("./lib", "src/calc.ts", paths) == [4]
    assert sorted(module_files("github.com/acme/x/cmd/server", "main.go", paths)) == [5, 6]
    assert module_files("crate::net", "src/main.rs", paths) == [7]
    assert module_files("x.h", "src/a.c", paths) == [8]
    assert module_files("nowhere.mod", "a.py", paths) == []
    # Given a lookup of the paths that contain a text (what a query reads from the index
    # instead of every path), the answers are the same.
    asked: list[str] = []

    def containing(text: str) -> dict[str, int]:
        asked.append(text)
        return {p: f for p, f in paths.items() if text in p}

    for module, importer in [
        ("pkg.util", "app/main.py"),
        ("github.com/acme/x/cmd/server", "m.go"),
        ("x.h", "src/a.c"),
        ("crate::net", "src/main.rs"),
        ("./lib", "src/c.ts"),
    ]:
        assert module_files(module, importer, containing) == module_files(module, importer, paths)
    assert "util" in asked and "x.h" in asked and "server" in asked


@pytest.mark.slow
def test_graph_tools_through_a_real_mcp_session(pyrepo: Path, tmp_path: Path) -> None:
    from test_mcp import Served

    env = {"SCRY_CACHE_DIR": str(tmp_path / "cache")}
    served = Served(pyrepo, env, tmp_path / "serve.log", "--no-embed", "--no-watch")
    try:
        tools = {t.name for t in served.portal.call(served.session.list_tools).tools}
        assert {"callers", "callees", "refs", "map"} <= tools
        text = served.text("callers", {"target": "Client.close"})
        assert "app/client.py:17  Client.send" in text
        assert "Client.encode" not in served.text("callees", {"target": "Client.send"})
        assert "app/util.py" in served.text("refs", {"target": "parse"})
        assert "app/client.py:" in served.text("map", {"budget": 300})
        bad = served.call("callers", {"target": "NoSuchThing"})
        assert bad.is_error and "no definition named" in bad.content[0].text
    finally:
        served.close()


def _long(name: str, body: str) -> str:
    """A function long enough to be a chunk of its own."""
    filler = "".join(
        f"    step_{i} = {i} * 2  # keep this function in its own chunk\n" for i in range(14)
    )
    return f'def {name}():\n    """{name} does its part of the work."""\n{filler}    return {body}\n\n\n'


def test_the_reads_the_ranking_tries_use(tmp_path: Path) -> None:
    """store/graph.use_counts and neighbours (bench/graph_rank_try.py's reads)."""
    from scrydb.chunk.specs import SYMBOL_ONLY_KINDS
    from scrydb.store import graph as g

    src = _long("leaf", "1") + _long("mid", "leaf() + leaf()") + _long("top", "mid()")
    repo = _write(tmp_path / "chain", {"chain.py": src})
    with _open(repo, tmp_path) as ix:
        chunk = {n: ix.graph.refs(n).definitions[0].chunk_id for n in ("leaf", "mid", "top")}
        assert len(set(chunk.values())) == 3
        ids = list(chunk.values())
        counts = g.use_counts(ix.store, ids, tuple(SYMBOL_ONLY_KINDS))
        assert counts == {chunk["leaf"]: 2, chunk["mid"]: 1, chunk["top"]: 0}
        calls, called = g.neighbours(ix.store, [chunk["mid"]], ids)
        assert calls == {chunk["top"]} and called == {chunk["leaf"]}
        assert g.neighbours(ix.store, [], ids) == (set(), set())


def test_a_strong_hits_callees_get_the_connected_vote(pyrepo: Path, tmp_path: Path) -> None:
    """The ranker's graph vote (rank.CONNECTED_VOTE): what a chunk both legs rank high
    calls, resolved; --explain shows it."""
    from scrydb.search import graph, rank

    with _open(pyrepo, tmp_path) as ix:
        (send,) = [d for d in ix.graph.refs("Client.send").definitions]
        (parse,) = ix.graph.refs("app/util.py:1").definitions
        (other,) = ix.graph.refs("app/other.py:1").definitions
        called = graph.called_chunks(ix.store, [send.chunk_id])
        assert parse.chunk_id in called and other.chunk_id in called  # imported, resolved
        assert send.chunk_id not in called  # self.close() stays in the chunk
        res = ix.search("how does the client send a message after parsing it", explain=True)
        voted = {
            (h.path, h.start_line) for h in res if h.explain and "connected" in h.explain["votes"]
        }
        assert ("app/util.py", 1) in voted
        top = {
            h.path: h.explain["votes"]["connected"]
            for h in res
            if h.explain and h.explain["votes"].get("connected")
        }
        assert set(top.values()) == {rank.CONNECTED_VOTE}  # what --explain prints
