"""Fault injection for the reliability tests: unreadable paths (as ``chmod 000`` is for a
user who is not root: the tests run as root, where chmod stops nothing), files that
vanish between two steps, small file systems, read-only mounts and child processes
killed at exact points.

Everything here either patches for the duration of a ``with`` block or undoes what it
did; nothing touches files outside the temp directories the tests give it.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import io
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _under(path: object, roots: list[str], strict: bool) -> bool:
    try:
        p = os.path.abspath(os.fsdecode(path))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    for r in roots:
        if p == r and not strict:
            return True
        if p.startswith(r + os.sep):
            return True
    return False


@contextlib.contextmanager
def unreadable(*paths: Path) -> Iterator[None]:
    """Make ``paths`` behave as mode 000 does for an ordinary user.

    A directory cannot be listed and nothing under it can be stat'ed or opened; a file
    can be stat'ed (the directory holding it is readable) but not opened.
    """
    dirs = [os.path.abspath(p) for p in paths if Path(p).is_dir()]
    files = [os.path.abspath(p) for p in paths if not Path(p).is_dir()]
    real_scandir, real_stat, real_lstat = os.scandir, os.stat, os.lstat
    real_open, real_io_open, real_os_open = builtins.open, io.open, os.open

    def denied(path: object) -> PermissionError:
        return PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))  # type: ignore[arg-type]

    def scandir(path: object = ".") -> object:
        if _under(path, dirs, strict=False):
            raise denied(path)
        return real_scandir(path)  # type: ignore[arg-type]

    def stat(path: object, *a: object, **kw: object) -> os.stat_result:
        if _under(path, dirs, strict=True):
            raise denied(path)
        return real_stat(path, *a, **kw)  # type: ignore[arg-type]

    def lstat(path: object, *a: object, **kw: object) -> os.stat_result:
        if _under(path, dirs, strict=True):
            raise denied(path)
        return real_lstat(path, *a, **kw)  # type: ignore[arg-type]

    def blocked(path: object) -> bool:
        return _under(path, dirs, strict=True) or _under(path, files, strict=False)

    def open_(file: object, *a: object, **kw: object) -> object:
        if isinstance(file, str | bytes | os.PathLike) and blocked(file):
            raise denied(file)
        return real_open(file, *a, **kw)  # type: ignore[call-overload]

    def io_open(file: object, *a: object, **kw: object) -> object:
        if isinstance(file, str | bytes | os.PathLike) and blocked(file):
            raise denied(file)
        return real_io_open(file, *a, **kw)  # type: ignore[call-overload]

    def os_open(path: object, *a: object, **kw: object) -> int:
        if blocked(path):
            raise denied(path)
        return real_os_open(path, *a, **kw)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "scandir", scandir)
        mp.setattr(os, "stat", stat)
        mp.setattr(os, "lstat", lstat)
        mp.setattr(os, "open", os_open)
        mp.setattr(builtins, "open", open_)
        mp.setattr(io, "open", io_open)
        yield


@contextlib.contextmanager
def vanishing_after_scandir(directory: Path, victim: Path) -> Iterator[None]:
    """Delete ``victim`` right after ``directory`` was listed: the walk sees a name
    whose file is gone by the time it stats it."""
    real = os.scandir
    target = os.path.abspath(directory)

    def scandir(path: object = ".") -> object:
        it = real(path)  # type: ignore[arg-type]
        if not isinstance(path, str | bytes | os.PathLike):  # a directory fd (rmtree)
            return it
        if os.path.abspath(os.fsdecode(path)) != target:
            return it
        entries = list(it)
        it.close()
        if victim.is_dir():
            shutil.rmtree(victim)
        else:
            victim.unlink(missing_ok=True)
        return iter(entries)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "scandir", scandir)
        yield


def can_mount() -> bool:
    """Whether this process may mount file systems (root with CAP_SYS_ADMIN, Linux)."""
    return os.geteuid() == 0 and shutil.which("mount") is not None


@contextlib.contextmanager
def small_fs(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (e.g. ``"600k"``) mounted at ``where``; skips the test when
    this machine does not allow mounting."""
    where.mkdir(parents=True, exist_ok=True)
    if not can_mount():
        pytest.skip("mounting a small file system needs root")
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@contextlib.contextmanager
def read_only_view(src: Path, where: Path) -> Iterator[Path]:
    """``src`` bind-mounted read-only at ``where`` (a read-only directory even for
    root); skips the test when mounting is not allowed."""
    where.mkdir(parents=True, exist_ok=True)
    if not can_mount():
        pytest.skip("a read-only bind mount needs root")
    r = subprocess.run(["mount", "--bind", str(src), str(where)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {r.stderr.strip()}")
    try:
        r = subprocess.run(
            ["mount", "-o", "remount,bind,ro", str(where)], capture_output=True, text=True
        )
        if r.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {r.stderr.strip()}")
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[Path]:
    """``chattr +i``: a file nobody (root included) may write; skips when unsupported."""
    if shutil.which("chattr") is None:
        pytest.skip("no chattr")
    r = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot make a file immutable here: {r.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
