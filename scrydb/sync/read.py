"""Reading one file for the index: its bytes, the skip rules its bytes decide, its hash,
its text and its chunks. :func:`read_and_chunk` is the one path from a walked file to
chunks: the lexical phase writes what it returns, and the first-index estimate counts
it, so both honour the same skip rules and see the same text."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from scrydb import langs
from scrydb.chunk import Chunk, chunk_file
from scrydb.config import IndexConfig
from scrydb.walk import UTF16_BOMS, WalkedFile, classify_content, failure_reason


def read_file(path: Path, size: int, limit: int) -> bytes:
    """A file's bytes, at most ``limit + 1`` (more than ``limit`` means too large).

    Unbuffered and sized by the stat the walk took, so reading a file allocates what it
    holds plus one byte (a buffered ``read(limit + 1)`` allocates ``limit`` bytes for
    every file, however small; ``tests/test_perf_gates.py`` holds this). A file that grew
    since its stat is read on, up to the limit.
    """
    want = min(max(size, 0), limit) + 1
    with open(path, "rb", buffering=0) as fh:
        data = fh.read(want)
        # A regular file returns less only at its end; all of it means it grew.
        while len(data) == want and want <= limit:
            more = fh.read(min(limit + 1 - len(data), max(len(data), 65536)))
            if not more:
                break
            data += more
            want = len(data)
    return data


def file_hash(data: bytes) -> str:
    """blake2b-128 of a file's bytes (decides whether a touched file really changed)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def decode(data: bytes) -> str:
    """UTF-8 text of a file (BOM dropped, invalid bytes replaced, never an error); a file
    that starts with a UTF-16 byte order mark is read as UTF-16."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith(UTF16_BOMS):
        return data.decode("utf-16", errors="replace").replace("\x00", "\ufffd")
    return data.decode("utf-8", errors="replace")


@dataclass
class FileChunks:
    """One walked file read, classified, decoded and chunked, or why not."""

    size: int = 0  #: bytes read (0: it could not be read)
    #: a reason the file is not indexed, decided by its size or bytes (kept in ``skipped``)
    skipped: str | None = None
    #: it could not be read ("vanished", "unreadable"): not remembered, tried again
    failed: str | None = None
    digest: str = ""  #: hash of its bytes
    unchanged: bool = False  #: its bytes hash to the digest it was indexed with: not chunked
    lang: str | None = None
    n_lines: int = 0
    chunks: list[Chunk] = field(default_factory=list)
    parse_failed: bool = False  #: its parse failed and it was chunked as plain windows


def read_and_chunk(
    root: Path, f: WalkedFile, config: IndexConfig, known: str | None = None
) -> FileChunks:
    """Read ``f`` (below ``root``), apply the rules its bytes decide (too large, binary,
    generated, secret, minified; ``walk.classify_content``), hash it, and, unless its
    hash is ``known`` (the digest it was indexed with), decode and chunk it."""
    try:
        data = read_file(root / f.path, f.size, config.max_file_bytes)
    except OSError as e:
        # FileNotFoundError: deleted since the walk saw it.
        return FileChunks(failed=failure_reason(e))
    out = FileChunks(size=len(data))
    if len(data) > config.max_file_bytes:
        out.skipped = "too-large"
    else:
        out.skipped = classify_content(data, config.skip_secrets)
    if out.skipped is not None:
        return out
    out.digest = file_hash(data)
    if known is not None and known == out.digest:
        out.unchanged = True
        return out
    text = decode(data)
    out.lang = langs.detect(f.path, data[:256])
    failed: list[str] = []
    out.chunks = chunk_file(f.path, text, out.lang, on_fallback=failed.append)
    out.parse_failed = bool(failed)
    out.n_lines = text.count("\n") + 1 if text else 0
    return out
