"""Leaves messages for the submissions graded after it, in every place two processes can share: files in /tmp,
/var/tmp, /dev/shm and /run/lock (world-readable), a System V shared memory segment, a key in its uid's kernel keyring
and a POSIX message queue (both readable by every uid), and a process that keeps serving the message on an abstract
unix socket."""
CLASS = "3 shared temporary space"
BASE = "reference"
EXPECT = "full"
CODE = r'''
import ctypes as _ctypes
import os as _os
import socket as _socket


def _drop():
    message = b"@MARKER@"
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
        try:
            path = f"{folder}/hostile-message"
            with open(path, "wb") as handle:
                handle.write(message)
            _os.chmod(path, 0o666)
        except OSError:
            pass
    try:
        libc = _ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = _ctypes.c_void_p
        segment = libc.shmget(0x484F5354, 4096, 0o1666)  # IPC_CREAT | 0666
        if segment >= 0:
            address = libc.shmat(segment, None, 0)
            if address not in (None, _ctypes.c_void_p(-1).value):
                _ctypes.memmove(address, message, len(message))
    except Exception:
        pass
    try:
        libc = _ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = _ctypes.c_long
        key = libc.syscall(248, b"user", b"hostile-message", message, len(message), _ctypes.c_int(-4))  # add_key, @u
        if key >= 0:
            libc.syscall(250, 5, _ctypes.c_int(key), _ctypes.c_uint(0x3F3F3F3F))  # KEYCTL_SETPERM: all to all
        _os.umask(0)
        queue = libc.mq_open(b"/hostile-message", _os.O_CREAT | _os.O_WRONLY, 0o666, None)
        if queue >= 0:
            libc.mq_send(queue, message, len(message), 0)
    except Exception:
        pass
    try:
        if _os.fork() == 0:
            _os.setsid()
            server = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            server.bind("\0hostile-message")
            server.listen(5)
            while True:
                connection, _ = server.accept()
                connection.sendall(message)
                connection.close()
    except Exception:
        pass


_drop()
'''
