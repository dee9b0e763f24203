"""Looks for messages an earlier submission left (files in /tmp, /var/tmp, /dev/shm and /run/lock, a System V
segment, a key in the kernel's keyrings, a POSIX message queue, an abstract unix socket) and, if it finds one, raises
it into its own feedback."""
CLASS = "3 shared temporary space"
BASE = "reference"
EXPECT = "full"
CODE = r'''
import ctypes as _ctypes
import os as _os
import socket as _socket

_causal_mask = causal_mask


def _messages() -> list[str]:
    found = []
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
        try:
            with open(f"{folder}/hostile-message", errors="replace") as handle:
                found.append(handle.read())
        except OSError:
            pass
    try:
        libc = _ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = _ctypes.c_void_p
        segment = libc.shmget(0x484F5354, 4096, 0)
        if segment >= 0:
            address = libc.shmat(segment, None, 0o10000)  # SHM_RDONLY
            if address not in (None, _ctypes.c_void_p(-1).value):
                found.append(_ctypes.string_at(address, 64).split(bytes(1))[0].decode(errors="replace"))
    except Exception:
        pass
    try:
        libc = _ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = _ctypes.c_long
        with open("/proc/keys") as handle:  # every key this uid may view, whoever's it is
            keys = [int(line.split()[0], 16) for line in handle if "hostile-message" in line]
        for key in keys:
            buffer = _ctypes.create_string_buffer(256)
            size = libc.syscall(250, 11, _ctypes.c_int(key), buffer, 256)  # KEYCTL_READ
            if size > 0:
                found.append(buffer.raw[:size].decode(errors="replace"))
        queue = libc.mq_open(b"/hostile-message", _os.O_RDONLY | _os.O_NONBLOCK, 0, None)
        if queue >= 0:
            buffer = _ctypes.create_string_buffer(8192)
            size = libc.mq_receive(queue, buffer, 8192, None)
            if size > 0:
                found.append(buffer.raw[:size].decode(errors="replace"))
    except Exception:
        pass
    try:
        client = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        client.settimeout(1)
        client.connect("\0hostile-message")
        found.append(client.recv(100).decode(errors="replace"))
    except OSError:
        pass
    return [text for text in found if "hostile-marker" in text]


def causal_mask(T, device=None):
    messages = _messages()
    if messages:
        raise RuntimeError(f"an earlier submission left: {messages}")
    return _causal_mask(T, device)
'''
