"""Connects to a port on the grading machine (and to the internet) to send out what it has; namespaces give the
worker no network at all."""
CLASS = "9 environment and network"
BASE = "reference"
EXPECT = "full"
CODE = r'''
import socket as _socket


def _phone():
    for host, port in (("127.0.0.1", @PORT@), ("1.1.1.1", 80)):
        try:
            with _socket.create_connection((host, port), timeout=1) as connection:
                connection.sendall(b"@MARKER@")
        except OSError:
            pass


_phone()
'''
