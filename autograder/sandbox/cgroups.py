"""Control groups: a worker's processes counted together, for memory, for their number and for the CPU.

The resource limits a worker sets (``autograder.worker.confine``) hold per process, and a submission may start 256:
one that forked 120 children of 40 MB each, graded beside a correct one on a machine without spare memory, had the
kernel's OOM killer kill the correct one's worker (it lost the points of the tests left); one whose 200 children spun
in sessions of their own (so the kernel's autogroups did not pool them) slowed the submission graded beside it 70
times. Measured 2026-11-26, the first in a memory cgroup of 4 GB standing for a machine. So, as root where a cgroup
hierarchy is writable, each worker gets a group of its own (``Group``): ``memory`` holds all its processes together
to its ``memory_mb`` (the kernel kills inside the group, never outside it; files it writes to a tmpfs count too),
``pids`` to its ``processes``, and ``cpu`` gives the group one share, however many processes it runs. Like the
worker's own limits (``autograder.worker.confine.bound_memory``), ``memory_mb`` is what the submission adds: once the
worker is ready its group's limit becomes what the group holds then (a worker started cold has imported torch in it)
plus ``memory_mb``, the worker's private memory then and ``HEADROOM_MB`` (``Group.allow_more``, from
``autograder.sandbox.process``). A forked worker shares its zygote's pages until it writes them, and each page it
copies then is charged to its group though its own limits counted it already; so one process that grows alone meets
its own limit first, an allocation error that it may catch and the student reads as such (as before the limits were
relative), and the group's kill is for what its processes take together: at most ``memory_mb`` more than they held,
plus what the worker held. The worker
joins its group itself, first thing and while still root (``confine``); nothing it starts can leave (moving a process
takes write access to a root-owned ``cgroup.procs``), and workers score highest for the OOM killer anyway, so that
on a machine short of memory the kernel picks student code before the grader.

Where each controller lives is read from ``/proc/self/mountinfo``: a version 1 hierarchy of its own (groups nest
under this process's group, so limits set above it still apply), or the unified (version 2) hierarchy, where groups
nest under ``autograder/`` at its root (a group with processes cannot hand controllers to its children, so the
grader's own group cannot hold them). A container with the hierarchy read-only, or a grader that is not root, has
none: ``usable`` is then empty, the results' isolation note says so, and the per-process limits stand alone.
``AUTOGRADER_CGROUPS=0`` turns the layer off. Groups are named ``autograder-PID-N`` after the process that made
them, which removes them; a killed grader's empty groups are removed by the next one (``sweep``).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import os
import re
import time
from pathlib import Path

CONTROLLERS = ("memory", "pids", "cpu")
ENV = "AUTOGRADER_CGROUPS"  # "0": no control groups; "memory,pids,cpu": the ones the grader found usable
UNIFIED_TOP = "autograder"  # the folder at the unified hierarchy's root that holds the groups
SLACK = 1 << 20  # bytes below its limit at which a group's peak counts as having reached it (charges come in batches)
HEADROOM_MB = 64  # the kernel's own charges beside a process's pages (page tables: 4 MB per 2 GB), over memory_mb
NAME = re.compile(r"autograder-(\d+)-(\d+|probe)")
_counter = itertools.count()


@functools.cache
def usable() -> dict[str, Path]:
    """The controllers this process can give a worker's group: {controller: the folder its groups are made in}.
    Each is tried once, by making, limiting and removing a group (a read-only hierarchy, or no root, fails); then
    the groups dead graders left there are swept (once per process: a batch, a runners' zygote)."""
    if os.geteuid() != 0:
        return {}
    found = {}
    for controller, parent in sorted(_parents().items(), key=lambda item: CONTROLLERS.index(item[0])):
        probe = parent / f"autograder-{os.getpid()}-probe"
        try:
            probe.mkdir(exist_ok=True)
            try:
                _limit(probe, controller, 1 << 30 if controller == "memory" else 1024)
            finally:
                probe.rmdir()
        except OSError:
            continue
        found[controller] = parent
    _sweep(found.values())
    return found


class Group:
    """The control group of one worker, in every usable hierarchy (``make``)."""

    def __init__(self, folders: dict[str, Path]):
        self.folders = folders  # controller -> its folder (one folder for all, in the unified hierarchy)

    @classmethod
    def make(cls, controllers: tuple[str, ...], memory_mb: int, processes: int) -> Group:
        """A new group in the hierarchies of ``controllers``, limited to ``memory_mb`` and ``processes``; raises
        OSError where one cannot be made (a controller the grader found, gone)."""
        parents = usable()
        missing = [name for name in controllers if name not in parents]
        if missing:
            raise OSError(errno.ENOENT, f"no usable cgroup hierarchy for {', '.join(missing)}")
        name = f"autograder-{os.getpid()}-{next(_counter)}"
        group = cls({controller: parents[controller] / name for controller in controllers})
        try:
            for controller, folder in group.folders.items():
                folder.mkdir(exist_ok=True)
                _limit(folder, controller, memory_mb << 20 if controller == "memory" else processes)
        except OSError:
            group.remove()
            raise
        return group

    def allow_more(self, added: int) -> None:
        """Set the group's memory limit to what it holds now plus ``added`` bytes (module docstring); OSError where the
        hierarchy refuses, and the limit ``make`` set stays."""
        folder = self.folders.get("memory")
        if folder is not None:
            version_1 = (folder / "memory.usage_in_bytes").exists()
            held = int((folder / ("memory.usage_in_bytes" if version_1 else "memory.current")).read_text())
            _limit(folder, "memory", held + added)

    def procs(self) -> list[str]:
        """The ``cgroup.procs`` files a worker writes itself into (``confine``), one per folder."""
        return [str(folder / "cgroup.procs") for folder in self._distinct()]

    def pids(self) -> list[int]:
        """The processes in the group."""
        return _pids(next(iter(self.folders.values())))

    def oom_kills(self) -> int:
        """How many processes of the group the kernel killed for its memory limit."""
        folder = self.folders.get("memory")
        for name in ("memory.events", "memory.oom_control"):  # unified, version 1
            with contextlib.suppress(OSError):
                for line in (folder / name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        return 0

    def hit_own_limit(self) -> bool:
        """Whether the group's memory reached its own limit: a kill counted by ``oom_kills`` without it was for an
        ancestor's limit (a container's, as Gradescope's: ``own_memory``), not for what the worker was allowed.
        Version 1: the group's peak reached its limit (within ``SLACK``), or a charge was refused at its own counter
        (``failcnt``; a refusal above it is counted there: measured 2026-11-28, on a kernel that also left a group's own
        ``failcnt`` at 0 when its processes, together, were killed at its limit); the unified hierarchy counts the
        group's own out-of-memory events under ``oom``."""
        folder = self.folders.get("memory")
        if folder is None:
            return False
        with contextlib.suppress(OSError, ValueError):
            if (folder / "memory.limit_in_bytes").exists():
                for prefix in ("memory.", "memory.memsw."):
                    if not (folder / f"{prefix}limit_in_bytes").exists():
                        continue
                    limit = int((folder / f"{prefix}limit_in_bytes").read_text())
                    peak = int((folder / f"{prefix}max_usage_in_bytes").read_text())
                    if peak >= limit - SLACK or int((folder / f"{prefix}failcnt").read_text()) > 0:
                        return True
                return False
            for line in (folder / "memory.events").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom":
                    return int(value) > 0
        return False

    def remove(self, seconds: float = 2.0) -> None:
        """Remove the group's folders, once their processes have exited (a folder still busy then stays for
        ``sweep``). Killing them is the sandbox's: a group is made only as root, where every process in it belongs to
        the worker's uid (``permissions.kill_processes``) and, with namespaces, dies with its PID 1."""
        deadline = time.monotonic() + seconds
        for folder in self._distinct():
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        break
                    time.sleep(0.01)

    def _distinct(self) -> list[Path]:
        return list(dict.fromkeys(self.folders.values()))


def own_memory(mountinfo: str | None = None, groups: str | None = None) -> Group | None:
    """The memory group this process runs in (a container's, where it runs in one: Gradescope's), to read its limit
    and its kills (``Group.oom_kills``, which count its descendants' too); None where no memory hierarchy is mounted.
    Read-only is enough: nothing is made or limited there."""
    own = _own_paths(groups)
    for line in (mountinfo or Path("/proc/self/mountinfo").read_text()).splitlines():
        fields, _, rest = line.partition(" - ")
        root, mount = fields.split()[3:5]
        kind, _, options = rest.split()[:3]
        mount = Path(mount.replace("\\040", " "))
        if kind == "cgroup" and "memory" in options.split(","):
            return Group({"memory": mount / _below(own.get("memory", "/"), root)})
        if kind == "cgroup2" and "memory" not in own:  # on a hybrid machine, the version 1 hierarchy has it
            return Group({"memory": mount / _below(own.get("", "/"), root)})
    return None


CONTAINER_OUT_OF_MEMORY = ("the container the grader runs in ran out of memory (its own limit, not the one your code "
                           "is allowed)")


@functools.cache
def _container() -> Group | None:
    return own_memory()


def container_kills() -> int:
    """The kernel's out-of-memory kills so far in the group this process runs in (0 where it cannot be read: no
    /proc, as on macOS or under ``AUTOGRADER_LINUX=0``)."""
    try:
        group = _container()
    except (OSError, ValueError):
        return 0
    return group.oom_kills() if group is not None else 0


def memory_limit(group: Group) -> int | None:
    """``group``'s memory limit in bytes (None: none set, or unreadable)."""
    folder = group.folders["memory"]
    for name in ("memory.limit_in_bytes", "memory.max"):
        with contextlib.suppress(OSError, ValueError):
            value = int((folder / name).read_text())
            return value if value < 1 << 60 else None
    return None


def sweep() -> None:
    """Remove the empty groups of graders that are gone (their maker's pid is not running)."""
    _sweep(usable().values())


def _sweep(parents) -> None:
    for parent in set(parents):
        with contextlib.suppress(OSError):
            for entry in parent.iterdir():
                match = NAME.fullmatch(entry.name)
                if match and not _running(int(match.group(1))):
                    with contextlib.suppress(OSError):
                        entry.rmdir()


def _limit(folder: Path, controller: str, value: int) -> None:
    """Set a group's limit: memory (bytes, and no swap beyond it) or processes; the cpu controller's default share."""
    if controller == "memory":
        version_1 = (folder / "memory.limit_in_bytes").exists()
        memory = folder / ("memory.limit_in_bytes" if version_1 else "memory.max")
        swap = folder / ("memory.memsw.limit_in_bytes" if version_1 else "memory.swap.max")
        writes = [(memory, str(value))] + ([(swap, str(value) if version_1 else "0")] if swap.exists() else [])
        if version_1 and int(memory.read_text()) < value:  # version 1 keeps memory below memory+swap: raise that first
            writes.reverse()
        for path, text in writes:
            path.write_text(text)
    elif controller == "pids":
        (folder / "pids.max").write_text(str(value))


def _parents(mountinfo: str | None = None, groups: str | None = None) -> dict[str, Path]:
    """{controller: the folder this process would make its groups in}, from the mounted hierarchies (``mountinfo``
    and this process's ``groups``: /proc/self's, unless given)."""
    own = _own_paths(groups)
    parents = {}
    for line in (mountinfo or Path("/proc/self/mountinfo").read_text()).splitlines():
        fields, _, rest = line.partition(" - ")
        root, mount = fields.split()[3:5]
        kind, _, options = rest.split()[:3]
        mount = Path(mount.replace("\\040", " "))
        if kind == "cgroup":
            for controller in set(options.split(",")) & set(CONTROLLERS):
                parents.setdefault(controller, mount / _below(own.get(controller, "/"), root))
        elif kind == "cgroup2":
            with contextlib.suppress(OSError):
                offered = (mount / "cgroup.controllers").read_text().split()
                for controller in set(offered) & set(CONTROLLERS):
                    if controller not in parents and _delegate(mount, controller):
                        parents[controller] = mount / UNIFIED_TOP
    return parents


def _own_paths(groups: str | None = None) -> dict[str, str]:
    """{controller: this process's group in its hierarchy}, "" naming the unified hierarchy's (``/proc/self/cgroup``,
    unless ``groups`` is given)."""
    own = {}
    for line in (groups or Path("/proc/self/cgroup").read_text()).splitlines():
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else [""]:
            own[name] = path
    return own


def _below(path: str, root: str) -> str:
    """``path`` (a group, as /proc/self/cgroup names it) relative to a mount of the hierarchy's ``root``."""
    relative = os.path.relpath(path, root) if path.startswith(root) else path.lstrip("/")
    return "" if relative == "." else relative


def _delegate(mount: Path, controller: str) -> bool:
    """Hand ``controller`` down to the groups under ``UNIFIED_TOP`` of the unified hierarchy at ``mount``."""
    try:
        (mount / "cgroup.subtree_control").write_text(f"+{controller}")
        (mount / UNIFIED_TOP).mkdir(exist_ok=True)
        (mount / UNIFIED_TOP / "cgroup.subtree_control").write_text(f"+{controller}")
    except OSError:
        return False
    return True


def _pids(folder: Path) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(pid) for pid in (folder / "cgroup.procs").read_text().split()]
    return []


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it runs, as another user
        pass
    return True
