"""Nothing leaked: only indexed content under the root is served (traversal, absolute
paths, symlinks and encoded separators refused, through the API, the MCP tools' code
and the CLI); nothing is run through a shell with user-controlled strings; nothing opens
a network connection without configuration (index, search, serve and its watcher under
an audit hook); secrets are skipped by default and only an explicit setting brings
them in.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_scry
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sample_repo import write_repo

import scrydb
from scrydb.errors import ScryError

SECRET = "TOP-SECRET-5d41402abc4b2a76"
PACKAGE = Path(scrydb.__file__).parent


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[scrydb.Index, Path]]:
    """The sample repository with a secret outside it, linked in by file and directory
    symlinks, and secret files inside it; indexed lexically."""
    base = tmp_path_factory.mktemp("guarded")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (outside / "secret.py").write_text(f"KEY = '{SECRET}'\n")
    repo = write_repo(base / "shop")
    (repo / "leak.txt").symlink_to(outside / "secret.txt")
    (repo / "app" / "leak.py").symlink_to(outside / "secret.py")
    (repo / "linkdir").symlink_to(outside, target_is_directory=True)
    (repo / "inner_link.py").symlink_to(repo / "app" / "config.py")
    (repo / ".env").write_text(f"TOKEN={SECRET}\n")
    (repo / "deploy").mkdir()
    (repo / "deploy" / "id_ed25519").write_text(f"{SECRET}\n")
    ix = scrydb.open(repo, db=base / "g.db")
    ix.sync(embed=False)
    try:
        yield ix, outside
    finally:
        ix.close()


TRAVERSALS = [
    "../outside/secret.txt",
    "app/../../outside/secret.txt",
    "./../outside/secret.py",
    "app/./../../outside/secret.py",
    "/etc/passwd",
    "//etc/passwd",
    "OUTSIDE",
    "~/secret.txt",
    "~root/.bashrc",
    "leak.txt",
    "app/leak.py",
    "linkdir/secret.txt",
    "linkdir/secret.py",
    "inner_link.py",
    ".env",
    "deploy/id_ed25519",
    "%2e%2e/outside/secret.txt",
    "..%2foutside%2fsecret.txt",
    "..%2Foutside%2Fsecret.txt",
    "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
    "..%5coutside%5csecret.txt",
    "..\\outside\\secret.txt",
    "app\\..\\..\\outside\\secret.txt",
    "..%c0%afoutside/secret.txt",
    "．．/outside/secret.txt",
    "app/config.py\x00../../outside/secret.txt",
    "app/config.py/../../outside/secret.txt",
    "file:///etc/passwd",
    "\\\\server\\share\\x",
    "C:\\Windows\\win.ini",
]


def _served(ix: scrydb.Index, path: str, outside: Path) -> str | None:
    """What ``read`` serves for ``path`` (None when refused); asserts it is indexed."""
    path = str(outside / "secret.txt") if path == "OUTSIDE" else path
    try:
        r = ix.read(path)
    except ScryError as e:
        assert SECRET not in str(e)
        return None
    assert r.path in {p for (p,) in ix.store.rows("SELECT path FROM files")}
    assert SECRET not in r.text
    return r.path


def test_traversal_symlinks_and_encodings_are_refused(
    guarded: tuple[scrydb.Index, Path],
) -> None:
    ix, outside = guarded
    for bad in TRAVERSALS:
        assert _served(ix, bad, outside) is None, bad
        with pytest.raises(ScryError):
            ix.related(str(outside / "secret.txt") if bad == "OUTSIDE" else bad, 1)
    # Nothing outside the root or secret is in the index at all.
    paths = {p for (p,) in ix.store.rows("SELECT path FROM files")}
    assert not {"leak.txt", "app/leak.py", "inner_link.py", ".env", "deploy/id_ed25519"} & paths
    assert not any(p.startswith("linkdir") for p in paths)
    assert ix.locate(SECRET) == [] and ix.locate("TOKEN=") == []
    assert all(SECRET not in h.snippet for h in ix.search(SECRET, mode="lexical"))
    for escaping in ("../outside", str(outside)):  # a filter that leaves the root: an error
        with pytest.raises(ScryError, match="outside the repository"):
            ix.search("secret", path=escaping, mode="lexical")
    st = ix.status(check_stale=False, check_git=False)
    assert st.skipped["symlink"] == 4 and st.skipped["secret"] == 2


def test_mcp_read_code_path_refuses_the_same(guarded: tuple[scrydb.Index, Path]) -> None:
    """The MCP ``read`` tool's own parsing (``path:A-B`` targets) over the same Index."""
    from scrydb.present import read_text as _read_text

    ix, outside = guarded
    for bad in TRAVERSALS:
        for target in (bad, f"{bad}:1", f"{bad}:1-5"):
            target = target.replace("OUTSIDE", str(outside / "secret.txt"))
            with pytest.raises(ScryError):
                _read_text(ix, target, None, None)
    assert "DEFAULT_TIMEOUT" in _read_text(ix, "app/config.py:6", None, None)


_PARTS = st.sampled_from(
    [
        "..",
        ".",
        "",
        "app",
        "config.py",
        "outside",
        "secret.txt",
        "leak.txt",
        "linkdir",
        "%2e",
        "%2f",
        "%5c",
        "%00",
        "\\",
        "~",
        "\x00",
        "．",
        "..%2f",
        "/",
        "//",
        "C:",
        "app/config.py",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(_PARTS, min_size=1, max_size=8), lead=st.sampled_from(["", "/", "./"]))
def test_generated_paths_never_escape(
    guarded: tuple[scrydb.Index, Path], parts: list[str], lead: str
) -> None:
    ix, outside = guarded
    path = lead + "/".join(parts)
    served = _served(ix, path, outside)
    if served is not None:  # only ever an indexed file, named by a clean relative path
        assert served in ("app/config.py",) or not served.startswith((".", "/"))
    try:
        res = ix.related(path, 1)
        assert all(SECRET not in h.snippet for h in res)
    except ScryError:
        pass


def test_cli_read_refuses_paths_outside(guarded: tuple[scrydb.Index, Path]) -> None:
    ix, outside = guarded
    for bad in (
        "../outside/secret.txt",
        str(outside / "secret.txt"),
        "leak.txt",
        "linkdir/secret.txt",
        ".env",
    ):
        r = run_scry("read", "--no-sync", "--db", str(ix.db_path), bad, cwd=ix.root)
        assert r.returncode == 2 and SECRET not in r.stdout + r.stderr, (bad, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    # From a subdirectory, a relative path that walks out through the root is refused too.
    r = run_scry(
        "read",
        "--no-sync",
        "--db",
        str(ix.db_path),
        "../../outside/secret.txt",
        cwd=ix.root / "app",
    )
    assert r.returncode == 2 and SECRET not in r.stdout


# -- nothing runs through a shell ----------------------------------------------------------

#: The only process scrydb starts: git, with fixed arguments and the root as one argv
#: element (``git -C ROOT ls-files -z --cached``, for ``scry status``'s tracked-files check).
#: git ls-files (status's check of tracked files) and the detached background indexer
#: (``python -m scrydb.cli index``): fixed argument lists, never a shell.
ALLOWED_PROCESSES = {
    ("status.py", "subprocess.run"),
    ("background.py", "subprocess.Popen"),
    ("hookd.py", "subprocess.Popen"),  # the hooks' warm helper: this interpreter, fixed argv
}
_PROCESS_CALLS = {
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "os.system",
    "os.popen",
    "os.execv",
    "os.execvp",
    "os.execl",
    "os.execlp",
    "os.spawnv",
    "os.spawnl",
    "os.posix_spawn",
    "os.posix_spawnp",
    "pty.spawn",
    "asyncio.create_subprocess_shell",
    "asyncio.create_subprocess_exec",
}
#: Modules that talk to the network, and the one module allowed to use them (the
#: OpenAI-compatible client, used only when an endpoint is configured).
_NETWORK_MODULES = {
    "socket",
    "http.client",
    "urllib.request",
    "requests",
    "httpx",
    "aiohttp",
    "ftplib",
    "smtplib",
}
ALLOWED_NETWORK = {"embed/http.py"}
#: Modules that import ``socket`` for Unix sockets only (every socket they make is AF_UNIX).
UNIX_SOCKETS_ONLY = {"install/hookd.py"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def test_audit_no_shell_and_network_only_in_the_endpoint_client() -> None:
    processes, network = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = _dotted(node.func)
                if name in _PROCESS_CALLS:
                    processes.append((path.name, name, node))
                for kw in node.keywords:
                    if kw.arg == "shell":
                        assert isinstance(kw.value, ast.Constant) and kw.value.value is False, rel
            mods = []
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                mods = [node.module]
            if any(m in _NETWORK_MODULES for m in mods):
                network.append(rel)
    assert {(f, n) for f, n, _ in processes} == ALLOWED_PROCESSES, processes
    for f, _n, call in processes:
        argv = call.args[0]
        if f == "background.py":  # argv built in a list literal named ``args``
            tree = ast.parse((PACKAGE / "background.py").read_text(encoding="utf-8"))
            lists = [
                n.value
                for n in ast.walk(tree)
                if isinstance(n, ast.Assign)
                and isinstance(n.value, ast.List)
                and any(isinstance(t, ast.Name) and t.id == "args" for t in n.targets)
            ]
            assert isinstance(argv, ast.Name) and argv.id == "args" and len(lists) == 1
            assert _dotted(lists[0].elts[0]) == "sys.executable"
            fixed = [e.value for e in lists[0].elts if isinstance(e, ast.Constant)]
            assert fixed == ["-m", "scrydb.cli", "index", "--background-child", "--db"], fixed
            continue
        if f == "hookd.py":  # python -m scrydb.install.hookd SOCKET_PATH
            assert isinstance(argv, ast.List) and _dotted(argv.elts[0]) == "sys.executable"
            fixed = [e.value for e in argv.elts if isinstance(e, ast.Constant)]
            assert fixed == ["-m", "scrydb.install.hookd"] and len(argv.elts) == 4, fixed
            continue
        assert isinstance(argv, ast.List) and isinstance(argv.elts[0], ast.Constant)
        assert argv.elts[0].value == "git"
        fixed = [e.value for e in argv.elts if isinstance(e, ast.Constant)]
        assert fixed == ["git", "-C", "ls-files", "-z", "--cached"], fixed
    assert set(network) <= ALLOWED_NETWORK | UNIX_SOCKETS_ONLY, network
    for rel in UNIX_SOCKETS_ONLY:
        tree = ast.parse((PACKAGE / rel).read_text(encoding="utf-8"))
        made = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        made = [n for n in made if _dotted(n.func) == "socket.socket"]
        assert made, rel
        for call in made:
            assert call.args and _dotted(call.args[0]) == "socket.AF_UNIX", (rel, call.lineno)


# -- no network without configuration -------------------------------------------------------

SITECUSTOMIZE = """
import os, socket, sys
_log = os.environ.get("SCRY_AUDIT_LOG")
_NET = {getattr(socket, "AF_INET", 2), getattr(socket, "AF_INET6", 10)}
def _hook(event, args):
    if not _log or not event.startswith("socket."):
        return
    bad = False
    if event in ("socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"):
        bad = getattr(args[0], "family", None) in _NET
    elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
                   "socket.gethostbyname_ex", "socket.getnameinfo"):
        bad = True
    if bad:
        with open(_log, "a") as f:
            f.write(f"{os.getpid()} {' '.join(sys.argv[:3])} {event} {args!r:.200}\\n")
sys.addaudithook(_hook)
"""


@pytest.mark.slow
def test_default_config_opens_no_network_socket_in_index_search_and_serve(tmp_path: Path) -> None:
    """``scry search`` (first use: index with the packaged model, then a hybrid search),
    ``scry index`` and an MCP session with ``scry serve`` (background sync, embedding,
    the file watcher, every tool), all under an audit hook that logs any internet
    socket or name lookup: the log stays empty. (tests/test_endpoints.py audits the
    library and ``scry check`` in-process; the configured endpoint is the control.)"""
    from test_mcp import Served

    hook_dir = tmp_path / "hook"
    hook_dir.mkdir()
    (hook_dir / "sitecustomize.py").write_text(textwrap.dedent(SITECUSTOMIZE))
    log = tmp_path / "audit.log"
    env = {
        "PYTHONPATH": os.pathsep.join([str(hook_dir), os.environ.get("PYTHONPATH", "")]),
        "SCRY_AUDIT_LOG": str(log),
        "SCRY_CACHE_DIR": str(tmp_path / "cache"),
    }
    repo = write_repo(tmp_path / "shop")
    (repo / ".scry.toml").write_text("")  # a repository root: searches may index it
    r = run_scry(
        "search", "how are failed calls retried", "--json", "--no-background", cwd=repo, env=env
    )
    assert r.returncode == 0 and '"dense"' in r.stdout, r.stderr[-2000:]
    r = run_scry("index", "--json", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    srv = Served(repo, env, tmp_path / "serve.log")
    try:
        srv.until(
            "status",
            {},
            lambda t: "every chunk has its vector" in t and "embedder  ready" in t,
            "model",
        )
        assert srv.text("search", {"query": "UserRepository"}).startswith("app/users.py")
        srv.text("read", {"file": "app/users.py", "start_line": 13})
        srv.text("related", {"file": "app/retry.py", "line": 9})
        srv.text("locate", {"text": "DEFAULT_TIMEOUT"})
        (repo / "app" / "audit_me.py").write_text("def audited_function():\n    return 1\n")
        srv.until("locate", {"text": "audited_function"}, lambda t: t.startswith("app/"), "watcher")
    finally:
        srv.close()
    time.sleep(0.2)
    assert not log.exists() or not log.read_text().strip(), log.read_text()
    # The control: the same hook does log a process that looks up a host.
    r2 = subprocess.run(
        [sys.executable, "-c", "import socket; socket.getaddrinfo('localhost', 80)"],
        env={**os.environ, **env},
        capture_output=True,
        timeout=60,
    )
    assert r2.returncode == 0 and "getaddrinfo" in log.read_text()


# -- secrets ---------------------------------------------------------------------------------


def test_secrets_are_skipped_by_default_and_only_an_explicit_setting_indexes_them(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    files = {
        ".env": f"API_TOKEN={SECRET}\n",
        ".env.production": f"API_TOKEN={SECRET}\n",
        "config/prod.env": f"API_TOKEN={SECRET}\n",
        ".env.example": "API_TOKEN=\n",
        "keys/id_rsa": f"{SECRET}\n",
        "keys/id_rsa.pub": "ssh-rsa AAAA public\n",
        "keys/server.pem": f"{SECRET}\n",
        "keys/tls.key": f"{SECRET}\n",
        "keys/putty.ppk": f"{SECRET}\n",
        ".netrc": f"machine x password {SECRET}\n",
        ".git-credentials": f"https://u:{SECRET}@example.com\n",
        "secrets/credentials.json": f'{{"key": "{SECRET}"}}\n',
        "src/fixture.py": "def f():\n    return 1\n" * 600
        + 'PEM = """-----BEGIN EC PRIVATE KEY-----\n'
        + "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oTRJ3Cn6EbIVoAoGCCqGSM49\n"
        + f'-----END EC PRIVATE KEY-----"""\n# {SECRET}\n',
        # Past the first 8 KB, naming the armour without a key body is not a key.
        "src/parser.py": "x = 1\n" * 2000 + 'HEADER = "-----BEGIN RSA PRIVATE KEY-----\\n"\n',
        "src/app.py": "def app():\n    return 'hello'\n",
    }
    for rel, text in files.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    db = tmp_path / "i.db"
    with scrydb.open(repo, db=db) as ix:
        rep = ix.sync(embed=False)
        paths = {p for (p,) in ix.store.rows("SELECT path FROM files")}
        assert paths == {".env.example", "keys/id_rsa.pub", "src/parser.py", "src/app.py"}
        assert rep.skipped["secret"] == len(files) - 4
        assert ix.locate(SECRET) == [] and ix.locate("MHcCAQEEIBkg") == []
        assert ix.status(check_stale=False, check_git=False).skipped["secret"] == len(files) - 4
    # ``include`` brings back ignored files, not secrets; only skip_secrets = false does.
    (repo / ".scry.toml").write_text('[index]\ninclude = [".env"]\n')
    with scrydb.open(repo, db=db) as ix:
        ix.sync(embed=False)
        assert ix.locate(SECRET) == []
    (repo / ".scry.toml").write_text("[index]\nskip_secrets = false\n")
    with scrydb.open(repo, db=db) as ix:
        ix.sync(embed=False)
        found = {m.path for m in ix.locate(SECRET, k=100)}
        assert {".env", "keys/id_rsa", "src/fixture.py", ".git-credentials"} <= found
    # ... and turning it back on drops them again.
    (repo / ".scry.toml").write_text("[index]\nskip_secrets = true\n")
    with scrydb.open(repo, db=db) as ix:
        ix.sync(embed=False)
        assert ix.locate(SECRET) == []


def test_status_json_and_errors_do_not_echo_secrets(guarded: tuple[scrydb.Index, Path]) -> None:
    ix, _outside = guarded
    st = json.dumps(ix.status(check_git=False).to_json())
    assert SECRET not in st
