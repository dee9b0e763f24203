"""Makes an IPv4 and an IPv6 socket with the high 32 bits of the family set (the kernel reads the low 32, a filter
rule comparing all 64 let them through: issue 41) and sends a datagram and a connection to a port on the grading
machine; namespaces give the worker no network, the system-call filter no socket of any family but UNIX's, however
its bits are set."""
CLASS = "9 environment and network"
BASE = "reference"
EXPECT = "full"
CODE = r'''
import ctypes as _ctypes
import os as _os
import socket as _socket


def _high_bits_phone():
    libc = _ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = _ctypes.c_long
    number = {"x86_64": 41, "aarch64": 198}.get(_os.uname().machine, 41)  # socket
    for family, host in ((_socket.AF_INET, "127.0.0.1"), (_socket.AF_INET6, "::1")):
        for kind in (_socket.SOCK_DGRAM, _socket.SOCK_STREAM):
            descriptor = libc.syscall(_ctypes.c_long(number), _ctypes.c_long(family | (1 << 32)),
                                      _ctypes.c_long(kind), _ctypes.c_long(0))
            if descriptor < 0:
                continue
            try:
                with _socket.socket(fileno=descriptor) as made:
                    made.settimeout(1)
                    if kind == _socket.SOCK_DGRAM:
                        made.sendto(b"@MARKER@", (host, @PORT@))
                    else:
                        made.connect((host, @PORT@))
                        made.sendall(b"@MARKER@")
            except OSError:
                pass


_high_bits_phone()
'''
