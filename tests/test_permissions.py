"""The sandbox uid pool (``autograder.sandbox.permissions``): a grader leases, sweeps and counts only the uids of its
own pool, so two graders with disjoint pools (``AUTOGRADER_UIDS``) on one machine leave each other alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import needs_root

from autograder.sandbox import permissions
from autograder.sandbox.isolation import Isolation

POOL_OF_TWO = {**os.environ, "AUTOGRADER_UIDS": "62100-62101"}
OUTSIDE = 62102  # a uid next to that pool, as another grader's worker would hold


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=POOL_OF_TWO, capture_output=True, text=True, timeout=60)


@needs_root
def test_leases_come_from_the_pool_and_a_sweep_spares_other_pools():
    """Two leases get the pool's two uids and a third is refused; sweeping the free uids of the pool does not kill a
    process of a uid outside it, although that uid's lock file is there and free (a grader with the whole machine's
    lock folder as its pool would sweep it)."""
    other = subprocess.Popen(["sleep", "60"], user=OUTSIDE, group=OUTSIDE, extra_groups=[])
    try:
        run = _python(f"""
import pathlib
from autograder.sandbox import permissions
pathlib.Path(permissions.LOCK_DIR, "{OUTSIDE}.lock").touch()
leases = [permissions.UidLease(), permissions.UidLease()]
print(sorted(lease.uid for lease in leases))
try:
    permissions.UidLease()
except RuntimeError as refused:
    print(refused)
for lease in leases:
    lease.release()
permissions.sweep_free()
""")
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == ["[62100, 62101]", "all 2 sandbox uids are in use; lower --jobs"]
        assert other.poll() is None, "a sweep killed a process of a uid outside its pool"
    finally:
        other.kill()
        other.wait()
        (permissions.LOCK_DIR / f"{OUTSIDE}.lock").unlink(missing_ok=True)


def test_a_range_that_is_not_one_says_what_to_give():
    for wrong in ("62100", "62101-62100", "0-10", "uids"):
        run = subprocess.run([sys.executable, "-c", "import autograder.sandbox.permissions"], capture_output=True,
        text=True,
                             env={**os.environ, "AUTOGRADER_UIDS": wrong}, timeout=60)
        assert run.returncode != 0 and "first-last (61000-61511)" in run.stderr, wrong


@needs_root
def test_a_submission_is_never_handed_over_in_a_folder_every_user_may_write(tmp_path):
    """Handing over lets the uid through the staged copy's parent (0711): never a shared folder's mode to change."""
    staged = Path(tempfile.mkdtemp(prefix="autograder-handover-", dir="/tmp"))
    before = os.stat("/tmp").st_mode
    try:
        with pytest.raises(ValueError, match="a folder every user may write"):
            permissions.hand_over(staged, permissions.UID_POOL[0])
        os.chmod(tmp_path, 0o1777)
        (tmp_path / "submission").mkdir()
        with pytest.raises(ValueError, match="stage a submission in a folder of the grader's own"):
            permissions.hand_over(tmp_path / "submission", permissions.UID_POOL[0])
    finally:
        staged.rmdir()
    assert os.stat("/tmp").st_mode == before
    assert os.stat(tmp_path).st_mode & 0o7777 == 0o1777


@needs_root
def test_a_temporary_folder_the_sandbox_users_cannot_pass_through_is_the_graders_problem(monkeypatch):
    """Without namespaces a worker reaches its folders by their paths, through the grader's TMPDIR: where a sandbox
    uid cannot pass through it, the probe says so and what to do (before, every submission and the reference "did
    not load")."""
    closed = Path(tempfile.mkdtemp(prefix="test-closed-", dir="/tmp"))  # mode 0700: no other user passes
    monkeypatch.setenv("AUTOGRADER_NAMESPACES", "0")
    monkeypatch.setenv("TMPDIR", str(closed))
    monkeypatch.setattr(tempfile, "tempdir", str(closed))
    try:
        problem = Isolation._confinement().problem
        assert f"the temporary folder {closed}" in problem and "set TMPDIR to a folder every user may pass" in problem
        os.chmod(closed, 0o711)
        assert Isolation._confinement().problem == ""
    finally:
        shutil.rmtree(closed)
