"""The memory a call makes a worker hold, sampled from outside while it runs (``Student.measure``): its resident size
from ``/proc``, or its GPU memory from NVML. A worker's own word on its memory is never believed."""

from __future__ import annotations

import functools
import os
import threading

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


class ResidentSampler:
    """Samples a process's resident size every ``interval`` seconds in a thread, while in a ``with`` block.

    ``rise`` is the highest sample minus the size on entry, in bytes (``None`` when ``/proc`` is unreadable).
    """

    def __init__(self, pid: int, interval: float = 0.0005):
        self.pid, self.interval = pid, interval
        self.base: int | None = None
        self.peak: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _read(self) -> int | None:
        try:
            with open(f"/proc/{self.pid}/statm") as handle:
                return int(handle.read().split()[1]) * PAGE_SIZE
        except (OSError, ValueError, IndexError):
            return None

    def _run(self) -> None:
        while not self._stop.is_set():
            size = self._read()
            if size is not None:
                self.peak = size if self.peak is None else max(self.peak, size)
            self._stop.wait(self.interval)

    def __enter__(self) -> ResidentSampler:
        self.base = self._read()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def rise(self) -> int | None:
        if self.base is None or self.peak is None:
            return None
        return max(0, self.peak - self.base)


class GpuSampler(ResidentSampler):
    """Samples a process's GPU memory as NVML reports it per process (``nvidia-ml-py``), summed over the devices;
    ``rise`` is ``None`` where NVML cannot be used."""

    def _read(self) -> int | None:
        nvml = _nvml()
        if nvml is None:
            return None
        try:
            used = 0
            for index in range(nvml.nvmlDeviceGetCount()):
                device = nvml.nvmlDeviceGetHandleByIndex(index)
                used += sum(p.usedGpuMemory or 0 for p in nvml.nvmlDeviceGetComputeRunningProcesses(device)
                            if p.pid == self.pid)
            return used
        except nvml.NVMLError:
            return None


@functools.cache
def _nvml():
    """The initialised NVML binding, or None (no package, no driver)."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - any failure means no GPU readings
        return None
    return pynvml
