"""The system-call filter of a worker (``autograder/worker/confine.py``), in every mode this machine offers: no key in
the kernel's keyrings and no POSIX message queue (which no namespace of the sandbox holds, and which outlive the
worker: a message to a submission graded later), no TCP or UDP socket and no io_uring (which opens sockets without
the call), in the worker and in what it starts. A worker without the filter is the control: there all of them work,
so each check can fail. The catalogue's ``drop_messages``, ``read_messages`` and ``phone_home`` try them on the
grader."""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import is_root

from autograder.grading.proxy import Student
from autograder.sandbox.config import SECCOMP_ENV, Limits
from autograder.sandbox.isolation import Isolation
from autograder.worker import confine

pytestmark = pytest.mark.skipif(confine.pyseccomp is None, reason="libseccomp is not installed here")

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
    monkeypatch.setattr(confine, "pyseccomp", None)
    with pytest.raises(confine.ConfineError, match="AUTOGRADER_SECCOMP=0"):
        confine._filter_calls()
