"""The permissions layer (root only): a uid of its own per worker, and nothing of the grader's readable by it.

Each worker runs as a uid leased from a pool (``UidLease``, held through a lock file while the worker lives). A
uid is swept when it is leased and when it is given back: every process it owns is killed, its files in the
machine's world-writable folders and its System V IPC objects are removed. Uids are handed out round-robin, and
the sweep makes sure that nothing passes from one submission to the next even when one comes back. The pool is
61000-61511 unless ``AUTOGRADER_UIDS`` names another range (``first-last``): graders on one machine with disjoint
ranges never lease, sweep or count each other's uids (make test runs its isolation tests beside the others that way).

What the grader holds (the checkout's folders other than its virtual environments: the solutions, the hidden suites,
the mutants, ``.git`` and anything added later; results folders and submission sources) is kept from every sandbox uid
by namespaces or Landlock where the machine has either; where it has neither, by mode bits, which grading changes
only when told to (``keep_out``: the instructor's and the students' files are theirs).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import logging
import os
import shlex
import stat
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from autograder import forking, trees
from autograder.sandbox.config import LOCK_ENV

if TYPE_CHECKING:
    from autograder.sandbox.isolation import Isolation

UIDS_ENV = "AUTOGRADER_UIDS"
WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
IPC_RMID = 0
NAMED = 20  # the paths a warning names (a class's submissions may be hundreds)
LOCK_DIR = Path("/tmp/autograder-uids")  # one per machine, for every pool, whatever a grading's TMPDIR

log = logging.getLogger("autograder")


def _pool(text: str | None) -> range:
    """The uid range ``AUTOGRADER_UIDS`` names (``first-last``), by default 61000-61511."""
    if not text:
        return range(61000, 61512)
    first, _, last = text.partition("-")
    if not (first.isdigit() and last.isdigit() and 1000 <= int(first) <= int(last) < 2**31 - 1):
        raise SystemExit(f"{UIDS_ENV}={text!r}: give a range of uids no account uses, as first-last (61000-61511)")
    return range(int(first), int(last) + 1)


UID_POOL = _pool(os.environ.get(UIDS_ENV))


class UidLease:
    """An exclusive uid from the pool, held through a lock file while the worker lives; swept before and after."""

    def __init__(self):
        LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
        start = _next_start()
        for uid in [*UID_POOL[start:], *UID_POOL[:start]]:
            handle = open(LOCK_DIR / f"{uid}.lock", "w")  # noqa: SIM115 - held for the lease's life
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            self.uid, self._handle = uid, handle
            sweep(uid)  # whatever an earlier holder that died without giving it back left
            return
        raise RuntimeError(f"all {len(UID_POOL)} sandbox uids are in use; lower --jobs")

    def kill_all(self) -> None:
        """SIGKILL every process the uid owns (``kill -1`` as that uid reaches exactly those), until none is left."""
        kill_processes(self.uid)

    def release(self) -> None:
        sweep(self.uid)
        self._handle.close()


@contextlib.contextmanager
def graded_alone():
    """Held while one submission is graded without namespaces: one at a time per pool of uids, whatever process
    grades it (a batch, another batch beside it, a Ray task). Workers then share /dev/shm and System V IPC, where a
    file or a segment one of them leaves another may read while both run (a uid's are removed only when its worker
    stops): nothing forbids it that would not also break a trainer's own multiprocessing (docs/security.md)."""
    LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    with open(LOCK_DIR / f"grading-{UID_POOL.start}-{UID_POOL.stop - 1}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def sweep_free() -> None:
    """Sweep every uid of the pool that was used and is not leased now (its holder died without giving it back)."""
    for lock in sorted(LOCK_DIR.glob("*.lock")):
        if not lock.stem.isdigit() or int(lock.stem) not in UID_POOL:
            continue
        with contextlib.suppress(OSError), open(lock, "w") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            sweep(int(lock.stem))


def _next_start() -> int:
    """Where the round-robin over the pool starts: one past the last uid handed out (kept in a file per pool)."""
    counter = LOCK_DIR / f"next-{UID_POOL.start}-{UID_POOL.stop - 1}"
    with open(counter, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        text = handle.read().strip()
        start = int(text) % len(UID_POOL) if text.isdigit() else 0
        handle.seek(0)
        handle.truncate()
        handle.write(str((start + 1) % len(UID_POOL)))
    return start


def sweep(uid: int) -> None:
    """Kill the uid's processes and remove what it left where any user may write (files, System V IPC)."""
    kill_processes(uid)
    for folder in WORLD_WRITABLE:
        with contextlib.suppress(OSError):
            for entry in os.scandir(folder):
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_uid != uid:
                        continue
                    trees.remove(entry.path)
    _remove_ipc(uid)


def kill_processes(uid: int) -> None:
    for _ in range(10):
        if not processes_of(uid):
            return
        subprocess.run(["kill", "-9", "-1"], user=uid, group=uid, extra_groups=[], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        time.sleep(0.01)


def processes_of(uid: int) -> list[int]:
    """The pids of the live processes ``uid`` owns, from /proc (a zombie is already dead: only its exit waits to be
    collected, by its parent)."""
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                if entry.stat().st_uid == uid and forking.stat_fields(entry.name)[0] != "Z":
                    pids.append(int(entry.name))
    return pids


def _remove_ipc(uid: int) -> None:
    """Remove the uid's shared memory segments, message queues and semaphore sets."""
    libc = ctypes.CDLL(None, use_errno=True)
    removers = {"shm": lambda i: libc.shmctl(i, IPC_RMID, None), "msg": lambda i: libc.msgctl(i, IPC_RMID, None),
                "sem": lambda i: libc.semctl(i, 0, IPC_RMID)}
    for kind, remove in removers.items():
        with contextlib.suppress(OSError):
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
            header = lines[0].split()
            for line in lines[1:]:
                fields = dict(zip(header, line.split(), strict=False))
                if int(fields.get("uid", -1)) == uid:
                    ident = {"shm": "shmid", "msg": "msqid", "sem": "semid"}[kind]
                    remove(int(fields[ident]))


def keep_out(isolation: Isolation, paths: Iterable[Path] = (), checkout: Path | None = None) -> list[Path]:
    """Keep what the grader holds from sandbox uids: ``paths`` (a results folder, submissions' sources) and the
    checkout's folders but its virtual environments (the solutions, the hidden suites, the mutants, ``.git``). Returns
    those a sandbox uid could read.

    Nothing changes where a layer already hides them: namespaces (workers see none of them) or Landlock (an allow-list
    that leaves them out), and without root nothing runs as a sandbox uid. Where neither can (root without namespaces
    or Landlock), their modes are changed only when told to (``--lock-files``, ``AUTOGRADER_LOCK_FILES=1``); else a
    warning names each and says how. Grading once made the instructor's folders and a second environment in the
    checkout root-only unasked, which broke later gradings from that environment."""
    if not isolation.privileged or isolation.mode == "namespaces" or isolation.landlock:
        return []
    planned = _lock_plan(paths, checkout)
    if not planned:
        return []
    if os.environ.get(LOCK_ENV) == "1":
        for path, mode in planned.items():
            os.chmod(path, mode)
        log.info("grading as root without namespaces or Landlock (--lock-files): made %s readable by root only",
                 ", ".join(map(str, planned)))
    else:
        commands = [f"chmod {'go-rw,go+x' if mode & 0o001 else 'go-rwx'} {shlex.quote(str(path))}"
                    for path, mode in planned.items()]
        more = f" (and {len(commands) - NAMED} more)" if len(commands) > NAMED else ""
        log.warning("warning: grading as root without namespaces or Landlock, so only file modes keep student code "
                    "from what the grader holds, and sandbox users can read %s%s. Make them readable by root only: "
                    "%s%s; or grade with --lock-files (AUTOGRADER_LOCK_FILES=1), which does it (docs/security.md)",
                    ", ".join(map(str, list(planned)[:NAMED])), more, "; ".join(commands[:NAMED]), more)
    return list(planned)


def _lock_plan(paths: Iterable[Path], checkout: Path | None) -> dict[Path, int]:
    """The mode each path a sandbox uid can reach and read must get: a folder root-only, the checkout that holds the
    virtual environment only passable (the worker's interpreter lies below it)."""
    planned = {}
    if checkout is not None and checkout.resolve().is_relative_to(Path(sys.prefix).resolve()):
        checkout = None  # the harness installed in the environment (site-packages): no checkout, nothing of its own
    if checkout is not None:
        for entry in sorted(checkout.iterdir()):
            if (entry.is_dir() and not entry.is_symlink() and not _holds_environment(entry)
                    and not (entry / "pyvenv.cfg").exists()):  # an environment: some grading's interpreter
                planned[entry] = os.lstat(entry).st_mode & 0o7700
        mode = os.lstat(checkout).st_mode & 0o7777
        planned[checkout] = (mode & ~0o066) | 0o011 if _holds_environment(checkout) else mode & ~0o077
    for path in paths:
        with contextlib.suppress(OSError):
            if not os.path.islink(path):
                planned[Path(path)] = os.lstat(path).st_mode & 0o7700
    return {path: mode for path, mode in planned.items()
            if os.lstat(path).st_mode & 0o7777 != mode and _passable(path.parent)}


def _holds_environment(folder: Path) -> bool:
    """Whether this grading's virtual environment lies in ``folder``, by either name: where it really is, or the name
    the interpreter knows it by (through a link: a ``.venv`` linked from elsewhere), which its workers reach it by."""
    names = {Path(os.path.abspath(sys.prefix)), Path(sys.prefix).resolve()}
    return any(name.is_relative_to(place) for name in names for place in {folder, folder.resolve()})


def _passable(folder: Path) -> bool:
    """Whether any user may pass through ``folder`` and every folder above it (o+x): to reach what lies in it."""
    return all(os.stat(above).st_mode & stat.S_IXOTH for above in [folder, *folder.parents])


def hand_over(root: Path, uid: int) -> None:
    """Give the staged copy ``root`` to ``uid`` (owner of every file, the folder mode 0700); its parent, a folder of
    the grader's own, lets the uid through without listing it. A parent every user may write (/tmp) is refused, not
    changed: that chmod once made the machine's /tmp 0711 for every user, tests that rely on it included."""
    if os.lstat(root.parent).st_mode & (stat.S_ISVTX | stat.S_IWOTH):
        raise ValueError(f"{root} lies in {root.parent}, a folder every user may write: stage a submission in a folder "
                         "of the grader's own (tempfile.mkdtemp()/submission)")
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
            os.lchown(name, uid, uid)
    os.chmod(root, 0o700)
    os.chmod(root.parent, 0o711)

