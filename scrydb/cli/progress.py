"""Progress on stderr when it is not a terminal (a log file, a pipe, CI): a plain line
every PROGRESS_SECONDS, where a terminal gets rich's bar (``common.progress_bar``).

A run shorter than the interval prints nothing; a long one says where it is and how long
is left, so a first index of a large repository is never silent for minutes."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from scrydb import present

#: Seconds between two progress lines off a terminal: often enough that a log shows the
#: run is alive, rarely enough that a ten-minute index writes about sixty lines.
PROGRESS_SECONDS = 10.0
#: Environment variable that sets the interval in seconds (tests lower it).
PROGRESS_ENV = "SCRY_PROGRESS_SECONDS"
#: What a phase counts.
UNITS = {"scan": "files", "chunk": "files", "embed": "texts"}


def interval() -> float:
    """Seconds between two lines: ``SCRY_PROGRESS_SECONDS`` when it is a positive number,
    else PROGRESS_SECONDS."""
    try:
        value = float(os.environ.get(PROGRESS_ENV, ""))
    except ValueError:
        return PROGRESS_SECONDS
    return value if value > 0 else PROGRESS_SECONDS


class PlainProgress:
    """A ``Progress`` callback (phase, done, total) that writes ``scry: embed 1200 of 5612
    texts (21%), about 4 min left`` to ``out`` at most once per ``every`` seconds (the
    first after ``every`` seconds), the time left from the phase's pace so far."""

    def __init__(self, out: TextIO | None = None, every: float | None = None) -> None:
        self.out = out if out is not None else sys.stderr
        self.every = every if every is not None else interval()
        self._last = time.monotonic()
        self._phase: str | None = None
        self._phase_start = self._last
        self._phase_done = 0

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if phase != self._phase:
            self._phase, self._phase_start, self._phase_done = phase, now, done
        if now - self._last < self.every:
            return
        self._last = now
        line = f"scry: {phase} {done} of {total} {UNITS.get(phase, 'items')}"
        if total > 0:
            line += f" ({min(done / total, 1.0):.0%})"
            pace = (done - self._phase_done) / max(now - self._phase_start, 1e-9)
            if pace > 0 and done < total:
                line += f", about {present.duration((total - done) / pace)} left"
        print(line, file=self.out, flush=True)
