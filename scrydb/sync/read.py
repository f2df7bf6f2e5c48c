"""Reading one file for the index: its bytes, the skip rules its bytes decide, its hash,
its text (by its declared coding, a byte order mark, UTF-8, or a fallback) and its
chunks. :func:`read_and_chunk` is the one path from a walked file to chunks: the lexical
phase writes what it returns, and the first-index estimate counts it, so both honour the
same skip rules and see the same text."""

from __future__ import annotations

import codecs
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from scrydb import langs
from scrydb.chunk import Chunk, chunk_file
from scrydb.config import IndexConfig
from scrydb.walk import UTF16_BOMS, WalkedFile, classify_content, failure_reason

#: Bump when :func:`decode_text` reads some bytes differently: an index written by an
#: older version reads again, once, the files whose text holds U+FFFD (what bytes that
#: were not UTF-8 became before declared codings and fallbacks).
DECODER_VERSION = "2"

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF8 = ("utf-8", "utf-8-sig")
#: Tried in order on bytes that are not UTF-8 and declare no coding: Windows' Western code
#: page first (editors there wrote its quotes and dashes at 0x80-0x9f), then Latin-1,
#: which decodes any byte (cp1252 leaves five undefined).
FALLBACK_CODINGS = ("cp1252", "latin-1")
#: A coding declared on line 1 or 2: Python's PEP 263 cookie (``# -*- coding: latin-1
#: -*-``, ``# vim: set fileencoding=...``) and the same Emacs/vim forms after other
#: languages' comment leaders, or an XML declaration.
_COOKIE = re.compile(
    rb"^[ \t\f]*(?:#|//|/\*|--|;|%|<!--).*?coding[:=][ \t]*([-\w.]+)"
    rb"|^<\?xml[^>]*\bencoding=[\"']([-\w.]+)"
)


class Decoded(NamedTuple):
    """A file's text and the coding it was read in when that was not UTF-8 (a declared
    coding, a UTF-16 byte order mark, or a fallback); None: UTF-8 (or ASCII)."""

    text: str
    coding: str | None


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


def declared_coding(data: bytes) -> str | None:
    """The text coding a file declares on its first two lines (see ``_COOKIE``), by
    Python's canonical codec name; None when it declares none, or one Python does not
    know as a text coding."""
    for line in data.split(b"\n", 2)[:2]:
        m = _COOKIE.match(line)
        if m:
            name = (m.group(1) or m.group(2)).decode("ascii", "replace")
            try:
                b"x".decode(name, "replace")  # LookupError: unknown, or not text (rot13)
                return codecs.lookup(name).name
            except LookupError:
                return None
    return None


def decode_text(data: bytes) -> Decoded:
    """A file's text, never an error: a byte order mark (UTF-8, UTF-16) decides first,
    then a declared coding (:func:`declared_coding`), then UTF-8; bytes that are not
    UTF-8 are read as FALLBACK_CODINGS, unless they are mostly UTF-8 with a few bad bytes
    (those become U+FFFD). The file's hash is always of its bytes."""
    if data.startswith(_UTF8_BOM):
        return Decoded(data[3:].decode("utf-8", errors="replace"), None)
    if data.startswith(UTF16_BOMS):
        return Decoded(data.decode("utf-16", errors="replace").replace("\x00", "\ufffd"), "utf-16")
    if data.isascii():
        return Decoded(data.decode("ascii"), None)
    declared = declared_coding(data)
    if declared is not None and declared not in _UTF8:
        return Decoded(data.decode(declared, errors="replace"), declared)
    try:
        return Decoded(data.decode("utf-8"), None)
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8", errors="replace")
    if declared is not None or _mostly_utf8(data, text):
        return Decoded(text, None)
    for coding in FALLBACK_CODINGS:
        try:
            return Decoded(data.decode(coding), codecs.lookup(coding).name)
        except UnicodeDecodeError:
            continue
    return Decoded(text, None)  # (not reached: Latin-1 decodes any byte)


def _mostly_utf8(data: bytes, text: str) -> bool:
    """Whether bytes that failed to decode as UTF-8 are still UTF-8 with a few bad bytes:
    more well-formed non-ASCII characters than replaced bytes. Latin-1 or cp1252 text
    almost never forms a valid multi-byte sequence, so it has none."""
    replaced = text.count("\ufffd")
    bad = replaced - data.count(b"\xef\xbf\xbd")  # (a U+FFFD in the file is good UTF-8)
    good = len(text) - len(text.encode("ascii", errors="ignore")) - bad
    return good > bad


def decode(data: bytes) -> str:
    """A file's text (:func:`decode_text` without the coding)."""
    return decode_text(data).text


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
    coding: str | None = None  #: the coding it was read in, when not UTF-8
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
    text, out.coding = decode_text(data)
    out.lang = langs.detect(f.path, data[:256])
    failed: list[str] = []
    out.chunks = chunk_file(f.path, text, out.lang, on_fallback=failed.append)
    out.parse_failed = bool(failed)
    out.n_lines = text.count("\n") + 1 if text else 0
    return out
