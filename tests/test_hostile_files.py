"""Hostile files: whatever a working tree holds, the sync neither crashes nor hangs, and
every path is either indexed (and read back exactly as decoded) or skipped with a
counted reason that ``scry status`` shows.

Fixed cases (encodings, BOMs, NULs, line endings, huge lines and files, deep nesting,
broken syntax in every language, odd names, links, unreadable and vanishing paths) and
property-based ones (random contents and random file names, synced incrementally into
one index). ``--slow`` / ``SCRY_SLOW=1`` runs ten times the examples.
"""

from __future__ import annotations

import builtins
import os
import random
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_scry, slow_run
from faults import unreadable, vanishing_after_scandir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from synth_repo import FakeEmbedder, assert_consistent

import scrydb
from scrydb import langs
from scrydb.chunk.specs import SPECS
from scrydb.config import Config
from scrydb.sync import changes as sync_changes
from scrydb.sync import decode
from scrydb.walk import META_FILES, NOISE_DIRS, classify_content, name_reason

EXAMPLES = 1500 if slow_run() else 150
#: Generated files and names, counted for RELIABILITY.md (printed with ``-s``).
GENERATED: Counter[str] = Counter()

#: One file extension per language with a grammar (starlark is named by file name).
EXT = {lang: ext for ext, lang in reversed(langs.EXTENSIONS.items())}
GRAMMAR_FILES = {lang: f"lang/broken.{lang}{EXT[lang]}" for lang in SPECS if lang in EXT}
GRAMMAR_FILES["starlark"] = "lang/starlark/BUILD"
#: Syntax errors that every grammar chokes on in a different way.
BROKEN = (
    "def class fn func function impl struct {{{ ((( [[[ <<< \n"
    "  return ) ] } end end\n"
    'x = "unterminated\n'
    "/* never closed\n"
    "@@@ ### $$$ ::: -> => ;;;\n"
)


def _mixed_encodings() -> bytes:
    return (
        "def café():\n    return 'crème'\n".encode()
        + "def naïve():\n    return 'déjà'\n".encode("latin-1")
        + "def euro():\n    return '€ “quoted”'\n".encode("cp1252")
        + "def kanji():\n    return '漢字'\n".encode("shift_jis")
    )


def fixed_cases() -> dict[str, tuple[bytes, str]]:
    """path -> (bytes, expected outcome): ``indexed`` or the skip reason."""
    rnd = random.Random(9)
    py = "def handler_{0}(request):\n    return request.get('{0}')\n"
    cases: dict[str, tuple[bytes, str]] = {
        "enc/random.py": (bytes(rnd.getrandbits(8) for _ in range(4000)), "binary"),
        "enc/random_no_nul.txt": (bytes(rnd.randint(1, 255) for _ in range(4000)), "indexed"),
        "enc/latin1.py": ("def grüß():\n    return 'Grüße'\n".encode("latin-1"), "indexed"),
        "enc/mixed.py": (_mixed_encodings(), "indexed"),
        "enc/bom8.py": (b"\xef\xbb\xbf" + py.format("bom8").encode(), "indexed"),
        "enc/bom16le.py": (py.format("bom16le").encode("utf-16"), "indexed"),
        "enc/bom16be.py": (b"\xfe\xff" + py.format("bom16be").encode("utf-16-be"), "indexed"),
        "enc/utf16_no_bom.py": (py.format("nobom").encode("utf-16-le"), "binary"),
        "enc/utf32.py": (py.format("utf32").encode("utf-32"), "binary"),
        "enc/nul_head.py": (b"def f():\n    return '\x00'\n", "binary"),
        "enc/nul_late.py": ((py.format("late") * 400).encode() + b"x = '\x00'\n", "indexed"),
        "enc/overlong.py": (
            b"def f():\n    return '\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80'\n",
            "indexed",
        ),
        "eol/crlf.py": (py.format("crlf").replace("\n", "\r\n").encode(), "indexed"),
        "eol/cr_only.py": (py.format("cronly").replace("\n", "\r").encode(), "indexed"),
        "eol/mixed.py": (b"def a():\r\n    return 1\rdef b():\n    return 2\n\r\n", "indexed"),
        "eol/no_final_newline.py": (b"def tail():\n    return 1", "indexed"),
        "long/line_100k_with_code.py": (
            ("x = '" + "a" * 100_000 + "'\n" + py.format("long") * 200).encode(),
            "indexed",
        ),
        "long/line_100k_alone.js": (("var x='" + "b" * 100_000 + "';\n").encode(), "minified"),
        "long/many_lines.txt": (b"\n".join(b"line %d" % i for i in range(60_000)), "indexed"),
        "deep/parens.py": (b"x = " + b"(\n" * 20_000 + b"1" + b")\n" * 20_000, "indexed"),
        "deep/braces.js": (b"function f() {\n" * 5_000 + b"}\n" * 5_000, "indexed"),
        "deep/blocks.py": (
            "".join(" " * i + "if x:\n" for i in range(800)).encode() + b" " * 800 + b"pass\n",
            "indexed",
        ),
        "deep/brackets.json": (b"[\n" * 50_000 + b"]\n" * 50_000, "indexed"),
        "deep/lists.md": ("".join("  " * i + "- item\n" for i in range(200)).encode(), "indexed"),
        "empty/zero.py": (b"", "indexed"),
        "empty/blank.py": (b"\n\n   \n\t\n", "indexed"),
        "empty/bom_only.py": (b"\xef\xbb\xbf", "indexed"),
        "gen/generated.go": (b"// Code generated by x. DO NOT EDIT.\npackage x\n", "generated"),
        "secret/fixture.py": (
            b"def f():\n    return 1\n" * 500
            + b'KEY = """-----BEGIN OPENSSH PRIVATE KEY-----\n'
            + b"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
            + b'-----END OPENSSH PRIVATE KEY-----"""\n',
            "secret",
        ),
        "secret/.env": (b"TOKEN=abc\n", "secret"),
        "secret/prod.env": (b"TOKEN=abc\n", "secret"),
        "secret/id_ed25519": (b"key\n", "secret"),
        "secret/pgp.txt": (b"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQ\n", "secret"),
        "secret/.env.example": (b"TOKEN=\n", "indexed"),
        "names/with space.py": (py.format("space").encode(), "indexed"),
        "names/ünïcødé_名前.py": (py.format("unicode").encode(), "indexed"),
        "names/new\nline.py": (py.format("newline").encode(), "indexed"),
        "names/-leading-dash.py": (py.format("dash").encode(), "indexed"),
        "names/--help": (py.format("help").encode(), "indexed"),
        "names/~tilde.py": (py.format("tilde").encode(), "indexed"),
        "names/ leading space.py": (py.format("lspace").encode(), "indexed"),
        "names/back\\slash.py": (py.format("backslash").encode(), "indexed"),
        "names/per%2fcent.py": (py.format("percent").encode(), "indexed"),
        "names/..dots..py": (py.format("dots").encode(), "indexed"),
        "names/emoji_😀.py": (py.format("emoji").encode(), "indexed"),
        "names/rtl_\u202eyp.txt": (py.format("rtl").encode(), "indexed"),
        "dir with space/ü/x.py": (py.format("nested").encode(), "indexed"),
    }
    for path in GRAMMAR_FILES.values():
        cases[path] = (BROKEN.encode(), "indexed")
    return cases


def write_cases(root: Path, cases: dict[str, tuple[bytes, str]]) -> None:
    for rel, (data, _) in cases.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def check_outcomes(ix: scrydb.Index, cases: dict[str, tuple[bytes, str]]) -> Counter[str]:
    """Each case indexed (and read back as decoded) or skipped with its reason; returns
    the walk-level reasons (not in the skipped table) expected in the counts."""
    indexed = {r[0] for r in ix.store.rows("SELECT path FROM files")}
    skipped = dict(ix.store.rows("SELECT path, reason FROM skipped"))
    walk_level: Counter[str] = Counter()
    for rel, (data, want) in cases.items():
        if want == "indexed":
            assert rel in indexed, (rel, skipped.get(rel))
            check_read_back(ix, rel, data)
        elif rel in skipped:
            assert skipped[rel] == want, (rel, skipped[rel], want)
        else:
            assert rel not in indexed, (rel, want)
            walk_level[want] += 1
    return walk_level


def check_read_back(ix: scrydb.Index, rel: str, data: bytes) -> None:
    """``read`` serves the decoded text: every line a chunk holds is exactly the file's."""
    text = decode(data)
    lines = text.split("\n")
    r = ix.read(rel, 1, max(1, len(lines)), max_lines=len(lines) + 1)
    assert r.path == rel
    got = r.text.split("\n") if r.chunks else []
    for i, line in enumerate(got):
        assert line == lines[i] or (not line and not lines[i].strip()), (rel, i + 1)
    covered = {n for s, e, _k, _y in r.chunks for n in range(s, e + 1)}
    missing = [n for n, line in enumerate(lines, 1) if line.strip() and n not in covered]
    assert not missing, (rel, missing[:5])


@pytest.mark.timeout(300)
def test_fixed_hostile_files_are_indexed_or_skipped_with_a_reason(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    cases = fixed_cases()
    write_cases(root, cases)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("OUTSIDE_SECRET = 1\n")
    (root / "links").mkdir()
    os.symlink(outside, root / "links" / "dir_out")
    os.symlink(outside / "secret.py", root / "links" / "file_out.py")
    os.symlink(root / "links", root / "links" / "loop")
    os.symlink(root / "links" / "missing", root / "links" / "dangling.py")
    os.symlink("self_loop.py", root / "links" / "self_loop.py")
    os.mkfifo(root / "links" / "fifo.py")
    with open(os.path.join(os.fsencode(root), b"names/bad\xffbyte.py"), "wb") as f:
        f.write(b"def bad_byte():\n    return 1\n")
    big = root / "big" / "fifty_mb.py"
    big.parent.mkdir()
    with big.open("wb") as f:
        f.truncate(50 * 1024 * 1024)
    GENERATED["fixed files"] += len(cases) + 8

    opened: list[str] = []
    real_open = builtins.open

    def spy(file: object, *a: object, **kw: object) -> object:
        opened.append(os.fsdecode(file) if isinstance(file, str | bytes | os.PathLike) else "")
        return real_open(file, *a, **kw)  # type: ignore[call-overload]

    with scrydb.open(root, db=tmp_path / "i.db", embedder=FakeEmbedder(dim=16)) as ix:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(builtins, "open", spy)
            rep = ix.sync()
        assert not [p for p in opened if p.endswith("fifty_mb.py")]  # too large: never read
        assert not [p for p in opened if "outside" in p or p.endswith("fifo.py")]
        walk_level = check_outcomes(ix, cases)
        walk_level.update({"symlink": 5, "special": 1, "bad-name": 1, "too-large": 1})
        content_level = Counter(r[0] for r in ix.store.rows("SELECT reason FROM skipped"))
        assert rep.skipped == walk_level + content_level, rep.skipped
        assert rep.files_added == sum(1 for _d, w in cases.values() if w == "indexed")
        st = ix.status(check_git=False)
        assert st.skipped == dict(rep.skipped)  # status tells the same story
        assert st.stale == {"added": 0, "changed": 0, "deleted": 0}
        assert_consistent(ix)
        assert rep.pending == 0

        # Nothing from outside the root, no private key, through any door.
        for literal in ("OUTSIDE_SECRET", "b3BlbnNzaC1rZXktdjEA", "TOKEN=abc"):
            assert ix.locate(literal) == []
        for q in ("handler_unicode", "handler_newline", "grüß", "漢字", "aaaa", "OUTSIDE_SECRET"):
            res = ix.search(q, k=5)
            assert all(h.path in {*cases} for h in res)
        assert ix.search("handler_newline", k=3, mode="lexical")[0].path == "names/new\nline.py"
        for rel in ("names/~tilde.py", "names/back\\slash.py", "names/ leading space.py"):
            assert ix.read(rel).path == rel  # odd but real names are served exactly
        assert ix.locate("handler_bom16be")[0].path == "enc/bom16be.py"

        again = ix.sync()
        assert not again.changed and again.skipped == rep.skipped


def test_cli_serves_odd_names(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_cases(root, {k: v for k, v in fixed_cases().items() if k.startswith("names/")})
    db = str(tmp_path / "i.db")
    assert run_scry("index", str(root), "--db", db, "--no-embed", "-q").returncode == 0
    r = run_scry("read", "--db", db, "--no-sync", "--", "names/-leading-dash.py", cwd=root)
    assert r.returncode == 0 and "handler_dash" in r.stdout, r.stderr
    r = run_scry("locate", "--db", db, "--no-sync", "--json", "--", "--help", cwd=root)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    r = run_scry("search", "--db", db, "--no-sync", "--mode", "lexical", "--", "-x", cwd=root)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr


def test_unreadable_paths_are_counted_and_retried(tmp_path: Path) -> None:
    """Permissions simulated by injecting EACCES (root reads everything): a directory
    that cannot be listed, a file that cannot be opened, and an ignore file inside an
    unreadable directory."""
    root = tmp_path / "repo"
    for rel in ("a.py", "locked/b.py", "locked/.gitignore", "open/c.py", "open/secret.py"):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"def f_{p.stem}():\n    return 1\n")
    with scrydb.open(root, db=tmp_path / "i.db") as ix:
        with unreadable(root / "locked", root / "open" / "secret.py"):
            rep = ix.sync(embed=False)
        paths = {r[0] for r in ix.store.rows("SELECT path FROM files")}
        assert paths == {"a.py", "open/c.py"}
        assert rep.skipped["unreadable"] == 2, rep.skipped
        assert ix.status(check_stale=False, check_git=False).skipped["unreadable"] == 2
        # Readable again (permissions fixed): the next sync picks both up.
        rep = ix.sync(embed=False)
        assert rep.files_added == 2 and "unreadable" not in rep.skipped
        assert "unreadable" not in ix.status(check_stale=False, check_git=False).skipped
        # An indexed directory turning unreadable is not taken for deleted.
        with unreadable(root / "locked"):
            rep = ix.sync(embed=False)
            assert rep.files_deleted == 0 and rep.skipped["unreadable"] == 1
            assert ix.status(check_git=False).stale == {"added": 0, "changed": 0, "deleted": 0}
        assert ix.read("locked/b.py").text.startswith("def f_b()")
        assert_consistent(ix)


def test_unreadable_root_keeps_the_index(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.py").write_text("def a():\n    return 1\n")
    with scrydb.open(root, db=tmp_path / "i.db") as ix:
        ix.sync(embed=False)
        with (
            unreadable(root),
            pytest.raises(scrydb.ScryError, match="cannot list the repository root"),
        ):
            ix.sync(embed=False)
        assert ix.store.scalar("SELECT count(*) FROM files") == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything: see the injected test")
def test_chmod_000_file_and_directory(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "locked").mkdir(parents=True)
    (root / "locked" / "b.py").write_text("x = 1\n")
    (root / "secret.py").write_text("y = 2\n")
    (root / "ok.py").write_text("z = 3\n")
    (root / "locked").chmod(0)
    (root / "secret.py").chmod(0)
    try:
        with scrydb.open(root, db=tmp_path / "i.db") as ix:
            rep = ix.sync(embed=False)
            assert {r[0] for r in ix.store.rows("SELECT path FROM files")} == {"ok.py"}
            assert rep.skipped["unreadable"] == 2
    finally:
        (root / "locked").chmod(0o755)
        (root / "secret.py").chmod(0o644)


def test_file_vanishing_mid_walk_and_mid_sync(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for rel in ("a/one.py", "a/two.py", "a/gone_dir/x.py", "b/three.py", "b/four.py"):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"def {p.stem}():\n    return 1\n")
    with scrydb.open(root, db=tmp_path / "i.db") as ix:
        # Listed, then deleted before its stat: counted, not fatal.
        with vanishing_after_scandir(root / "a", root / "a" / "two.py"):
            rep = ix.sync(embed=False)
        assert rep.skipped["vanished"] == 1
        # A directory listed, then deleted before it is entered.
        (root / "a" / "two.py").write_text("def two():\n    return 2\n")
        with vanishing_after_scandir(root / "a", root / "a" / "gone_dir"):
            rep = ix.sync(embed=False)
        assert rep.skipped["vanished"] == 1
        # Walked, then deleted before it is read.
        real_walk = sync_changes.walk
        (root / "b" / "five.py").write_text("def five():\n    return 5\n")

        def walk_then_delete(*a: object, **kw: object) -> object:
            res = real_walk(*a, **kw)  # type: ignore[arg-type]
            (root / "b" / "five.py").unlink()
            return res

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(sync_changes, "walk", walk_then_delete)
            rep = ix.sync(embed=False)
        assert rep.skipped["vanished"] == 1
        assert_consistent(ix)
        # Everything converges with the next plain sync.
        ix.sync(embed=False)
        want = {p.relative_to(root).as_posix() for p in root.rglob("*.py")}
        assert {r[0] for r in ix.store.rows("SELECT path FROM files")} == want


# -- property-based -------------------------------------------------------------------------

_TOKENS = (
    "def |class |fn |func |function |{|}|(|)|[|]|:|;|=|'|\"|`|#|//|/*|*/|<!--|-->|\\|"
    "return |end|\n|\r\n|\r|\t|    |\x00|\x0b|\x0c|\u2028|\u0085|\ufeff|é|漢|😀|\udcff"
).split("|")
_code = st.lists(st.sampled_from(_TOKENS), max_size=300).map("".join)
_encodings = st.sampled_from(["utf-8", "utf-16", "latin-1", "cp1252", "utf-8-sig", "shift_jis"])


@st.composite
def file_bytes(draw: st.DrawFn) -> bytes:
    """Random bytes, text in random encodings (mixed within a file), code-like token
    soup with every kind of line ending, optional BOMs and NULs, long lines."""
    kind = draw(st.sampled_from(["bytes", "text", "code", "mixed", "long"]))
    if kind == "bytes":
        return draw(st.binary(max_size=3000))
    if kind == "long":
        return ("x = '" + "y" * draw(st.integers(1000, 120_000)) + "'\n").encode() + draw(
            st.binary(max_size=200)
        )
    parts = draw(st.lists(st.one_of(st.text(max_size=200), _code), min_size=1, max_size=4))
    out = b""
    for part in parts:
        enc = draw(_encodings) if kind == "mixed" else "utf-8"
        out += part.encode(enc, errors="surrogatepass" if enc == "utf-8" else "replace")
    if draw(st.booleans()):
        out = draw(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b""])) + out
    return out


@pytest.fixture(scope="module")
def lab() -> Iterator[tuple[Path, scrydb.Index]]:
    """One repository and index that every generated example syncs into (incrementally)."""
    base = Path(tempfile.mkdtemp(prefix="scry-hostile-"))
    root = base / "repo"
    root.mkdir()
    ix = scrydb.open(root, db=base / "i.db", embedder=FakeEmbedder(dim=8))
    try:
        with pytest.MonkeyPatch.context() as mp:
            # The machine's global git excludes must not decide what these tests expect.
            mp.setattr("scrydb.walk._global_excludes", lambda: None)
            yield root, ix
    finally:
        ix.close()
        shutil.rmtree(base, ignore_errors=True)


def _reset(root: Path) -> None:
    for child in root.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


EXTS = sorted(
    {".py", ".js", ".ts", ".go", ".rs", ".c", ".md", ".yaml", ".toml", ".txt", ""}
    | set(EXT.values())
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    files=st.lists(st.tuples(st.sampled_from(EXTS), file_bytes()), min_size=1, max_size=6),
)
def test_generated_contents_are_indexed_or_skipped(
    lab: tuple[Path, scrydb.Index], files: list[tuple[str, bytes]]
) -> None:
    root, ix = lab
    _reset(root)
    cases: dict[str, tuple[bytes, str]] = {}
    cfg = Config().index
    for i, (ext, data) in enumerate(files):
        rel = f"g{i % 3}/f{i}{ext}"
        reason = name_reason(rel, rel.rsplit("/", 1)[-1], len(data), cfg) or classify_content(
            data, cfg.skip_secrets
        )
        cases[rel] = (data, reason or "indexed")
    write_cases(root, cases)
    GENERATED["generated files"] += len(cases)
    rep = ix.sync()
    assert not check_outcomes(ix, cases)  # every skip here is decided by the bytes
    assert rep.skipped == Counter(c[1] for c in cases.values() if c[1] != "indexed")
    assert ix.store.scalar("SELECT count(*) FROM files") == sum(
        1 for c in cases.values() if c[1] == "indexed"
    )
    for rel, (data, want) in cases.items():
        words = [w for w in decode(data).split() if "\x00" not in w]
        if want == "indexed" and words:
            ix.search(words[len(words) // 2][:500], k=3)
            assert any(m.path == rel for m in ix.locate(words[0][:500], k=10_000)), rel
    assert rep.pending == 0
    assert ix.store.scalar("PRAGMA quick_check") == "ok"


_name_bytes = st.binary(min_size=1, max_size=40).filter(
    lambda b: b"/" not in b and b"\x00" not in b and b not in (b".", b"..")
)
_name_text = st.text(
    st.characters(exclude_characters="/\x00", exclude_categories=("Cs",)), min_size=1, max_size=30
).filter(lambda s: s not in (".", "..") and len(os.fsencode(s)) < 200)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(
        st.tuples(st.one_of(_name_text, _name_bytes.map(os.fsdecode)), st.booleans()),
        min_size=1,
        max_size=6,
        unique_by=lambda t: t[0],
    )
)
def test_generated_names_are_indexed_or_skipped(
    lab: tuple[Path, scrydb.Index], names: list[tuple[str, bool]]
) -> None:
    root, ix = lab
    _reset(root)
    cfg = Config().index
    expected: dict[str, str] = {}
    number: dict[str, int] = {}
    for i, (name, in_dir) in enumerate(names):
        if name in META_FILES or name in (".scry.toml", ".scryignore"):
            continue
        rel = f"{name}/f{i}.py" if in_dir else name
        number[rel] = i
        body = f"def generated_name_{i}():\n    return {i}\n"
        path = os.path.join(os.fsencode(root), os.fsencode(rel))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(body.encode())
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            expected[rel] = "bad-name"
            continue
        leaf = rel.rsplit("/", 1)[-1]
        noise = in_dir and (
            name in NOISE_DIRS or name.endswith(".egg-info") or name.startswith("bazel-")
        )
        expected[rel] = "noise" if noise else (name_reason(rel, leaf, len(body), cfg) or "indexed")
    GENERATED["generated names"] += len(expected)
    rep = ix.sync(embed=False)
    indexed = {r[0] for r in ix.store.rows("SELECT path FROM files")}
    for rel, want in expected.items():
        if want == "indexed":
            assert rel in indexed, (rel, rep.skipped)
            r = ix.read(rel)
            assert r.path == rel and f"generated_name_{number[rel]}" in r.text
        else:
            assert rel not in indexed, (rel, want)
    assert len(indexed) == sum(1 for w in expected.values() if w == "indexed")
    assert rep.skipped.get("bad-name", 0) == sum(1 for w in expected.values() if w == "bad-name")


def test_every_kind_of_hostile_file_was_generated() -> None:
    """The hypothesis runs above really produced each kind of hostile input (a strategy
    that silently generated nothing would make them pass vacuously); ``-s`` shows the
    counts."""
    print(f"\nhostile files: {dict(GENERATED)}")
    assert GENERATED, "no hostile file was generated"
    assert all(n > 0 for n in GENERATED.values()), dict(GENERATED)


def test_indexed_file_that_turns_hostile_leaves_the_index(tmp_path: Path) -> None:
    """A file indexed once, then given a private key, NUL bytes, a generated marker or
    a size over the limit, is dropped: the index never keeps its old text."""
    root = tmp_path / "repo"
    root.mkdir()
    names = ("key.py", "nul.py", "gen.py", "big.py", "min.js")
    for n in names:
        (root / n).write_text(f"def old_{n[:3]}():\n    return 'old text {n}'\n")
    cfg = Config()
    cfg.index.max_file_bytes = 5_000
    with scrydb.open(root, db=tmp_path / "i.db", config=cfg) as ix:
        ix.sync(embed=False)
        key = "-----BEGIN RSA PRIVATE KEY-----\n" + "A" * 64 + "\n-----END RSA PRIVATE KEY-----\n"
        (root / "key.py").write_text((root / "key.py").read_text() + key)
        (root / "nul.py").write_bytes(b"\x00" + (root / "nul.py").read_bytes())
        (root / "gen.py").write_text("# @generated\n" + (root / "gen.py").read_text())
        (root / "big.py").write_text("x = 1\n" * 2000)
        (root / "min.js").write_text("var a=" + "1," * 2000 + "1;\n")
        rep = ix.sync(embed=False)
        assert rep.files_deleted == 5 and ix.store.scalar("SELECT count(*) FROM files") == 0
        assert ix.locate("old text") == [] and ix.locate("PRIVATE KEY") == []
        skipped = dict(ix.store.rows("SELECT path, reason FROM skipped"))
        assert skipped == {
            "key.py": "secret",
            "nul.py": "binary",
            "gen.py": "generated",
            "min.js": "minified",
        }
        assert rep.skipped["too-large"] == 1  # by its size: never read
        assert_consistent(ix)
