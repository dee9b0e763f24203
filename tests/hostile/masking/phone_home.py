"""Connects to a port on the grading machine (and to the internet), and sends a datagram to the same port number, to
send out what it has; namespaces give the worker no network at all, the system-call filter no
internet socket in any mode."""
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
    try:
        with _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM) as datagram:
            datagram.sendto(b"@MARKER@", ("127.0.0.1", @PORT@))
    except OSError:
        pass


_phone()
'''
