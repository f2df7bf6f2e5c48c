"""What every harness asserts: errors are :class:`~scrydb.errors.ScryError` with one line,
and no input makes an operation run longer than a bound (CPU seconds of the process, so
a loaded machine does not make it flaky)."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from scrydb.errors import ScryError


class Finding(AssertionError):
    """A property a harness checks did not hold (libFuzzer reports it as a crash)."""


def one_line(message: str, where: str) -> None:
    """``message`` is what a user sees: non-empty, a single line."""
    if not message.strip():
        raise Finding(f"{where}: an empty error message")
    if "\n" in message or "\r" in message:
        raise Finding(f"{where}: an error message of several lines: {message!r:.300}")


@contextlib.contextmanager
def expected_errors(where: str) -> Iterator[None]:
    """Inside it a :class:`ScryError` with one line is an accepted answer to bad input;
    any other exception propagates (a finding)."""
    try:
        yield
    except ScryError as e:
        one_line(str(e), where)


@contextlib.contextmanager
def bounded(seconds: float, where: str) -> Iterator[None]:
    """The block must take at most ``seconds`` of process CPU time."""
    t0 = time.process_time()
    yield
    spent = time.process_time() - t0
    if spent > seconds:
        raise Finding(f"{where}: {spent:.2f} s of CPU, over the bound of {seconds} s")


def text_of(data: bytes) -> str:
    """The fuzzer's bytes as text the way scrydb decodes a file (UTF-8, bad bytes
    replaced)."""
    return data.decode("utf-8", errors="replace")


def scratch(prefix: str) -> Path:
    """A folder for the process's repository or files: under ``$SCRY_FUZZ_TMP`` (the
    runner points it beside the campaign's work folder, since libFuzzer's exit skips
    the clean-up) or the temp directory, removed when the process ends normally."""
    d = Path(tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("SCRY_FUZZ_TMP") or None))
    atexit.register(shutil.rmtree, d, True)
    return d
