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
from support.machine import needs_root
from support.submissions import REPO, grade, reference_with

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


def _modes(paths: list[Path]) -> dict[str, int]:
    """Every file's and folder's mode under ``paths`` (the paths themselves included)."""
    found = {}
    for path in paths:
        for item in [path, *path.rglob("*")]:
            found[str(item)] = os.lstat(item).st_mode & 0o7777
    return found


@needs_root
def test_grading_as_root_where_namespaces_or_landlock_hide_the_graders_files_changes_no_mode(tmp_path):
    """A batch graded as root in the mode this machine gives (namespaces here; Landlock too): no mode of the checkout's
    top level, of the submission's folder or of the results folder changes (every folder of the checkout, a second
    environment in it included, and the submission's were made readable by root only)."""
    isolation = Isolation.detect()
    assert isolation.mode == "namespaces" or isolation.landlock, "this machine hides nothing: a test for another"
    submission = reference_with(tmp_path / "submissions", "reference")
    out = tmp_path / "out"
    out.mkdir()
    for path in (tmp_path / "submissions", submission, out):
        os.chmod(path, 0o755)
    checkout = [REPO, *(entry for entry in REPO.iterdir() if not entry.is_symlink())]
    before = {str(path): os.lstat(path).st_mode & 0o7777 for path in checkout} | _modes([tmp_path / "submissions", out])
    results = grade([submission], out, workers=1)
    assert results["reference"].score == results["reference"].max_score > 0
    assert {path: os.lstat(path).st_mode & 0o7777 for path in before} == before


@pytest.fixture
def passable():
    """A folder every user may pass through (pytest's own temporary folders are 0700: nothing in them is exposed)."""
    folder = Path(tempfile.mkdtemp(prefix="permissions-", dir="/tmp"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder)


def _checkout(folder: Path) -> dict[str, Path]:
    """A checkout look-alike: hidden material, a second virtual environment, a results folder and a submission."""
    paths = {name: folder / name for name in ("checkout", "solutions", "git", "other_env", "out", "submission")}
    paths["checkout"].mkdir()
    for name in ("solutions", "git", "other_env"):
        paths[name] = paths["checkout"] / {"git": ".git"}.get(name, name)
        paths[name].mkdir()
        (paths[name] / "inside").write_text("hidden")
    (paths["other_env"] / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for name in ("out", "submission"):
        paths[name].mkdir()
    for path in paths.values():
        os.chmod(path, 0o755)
    os.chmod(folder, 0o755)
    return paths


def test_permissions_alone_change_nothing_unasked_and_say_what_to_do(passable, monkeypatch, caplog):
    """Root without namespaces or Landlock: without --lock-files no mode changes, and the warning names every folder a
    sandbox user can read with the command that closes it; a layer that hides them (namespaces, Landlock), or no root,
    changes nothing and says nothing, and neither does a checkout behind a folder no other user may pass."""
    tmp_path = passable
    paths = _checkout(tmp_path)
    monkeypatch.delenv(permissions.LOCK_ENV, raising=False)
    before = _modes([tmp_path])
    for hiding in (Isolation("namespaces"), Isolation("permissions", landlock=4), Isolation("limits")):
        assert permissions.keep_out(hiding, [paths["out"], paths["submission"]], checkout=paths["checkout"]) == []
    assert not caplog.records
    exposed = permissions.keep_out(Isolation("permissions"), [paths["out"], paths["submission"]],
                                   checkout=paths["checkout"])
    assert _modes([tmp_path]) == before
    assert sorted(exposed) == sorted(paths[name] for name in ("checkout", "solutions", "git", "out", "submission"))
    warning = caplog.records[-1].getMessage()
    assert "--lock-files" in warning and str(paths["other_env"]) not in warning
    for name in ("solutions", "git", "out", "submission"):
        assert f"chmod go-rwx {paths[name]}" in warning
    assert f"chmod go-rwx {paths['checkout']};" in warning  # the environment lies elsewhere: no one passes through
    class_ = [tmp_path / f"student-{number:02d}" for number in range(permissions.NAMED + 5)]  # a class: a few named
    for folder in class_:
        folder.mkdir(mode=0o755)
        os.chmod(folder, 0o755)
    assert permissions.keep_out(Isolation("permissions"), class_) == class_
    warning = caplog.records[-1].getMessage()
    assert "(and 5 more)" in warning and str(class_[permissions.NAMED - 1]) in warning
    assert str(class_[permissions.NAMED]) not in warning
    os.chmod(tmp_path, 0o700)
    assert permissions.keep_out(Isolation("permissions"), [paths["out"]], checkout=paths["checkout"]) == []


def test_lock_files_makes_them_root_only_as_before_but_no_environment(passable, monkeypatch):
    """With --lock-files (AUTOGRADER_LOCK_FILES=1) the folders are made readable by root only, the checkout passable
    only where the grading's own environment lies in it; another environment in the checkout stays as it was (locked,
    it broke every later grading from it). Again, nothing is left to change."""
    tmp_path = passable
    paths = _checkout(tmp_path)
    monkeypatch.setenv(permissions.LOCK_ENV, "1")
    permissions.keep_out(Isolation("permissions"), [paths["out"], paths["submission"]], checkout=paths["checkout"])
    modes = {name: os.lstat(path).st_mode & 0o7777 for name, path in paths.items()}
    assert modes == {"checkout": 0o700, "solutions": 0o700, "git": 0o700, "other_env": 0o755, "out": 0o700,
                     "submission": 0o700}
    assert permissions.keep_out(Isolation("permissions"), [paths["out"]], checkout=paths["checkout"]) == []
    holder = tmp_path / "holder"  # a checkout holding the grading's own environment
    (holder / "venv").mkdir(parents=True)
    for path in (holder, holder / "venv"):
        os.chmod(path, 0o755)
    monkeypatch.setattr(sys, "prefix", str(holder / "venv"))
    permissions.keep_out(Isolation("permissions"), checkout=holder)
    assert [os.lstat(path).st_mode & 0o7777 for path in (holder, holder / "venv")] == [0o711, 0o755]
    site = holder / "venv" / "site-packages"  # the harness installed in the environment: its folders are packages
    (site / "torch").mkdir(parents=True)
    assert permissions.keep_out(Isolation("permissions"), checkout=site) == []
    linked = tmp_path / "linked"  # a checkout whose .venv links to the environment: workers pass through it too
    linked.mkdir(mode=0o755)
    os.chmod(linked, 0o755)
    (linked / ".venv").symlink_to(holder / "venv")
    monkeypatch.setattr(sys, "prefix", str(linked / ".venv"))
    permissions.keep_out(Isolation("permissions"), checkout=linked)
    assert os.lstat(linked).st_mode & 0o7777 == 0o711
