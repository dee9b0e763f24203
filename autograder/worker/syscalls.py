"""The workers' system-call filter (``install``), loaded where the system has libseccomp (``plan["seccomp"]`` of the
confinement, from ``Isolation.detect``). It refuses (EPERM, as Docker's default profile does) what no namespace of
the sandbox holds and outlives the process: the kernel's keyrings (one per uid per machine, and a key may be readable
by any uid: a submission that stored its source in one handed it to another, graded later, in every mode) and POSIX
message queues (the machine's, without namespaces); and the network in every mode (EACCES for a socket, or a socket
pair, of any family but UNIX's: IPv4, IPv6, netlink, packet, vsock and the rest; and no io_uring, which opens sockets
without the call): without namespaces Landlock refuses TCP only, so UDP (DNS included) carried what a submission sees
(the hidden tests' inputs) off the machine, or to a submission graded beside it. The family is compared as the kernel
reads it, in the low 32 bits of the argument (``families_but_unix``): a rule on all 64 let ``socket(0x100000002,
SOCK_DGRAM)`` make an IPv4 socket, which sent a hidden test's inputs to a listener on the machine (issue 41). No
other rule compares an argument.

System V IPC stays open: namespaces give it an IPC namespace of its own, and without them the grader removes what a uid
left when its worker stops (as it does its files in /tmp and /dev/shm).
"""

from __future__ import annotations

import errno
import socket

try:  # the system's libseccomp, through ctypes; without it workers run unfiltered (``Isolation.seccomp``)
    import pyseccomp
except (ImportError, OSError, RuntimeError):
    pyseccomp = None

REFUSED_CALLS = ("add_key", "request_key", "keyctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
                 "mq_notify", "mq_getsetattr", "io_uring_setup")
SOCKET_CALLS = ("socket", "socketpair")  # a family is their first argument
LOW_BITS = 32  # the kernel reads an int argument, as a socket's family, from the low 32 bits of its register


def install(failed: type[Exception]) -> None:
    """Refuse ``REFUSED_CALLS`` and ``SOCKET_CALLS`` (but for UNIX's family) to this process and every thread and child
    it has or will have (the filter is inherited and cannot be removed); the native architecture only: a call through
    another ABI (x32) kills it. What goes wrong raises ``failed`` (the confinement's own error)."""
    if pyseccomp is None:
        raise failed("the grader found libseccomp, this worker does not (AUTOGRADER_SECCOMP=0 grades without "
                     "the system-call filter)")
    try:
        refused = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
        refused.set_attr(pyseccomp.Attr.CTL_TSYNC, 1)
        for name in REFUSED_CALLS:
            refused.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
        for name in SOCKET_CALLS:
            for refused_family in families_but_unix():
                refused.add_rule(pyseccomp.ERRNO(errno.EACCES), name, refused_family)
        refused.load()
    except OSError as exc:
        raise failed(f"could not load the system-call filter: {exc} (AUTOGRADER_SECCOMP=0 grades without "
                     "it)") from None


def families_but_unix() -> list:
    """The comparisons, on the first argument, that together match every socket family but ``AF_UNIX``, read as the
    kernel reads it: its low 32 bits, whatever the high ones hold (a plain compare is of all 64, so
    ``socket(0x100000002, ...)`` passed a rule against ``AF_INET`` and made an IPv4 socket). libseccomp has no
    masked "not equal": the low 32 bits differ from ``AF_UNIX`` (1) where bit 0 is clear or any bit above it set,
    one masked compare each."""
    return [pyseccomp.Arg(0, pyseccomp.MASKED_EQ, socket.AF_UNIX, 0)] + [
        pyseccomp.Arg(0, pyseccomp.MASKED_EQ, 1 << bit, 1 << bit) for bit in range(1, LOW_BITS)]
