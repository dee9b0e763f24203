"""What a worker writes to disk, watched: past ``tmp_mb`` megabytes, or ``FILES_ALLOWED`` files, it is stopped.

A worker may write to its copy of the submission and to its TMPDIR (namespaces mount the copy at /submission; Landlock
allows nothing else on disk), and both lie in the grader's temporary folder, on the machine's disk. The per-file limit
(``file_size_mb``) bounds a file, not how many: without a watch, a submission could fill the disk that its neighbours'
gradings and the grader's own results are written to. The kernel has no per-process disk quota that needs no setup, so a
thread of the grading process measures the two folders every ``POLL_SECONDS`` (allocated blocks, links not followed)
and calls ``stop`` with the reason once they hold more than what was staged plus the limit, or ``FILES_ALLOWED`` more
entries (inodes run out too); a scan stops counting there, so that a submission cannot make the watch itself slow.
Files on that disk which the worker's processes hold open after removing them count too (``held``): a worker that
wrote 100 MB that way, under a limit of 30 MB, went unseen by the scan.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

POLL_SECONDS = 0.5
FILES_ALLOWED = 5_000


def usage(folders: list[Path], most: int) -> tuple[int, int]:
    """(bytes allocated, entries) under ``folders``, links not followed; the scan stops past ``most`` entries."""
    size = count = 0
    pending = [str(folder) for folder in folders]
    while pending and count <= most:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            count += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            size += info.st_blocks * 512
            if stat.S_ISDIR(info.st_mode):
                pending.append(entry.path)
    return size, count


def held(pids: Iterable[int], device: int) -> int:
    """Bytes allocated to files on ``device`` that processes ``pids`` hold open but that no longer have a name."""
    seen, size = set(), 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if not os.readlink(f"/proc/{pid}/fd/{fd}").endswith(" (deleted)"):
                        continue
                    info = os.stat(f"/proc/{pid}/fd/{fd}")
                    if info.st_dev == device and stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
                        seen.add((info.st_dev, info.st_ino))
                        size += info.st_blocks * 512
    return size


class Watch:
    """Measures ``folders`` in a thread until ``close``; calls ``stop(reason)`` once, when they outgrow the limit.
    ``pids`` names the worker's processes, for the removed files they hold (``held``)."""

    def __init__(self, folders: list[Path], limit_mb: int, stop: Callable[[str], None],
                 pids: Callable[[], Iterable[int]]):
        self.folders = folders
        self.limit_mb = limit_mb
        self._stop = stop
        self._pids = pids
        self._device = os.stat(folders[0]).st_dev
        self._start_bytes, self._start_files = usage(folders, 1 << 62)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._closed.wait(POLL_SECONDS):
            written, files = usage(self.folders, self._start_files + FILES_ALLOWED)
            written += held(self._pids(), self._device)
            reason = ""
            if written - self._start_bytes > self.limit_mb << 20:
                reason = f"more than {self.limit_mb} MB"
            elif files - self._start_files > FILES_ALLOWED:
                reason = f"more than {FILES_ALLOWED} files"
            if reason:
                self._stop(f"the process running your code, or one it started, was stopped for writing {reason} to "
                           "disk (its folder and its temporary folder together)")
                return

    def close(self) -> None:
        self._closed.set()
        self._thread.join()
