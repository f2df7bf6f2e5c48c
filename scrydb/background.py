"""A detached ``scry index`` that computes embeddings while searches answer lexically.

The first search of a repository builds the lexical index in the foreground (seconds) and
hands the embeddings to a background ``scry index`` process: it holds the writer lock
like any indexer, logs to ``<index>.log``, and records itself in ``<index>.bg.json`` so
that ``scry status`` can show it, ``scry index --cancel`` can stop it, and a foreground
``scry index`` can take over from it. Stopping it is a polite SIGTERM: the indexer ends
after its current batch and keeps everything it committed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

#: How long a stop waits for the indexer to finish its batch (64 texts take ~3 s).
STOP_WAIT_S = 60.0


@dataclass
class Background:
    """A background indexer as it recorded itself."""

    pid: int
    started: float  #: unix time
    log: str  #: its log file
    root: str


def record_path(db: Path) -> Path:
    """Where a background indexer of ``db`` records itself."""
    return Path(str(db) + ".bg.json")


def log_path(db: Path) -> Path:
    """The log of background indexers of ``db``."""
    return Path(str(db) + ".log")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # an ended process nobody has reaped yet (a zombie) is not running
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def running(db: Path) -> Background | None:
    """The background indexer of ``db`` if one is running (a stale record is removed)."""
    rec = record_path(db)
    try:
        data = json.loads(rec.read_text(encoding="utf-8"))
        bg = Background(**data)
    except (OSError, ValueError, TypeError):
        return None
    if bg.pid == os.getpid() or _alive(bg.pid):
        return bg
    try:
        rec.unlink()
    except OSError:
        pass
    return None


def start(root: Path, db: Path, config: str | None) -> Background:
    """Start a detached ``scry index`` of ``root`` into ``db`` (no shell; its output goes
    to the log file). Returns what it will record."""
    log = log_path(db)
    log.parent.mkdir(parents=True, exist_ok=True)
    args = [sys.executable, "-m", "scrydb.cli", "index", "--background-child", "--db", str(db)]
    if config:
        args += ["--config", str(config)]
    args.append(str(root))
    with open(log, "ab") as out:
        out.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} scry index (background)\n".encode())
        out.flush()
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            cwd=str(root),
            start_new_session=True,
            close_fds=True,
        )
    return Background(proc.pid, time.time(), str(log), str(root))


def register(db: Path, root: Path) -> None:
    """Called by the background indexer itself: record this process."""
    rec = record_path(db)
    bg = Background(os.getpid(), time.time(), str(log_path(db)), str(root))
    tmp = rec.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(bg)), encoding="utf-8")
    os.replace(tmp, rec)


def unregister(db: Path) -> None:
    """Called by the background indexer when it ends."""
    rec = record_path(db)
    try:
        data = json.loads(rec.read_text(encoding="utf-8"))
        if data.get("pid") == os.getpid():
            rec.unlink()
    except (OSError, ValueError):
        pass


def stop(db: Path, wait: float = STOP_WAIT_S) -> Background | None:
    """Ask the background indexer of ``db`` to stop and wait until it has; returns it
    (None when none was running)."""
    bg = running(db)
    if bg is None or bg.pid == os.getpid():
        return None
    try:
        os.kill(bg.pid, signal.SIGTERM)
    except ProcessLookupError:
        return bg
    deadline = time.monotonic() + wait
    while _alive(bg.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(bg.pid):  # stuck (e.g. a hung endpoint): it keeps what it committed
        try:
            os.kill(bg.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    unregister_stale(db, bg.pid)
    return bg


def unregister_stale(db: Path, pid: int) -> None:
    """Remove the record of a process that has ended."""
    rec = record_path(db)
    try:
        data = json.loads(rec.read_text(encoding="utf-8"))
        if data.get("pid") == pid:
            rec.unlink()
    except (OSError, ValueError):
        pass
