"""Every autograder zip in a simulation of Gradescope's container (``autograder.authoring.simulation``): its
``run_autograder`` run as root, without namespaces, in control groups limited to the CPU and memory that the zip's
settings state (``autograder/gradescope_settings.toml``), the grader's own groups nested inside.

The references get full marks within the stated time with nothing killed, lm's with its retraining (the test that
once made the container run out of memory), and a known mistake its usual score. A memory
hog under the default 768 MB, and a budget too short for the grading, are said to the student as a grading that did not
finish (not their fault, every test at zero) and to the staff as the setting to raise. A submission that tries every
address family, to listeners on this machine, reaches none: Gradescope's network is on.

The container's CPU is a quota (half a CPU by default), so these gradings cost CI little CPU: lm's reference takes
about 3 minutes at half a CPU (its retraining is most of it), the file about 10 minutes beside an oversubscribed
machine (lm's reference 428 s, within its 600 s budget: the retraining's budgets count CPU time).
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.machine import is_root

from autograder import container, course, gradescope
from autograder.authoring import dist, simulation
from autograder.results import Results
from autograder.sandbox import permissions

PYTHON = str(Path(sys.prefix) / "bin" / "python")  # setup.sh's venv, here the checkout's


def _simulation_possible() -> str:
    try:
        with simulation.limited(*container.SIZES[0]):
            return ""
    except (simulation.SimulationError, OSError) as exc:
        return str(exc)


WHY_NOT = _simulation_possible() if is_root else "the simulated container needs root"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(WHY_NOT), reason=WHY_NOT or "-")]


@pytest.fixture(scope="module")
def zips(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("gradescope-zips")
    return {name: path for name, path in zip(course.names(), dist.build_gradescope(course.names(), out), strict=True)}


def own_pool(index: int) -> dict[str, str]:
    """A pool of 16 uids of its own, the ``index``-th from the end of this one. Without namespaces one submission is
    graded at a time per pool (``permissions.graded_alone``): the references are graded side by side, each with its
    own, and a test whose budget is short does not wait on another file's gradings."""
    last = permissions.UID_POOL[-1] - 16 * index
    return {"AUTOGRADER_UIDS": f"{last - 15}-{last}"}


OWN_POOL = own_pool(0)


def grade(zips, tmp_path, name: str, files: dict | Path, *, size: tuple[float, int] | None = None,
          budget: int | None = None, env: dict | None = None) -> simulation.Run:
    stated = container.settings(name)
    cpus, memory_mb = size or (stated.cpus, stated.memory_mb)
    root = simulation.unpack(tmp_path, zips[name], files)
    run = simulation.simulate(root, cpus=cpus, memory_mb=memory_mb, python=PYTHON, budget=budget, env=env)
    assert run.returncode == 0, run.stdout[-3000:]
    print(f"\n{name} in {cpus:g} CPU, {memory_mb} MB: {run.seconds:.1f} s, peak {run.peak_mb:.0f} MB")
    return run


def _reference(name: str) -> Path:
    return course.load(name).solution_dir


@pytest.fixture(scope="module")
def references(zips, tmp_path_factory) -> dict[str, simulation.Run]:
    """Every reference graded whole at its zip's stated size, two side by side: lm's grading in one (its retraining
    is most of it), the others one after another beside it."""

    def one(index: int, name: str) -> simulation.Run:
        return grade(zips, tmp_path_factory.mktemp(name), name, _reference(name), env=own_pool(index + 1))

    names = sorted(course.names(), key=lambda name: name != "lm")
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(names, pool.map(one, range(len(names)), names), strict=True))


@pytest.mark.parametrize("name", course.names())
def test_the_reference_gets_full_marks_within_the_stated_settings(name, references):
    run = references[name]
    results = Results.from_gradescope(run.results)
    lost = [f"{t.name}: {t.score:g}/{t.max_score:g}: {t.output[:1500]}" for t in results.tests if t.score < t.max_score]
    assert results.score == results.max_score > 0, "\n\n".join(lost) or results.output[:3000]
    assert results.extra_data["status"] == "graded" and run.oom_kills == 0
    assert run.seconds < container.settings(name).budget, f"{run.seconds:.0f} s, past the stated timeout's budget"
    assert "control group" in results.extra_data["isolation"], "the grader's own groups, nested in the container's"
    assert results.extra_data["isolation"].startswith("own uid") and "no namespaces" in results.extra_data["isolation"]


def test_a_known_mistake_gets_its_usual_score(zips, tmp_path):
    """A known mistake of masking (its mutant over the reference: later definitions win) graded in the container and
    out of it (the driver alone, no limits) scores the same."""
    mutant = course.REPO_ROOT / "tests" / "mutants" / "masking" / "no_scaling.py"
    files = {"masking.py": (_reference("masking") / "masking.py").read_text() + "\n" + mutant.read_text()}
    contained = Results.from_gradescope(grade(zips, tmp_path, "masking", files).results)
    plain = simulation.unpack(tmp_path, zips["masking"], files)
    usual = gradescope.run(plain, "masking")
    assert 0 < contained.score == usual.score < contained.max_score, (contained.score, usual.score)
    assert contained.extra_data["status"] == "graded"


HOG = '''

_CausalSelfAttention = CausalSelfAttention


class CausalSelfAttention(_CausalSelfAttention):
    def forward(self, *args, **kwargs):
        global _held
        _held = b"x" * (1500 << 20)  # written, so resident: within what the worker may use, past the container
        return super().forward(*args, **kwargs)
'''


def test_a_container_out_of_memory_is_said_and_not_graded(zips, tmp_path):
    """1.5 GB, within what the worker may use (2 GB) but past the default container's 768 MB, once the functions before
    CausalSelfAttention have passed their tests: the grading did not finish, and no partial score stands."""
    reference = (_reference("masking") / "masking.py").read_text()
    run = grade(zips, tmp_path, "masking", {"masking.py": reference + HOG}, size=container.SIZES[0])
    results = Results.from_gradescope(run.results)
    first = results.output.split("\n")[0]
    assert first.startswith("Grading did not finish: the autograder's container ran out of memory (768 MB)."), first
    assert "This is not your fault, and the score shown is not your grade" in results.output.split("\n")[0]
    assert run.results["score"] == 0 and all(t.score == 0 for t in results.tests) and results.max_score > 0
    assert any(t.output.startswith("Not counted: grading did not finish") for t in results.tests), \
        "the tests that had passed are listed, not counted"
    assert results.extra_data["status"].startswith("grader failed")
    assert "raise the assignment's Autograder Settings to 1 CPU, 1.5 GB" in run.stdout, run.stdout[-3000:]


SLOW = """

_masked_softmax = masked_softmax


def masked_softmax(*args, **kwargs):
    import time
    time.sleep(1.5)  # within each test's time limit; the whole grading past run_autograder's budget
    return _masked_softmax(*args, **kwargs)
"""


def test_a_budget_run_out_is_said_and_not_graded(zips, tmp_path):
    """run_autograder's budget (a minute before Gradescope's timeout) run out in the middle of the tests: the same,
    for time."""
    reference = (_reference("masking") / "masking.py").read_text()
    run = grade(zips, tmp_path, "masking", {"masking.py": reference + SLOW}, budget=90, env=OWN_POOL)
    results = Results.from_gradescope(run.results)
    assert results.output.startswith("Grading did not finish: the autograder's time ran out (90 s)."), \
        results.output[:2000]
    assert run.results["score"] == 0 and all(t.score == 0 for t in results.tests) and results.max_score > 0
    assert "raise timeout_min" in run.stdout, run.stdout[-3000:]


class Listeners:
    """A TCP and a UDP listener on IPv4's and IPv6's loopback: what reaches them."""

    def __init__(self):
        self.received: list[tuple[str, bytes]] = []
        self.sockets, self.ports = [], {}
        for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
                listener = socket.socket(family, kind)
                listener.bind((host, 0))
                if kind == socket.SOCK_STREAM:
                    listener.listen()
                listener.settimeout(0.2)
                self.sockets.append(listener)
                self.ports[(family.name, kind.name)] = listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            for listener in self.sockets:
                try:
                    if listener.type == socket.SOCK_STREAM:
                        connection, _ = listener.accept()
                        with connection:
                            connection.settimeout(1)
                            self.received.append(("tcp", connection.recv(100)))
                    else:
                        self.received.append(("udp", listener.recv(100)))
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for listener in self.sockets:
            listener.close()


PROBE = '''

def _try_every_family():
    """Each address family, with and without high bits in the family argument (the kernel reads 32 bits), UDP and
    TCP, to the grader's listeners: nothing may arrive."""
    import socket
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
    except (ImportError, OSError):
        libc = None
    ports = {ports!r}
    for name, host in (("AF_INET", "127.0.0.1"), ("AF_INET6", "::1")):
        family = getattr(socket, name)
        for kind in ("SOCK_STREAM", "SOCK_DGRAM"):
            port = ports[(name, kind)]
            for high in (0, 1 << 32):
                try:
                    if libc is None:
                        fd = None if high else socket.socket(family, getattr(socket, kind)).detach()
                    else:  # socket(2) itself: Python's socket() refuses a family past 32 bits
                        fd = libc.syscall(41, ctypes.c_long(family | high), ctypes.c_long(getattr(socket, kind)), 0)
                    if fd is None or fd < 0:
                        continue
                    with socket.socket(family, getattr(socket, kind), 0, fd) as sock:
                        sock.settimeout(1)
                        if kind == "SOCK_DGRAM":
                            sock.sendto(f"{{name}} {{kind}} {{hex(family | high)}}".encode(), (host, port))
                        else:
                            sock.connect((host, port))
                            sock.sendall(f"{{name}} {{kind}} {{hex(family | high)}}".encode())
                except OSError:
                    pass


_try_every_family()
'''


def test_no_address_family_reaches_anything(zips, tmp_path):
    """Gradescope's container has the network on and no namespaces: the worker's filter and allow-list are all there
    is. Before the filter compared the low 32 bits the kernel reads (issue 41, item 1), the families with high bits
    sent UDP datagrams to both listeners."""
    listeners = Listeners()
    try:
        reference = (_reference("masking") / "masking.py").read_text()
        probe = PROBE.format(ports={key: port for key, port in listeners.ports.items()})
        run = grade(zips, tmp_path, "masking", {"masking.py": reference + probe})
    finally:
        listeners.close()
    assert listeners.received == [], f"reached the grader's listeners: {listeners.received}"
    results = Results.from_gradescope(run.results)
    assert results.score == results.max_score > 0, json.dumps(run.results)[:2000]
