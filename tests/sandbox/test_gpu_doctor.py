"""`autograder doctor --gpu` and the GPU grants it checks (``autograder.sandbox.doctor``, ``autograder.worker.gpu``),
on a CPU machine: the doctor says there is no device and runs its layer matrix with a stand-in device (/dev/null's
numbers, made with mknod); what a worker is granted for CUDA is found before it is confined; a sandbox uid without a
passwd entry still has a name, and torch's compile cache a folder it may write."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support.machine import is_root, needs_root

from autograder.grading.proxy import Student
from autograder.sandbox import doctor
from autograder.sandbox.config import Limits
from autograder.sandbox.isolation import Isolation, _kernel_landlock
from autograder.worker import gpu


@needs_root
@pytest.mark.skipif(_kernel_landlock() < 5, reason="no Landlock ioctl right (ABI 5) to withhold on this kernel")
def test_the_doctor_on_a_cpu_says_there_is_no_device_and_each_grant_is_needed_for_the_stand_in():
    """With every layer on the stand-in answers its ioctl itself (ENOTTY); withholding the grant hides it (namespaces:
    not mounted) or refuses it (Landlock); withholding Landlock's ioctl right refuses the ioctl (EACCES) after the
    open. About 8 s: a worker per row, none imports torch."""
    found = doctor.examine(cuda=False)
    assert not found["cuda"] and found["stand_in"].startswith("/dev/") and not os.path.exists(found["stand_in"])
    assert "No NVIDIA device here" in doctor.lines(found)[0]
    expected = {"namespaces": "open ENOENT", "permissions": "open EACCES"}
    for mode, outcomes in found["modes"].items():
        by_row = {outcome.row.name: outcome for outcome in outcomes}
        layers_off = [o for o in outcomes if o.row is doctor.WHOLE or o.row in doctor.LAYERS]
        assert all(o.works and "ioctl ENOTTY" in o.what for o in layers_off), [(o.row.name, o.what) for o in outcomes]
        assert not by_row[doctor.GRANTS[0].name].works and expected[mode] in by_row[doctor.GRANTS[0].name].what
        withheld = by_row[doctor.GRANTS[1].name]
        assert not withheld.works and "ioctl EACCES" in withheld.what
        assert by_row["the whole sandbox"].report["uid"] != 0
        assert by_row["the uid change off (the worker stays root)"].report["uid"] == 0
        assert doctor.verdict(outcomes)[0] == "reached under the whole sandbox"


def _outcome(row: doctor.Row, report: dict, cuda: bool = True) -> doctor.Outcome:
    return doctor.Outcome(row, *doctor.judge(report, cuda), report)


def test_the_verdict_names_the_layer_that_stops_cuda_and_the_error_it_gave():
    """The matrix as a GPU machine would give it: CUDA fails with every layer on and with each off but Landlock."""
    failed = {"devices": {"/dev/nvidia0": {"open": "ok", "ioctl": "ENOTTY"}},
              "cuInit": "error 304 (CUDA_ERROR_OPERATING_SYSTEM)", "kernel": "RuntimeError: no CUDA GPUs"}
    works = {"devices": {"/dev/nvidia0": {"open": "ok", "ioctl": "ENOTTY"}}, "cuInit": "ok: 1 device(s)",
             "is_available": "ok", "kernel": "ok: NVIDIA H200"}
    outcomes = [_outcome(doctor.WHOLE, failed), *(_outcome(row, works if row.name == "Landlock off" else failed)
                                                  for row in doctor.LAYERS), _outcome(doctor.GRANTS[0], failed)]
    said = doctor.verdict(outcomes)
    assert said[0].startswith("stopped by one layer: with Landlock off, it works") and "error 304" in said[0]
    assert said[1].startswith("the devices and the driver's files withheld: needed")
    assert doctor.verdict([_outcome(doctor.WHOLE, failed), _outcome(doctor.LAYERS[1], failed)])[0].startswith(
        "no single layer off lets it work")
    bounded = {**works, "kernel": "RuntimeError: CUDA error: out of memory"}  # the context made under RLIMIT_AS
    assert doctor.judge(bounded, cuda=True) == (False, "kernel: RuntimeError: CUDA error: out of memory")


def test_a_device_that_answers_is_told_from_a_refused_one():
    """ENOTTY and EINVAL are a device's own answers; EACCES and EPERM never reached it; an open refused is refused."""
    def judged(open_, ioctl):
        return doctor.judge({"devices": {"/dev/x": {"open": open_, "ioctl": ioctl}}}, cuda=False)[0]

    assert judged("ok", "ENOTTY") and judged("ok", "EINVAL")
    assert not judged("ok", "EACCES") and not judged("ok", "EPERM") and not judged("EACCES", "not tried")
    assert not doctor.judge({"devices": {}}, cuda=False)[0]


def test_the_doctor_names_the_devices_a_uid_without_groups_cannot_use(tmp_path):
    """A device node of mode 0660 (a group's) is closed to a sandbox uid, which has no groups; 0666 is not."""
    for name, mode in (("open", 0o666), ("closed", 0o660)):
        (tmp_path / name).touch()
        os.chmod(tmp_path / name, mode)
    report = {"devices": {str(tmp_path / name): {} for name in ("open", "closed")}}
    whole = doctor.Outcome(doctor.WHOLE, False, "", report)
    assert doctor._closed({"modes": {"permissions": [whole]}}) == f"{tmp_path / 'closed'} (-rw-rw----)"


def test_the_grants_are_nvidias_devices_and_gpus_only(tmp_path):
    """The toolkit's device files are granted and no other; the PCI folders of NVIDIA's GPUs (vendor 0x10de) and not
    the machine's other devices; nothing of the driver without a device."""
    for name in ("nvidiactl", "nvidia0", "nvidia1", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset",
                 "nvidia-caps/nvidia-cap1", "nvidia-something", "nvme0", "null"):
        (tmp_path / "dev" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "dev" / name).touch()
    assert gpu.nvidia_devices(str(tmp_path)) == [
        "/dev/nvidia-caps/nvidia-cap1", "/dev/nvidia-modeset", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
        "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl"]
    for address, vendor in (("0000:00:04.0", "0x10de"), ("0000:00:05.0", "0x8086")):
        real = tmp_path / "sys" / "devices" / "pci0000:00" / address
        real.mkdir(parents=True)
        (real / "vendor").write_text(vendor + "\n")
        (tmp_path / "sys" / "bus" / "pci" / "devices").mkdir(parents=True, exist_ok=True)
        (tmp_path / "sys" / "bus" / "pci" / "devices" / address).symlink_to(f"../../../devices/pci0000:00/{address}")
    (tmp_path / "sys" / "module" / "nvidia").mkdir(parents=True)
    paths, links = gpu.driver_files(str(tmp_path))
    assert paths == ["/sys/devices/pci0000:00/0000:00:04.0", "/sys/module/nvidia"]
    assert links == {"/sys/bus/pci/devices/0000:00:04.0": "../../../devices/pci0000:00/0000:00:04.0"}
    assert gpu.grants({"devices": []}) == gpu.Grants()


# libcuda as the doctor calls it: cuInit's answer from FAKE_CUDA_ANSWER, one device, the names CUDA gives.
FAKE_CUDA = r"""
#include <stdlib.h>
int cuInit(unsigned flags) { return atoi(getenv("FAKE_CUDA_ANSWER")); }
int cuDeviceGetCount(int *count) { *count = 1; return 0; }
int cuGetErrorName(int code, const char **name) {
    *name = code == 304 ? "CUDA_ERROR_OPERATING_SYSTEM" : "CUDA_ERROR_UNKNOWN"; return 0; }
"""


@pytest.mark.skipif(not shutil.which("gcc"), reason="no C compiler to build a stand-in libcuda")
def test_cuinit_is_called_through_libcuda_and_its_error_named(tmp_path, monkeypatch):
    from autograder.worker import diagnose

    (tmp_path / "cuda.c").write_text(FAKE_CUDA)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", tmp_path / "libcuda.so.1", tmp_path / "cuda.c"], check=True)
    monkeypatch.setattr(diagnose, "LIBCUDA", str(tmp_path / "libcuda.so.1"))
    monkeypatch.setenv("FAKE_CUDA_ANSWER", "304")
    assert diagnose._cu_init() == "error 304 (CUDA_ERROR_OPERATING_SYSTEM)"
    monkeypatch.setenv("FAKE_CUDA_ANSWER", "0")
    assert diagnose._cu_init() == "ok: 1 device(s)"
    monkeypatch.setattr(diagnose, "LIBCUDA", str(tmp_path / "missing.so"))
    assert diagnose._cu_init().startswith(f"{tmp_path / 'missing.so'} did not load")


# A worker confined with Landlock on a machine whose NVIDIA devices (a file matching the toolkit's pattern, in a folder
# outside the allow-list) are found by the glob: it must be granted them, and so bound no address space.
FOUND_BEFORE = """
import json, os, tempfile
from autograder.worker import confine, gpu
gpu.DEVICES = {{{folder!r} + "/nvidia[0-9]*": "a stand-in"}}
work = tempfile.mkdtemp()
requests, replies = os.pipe()
plan = {{"mode": "limits", "linux": True, "landlock": -1, "uid": None, "workdir": work, "tmpdir": work,
        "limits": {{"cpu_seconds": 60, "file_size_mb": 64, "open_files": 256, "processes": 4096, "memory_mb": 1024}}}}
view = confine.apply(plan, requests, replies)
limits = confine.bound_memory(plan, view["gpu"].devices)
print(json.dumps({{"landlock": view["landlock"], "devices": list(view["gpu"].devices), "limits": sorted(limits),
                  "listed": gpu.nvidia_devices()}}))
"""


@pytest.mark.skipif(not _kernel_landlock(), reason="this kernel has no Landlock")
def test_a_confined_worker_is_granted_the_devices_found_before_landlock_hid_them(tmp_path):
    """Before, the worker looked for NVIDIA's devices after Landlock, which refuses listing /dev: it found none, never
    asked CUDA and bounded its address space as on a CPU machine (with namespaces and Landlock on an H100, no worker
    reached CUDA)."""
    (tmp_path / "nvidia0").touch()
    run = subprocess.run([sys.executable, "-c", FOUND_BEFORE.format(folder=str(tmp_path))], capture_output=True,
                         text=True, timeout=60)
    answer = json.loads(run.stdout or "null") or run.stderr
    assert answer == {"landlock": _kernel_landlock(), "devices": [str(tmp_path / "nvidia0")],
                      "limits": ["RLIMIT_DATA"], "listed": []}


NAMES = """
import getpass, os


def names():
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    folder = cache_dir()
    with open(os.path.join(folder, "written"), "w") as handle:
        handle.write("ok")
    return {"uid": os.getuid(), "user": getpass.getuser(), "cache": folder, "tmp": os.environ["TMPDIR"],
            "triton": os.environ.get("TRITON_CACHE_DIR", "")}
"""


@needs_root
def test_a_sandbox_uid_without_a_passwd_entry_has_a_name_and_a_compile_cache_it_may_write():
    """A cold worker on an H100 lost 10 lm points to torch asking ``getpwuid`` for its uid (then "Artifact ...
    already registered"): the worker's name and its caches' folders are in its environment, in its TMPDIR. Before,
    ``getpass.getuser`` raised here."""
    staged = Path(tempfile.mkdtemp(prefix="names-"))
    os.chmod(staged, 0o711)
    submission = staged / "submission"
    submission.mkdir()
    (submission / "probe.py").write_text(NAMES)
    student = Student(submission, [{"name": "probe"}], Limits(), Isolation.detect())
    try:
        names = student.probe.names()
    finally:
        student.close()
        shutil.rmtree(staged)
    with pytest.raises(KeyError):
        pwd.getpwuid(names["uid"])
    assert names["user"] == "student"
    assert names["cache"].startswith(names["tmp"] + "/") and names["triton"].startswith(names["tmp"] + "/")


@pytest.mark.skipif(is_root, reason="as root the doctor makes its stand-in")
def test_without_root_the_doctor_says_why_there_is_no_stand_in():  # pragma: no cover - make test runs as root
    found = doctor.examine(cuda=False)
    assert found["modes"] == {} and found["stand_in"].startswith("no stand-in device")
    assert "No stand-in device" in doctor.lines(found)[0]
