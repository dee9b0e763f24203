"""A worker's control group (``autograder/sandbox/cgroups.py``): all the processes it starts share its memory limit (the
kernel kills inside the group, and the student is told why), none can leave the group or lower its OOM score, and a
worker without a group (the control) holds what per-process limits allow, so each check can fail. Also where the
groups go on each kind of hierarchy, and the sweep of a dead grader's groups.

Measured before the groups (2026-11-26): a submission whose 120 children took 40 MB each, graded beside a correct
one in a memory cgroup of 4 GB standing for a machine, had the OOM killer take the correct one's worker."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support.machine import is_root

from autograder.grading.proxy import Student, StudentCrashed
from autograder.sandbox import cgroups
from autograder.sandbox.config import Limits
from autograder.sandbox.isolation import Isolation

PROBE = r'''
import os, time


def hold(children, mb):
    """Fork ``children`` processes that each take ``mb`` MB (touched) and wait; how many hold it once each has its
    memory or is dead (a loaded machine may take seconds)."""
    read, write = os.pipe()
    pids = []
    for _ in range(children):
        pid = os.fork()
        if pid == 0:
            block = bytearray(mb << 20)
            block[::4096] = b"x" * len(block[::4096])
            os.write(write, b"1")
            time.sleep(60)
            os._exit(0)
        pids.append(pid)
    os.close(write)
    os.set_blocking(read, False)
    holding, dead, deadline = 0, set(), time.monotonic() + 50
    while holding + len(dead) < children and time.monotonic() < deadline:
        time.sleep(0.1)
        try:
            holding += len(os.read(read, children))
        except BlockingIOError:
            pass
        dead |= {pid for pid in pids if pid not in dead and os.waitpid(pid, os.WNOHANG) != (0, 0)}
    time.sleep(0.5)  # a kill that the last allocation set off
    alive = [pid for pid in pids if pid not in dead and os.waitpid(pid, os.WNOHANG) == (0, 0)]
    for pid in alive:
        os.kill(pid, 9)
    return len(alive)


def take_then_fork(mb, children, child_mb):
    """Start children, take ``mb`` MB here (the largest process of the group), then let the children take theirs."""
    go, let_go = os.pipe()
    for _ in range(children):
        if os.fork() == 0:
            os.close(let_go)
            os.read(go, 1)
            block = bytearray(child_mb << 20)
            block[::4096] = b"x" * len(block[::4096])
            time.sleep(8)  # past the parent's end: holding its reply pipe, as long as they live
            os._exit(0)
    block = bytearray(mb << 20)
    block[::4096] = b"x" * len(block[::4096])
    os.close(let_go)
    time.sleep(5)
    return len(block)


def leave():
    """Try to leave the group (a grandchild writes itself into the hierarchies' top groups) and to lower the OOM score;
    what happened, and the groups the grandchild is in."""
    read, write = os.pipe()
    if os.fork() == 0:
        os.setsid()  # a session of its own: the kernel's autogroups would count it apart, its group does not
        tried = []
        for line in open("/proc/self/cgroup").read().splitlines():
            top = "/sys/fs/cgroup/" + (line.split(":")[1].split(",")[0] or "unified")
            try:
                with open(top + "/cgroup.procs", "w") as procs:
                    procs.write("0")
                tried.append("moved")
            except OSError as exc:
                tried.append(type(exc).__name__)
        try:
            with open("/proc/self/oom_score_adj", "w") as score:
                score.write("0")
            tried.append("lowered")
        except OSError as exc:
            tried.append(type(exc).__name__)
        tried.append(open("/proc/self/oom_score_adj").read().strip())
        os.write(write, repr((tried, open("/proc/self/cgroup").read())).encode())
        os._exit(0)
    os.close(write)
    answer = os.read(read, 65536).decode()
    os.wait()
    return answer
'''

needs_groups = pytest.mark.skipif(not (is_root and "memory" in cgroups.usable()),
                                  reason="control groups need root and a writable cgroup hierarchy")
MODES = ["namespaces", "permissions"]


def _student(mode: str, grouped: bool, memory_mb: int, tmp: Path) -> Student:
    os.chmod(tmp, 0o711)  # as a batch stages: a sandbox uid passes through
    submission = tmp / "submission"
    submission.mkdir()
    (submission / "probe.py").write_text(PROBE)
    isolation = Isolation(mode, cgroups=tuple(cgroups.usable()) if grouped else ())
    return Student(submission, [{"name": "probe"}], Limits(memory_mb=memory_mb, threads=1), isolation)


@pytest.fixture
def staged():
    folder = Path(tempfile.mkdtemp(prefix="cgroups-test-"))
    yield folder
    shutil.rmtree(folder)


@needs_groups
@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "control"])
@pytest.mark.parametrize("mode", MODES)
def test_a_workers_children_share_its_memory_limit(mode, grouped, staged):
    """Ten children of 200 MB: each within the per-process limit of 1.5 GB, 2 GB together."""
    student = _student(mode, grouped, 1536, staged)
    try:
        alive = student.probe.hold(10, 200)
        group = student._channel.group
        killed = group.oom_kills() if group else 0
    finally:
        student.close()
    if grouped:
        assert alive < 10 and killed >= 10 - alive
    else:
        assert alive == 10


@needs_groups
@pytest.mark.parametrize("mode", MODES)
def test_a_worker_killed_for_its_groups_memory_is_told_so(mode, staged):
    student = _student(mode, True, 1536, staged)
    try:
        with pytest.raises(StudentCrashed, match="killed for memory: all of its processes together may use at most "
                                                 "1536 MB"):
            student.probe.take_then_fork(600, 6, 200)
    finally:
        student.close()


@needs_groups
@pytest.mark.parametrize("mode", MODES)
def test_nothing_a_worker_starts_leaves_its_group_or_lowers_its_oom_score(mode, staged):
    student = _student(mode, True, 1536, staged)
    try:
        tried, groups = eval(student.probe.leave())  # noqa: S307 - the probe's own repr of strings
        names = {folder.name for folder in student._channel.group.folders.values()}
    finally:
        student.close()
    assert "moved" not in tried and "lowered" not in tried and tried[-1] == "1000", tried
    for controller in cgroups.usable():
        line = next(line for line in groups.splitlines() if controller in line.split(":")[1].split(","))
        assert line.rsplit("/", 1)[-1] in names, (controller, groups)


@needs_groups
def test_the_grader_finds_groups_as_root_and_not_when_told(monkeypatch):
    detect = Isolation.detect.__wrapped__
    monkeypatch.delenv(cgroups.ENV, raising=False)
    found = detect(Isolation)
    assert found.cgroups and "memory" in found.cgroups and "counted together" in found.note()
    assert found.environment()[cgroups.ENV] == ",".join(found.cgroups)
    monkeypatch.setenv(cgroups.ENV, "0")
    off = detect(Isolation)
    assert off.cgroups == () and "no control groups" in off.note()


@needs_groups
def test_groups_are_removed_and_a_dead_graders_are_swept():
    group = cgroups.Group.make(tuple(cgroups.usable()), 256, 16)
    assert all(folder.is_dir() for folder in group.folders.values())
    group.remove()
    assert not any(folder.exists() for folder in group.folders.values())
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    parent = cgroups.usable()["memory"]
    (parent / f"autograder-{dead}-7").mkdir()
    (parent / f"autograder-{os.getpid()}-999").mkdir()  # a live grader's
    busy = subprocess.Popen(["sleep", "30"])
    (parent / f"autograder-{dead}-8").mkdir()
    (parent / f"autograder-{dead}-8" / "cgroup.procs").write_text(str(busy.pid))  # a process still in it
    try:
        cgroups.sweep()
        assert not (parent / f"autograder-{dead}-7").exists()
        assert (parent / f"autograder-{os.getpid()}-999").exists() and (parent / f"autograder-{dead}-8").exists()
    finally:
        busy.kill()
        busy.wait()
        cgroups.sweep()
        (parent / f"autograder-{os.getpid()}-999").rmdir()
    assert not (parent / f"autograder-{dead}-8").exists()


def test_where_the_groups_go_on_each_kind_of_hierarchy(tmp_path):
    """Version 1: under this process's own group in each controller's hierarchy (a container's mount of its subtree
    too); the unified hierarchy: under ``autograder/`` at its root, once the controllers are handed down to it."""
    unified = tmp_path / "unified"
    unified.mkdir()
    (unified / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    mountinfo = "\n".join([
        "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
        "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
        f"41 31 0:38 / {unified} rw,relatime - cgroup2 cgroup2 rw",
    ])
    own = "4:memory:/docker/abc/job\n1:cpu:/grader\n0::/user.slice/session-1.scope\n"
    parents = cgroups._parents(mountinfo, own)
    assert parents == {"cpu": Path("/sys/fs/cgroup/cpu/grader"), "memory": Path("/sys/fs/cgroup/memory/job"),
                       "pids": unified / "autograder"}
    assert (unified / "cgroup.subtree_control").read_text() == "+pids"
    assert (unified / "autograder" / "cgroup.subtree_control").read_text() == "+pids"


def test_the_container_is_the_group_this_process_runs_in(tmp_path):
    """The memory group whose limit and kills are the container's: this process's own, in the version 1 memory
    hierarchy where there is one (a hybrid machine's unified hierarchy holds no memory), else in the unified one (a
    container with a cgroup namespace sees its own group as the root)."""
    hybrid = "\n".join([
        "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
    ])
    own = "4:memory:/docker/abc/job\n0::/user.slice\n"
    assert cgroups.own_memory(hybrid, own).folders == {"memory": Path("/sys/fs/cgroup/memory/job")}
    unified = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw"
    assert cgroups.own_memory(unified, "0::/\n").folders == {"memory": Path("/sys/fs/cgroup")}
    assert cgroups.own_memory(unified, "0::/grader.scope\n").folders == {"memory": Path("/sys/fs/cgroup/grader.scope")}
    assert cgroups.own_memory("22 1 0:20 / /proc rw - proc proc rw", "0::/\n") is None
    (tmp_path / "memory.limit_in_bytes").write_text("805306368\n")
    assert cgroups.memory_limit(cgroups.Group({"memory": tmp_path})) == 768 << 20
    (tmp_path / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert cgroups.memory_limit(cgroups.Group({"memory": tmp_path})) is None


def test_a_kill_for_an_ancestors_limit_is_told_from_one_for_the_groups_own(tmp_path):
    """Version 1: the group's peak at its own limit, or a charge refused there (failcnt); the unified hierarchy: its
    own out of memory events under ``oom`` (a kill for an ancestor's limit shows none of them)."""
    group = cgroups.Group({"memory": tmp_path})
    for prefix in ("memory.", "memory.memsw."):
        (tmp_path / f"{prefix}limit_in_bytes").write_text(f"{2 << 30}\n")
        (tmp_path / f"{prefix}max_usage_in_bytes").write_text(f"{700 << 20}\n")  # killed at a 768 MB container's limit
        (tmp_path / f"{prefix}failcnt").write_text("0\n")
    assert not group.hit_own_limit()
    (tmp_path / "memory.memsw.failcnt").write_text("3\n")
    assert group.hit_own_limit()
    (tmp_path / "memory.memsw.failcnt").write_text("0\n")
    (tmp_path / "memory.max_usage_in_bytes").write_text(f"{2 << 30}\n")  # its own limit reached, failcnt left at 0
    assert group.hit_own_limit()
    unified = tmp_path / "unified"
    unified.mkdir()
    (unified / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 0\noom_kill 1\n")
    assert not cgroups.Group({"memory": unified}).hit_own_limit()
    (unified / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    assert cgroups.Group({"memory": unified}).hit_own_limit()
