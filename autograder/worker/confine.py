"""Confining the worker before any student code runs: the sandbox, applied in this process.

The plan comes from the trusted side (``autograder.sandbox.process.Sandbox.plan``) in the worker's first message, and
``apply`` carries it out while the process still runs only the grader's code. Modes:

- ``namespaces`` (root, where the kernel allows them): new PID, mount, network, IPC and UTS namespaces. The worker
  is PID 1 of its PID namespace (when it exits, the kernel kills everything it started): a forked worker already
  is (``plan["init"]``: the zygote forked it there, ``autograder.forking``); a started one forks, and its parent
  stays behind only to report the worker's pid and to exit as it exits. The file system is a fresh
  tmpfs root that holds the allow-list and nothing else: the system's /usr (and /lib, /bin, ...), the interpreter
  and the virtual environment, read-only; the submission's staged copy at /submission; a private /tmp and
  /dev/shm capped in size; /proc of its own PID namespace; /dev/null and a few more devices. No network.
- ``permissions`` (root without namespaces, as in Docker's default profile): the staged copy and a private TMPDIR,
  both owned by the worker's uid with mode 0700; the grader keeps what it holds unreadable to that uid.
- ``limits`` (not root): resource limits only.

In every mode: resource limits, a parent-death signal, no new privileges (a setuid program gains nothing), umask 077
and the OOM killer's highest score; as root also a uid of its own without supplementary groups, so the second layer
(permissions) holds even where the first (namespaces) exists, and, where the grader found a writable cgroup
hierarchy (``plan["cgroups"]``), control groups that count all the worker's processes together
(``autograder.sandbox.cgroups``). And, where the kernel has Landlock (``plan["landlock"]``, from the grader's probe),
the allow-list again, enforced by the kernel on paths rather than by what is mounted: read and execute under the
system's, the interpreter's and the virtual environment's folders and /proc, read and write the devices above,
and on a GPU machine write /proc too (CUDA names its threads in ``/proc/PID/task/TID/comm`` as it starts: refused,
``cuInit`` fails with error 304; as a sandbox uid, whose /proc files are root's since it changed uid, that is all
it may write there, while in ``limits`` it may write what its user may: that user's processes' files),
everything in the worker's own copy and its TMPDIR, and in /dev/shm everything but making a named socket or a FIFO
(without namespaces every worker shares it: a socket there carried answers between two submissions graded side by
side); no TCP (nor UDP, on kernels whose Landlock covers it), no abstract UNIX socket and no signal outside the
worker's own processes. It is what makes ``permissions`` and
``limits`` an allow-list too: a world-readable copy of the solutions elsewhere on the machine, or the instructor's
files in ``limits``, are not readable, whatever the mode bits say. landlockpy makes the calls and drops what the
running kernel's ABI lacks; the ruleset is built while the process may still open any path, and enforced last, while
it runs one thread (forked, or before torch's pools start), so every thread after inherits it.

And, where the system has libseccomp (``plan["seccomp"]``, from ``Isolation.detect``), a system-call filter that
refuses (EPERM, as Docker's default profile does) what no namespace of the sandbox holds and outlives the process:
the kernel's keyrings (one per uid per machine, and a key may be readable by any uid: a submission that stored its
source in one handed it to another, graded later, in every mode) and POSIX message queues (the machine's, without
namespaces); and the network in every mode (EACCES for a socket, or a socket pair, of any family but UNIX's: IPv4,
IPv6, netlink, packet, vsock and the rest; and no io_uring, which opens sockets without the call): without namespaces
Landlock refuses TCP only, so UDP (DNS included) carried what a submission sees (the hidden tests' inputs) off the
machine, or to a submission graded beside it. The family is compared as the kernel reads it, in the low 32 bits of
the argument (``_families_but_unix``): a rule on all 64 let ``socket(0x100000002, SOCK_DGRAM)`` make an IPv4 socket,
which sent a hidden test's inputs to a listener on the machine (issue 41). No other rule compares an argument.
System V IPC stays
open: namespaces give it an IPC namespace of its own, and without them the grader
removes what a uid left when its worker stops (as it does its files in /tmp and /dev/shm).

Memory (``memory_mb`` in an assignment's ``[limits]``) bounds what the submission adds to the worker, never what the
worker's own imports hold: a limit on the whole process counted torch's build against the submission, and the CUDA
build (what ``pip install torch`` gives on Linux) maps 3.2 GB of address space at import, so a correct submission
could allocate nothing under 2 GB (issue 34). So the limits wait for those imports (``bound_memory``) and are set over
what the process holds then:

- a Linux machine without a GPU: its private writable memory (``RLIMIT_DATA``) and its address space (``RLIMIT_AS``,
  which counts the shared mappings and stacks the first misses) may each grow by ``memory_mb``, per process;
- a Linux machine with NVIDIA's devices: the private writable memory alone (CUDA reserves address space as it makes
  its contexts, later), so anonymous shared memory is left to the control group;
- where the grader made a control group (as root, ``plan["cgroups"]``), all the worker's processes together, besides
  the above: the memory charged to them (pages they touch, tmpfs files they write) may grow by ``memory_mb`` over what
  the group held when the worker was ready, plus the worker's private memory then, so that one process alone meets its
  own limit first (``autograder.sandbox.cgroups``);
- without Linux's layers (macOS, whose ``RLIMIT_AS`` is not enforced; ``plan["linux"]`` false): no limit here; the
  grader reads the resident memory of the worker and its processes from outside and stops them past ``memory_mb``
  over what it held when ready (``autograder.sandbox.memorywatch``).

Why a few system calls here rather than bubblewrap: bubblewrap (which also adds start-up time to every program it
runs) confines a new program it starts, while the grader confines a worker that already runs (for warm
grading, a forked copy of a process that has imported torch); only calls made in that process can do that.
"""

from __future__ import annotations

import ctypes
import errno
import glob
import os
import platform
import resource
import signal
import socket
import sys

import landlockpy
from landlockpy import AccessFS, Scope

try:  # the system's libseccomp, through ctypes; without it workers run unfiltered (``Isolation.seccomp``)
    import pyseccomp
except (ImportError, OSError, RuntimeError):
    pyseccomp = None

from autograder import forking, protocol

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = (
    0x00020000, 0x04000000, 0x08000000, 0x20000000, 0x40000000)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18)
MNT_DETACH = 2
PR_SET_NO_NEW_PRIVS = 38
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}

# The allow-list besides the interpreter: read-only system paths, the top-level folders that usr-merged systems
# keep as links into /usr, and devices.
SYSTEM = ("/usr", "/etc/ld.so.cache", "/sys/devices/system/cpu")
TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
DEVICES = ("null", "zero", "full", "random", "urandom")
MOUNTED_AT = "/submission"
READ = AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.EXECUTE
DEVICE = AccessFS.READ_FILE | AccessFS.WRITE_FILE | AccessFS.TRUNCATE | AccessFS.IOCTL_DEV
FILE = AccessFS.EXECUTE | DEVICE  # the rights a rule on a file (not a folder) may grant
OFF = " (AUTOGRADER_LANDLOCK=0 grades without this layer, on the others alone)"
REFUSED_CALLS = ("add_key", "request_key", "keyctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
                 "mq_notify", "mq_getsetattr", "io_uring_setup")
SOCKET_CALLS = ("socket", "socketpair")  # a family is their first argument
LOW_BITS = 32  # the kernel reads an int argument, as a socket's family, from the low 32 bits of its register
OOM_SCORE = 1000  # the most: on a machine out of memory the kernel kills student code first, never the grader


class ConfineError(Exception):
    """The sandbox could not be set up: a grader problem, never the submission's."""


def apply(plan: dict, requests: int, replies: int) -> dict:
    """Confine this process as ``plan`` says; returns ``{"cwd", "tmp"}``, the working folder and TMPDIR as the
    confined worker sees them. Exactly one ``{"pid": N}`` frame reaches ``replies`` first: the worker's pid as the
    grader sees it (for reading its memory from outside), or None where it is the process the grader started.
    Without Linux's layers (``plan["linux"]`` false: ``limits`` mode, no Landlock, filter or groups) it calls no
    ``prctl`` and reads nothing in ``/proc``: the resource limits every POSIX system has, and umask."""
    linux = plan["linux"]
    if linux:
        _prctl(forking.PR_SET_PDEATHSIG, signal.SIGKILL)
        _join(plan.get("cgroups", []))
    mode = plan["mode"]
    if mode == "namespaces":
        view = _namespaces(plan, requests, replies)
    else:
        protocol.write_frame(replies, {"pid": os.getpid()})
        os.chdir(plan["workdir"])
        view = {"cwd": plan["workdir"], "tmp": plan["tmpdir"]}
    landlock = plan.get("landlock", 0)
    ruleset = _allow_list(view, landlock)  # named while root, who may open any path
    _set_limits(plan["limits"])
    if plan.get("uid") is not None:
        _drop_privileges(int(plan["uid"]))
    if linux:
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
        _prctl(forking.PR_SET_PDEATHSIG, signal.SIGKILL)  # changing the uid cleared it
    view["landlock"] = _enforce(ruleset, landlock)
    if plan.get("seccomp"):
        _filter_calls()
    os.umask(0o077)
    return view


def _join(groups: list[str]) -> None:
    """Enter the worker's control groups (``autograder.sandbox.cgroups``: ``groups`` are their ``cgroup.procs`` files),
    while root and before the file system is replaced; and be the OOM killer's first choice, for good: the score is set
    while root, so that neither this process nor any it starts may lower it again (without root, only they may)."""
    for procs in groups:
        try:
            with open(procs, "w") as handle:
                handle.write("0")  # this process: what it starts is born in the group
        except OSError as exc:
            raise ConfineError(f"could not enter the control group {os.path.dirname(procs)}: {exc} "
                               "(AUTOGRADER_CGROUPS=0 grades without them)") from None
    with open("/proc/self/oom_score_adj", "w") as handle:
        handle.write(str(OOM_SCORE))


def _namespaces(plan: dict, requests: int, replies: int) -> dict:
    libc = _libc()
    if plan.get("init"):
        if os.getpid() != 1:
            raise ConfineError(f"the worker should be PID 1 of a PID namespace of its own, and is PID {os.getpid()}")
        protocol.write_frame(replies, {"pid": None})
    else:
        _check(libc.unshare(CLONE_NEWPID), "create a PID namespace")
        reported, report = os.pipe()
        child = os.fork()
        if child:
            os.close(reported)
            _stand_by(child, requests, replies, report)
        os.close(report)
        os.read(reported, 1)  # end of file once the parent has written the pid frame: every frame of ours follows
        os.close(reported)
    _check(libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "create the namespaces")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = plan["rootfs"]
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=1m")
    _tmpfs(f"{root}/tmp", plan["tmp_mb"])  # first: an interpreter under /tmp is bound into it, not hidden by it
    _devices(root, plan["tmp_mb"])
    for path in _readable():
        _bind(path, root + path)
    for name in TOP_LEVEL:
        if os.path.islink(f"/{name}"):
            os.symlink(os.readlink(f"/{name}"), f"{root}/{name}")
        elif os.path.isdir(f"/{name}"):
            _bind(f"/{name}", f"{root}/{name}")
    for link, target in _links().items():  # the names the interpreter knows its folders by lead where they lead here
        if not os.path.lexists(root + link):
            os.makedirs(os.path.dirname(root + link), exist_ok=True)
            os.symlink(target, root + link)
    _bind(plan["workdir"], root + MOUNTED_AT, writable=True)
    os.makedirs(f"{root}/proc")
    _mount("proc", f"{root}/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.mkdir(f"{root}/.old")
    _check(libc.syscall(SYS_PIVOT_ROOT[platform.machine()], root.encode(), f"{root}/.old".encode()),
           "switch to the sandbox's root")
    os.chdir("/")
    _check(libc.umount2(b"/.old", MNT_DETACH), "detach the machine's file system")
    os.rmdir("/.old")
    _mount(None, "/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(MOUNTED_AT)
    return {"cwd": MOUNTED_AT, "tmp": "/tmp"}


def _allow_list(view: dict, wanted: int) -> landlockpy.Ruleset | None:
    """The Landlock ruleset of the allow-list (module docstring), or None. ``wanted``: 0 for none, -1 for what the
    kernel offers (the probe's question), else the ABI the probe found, which a worker must then get."""
    if not wanted:
        return None
    try:
        ruleset = landlockpy.Ruleset(scoped=Scope.ABSTRACT_UNIX_SOCKET | Scope.SIGNAL)  # every right the kernel has
        if ruleset.abi_version < wanted:
            raise ConfineError(f"the probe found Landlock ABI {wanted}, this worker only {ruleset.abi_version}" + OFF)
        gpu = gpu_devices()
        devices = [f"/dev/{name}" for name in DEVICES] + gpu
        rights = {**dict.fromkeys([*_readable(), *(f"/{name}" for name in TOP_LEVEL)], READ),
                  "/proc": READ | (AccessFS.WRITE_FILE if gpu else 0),  # CUDA names its threads there
                  **dict.fromkeys(devices, DEVICE),
                  **dict.fromkeys([view["cwd"], view["tmp"]], ruleset.handled_fs),
                  "/dev/shm": ruleset.handled_fs & ~(AccessFS.MAKE_SOCK | AccessFS.MAKE_FIFO)}
        for path, access in rights.items():
            if os.path.exists(path):
                ruleset.allow_path(path, access if os.path.isdir(path) else access & FILE)
    except OSError as exc:
        if wanted > 0:
            raise ConfineError(f"the probe found Landlock ABI {wanted} but this worker cannot use it: {exc}"
                               + OFF) from None
        return None
    return ruleset


def _enforce(ruleset: landlockpy.Ruleset | None, wanted: int) -> int:
    """Restrict this process (single-threaded still: no thread escapes) to ``ruleset``; the ABI enforced, or 0 where
    there is none and the probe asks (a container's seccomp profile may refuse the call)."""
    if ruleset is None:
        return 0
    threads = forking.thread_count()
    if threads != 1:  # Landlock confines the calling thread and what it starts, not a thread already running
        raise ConfineError(f"the worker runs {threads} threads before its allow-list is enforced")
    with ruleset:
        try:
            ruleset.restrict()
        except OSError as exc:
            if wanted > 0:
                raise ConfineError(f"could not enforce the Landlock allow-list: {exc}{OFF}") from None
            return 0
    return ruleset.abi_version


def _filter_calls() -> None:
    """Refuse ``REFUSED_CALLS`` to this process and every thread and child it has or will have (the filter is
    inherited and cannot be removed); the native architecture only: a call through another ABI (x32) kills it."""
    if pyseccomp is None:
        raise ConfineError("the grader found libseccomp, this worker does not (AUTOGRADER_SECCOMP=0 grades without "
                           "the system-call filter)")
    try:
        refused = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
        refused.set_attr(pyseccomp.Attr.CTL_TSYNC, 1)
        for name in REFUSED_CALLS:
            refused.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
        for name in SOCKET_CALLS:
            for refused_family in _families_but_unix():
                refused.add_rule(pyseccomp.ERRNO(errno.EACCES), name, refused_family)
        refused.load()
    except OSError as exc:
        raise ConfineError(f"could not load the system-call filter: {exc} (AUTOGRADER_SECCOMP=0 grades without "
                           "it)") from None


def _families_but_unix() -> list:
    """The comparisons, on the first argument, that together match every socket family but ``AF_UNIX``, read as the
    kernel reads it: its low 32 bits, whatever the high ones hold (a plain compare is of all 64, so
    ``socket(0x100000002, ...)`` passed a rule against ``AF_INET`` and made an IPv4 socket). libseccomp has no
    masked "not equal": the low 32 bits differ from ``AF_UNIX`` (1) where bit 0 is clear or any bit above it set,
    one masked compare each."""
    return [pyseccomp.Arg(0, pyseccomp.MASKED_EQ, socket.AF_UNIX, 0)] + [
        pyseccomp.Arg(0, pyseccomp.MASKED_EQ, 1 << bit, 1 << bit) for bit in range(1, LOW_BITS)]


def _stand_by(child: int, requests: int, replies: int, report: int) -> None:
    """The parent outside the PID namespace: report the worker's pid (then close ``report``, which lets the worker
    go on: without it, a worker that ran ahead wrote its ready frame first), then exit as it exits."""
    protocol.write_frame(replies, {"pid": child})
    for fd in (requests, replies, report):
        os.close(fd)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _readable() -> list[str]:
    """The read-only paths: the system's, the interpreter's and the virtual environment's (outermost first)."""
    paths = sorted({os.path.realpath(p) for p in (*SYSTEM, sys.base_prefix, sys.prefix) if os.path.exists(p)})
    return [p for p in paths if not any(p.startswith(q.rstrip("/") + "/") for q in paths if q != p)]


def _links() -> dict[str, str]:
    """Every symbolic link met on the way to the interpreter's folders as this process names them, with its target.

    The sandbox's root binds those folders where they really are (``_readable``), but ``sys.prefix`` and every path
    on ``sys.path`` name the virtual environment as it was reached: through a link (a ``.venv`` linked to another
    environment, a home folder or shared disk linked into place), that name led nowhere in the sandbox, and whatever
    the worker imported after it was confined (``numpy.random``) was "No module named" there, blamed on the student.
    """
    links: dict[str, str] = {}
    pending = [os.path.abspath(p) for p in (sys.base_prefix, sys.prefix)]
    for _ in range(40):  # the kernel's own limit of links on one path: a loop of links ends here too
        if not pending:
            break
        path = pending.pop()
        parts = path.split("/")[1:]
        for index in range(len(parts)):
            walked = "/" + "/".join(parts[:index + 1])
            if os.path.islink(walked):
                links[walked] = os.readlink(walked)
                pending.append(os.path.normpath(os.path.join(os.path.dirname(walked), links[walked],
                                                             *parts[index + 1:])))
                break
    return links


def _devices(root: str, shm_mb: int) -> None:
    _mount("tmpfs", f"{root}/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=64k", create=True)
    for path in [f"/dev/{name}" for name in DEVICES] + gpu_devices():
        if os.path.exists(path):
            _bind(path, root + path, writable=True, device=True)
    for name, target in {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
                         "stderr": "/proc/self/fd/2"}.items():
        os.symlink(target, f"{root}/dev/{name}")
    _tmpfs(f"{root}/dev/shm", shm_mb)


def _bind(source: str, target: str, *, writable: bool = False, device: bool = False) -> None:
    """Bind ``source`` at ``target`` (created), read-only unless ``writable``; never setuid; devices if ``device``."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()  # noqa: SIM115 - an empty file to mount over
    _mount(source, target, None, MS_BIND | MS_REC)
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | (MS_NOEXEC if device else MS_NODEV) | (0 if writable else MS_RDONLY)
    _mount(None, target, None, flags)


def _tmpfs(target: str, size_mb: int) -> None:
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={int(size_mb)}m", create=True)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None, *,
           create: bool = False) -> None:
    if create:
        os.makedirs(target, exist_ok=True)
    encode = (lambda text: None if text is None else os.fsencode(text))  # noqa: E731
    _check(_libc().mount(encode(source), encode(target), encode(fstype), flags, encode(data)), f"mount {target}")


def gpu_devices() -> list[str]:
    """NVIDIA's device files, where the machine has its driver: what a worker needs to use the GPU."""
    return sorted(glob.glob("/dev/nvidia*"))


def bound_memory(plan: dict) -> dict[str, int]:
    """Bound what the submission may add to this process's memory: ``memory_mb`` over what the worker holds once its
    own imports are done (torch, the harness, and on a GPU machine CUDA's start), called after them and before any
    student file runs; returns the limits set, in bytes, by name ({} where there are none to set).

    What each limit counts, and why each is relative (the module docstring of ``autograder.sandbox.memorywatch`` says
    what bounds memory where these do not hold):

    - ``RLIMIT_DATA``: private writable memory (heap, malloc's arenas, tensors; not code, files mapped read-only nor
      address space only reserved). The worker's own is counted before, so a build that brings more does not eat the
      submission's share.
    - ``RLIMIT_AS`` (not on a GPU machine): every mapping, shared ones and thread stacks included, which
      ``RLIMIT_DATA`` misses. Importing torch maps 0.64 GB of address space for the CPU build and 3.2 GB for the CUDA
      build (what ``pip install torch`` gives on Linux, GPU or not): an absolute limit of 2 GB refused every
      allocation of a correct submission on a student's laptop (issue 34), while a reservation made before this call
      costs the submission nothing now. On a GPU machine CUDA reserves address space as it creates its contexts,
      after this call (on an H100 ``cudaGetDeviceCount`` failed with error 304 under ``RLIMIT_AS``), so there the
      control group, where there is one, counts what ``RLIMIT_DATA`` misses (``autograder.sandbox.cgroups``).

    Both are set soft and hard: no process of the worker may raise them again. Where the plan says the system lacks
    Linux's layers (``plan["linux"]`` false: macOS, whose ``RLIMIT_AS`` is not enforced and whose malloc maps memory
    ``RLIMIT_DATA`` does not count), none is set: the grader watches the worker's memory from outside instead."""
    if not plan["linux"]:
        return {}
    allowed = int(plan["limits"]["memory_mb"]) << 20
    held = _held()
    limits = {"RLIMIT_DATA": held["VmData"] + allowed}
    if not gpu_devices():
        limits["RLIMIT_AS"] = held["VmSize"] + allowed
    for name, value in limits.items():
        limits[name] = _lower(getattr(resource, name), value)
    return limits


def _held() -> dict[str, int]:
    """This process's address space (``VmSize``, what ``RLIMIT_AS`` compares with) and private writable memory
    (``VmData``, what ``RLIMIT_DATA`` compares with), in bytes: the kernel's own counters."""
    held = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmSize", "VmData"):
                held[name] = int(value.split()[0]) << 10
    return held


def _set_limits(limits: dict) -> None:
    """Every limit but memory's, which waits for the worker's own imports (``bound_memory``); and the grader's own data
    ceiling (``autograder.ceilings``, a soft limit inherited from the runner) lifted until then: it is not the
    worker's."""
    mb = 1 << 20
    values = {resource.RLIMIT_CPU: limits["cpu_seconds"],
              resource.RLIMIT_FSIZE: limits["file_size_mb"] * mb, resource.RLIMIT_NOFILE: limits["open_files"],
              resource.RLIMIT_CORE: 0, resource.RLIMIT_NPROC: limits["processes"]}
    for which, value in values.items():
        _lower(which, int(value))
    resource.setrlimit(resource.RLIMIT_DATA, (resource.getrlimit(resource.RLIMIT_DATA)[1],) * 2)


def _lower(which: int, value: int) -> int:
    """Set limit ``which`` to ``value``, soft and hard, or to the hard limit already there where that is lower (an
    unprivileged process may not raise it: macOS caps the processes of a user below what a worker may be given);
    returns the limit set."""
    hard = resource.getrlimit(which)[1]
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))
    return value


def _drop_privileges(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid) or os.getgroups():
        raise ConfineError(f"the worker still holds other credentials after switching to uid {uid}")
    try:
        os.setuid(0)
    except PermissionError:
        return
    raise ConfineError("the worker could switch back to root")


def _prctl(option: int, value: int) -> None:
    _check(_libc().prctl(option, value, 0, 0, 0), f"prctl({option})")


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise ConfineError(f"could not {what}: {os.strerror(errno)} (errno {errno})")


def _libc():
    return ctypes.CDLL(None, use_errno=True)
