"""A worker's printed output, read from its pipe by a thread of the grader's, capped in size, so that a test can show
the student what their code printed during a call (``OutputCapture.since``)."""

from __future__ import annotations

import os
import select
import threading


class OutputCapture:
    """Drains a pipe in a thread, keeping the first ``cap`` bytes and a running total.

    Every read from the pipe happens under the lock, and ``settled_mark`` and ``since`` read what the pipe holds
    themselves: a mark then counts every byte written before it, however far behind the thread is. (A thread that
    had read a chunk but not yet counted it let loading's print reach a test's output under load.)"""

    PIPE_MOST = 1 << 20  # Linux's largest pipe buffer: what a worker waiting on its reply can have left unread

    def __init__(self, stream, cap: int):
        self.cap = cap
        self.kept = bytearray()
        self.total = 0
        self._stream = stream  # read through its fd only; closed here at end of file, once
        os.set_blocking(stream.fileno(), False)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        poller = select.poll()
        poller.register(self._stream.fileno(), select.POLLIN)
        while True:
            poller.poll()
            with self._lock:
                if not self._read(65536):
                    return

    def _read(self, most: int) -> bool:
        """With the lock held: read up to ``most`` bytes the pipe holds now; False once it is closed."""
        if self._stream.closed:
            return False
        while most > 0:
            try:
                chunk = os.read(self._stream.fileno(), min(most, 65536))
            except BlockingIOError:
                return True
            except OSError:
                chunk = b""
            if not chunk:
                self._stream.close()
                return False
            room = self.cap - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            self.total += len(chunk)
            most -= len(chunk)
        return True

    def mark(self) -> int:
        with self._lock:
            return self.total

    def settled_mark(self) -> int:
        """``mark`` counting all that is in the pipe now: after a reply, everything the worker printed before it."""
        with self._lock:
            self._read(self.PIPE_MOST)
            return self.total

    def since(self, mark: int, limit: int = 2000) -> str:
        """Text printed since ``mark`` (and in the pipe now), at most ``limit`` characters, with a note when cut."""
        with self._lock:
            self._read(self.PIPE_MOST)
            text = bytes(self.kept[mark:]).decode("utf-8", "replace")
            total = self.total - mark
        if len(text) > limit or total > len(text):
            shown = text[:limit]
            return shown + f"\n[... output truncated: {total} bytes in all]"
        return text



