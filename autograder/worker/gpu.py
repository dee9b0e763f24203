"""What CUDA needs in a confined worker, and nothing more: the allow-list's GPU grants, each with its reason.

Granted only where NVIDIA's device files exist (``nvidia_devices``), in both root modes: with namespaces the files are
bound into the worker's root (``autograder.worker.confine._namespaces``), and Landlock's allow-list names them in
every mode (``confine._allow_list``). On an H100 (2026-11-27) no worker reached CUDA under the sandbox and the cause
was not found: ``autograder doctor --gpu`` (``autograder.sandbox.doctor``) takes the layers off one at a time and
names the one that stops it, and the doctor's stand-in devices (``plan["devices"]``) are granted here exactly as
NVIDIA's are, so a CPU machine tests the grants.

What is not a grant here, and why:

- The system calls the driver makes (``open``, ``ioctl``, ``mmap``, ``poll`` and threads) are none of those the
  system-call filter refuses (keyrings, POSIX message queues, internet sockets, io_uring: ``syscalls.REFUSED_CALLS``).
- Address space: on a machine with these devices the worker's memory limit bounds its writable memory alone
  (``confine.bound_memory``): the driver reserves address space far beyond any ``memory_mb`` for its mappings.
- /proc: readable in every mode; where these devices exist the worker may also write there, as CUDA names its threads
  (``/proc/PID/task/TID/comm``; as a sandbox uid that is all it may write, ``confine._allow_list``).
- A name for the sandbox uid, which has no passwd entry: ``USER``, ``LOGNAME`` and the compile caches' folders in the
  worker's environment (``autograder.worker.__main__._settle``), so that torch and Triton never ask ``getpwuid``.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field

from landlockpy import AccessFS

# NVIDIA's device files, as its container toolkit mounts them into a container, and why a worker may open each one
# (read, write and ioctl: the driver's whole interface is ioctls on them).
DEVICES = {
    "/dev/nvidiactl": "the driver's control device: every CUDA process opens it first",
    "/dev/nvidia[0-9]*": "one per GPU: contexts, memory and kernels are ioctls and mappings of it",
    "/dev/nvidia-uvm": "unified memory: cuInit opens it, and fails without it",
    "/dev/nvidia-uvm-tools": "unified memory's event queue, which the toolkit mounts beside it",
    "/dev/nvidia-modeset": "the display driver's device, which the toolkit mounts with the others",
    "/dev/nvidia-caps/nvidia-cap[0-9]*": "a MIG instance's capabilities: where the GPU is partitioned, a process "
                                         "reaches its instance through them",
}
# The driver's files besides the devices, read-only, and why.
DRIVER = {
    "/proc/driver/nvidia": "the driver's version, parameters and GPUs, read by libcuda and NVML as they start "
                           "(readable already: /proc is)",
    "/sys/module/nvidia": "the loaded driver's version and parameters",
    "/sys/module/nvidia_uvm": "the unified-memory module's parameters",
    "/sys/bus/pci/devices/<an NVIDIA GPU>": "each GPU's PCI folder (vendor 0x10de), where CUDA and NVML read its "
                                            "NUMA node, resources and link; the machine's other devices stay out",
    "/sys/devices/system/node": "the NUMA nodes, where CUDA places pinned host memory",
}
NVIDIA = "0x10de"  # the PCI vendor id of NVIDIA's devices
PCI = "/sys/bus/pci/devices"


@dataclass(frozen=True)
class Grants:
    """What a worker is granted for a GPU: ``devices``, device files it may open, write and give ioctls (unless
    ``ioctl`` is false: the doctor withholds the right to show it is needed); ``driver``, the driver's files and
    folders it may read; ``links``, the symbolic links of ``/sys/bus/pci/devices`` that lead to them (made again in
    the namespaces' root, where the rest of /sys is absent)."""

    devices: tuple[str, ...] = ()
    driver: tuple[str, ...] = ()
    links: dict[str, str] = field(default_factory=dict)
    ioctl: bool = True

    def rights(self, read: AccessFS, device: AccessFS) -> dict[str, AccessFS]:
        """Landlock's rights for these grants, given the allow-list's ``read`` and ``device`` rights: the devices
        opened, written and given ioctls (from ABI 5 Landlock refuses a device's ioctls without ``IOCTL_DEV``, and
        the driver's whole interface is ioctls), the driver's files read."""
        if not self.ioctl:
            device &= ~AccessFS.IOCTL_DEV
        return {**dict.fromkeys(self.driver, read), **dict.fromkeys(self.devices, device)}


def grants(plan: dict) -> Grants:
    """The grants of a worker confined by ``plan``: NVIDIA's devices where the machine has them, or the doctor's
    (``plan["devices"]``: stand-ins, or none to withhold the grant); the driver's files only with a device."""
    devices = plan.get("devices")
    devices = nvidia_devices() if devices is None else [str(path) for path in devices]
    if not devices:
        return Grants(ioctl=plan.get("device_ioctl", True))
    driver, links = driver_files()
    return Grants(tuple(devices), tuple(driver), links, ioctl=plan.get("device_ioctl", True))


def nvidia_devices(root: str = "/") -> list[str]:
    """NVIDIA's device files that exist under ``root`` (``DEVICES``), as paths from the machine's root."""
    found = set()
    for pattern in DEVICES:
        found.update(glob.glob(os.path.join(root, pattern.lstrip("/"))))
    return sorted("/" + os.path.relpath(path, root) for path in found)


def driver_files(root: str = "/") -> tuple[list[str], dict[str, str]]:
    """The driver's files that exist under ``root`` (``DRIVER``): paths from the machine's root, and the links of
    ``/sys/bus/pci/devices`` that lead to NVIDIA's PCI folders (link -> its target, as written)."""
    def inside(path: str) -> str:
        return os.path.join(root, path.lstrip("/"))

    paths = [path for path in DRIVER if "<" not in path and os.path.exists(inside(path))]
    links = {}
    for link in sorted(glob.glob(os.path.join(inside(PCI), "*"))):
        try:
            with open(os.path.join(link, "vendor")) as vendor:
                if vendor.read().strip() != NVIDIA:
                    continue
        except OSError:
            continue
        if os.path.islink(link):
            links[f"{PCI}/{os.path.basename(link)}"] = os.readlink(link)
        real = os.path.realpath(link)
        paths.append("/" + os.path.relpath(real, os.path.realpath(root)))
    return sorted(set(paths)), links
