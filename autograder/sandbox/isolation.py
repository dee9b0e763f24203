"""How workers are confined here, decided once per grading process (``Isolation.detect``): ``namespaces`` as root where
the kernel allows them, ``permissions`` as root where it does not (Docker's default profile, as on Gradescope), or
``limits`` without root; ``autograder.worker.confine`` says what each mode gives. As root the decision comes from a
probe: a worker started only to confine itself (``_probe``), whose handshake says what held.

Each layer is used where the system has it, and where it does not, ``skipped`` says so in one line (``check`` prints
them; every results file's isolation note, ``note``, says the same in its words):

- Linux's own layers: namespaces and an own uid (as root), Landlock (the kernel's), the system-call filter
  (libseccomp), control groups (a writable hierarchy, as root), a parent-death signal and no new privileges
  (``prctl``), the OOM killer's score and the readings of ``/proc``, warm starts (forks of a zygote: pidfds,
  ``/proc``), and memory bounded by resource limits (``confine.bound_memory``).
- Elsewhere (macOS: ``Isolation.portable``), none of them: a worker is a new interpreter with the resource limits every
  POSIX system enforces (CPU time, file size, open files, processes), a wall-clock limit per call, the disk watch, and
  its memory watched from outside (``autograder.sandbox.memorywatch``: macOS does not enforce ``RLIMIT_AS`` and its
  malloc maps what ``RLIMIT_DATA`` does not count). ``AUTOGRADER_LINUX=0`` gives a student's ``check`` this path on
  Linux (``config.without_linux_asked``: a test aid, which ``tests/sandbox/test_without_linux.py`` grades with).
"""

from __future__ import annotations

import functools
import os
import tempfile
from dataclasses import dataclass, replace

from autograder import scratch
from autograder.sandbox import cgroups, memorywatch
from autograder.sandbox.config import LANDLOCK_ENV, LINUX_ENV, NAMESPACES_ENV, PROBE, SECCOMP_ENV, Limits, linux
from autograder.sandbox.process import Sandbox, SandboxError

ALONE = ("; one submission is graded at a time on this machine, for two side by side would share /dev/shm and System V "
         "IPC")  # without namespaces (``permissions.graded_alone``)


@dataclass(frozen=True)
class Isolation:
    """How workers are confined here: ``namespaces``, ``permissions`` or ``limits``, and ``landlock``, the Landlock ABI
    of the allow-list every worker then enforces in any mode (0: none); ``seccomp``, whether every worker filters its
    system calls (``autograder.worker.confine``); ``cgroups``, the controllers of each worker's control group
    (``autograder.sandbox.cgroups``); ``problem`` says why student code cannot run at all (an interpreter the sandbox
    uids cannot read, or a temporary folder they cannot pass through, in ``permissions`` mode); ``linux``, whether
    Linux's own layers are used (the module docstring; ``portable`` without them)."""

    mode: str = "limits"
    problem: str = ""
    landlock: int = 0
    seccomp: bool = False
    cgroups: tuple[str, ...] = ()
    linux: bool = True

    @classmethod
    def portable(cls) -> Isolation:
        """The confinement of a system without Linux's layers (macOS), and of ``check`` under ``AUTOGRADER_LINUX=0``:
        resource limits, time limits, the disk watch and the memory watch (module docstring)."""
        return cls("limits", linux=False)

    @classmethod
    @functools.cache
    def detect(cls) -> Isolation:
        """The confinement (``_confinement``), the system-call filter wherever libseccomp is found, unless
        ``AUTOGRADER_SECCOMP=0`` (no probe: a worker that cannot load it fails to start), and control groups as root
        where a hierarchy is writable, unless ``AUTOGRADER_CGROUPS=0`` (a runner is told which the batch found); on a
        system other than Linux, ``portable``."""
        if not linux():
            return cls.portable()
        setting = os.environ.get(SECCOMP_ENV)
        confinement = cls._confinement()
        groups = os.environ.get(cgroups.ENV)
        if groups is None:
            groups = ",".join(cgroups.usable()) if confinement.privileged else ""
        return replace(confinement, seccomp=setting == "1" or (setting != "0" and libseccomp_loads()),
                       cgroups=tuple(name for name in groups.split(",") if name in cgroups.CONTROLLERS))

    @classmethod
    def _confinement(cls) -> Isolation:
        """Probe once per process: namespaces as root unless ``AUTOGRADER_NAMESPACES=0`` or the kernel refuses them,
        and Landlock unless ``AUTOGRADER_LANDLOCK=0`` or the kernel (or a container's seccomp profile) refuses it (as
        root the probe's worker shows that it holds; without root a worker that cannot enforce it fails to start). A
        runner is told what its batch found (``AUTOGRADER_NAMESPACES=1``, ``AUTOGRADER_LANDLOCK=ABI``) and does not
        probe again."""
        found = os.environ.get(LANDLOCK_ENV, "")
        landlock = int(found) if found.isdigit() else PROBE
        if os.geteuid() != 0:  # no probe (a student's `check` waits for it): the kernel's word, and workers enforce it
            return cls("limits", landlock=_kernel_landlock() if landlock == PROBE else landlock)
        setting = os.environ.get(NAMESPACES_ENV)
        if setting == "1" and landlock != PROBE:
            return cls("namespaces", landlock=landlock)
        if setting != "0":
            answer = _probe(cls("namespaces", landlock=landlock))
            if answer.get("ready"):
                return cls("namespaces", landlock=answer.get("landlock", 0))
        answer = _probe(cls("permissions", landlock=landlock))
        if answer.get("unreachable"):
            return cls("permissions", problem=(
                f"grading as root without namespaces runs student code as an unprivileged user, who cannot reach its "
                f"own folders in the temporary folder {tempfile.gettempdir()} ({', '.join(answer['unreachable'])}): "
                "set TMPDIR to a folder every user may pass through (/tmp, or give o+x on it and each folder above "
                "it)"))
        if not answer.get("ready") or answer.get("unreadable"):
            paths = ", ".join(answer.get("unreadable") or []) or answer.get("error", "the probe failed")
            return cls("permissions", problem=(
                f"grading as root without namespaces runs student code as an unprivileged user, who cannot use the "
                f"interpreter ({paths}): use a Python that every user can read (/usr/bin/python3.11, or one under "
                "/opt, as Gradescope's setup.sh installs) for the virtual environment, or a machine that allows "
                "namespaces"))
        return cls("permissions", landlock=answer.get("landlock", 0))

    def environment(self) -> dict[str, str]:
        """What a process started to grade (a runner) is told, so that it need not probe again."""
        env = {LANDLOCK_ENV: str(self.landlock), SECCOMP_ENV: "1" if self.seccomp else "0",
               cgroups.ENV: ",".join(self.cgroups) or "0"}
        if self.privileged:
            env[NAMESPACES_ENV] = "1" if self.mode == "namespaces" else "0"
        return env

    @property
    def privileged(self) -> bool:
        return self.mode != "limits"

    def note(self) -> str:
        if not self.linux:
            return "; ".join(self.skipped())
        return self._confinement_note() + self._filter_note() + self._groups_note()

    def skipped(self) -> list[str]:
        """One line for each layer this system lacks, saying what grading goes on without (module docstring)."""
        if not self.linux:
            why = "not Linux" if not linux() else f"{LINUX_ENV}=0"
            return [f"{why}: student code runs as your user, with resource limits (CPU time, file size, open files, "
                    "processes) and time limits",
                    "no namespaces, own uid, Landlock, system-call filter or control groups (Linux's): your files, "
                    "network and processes are reachable",
                    "no parent-death signal (prctl, Linux's): a worker left by a killed check ends at its CPU-time "
                    "limit",
                    "no memory limit by the kernel (RLIMIT_AS and RLIMIT_DATA hold on Linux alone): the worker's "
                    f"memory is watched from outside every {memorywatch.POLL_SECONDS:g} s",
                    "no /proc or pidfds (Linux's): each worker is a new interpreter (no warm starts), and the disk "
                    "watch does not count files removed but held open"]
        lines = []
        if self.mode != "namespaces":
            lines.append("no namespaces" + ("" if self.privileged else " or own uid (not root)") + ": files other "
                         "users can read, and the machine's /dev/shm and System V IPC, are reachable")
        if not self.landlock:
            lines.append("no Landlock (the kernel lacks it, or AUTOGRADER_LANDLOCK=0): no allow-list of files")
        if not self.seccomp:
            lines.append("no system-call filter (libseccomp not found, or AUTOGRADER_SECCOMP=0)")
        if not self.cgroups:
            lines.append("no control groups (not root, no writable cgroup hierarchy, or AUTOGRADER_CGROUPS=0): "
                         "memory and CPU time are limited per process")
        return lines

    def _filter_note(self) -> str:
        if self.seccomp:
            return "; a system-call filter: no internet sockets, keyrings or message queues"
        return ("; no system-call filter (libseccomp not found, or AUTOGRADER_SECCOMP=0): the kernel's keyrings and "
                "POSIX message queues are the machine's, and so is its network without namespaces")

    def _groups_note(self) -> str:
        counted = {"memory": "memory", "pids": "number", "cpu": "CPU share"}
        if self.cgroups:
            named = [counted[name] for name in self.cgroups]
            listed = " and ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)
            return f"; a control group: its processes' {listed} counted together"
        if self.privileged:
            return ("; no control groups (no writable cgroup hierarchy, or AUTOGRADER_CGROUPS=0): memory and CPU "
                    "time are limited per process")
        return ""

    def _confinement_note(self) -> str:
        landlock = f"Landlock ABI {self.landlock}"
        if self.mode == "namespaces":
            return ("isolated: own uid, a private file system holding only the interpreter and the submission, "
                    "private /tmp, no network" + (f"; the same allow-list enforced again by {landlock}"
                                                   if self.landlock else ""))
        if self.mode == "permissions" and self.landlock:
            return (f"own uid, resource limits and an allow-list of files ({landlock}: the interpreter, the submission "
                    "and a private /tmp; no TCP, no signals out), but no namespaces on this machine: /dev/shm is "
                    "shared" + ("" if self.seccomp else " and UDP reachable") + ALONE)
        if self.mode == "permissions":
            return ("own uid and resource limits, but no namespaces on this machine: what student code must not "
                    "read is protected by file permissions only, and files other users can read are readable" + ALONE)
        if self.landlock:
            return (f"not running as root: student code runs as your user, with resource limits and an allow-list of "
                    f"files ({landlock}: the interpreter, the submission and a private /tmp; no TCP, no signals "
                    "out); grade untrusted submissions as root (or on Gradescope) for full isolation")
        return ("not running as root: student code runs as your user with resource limits only; "
                "grade untrusted submissions as root (or on Gradescope) for full isolation")



def _probe(isolation: Isolation) -> dict:
    """Start a worker that only confines itself (in a scratch folder) and report its handshake."""
    with scratch.folder("probe") as folder:
        root = folder / "submission"
        root.mkdir()
        sandbox = Sandbox(root, {}, Limits(), isolation, probe=True)
        try:
            sandbox.start()
            return sandbox.answer
        except SandboxError as exc:
            return {"ready": False, "error": str(exc)}
        finally:
            sandbox.close()


def libseccomp_loads() -> bool:
    """Whether the system's libseccomp loads here (for the workers' system-call filter); loaded, it stays loaded."""
    try:
        import pyseccomp  # noqa: F401
    except (ImportError, OSError, RuntimeError):  # pyseccomp raises RuntimeError where libseccomp is not installed
        return False
    return True


def _kernel_landlock() -> int:
    """The running kernel's Landlock ABI, 0 where it has none (or a seccomp profile refuses the call)."""
    import landlockpy

    try:
        return landlockpy.abi_version()
    except OSError:
        return 0


