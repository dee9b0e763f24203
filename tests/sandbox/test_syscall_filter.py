"""The system-call filter of a worker (``autograder/worker/confine.py``), in every mode this machine offers: no key in
the kernel's keyrings and no POSIX message queue (which no namespace of the sandbox holds, and which outlive the
worker: a message to a submission graded later), no TCP or UDP socket and no io_uring (which opens sockets without
the call), in the worker and in what it starts. A worker without the filter is the control: there all of them work,
so each check can fail. With the high 32 bits of every argument set (which the kernel ignores where it reads an int),
no call is let through, and no socket family but UNIX's reaches a listener on loopback, in either isolation mode.
The catalogue's ``drop_messages``, ``read_messages``, ``phone_home`` and ``high_bits_socket`` try them on the
grader."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.machine import is_root

from autograder.grading.proxy import Student
from autograder.sandbox.config import SECCOMP_ENV, Limits
from autograder.sandbox.isolation import Isolation
from autograder.worker import confine, syscalls

pytestmark = pytest.mark.skipif(syscalls.pyseccomp is None, reason="libseccomp is not installed here")

PROBE = r'''
import ctypes, os, subprocess, sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def keyring():
    """A key in this uid's keyring (invalidated at once): 1, or minus the errno."""
    serial = libc.syscall(248, b"user", b"filter-test", b"x", 1, ctypes.c_int(-4))  # add_key
    if serial < 0:
        return -ctypes.get_errno()
    libc.syscall(250, 21, ctypes.c_int(serial))  # KEYCTL_INVALIDATE
    return 1


def queue(name):
    """A POSIX message queue (removed at once): 1, or minus the errno."""
    descriptor = libc.mq_open(name.encode(), os.O_CREAT | os.O_RDWR, 0o600, None)
    if descriptor < 0:
        return -ctypes.get_errno()
    libc.mq_unlink(name.encode())
    return 1


def sockets():
    """An IPv4 UDP, an IPv4 TCP and an IPv6 UDP socket: 1 each, or minus the errno."""
    import socket
    made = []
    for family, kind in ((socket.AF_INET, socket.SOCK_DGRAM), (socket.AF_INET, socket.SOCK_STREAM),
                         (socket.AF_INET6, socket.SOCK_DGRAM)):
        try:
            socket.socket(family, kind).close()
            made.append(1)
        except OSError as exc:
            made.append(-exc.errno)
    return made


def io_uring():
    """An io_uring (closed at once): 1, or minus the errno."""
    descriptor = libc.syscall(425, 1, ctypes.create_string_buffer(120))  # io_uring_setup
    if descriptor < 0:
        return -ctypes.get_errno()
    os.close(descriptor)
    return 1


def keyring_in_a_child():
    script = "import sys; sys.path.insert(0, '.'); import probe; print(probe.keyring())"
    return int(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout)
'''


def _modes() -> list[str]:
    return ["namespaces", "permissions", "limits"] if is_root else ["limits"]


@pytest.mark.parametrize("filtered", [True, False], ids=["filtered", "control"])
@pytest.mark.parametrize("mode", _modes())
def test_no_keyring_message_queue_or_network_behind_the_filter(mode, filtered):
    staged = Path(tempfile.mkdtemp(prefix="syscall-filter-"))  # as a batch stages: a sandbox uid passes through
    os.chmod(staged, 0o711)
    submission = staged / "submission"
    submission.mkdir()
    (submission / "probe.py").write_text(PROBE)
    isolation = Isolation(mode, seccomp=filtered)  # without Landlock, which refuses opening a message queue too
    student = Student(submission, [{"name": "probe"}], Limits(threads=1), isolation)
    try:
        outcomes = {"a key": student.probe.keyring(), "a message queue": student.probe.queue(
            f"/filter-test-{secrets.token_hex(4)}"), "a child's key": student.probe.keyring_in_a_child(),
            "an io_uring": student.probe.io_uring()}
        sockets = student.probe.sockets()
    finally:
        student.close()
        shutil.rmtree(staged)
    assert outcomes == dict.fromkeys(outcomes, -errno.EPERM if filtered else 1)
    assert sockets == [-errno.EACCES if filtered else 1] * 3


def test_the_grader_filters_where_libseccomp_is_and_not_when_told(monkeypatch):
    detect = Isolation.detect.__wrapped__
    monkeypatch.delenv(SECCOMP_ENV, raising=False)
    assert detect(Isolation).seccomp
    monkeypatch.setenv(SECCOMP_ENV, "0")
    isolation = detect(Isolation)
    assert not isolation.seccomp and "no system-call filter" in isolation.note()
    assert isolation.environment()[SECCOMP_ENV] == "0"


def test_a_worker_without_libseccomp_refuses_to_start_unfiltered(monkeypatch):
    monkeypatch.setattr(syscalls, "pyseccomp", None)
    with pytest.raises(confine.ConfineError, match="AUTOGRADER_SECCOMP=0"):
        syscalls.install(confine.ConfineError)


# The kernel reads an int argument (a socket's family, a command) from the low 32 bits of its register: a submission
# sets the high ones to slip past a rule that compares all 64 (issue 41: socket(0x100000002, SOCK_DGRAM) was IPv4).
HIGH = 1 << 32
FAMILIES = range(64)  # every family a kernel knows (AF_MAX is 46 in Linux 6.18), and some to spare
REACH = r'''
import ctypes, socket

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def call(number, *args):
    """A raw system call, every argument 64 bits wide: its result, or minus the errno."""
    result = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    return -ctypes.get_errno() if result < 0 else result


def families(number, high):
    """socket(family | high, SOCK_DGRAM) for each family: 1 where a socket was made, else minus the errno."""
    made = []
    for family in range(64):
        descriptor = call(number, family | high, socket.SOCK_DGRAM, 0)
        made.append(1 if descriptor >= 0 else descriptor)
        if descriptor >= 0:
            socket.close(descriptor)
    return made


def pairs(number, high):
    """socketpair(family | high, SOCK_STREAM) for each family: 1 where a pair was made, else minus the errno."""
    made = []
    for family in range(64):
        pair = (ctypes.c_int * 2)()
        result = call(number, family | high, socket.SOCK_STREAM, 0, ctypes.addressof(pair))
        made.append(1 if result >= 0 else result)
        if result >= 0:
            socket.close(pair[0])
            socket.close(pair[1])
    return made


def refused(numbers, high):
    """Each call of ``numbers`` (name: number), every argument ``high`` (pointers that fault, descriptor 0, command
    0): its result or minus the errno."""
    return {name: call(number, *[high] * 6) for name, number in numbers.items()}


def reach(number, family, kind, host, port, marker):
    """A socket made through the raw call (``family`` with high bits set) that sends ``marker`` to host:port:
    [how far it got, minus the errno or 0]."""
    descriptor = call(number, family | (1 << 32), kind, 0)
    if descriptor < 0:
        return ["socket", descriptor]
    with socket.socket(fileno=descriptor) as made:
        made.settimeout(2)
        try:
            if kind == socket.SOCK_DGRAM:
                made.sendto(marker.encode(), (host, port))
            else:
                made.connect((host, port))
                made.sendall(marker.encode())
        except OSError as exc:
            return ["send", -(exc.errno or 0)]
    return ["sent", 0]
'''
TARGETS = [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")]
KINDS = {"UDP": socket.SOCK_DGRAM, "TCP": socket.SOCK_STREAM}


@contextlib.contextmanager
def _loopback_listeners() -> Iterator[dict]:
    """A UDP and a TCP port on 127.0.0.1 and on ::1 (loopback only), by (host, kind name): what the worker may try to
    reach."""
    opened = {}
    try:
        for family, host in TARGETS:
            for kind, value in KINDS.items():
                listener = socket.socket(family, value)
                opened[(host, kind)] = listener
                listener.bind((host, 0))
                if kind == "TCP":
                    listener.listen(8)
                listener.setblocking(False)
        yield opened
    finally:
        for listener in opened.values():
            listener.close()


def _received(listener: socket.socket, kind: str) -> list[bytes]:
    """What reached ``listener`` (the worker has finished: it is all queued), read in a bounded loop."""
    got = []
    for _ in range(16):
        try:
            if kind == "UDP":
                got.append(listener.recv(1000))
                continue
            connection, _ = listener.accept()
        except BlockingIOError:
            break
        with connection:
            connection.settimeout(2)
            got.append(connection.recv(1000))
    return got


@pytest.mark.parametrize("filtered", [True, False], ids=["filtered", "landlock-only"])
@pytest.mark.parametrize("mode", [m for m in _modes() if m != "limits"])
def test_high_bits_reach_no_family_but_unix(mode, filtered):
    """Every refused call and every socket family but UNIX's, with the high 32 bits of each argument set, in both
    isolation modes (with namespaces; and without, as Gradescope grades: root in Docker, network on), the worker's
    Landlock allow-list on as in a batch. Which layer refuses what:

    - the filter: ``socket`` and ``socketpair`` of any family but ``AF_UNIX``, whatever the high bits (EACCES), so
      nothing is sent in either mode; the keyrings, message queues and io_uring whatever the arguments (EPERM);
    - without the filter (the control, which shows each check can fail): with namespaces the socket is made and
      sends nowhere (no network in the worker's namespace); without namespaces Landlock refuses TCP (EACCES) and
      nothing refuses UDP: the datagrams reach the listeners on 127.0.0.1 and ::1.
    """
    landlock = Isolation.detect().landlock
    staged = Path(tempfile.mkdtemp(prefix="syscall-filter-"))
    os.chmod(staged, 0o711)
    submission = staged / "submission"
    submission.mkdir()
    (submission / "reach.py").write_text(REACH)
    numbers = {name: syscalls.pyseccomp.resolve_syscall(syscalls.pyseccomp.Arch.NATIVE, name)
               for name in ("socket", "socketpair", *syscalls.REFUSED_CALLS)}
    student = Student(submission, [{"name": "reach"}], Limits(threads=1),
                      Isolation(mode, landlock=landlock, seccomp=filtered))
    marker = f"high-bits-{secrets.token_hex(4)}"
    try:
        with _loopback_listeners() as listeners:
            tried = {(host, kind): student.reach.reach(numbers["socket"], family, KINDS[kind], host,
                                                      listeners[(host, kind)].getsockname()[1], marker)
                     for family, host in TARGETS for kind in KINDS}
            received = {key: _received(listener, key[1]) for key, listener in listeners.items()}
        made = {"socket": student.reach.families(numbers["socket"], HIGH),
                "socket, low bits only": student.reach.families(numbers["socket"], 0),
                "socketpair": student.reach.pairs(numbers["socketpair"], HIGH)}
        calls = student.reach.refused({name: numbers[name] for name in syscalls.REFUSED_CALLS}, HIGH)
    finally:
        student.close()
        shutil.rmtree(staged)
    if filtered:  # the filter refuses them all, before any other layer is asked
        assert tried == dict.fromkeys(tried, ["socket", -errno.EACCES]), tried
        assert not any(received.values()), received
        for name, results in made.items():
            assert [f for f in FAMILIES if results[f] != -errno.EACCES] == [socket.AF_UNIX], (name, results)
            assert results[socket.AF_UNIX] == 1, name
        assert calls == dict.fromkeys(calls, -errno.EPERM), calls
        return
    assert made["socket"][socket.AF_INET] == made["socket"][socket.AF_INET6] == 1  # the kernel ignored the high bits
    assert -errno.EPERM not in calls.values(), calls
    for (host, kind), outcome in tried.items():
        if mode == "namespaces":  # the namespace has no network: the socket is made, and reaches nothing
            assert outcome[0] == "send" and not received[(host, kind)], (host, kind, outcome)
        elif kind == "TCP" and landlock >= 4:  # Landlock refuses connecting (ABI 4 and later)
            assert outcome == ["send", -errno.EACCES] and not received[(host, kind)], (host, outcome)
        else:  # only the filter refuses UDP (and TCP where Landlock is older): without it the datagram arrives
            assert outcome == ["sent", 0] and received[(host, kind)] == [marker.encode()], (host, outcome)
