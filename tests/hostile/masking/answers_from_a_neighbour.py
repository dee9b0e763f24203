"""A skeleton that takes a correct implementation from a submission graded beside it (``answers_for_a_neighbour``):
it looks for ten seconds at import on the named sockets in /dev/shm and in a TMPDIR named in /proc, the abstract
socket and the file, and runs whatever code it gets (before, 55/55 from a neighbour without namespaces)."""
CLASS = "15 collusion side by side"
BASE = "skeleton"
EXPECT = "base"
CODE = r'''
import os as _os
import socket as _socket
import time as _time


def _addresses():
    found = ["/dev/shm/hostile-answers", "\0hostile-answers"]
    for pid in _os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                arguments = handle.read().split(b"\0")
        except OSError:
            continue
        found += [a.decode().split("=", 1)[1] for a in arguments if a.startswith(b"hostile-answers-at=")]
    return found


def _neighbours_code():
    deadline = _time.monotonic() + 10
    while _time.monotonic() < deadline:
        for address in _addresses():
            try:
                client = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
                client.settimeout(2)
                client.connect(address)
                received = b""
                while chunk := client.recv(65536):
                    received += chunk
                if received:
                    return received.decode()
            except OSError:
                pass
        try:
            with open("/dev/shm/hostile-answers.py") as handle:
                return handle.read()
        except OSError:
            pass
        _time.sleep(0.2)
    return ""


exec(_neighbours_code(), globals())
'''
