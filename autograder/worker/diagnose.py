"""What the doctor's worker tries once confined (``autograder.sandbox.doctor``), in the order a graded worker meets it:
each device it was granted opened and given an ioctl, each of the driver's files read, the name of its uid asked;
then, on a machine with NVIDIA's devices, ``cuInit`` through libcuda and torch's ``cuda.is_available`` (what a graded
worker asks), the memory limits a graded worker sets next (``confine.bound_memory``), and a small kernel through torch
(which makes CUDA's context under them, as a submission's first CUDA call does).

Each outcome is ``"ok"`` or what went wrong, by name. An ioctl the device does not know is answered by the device
(ENOTTY, EINVAL); one that Landlock refuses never reaches it (EACCES): so the doctor can tell the two apart, with a
stand-in device (``/dev/null``'s numbers) on a machine without a GPU."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import getpass
import os
import warnings

from autograder.worker import confine

LIBCUDA = "libcuda.so.1"  # the driver's library, which torch loads too
TCGETS = 0x5401  # a terminal's ioctl, harmless elsewhere: a device that is reached answers ENOTTY or EINVAL
KERNEL = """a sum of 2**20 floats doubled on the GPU, synchronised"""


def tries(options: dict, plan: dict, view: dict) -> dict:
    """Everything ``options`` asks (``devices``: the device files to try, by default those granted, which the doctor
    names again where it withholds them; ``cuda``: try libcuda and torch; ``memory``: set the memory limits first, as
    a graded worker does), in this confined worker; the report the doctor reads."""
    granted = view["gpu"]
    devices = granted.devices if options.get("devices") is None else options["devices"]
    report = {"uid": os.getuid(), "landlock": view["landlock"], "user": _user(),
              "devices": {path: _device(path) for path in devices},
              "driver": {path: _read(path) for path in granted.driver}}
    if options.get("cuda"):
        report["cuInit"] = _cu_init()
        if report["cuInit"].startswith("ok"):  # torch's import takes seconds, and cannot start what cuInit could not
            report["is_available"] = _available()
    if options.get("memory", True):
        report["memory"] = confine.bound_memory(plan, granted.devices)
    if options.get("cuda"):
        report["kernel"] = _kernel() if report["cuInit"].startswith("ok") else "not tried: cuInit failed"
    return report


def _device(path: str) -> dict[str, str]:
    """Open ``path`` for reading and writing, then give it an ioctl it does not know: {"open", "ioctl"}."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError as exc:
        return {"open": _name(exc), "ioctl": "not tried"}
    try:
        fcntl.ioctl(fd, TCGETS, bytes(64))
        answer = "ok"
    except OSError as exc:
        answer = _name(exc)
    finally:
        os.close(fd)
    return {"open": "ok", "ioctl": answer}


def _read(path: str) -> str:
    """List the folder ``path`` or read its first byte."""
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, "rb") as handle:
                handle.read(1)
    except OSError as exc:
        return _name(exc)
    return "ok"


def _user() -> str:
    """The name a library finds for this uid (``getpass.getuser``, which torch's compile cache asks)."""
    try:
        return "ok: " + getpass.getuser()
    except (KeyError, OSError) as exc:
        return f"{type(exc).__name__}: {exc}"


def _cu_init() -> str:
    """``cuInit(0)`` through ``LIBCUDA``, and the number of devices it then sees; or the error's name."""
    try:
        cuda = ctypes.CDLL(LIBCUDA)
    except OSError as exc:
        return f"{LIBCUDA} did not load: {exc}"
    code = cuda.cuInit(0)
    if code == 0:
        count = ctypes.c_int()
        cuda.cuDeviceGetCount(ctypes.byref(count))
        return f"ok: {count.value} device(s)"
    name = ctypes.c_char_p()
    cuda.cuGetErrorName(code, ctypes.byref(name))
    return f"error {code} ({(name.value or b'unknown').decode()})"


def _available() -> str:
    """torch imported and asked whether CUDA is available, before the memory limits, as a graded worker asks
    (``autograder.worker.__main__._cuda_usable``)."""
    try:
        import torch

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok" if torch.cuda.is_available() else "torch.cuda.is_available() is False"
    except Exception as exc:  # noqa: BLE001 - whatever the import raises is the answer
        return f"{type(exc).__name__}: {str(exc)[:400]}"


def _kernel() -> str:
    """``KERNEL`` through torch: "ok: the device's name", or the exception."""
    try:
        import torch

        values = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
        float((values * 2).sum())
        torch.cuda.synchronize()
        return "ok: " + torch.cuda.get_device_name()
    except Exception as exc:  # noqa: BLE001 - whatever CUDA raises is the answer
        return f"{type(exc).__name__}: {str(exc)[:400]}"


def _name(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, str(exc.errno))
