"""``autograder doctor --gpu``: which layer of the sandbox keeps CUDA from a worker, and the error it gave, in one call.

On an H100 (2026-11-27) no graded worker reached CUDA, and the cause was not found in the machine's time. So for each
mode this machine grades in as root (namespaces, and permissions, as on Gradescope; ``limits`` without root) the
doctor starts a worker with every layer on, then one with each layer off (``LAYERS``) and one with each grant to
CUDA withheld (``GRANTS``: to show that it is needed). Each confines itself as a graded worker does and tries what
CUDA needs (``autograder.worker.diagnose``): the devices opened and given an ioctl, the driver's files read, the
uid's name, then ``cuInit`` and a small kernel. A layer whose removal lets CUDA start is the one that stops it.

On a machine without NVIDIA's devices it says so, and runs the same matrix with a stand-in (as root): a character
device with /dev/null's numbers, made with ``mknod`` in /dev (removed after) and granted as NVIDIA's devices are
(``plan["devices"]``). An ioctl /dev/null does not know is answered by it (ENOTTY), and one that Landlock refuses
never reaches it (EACCES), so the doctor's logic is tested on a CPU (``tests/sandbox/test_gpu_doctor.py``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder import scratch
from autograder.sandbox.config import Limits
from autograder.sandbox.isolation import Isolation
from autograder.sandbox.process import Sandbox, SandboxError

NVIDIA_CONTROL = "/dev/nvidiactl"  # every machine with NVIDIA's driver loaded has it
REFUSED = ("EACCES", "EPERM")  # a layer's refusal: Landlock's, the file's mode bits; a device's own answer is another
STAND_IN = "/dev/autograder-stand-in-{pid}"  # in /dev, as NVIDIA's: with namespaces a worker's /tmp holds every right


@dataclass(frozen=True)
class Row:
    """One worker of the matrix: ``name`` says what is off or withheld; ``isolation`` replaces fields of the mode's
    ``Isolation``; ``plan`` is merged into the worker's confinement plan; ``tries`` into what it tries; ``needs`` names
    the layer that must be on in the mode for the row to mean anything."""

    name: str
    isolation: dict = field(default_factory=dict)
    plan: dict = field(default_factory=dict)
    tries: dict = field(default_factory=dict)
    needs: str = ""


WHOLE = Row("the whole sandbox")
LAYERS = (
    Row("namespaces off", {"mode": "permissions"}, needs="namespaces"),
    Row("Landlock off", {"landlock": 0}, needs="landlock"),
    Row("the system-call filter off", {"seccomp": False}, needs="seccomp"),
    Row("memory limits off", tries={"memory": False}),
    Row("control groups off", {"cgroups": ()}, needs="cgroups"),
    Row("the uid change off (the worker stays root)", plan={"uid": None}, needs="uid"),
)
GRANTS = (
    Row("the devices and the driver's files withheld", plan={"devices": [], "address_space": False}),
    Row("Landlock's device ioctl right withheld (IOCTL_DEV, ABI 5)", plan={"device_ioctl": False}, needs="ioctl"),
    Row("address space bounded too (RLIMIT_AS, as without a GPU)", plan={"address_space": True}),
)


@dataclass
class Outcome:
    """What one row's worker did: ``works`` (CUDA started and ran the kernel; with a stand-in, every device opened
    and answered its ioctl), ``what`` (the first failure, or what worked), ``report`` (the worker's, or {})."""

    row: Row
    works: bool
    what: str
    report: dict = field(default_factory=dict)


class Doctor(Sandbox):
    """A worker of the matrix: a sandbox whose plan is changed as its row says, which tries and exits; one that
    hangs as CUDA starts is given up after ``start_seconds`` (torch's import and CUDA's start take seconds)."""

    start_seconds = 45.0

    def __init__(self, root: Path, isolation: Isolation, row: Row, tries: dict, devices: list[str] | None):
        super().__init__(root, {"diagnose": {**tries, **row.tries}}, Limits(), isolation)
        self.changes = {**({} if devices is None else {"devices": devices}), **row.plan}

    def plan(self) -> dict:
        return {**super().plan(), **self.changes}


def examine(cuda: bool | None = None, isolation: Isolation | None = None,
            progress: Callable[[str, Outcome], None] | None = None) -> dict:
    """Run the matrix in every mode this machine grades in: {"cuda": whether NVIDIA's devices are here, "stand_in":
    the stand-in's path or "" (or why there is none), "modes": {mode: [Outcome, ...]}}. ``cuda`` None: look for
    NVIDIA's control device; False: use a stand-in even there. ``progress(mode, outcome)`` hears each row as it ends
    (a worker that hangs as CUDA starts is given up after ``Doctor.start_seconds``)."""
    cuda = os.path.exists(NVIDIA_CONTROL) if cuda is None else cuda
    isolation = isolation or Isolation.detect()
    modes = [isolation]
    if isolation.mode == "namespaces":
        modes.append(replace(isolation, mode="permissions"))
    devices, stand_in = None, ""
    if not cuda:
        stand_in = _stand_in(STAND_IN.format(pid=os.getpid()))
        devices = [stand_in] if stand_in.startswith("/") else []
    if devices == []:  # neither a GPU nor a stand-in: nothing to try
        return {"cuda": cuda, "stand_in": stand_in, "modes": {}}
    try:
        with scratch.folder("doctor") as folder:
            results = {mode.mode: _matrix(folder / mode.mode, mode, cuda, devices, progress) for mode in modes}
    finally:
        if devices:
            os.unlink(stand_in)
    return {"cuda": cuda, "stand_in": stand_in, "modes": results}


def _stand_in(path: str) -> str:
    """A character device at ``path`` with /dev/null's numbers, mode 0666 as NVIDIA's are; its path, or why not."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.stat("/dev/null").st_rdev)
        os.chmod(path, 0o666)
    except OSError as exc:
        return f"no stand-in device ({exc.strerror}: making one in /dev takes root)"
    return path


def _matrix(folder: Path, isolation: Isolation, cuda: bool, devices: list[str] | None,
            progress: Callable[[str, Outcome], None] | None) -> list[Outcome]:
    present = {"namespaces": isolation.mode == "namespaces", "landlock": bool(isolation.landlock),
               "seccomp": isolation.seccomp, "cgroups": bool(isolation.cgroups), "uid": isolation.privileged,
               "ioctl": isolation.landlock >= 5}
    outcomes = []
    tries = {"cuda": cuda}
    for number, row in enumerate((WHOLE, *LAYERS, *GRANTS)):
        if row.needs and not present[row.needs]:
            continue
        root = folder / str(number) / "submission"  # handed to the sandbox uid: one per worker
        root.mkdir(parents=True)
        outcome = _run(root, replace(isolation, **row.isolation), row, tries, devices)
        if row is WHOLE and devices is None:  # what the worker was granted is tried in every row after
            tries["devices"] = sorted(outcome.report.get("devices", {}))
        outcomes.append(outcome)
        if progress:
            progress(isolation.mode, outcome)
    return outcomes


def _run(root: Path, isolation: Isolation, row: Row, tries: dict, devices: list[str] | None) -> Outcome:
    tries = {**tries, "devices": devices if devices is not None else tries.get("devices")}
    doctor = Doctor(root, isolation, row, tries, devices)
    try:
        doctor.start()
        report = doctor.answer
    except SandboxError as exc:
        return Outcome(row, False, f"the worker did not start: {exc}")
    finally:
        doctor.close()
    works, what = judge(report, bool(tries.get("cuda")))
    return Outcome(row, works, what, report)


def judge(report: dict, cuda: bool) -> tuple[bool, str]:
    """Whether a worker's ``report`` shows CUDA (or the stand-in) reached, and the first failure or what worked."""
    failures = []
    for path, answer in report.get("devices", {}).items():
        if answer["open"] != "ok":
            failures.append(f"{os.path.basename(path)}: open {answer['open']}")
        elif answer["ioctl"] in REFUSED:
            failures.append(f"{os.path.basename(path)}: ioctl {answer['ioctl']} (refused before the device)")
    if cuda:
        steps = [f"{step}: {report.get(step, 'not tried')}" for step in ("cuInit", "is_available", "kernel")
                 if not str(report.get(step, "")).startswith("ok")]
        failures = steps[:1] + failures  # the first step that failed: the later ones were not tried, or follow from it
        if not failures:
            return True, f"cuInit {report['cuInit']}; torch's is_available ok; kernel {report['kernel']}"
    elif not report.get("devices"):
        failures.append("no device to try")
    if failures:
        return False, "; ".join(failures)
    answers = sorted({answer["ioctl"] for answer in report["devices"].values()})
    return True, f"open ok, ioctl {', '.join(answers)} (the device answered)"


def verdict(outcomes: list[Outcome]) -> list[str]:
    """What the matrix of one mode says: which layer stops CUDA (with the whole sandbox's error), or that it starts,
    and whether each grant was needed."""
    whole, rest = outcomes[0], outcomes[1:]
    layers = [o for o in rest if o.row in LAYERS]
    grants = [o for o in rest if o.row in GRANTS]
    lines = []
    if whole.works:
        lines.append("reached under the whole sandbox")
    else:
        freeing = [o.row.name for o in layers if o.works]
        if freeing:
            lines.append(f"stopped by one layer: with {' or with '.join(freeing)}, it works; with every layer on: "
                         f"{whole.what}")
        else:
            lines.append(f"no single layer off lets it work; with every layer on: {whole.what}")
    for outcome in grants:
        needed = "needed: without it, " + outcome.what if not outcome.works else "not needed here (it works without)"
        lines.append(f"{outcome.row.name}: {needed}")
    return lines


def lines(found: dict) -> list[str]:
    """The doctor's report, for the terminal."""
    if found["cuda"]:
        out = ["NVIDIA's devices are here: each worker tries cuInit (libcuda.so.1) and a kernel (torch)."]
    else:
        out = [f"No NVIDIA device here ({NVIDIA_CONTROL} is missing): cuInit and the kernel are not tried. "
               + (f"The layers are checked with a stand-in device with /dev/null's numbers ({found['stand_in']}): "
                  "ENOTTY is the device's own answer to an ioctl it does not know, EACCES a layer's refusal."
                  if found["stand_in"].startswith("/") else found["stand_in"].capitalize() + ".")]
    for mode, outcomes in found["modes"].items():
        out.append("")
        out.append(f"{mode}:")
        width = max(len(o.row.name) for o in outcomes)
        for outcome in outcomes:
            out.append(f"  {outcome.row.name:{width}}  {'works' if outcome.works else 'FAILS'}: {outcome.what}")
        report = outcomes[0].report
        if report:
            out.append(f"  the worker's uid {report.get('uid')}, its name {report.get('user')}; Landlock ABI "
                       f"{report.get('landlock')}; driver files read: " + (", ".join(
                           f"{path} {answer}" for path, answer in report.get("driver", {}).items()) or "none"))
        out.extend(f"  => {line}" for line in verdict(outcomes))
    closed = _closed(found)
    if closed:
        out += ["", "Not usable by a sandbox uid, which has no groups (the uid change refuses them): " + closed]
    return out


def _closed(found: dict) -> str:
    """The devices tried whose mode bits let other users not read and write them, with their modes."""
    tried = {path for outcomes in found["modes"].values() for path in outcomes[0].report.get("devices", {})}
    closed = []
    for path in sorted(tried):
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if mode & 0o006 != 0o006:
            closed.append(f"{path} ({stat.filemode(mode)})")
    return ", ".join(closed)
