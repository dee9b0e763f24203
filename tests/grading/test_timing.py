"""Runtime and memory measurement: the parent's stopwatch and /proc readings, and the verdicts students read."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from autograder.batch.runners import OPENMP, Runners
from autograder.grading import Parts, timing
from autograder.grading.proxy import Student
from autograder.sandbox.capture import OutputCapture
from autograder.sandbox.config import Limits
from autograder.sandbox.isolation import Isolation

MODULE = textwrap.dedent("""
    import time
    import torch

    print("loading measured.py")

    def allocate(n):
        block = torch.ones(n)
        return None

    def sleep(seconds):
        time.perf_counter = lambda: 0.0  # forging the clock in the worker changes nothing
        time.sleep(seconds)

    def wait_policy():
        import os
        return os.environ.get("OMP_WAIT_POLICY"), os.environ.get("GOMP_SPINCOUNT")

    def chatty(n, seconds):
        print(" ".join(["chatty"] * n), flush=True)
        time.sleep(seconds)
        return n

    def spin(seconds, in_child=False):  # use seconds of CPU time, here or in a child this process waits for
        import os
        pid = os.fork() if in_child else 0
        if pid:
            os.waitpid(pid, 0)
            return seconds
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
        if in_child:
            os._exit(0)
        return seconds
""")


def _measured_worker(folder: Path) -> Student:
    """A worker for MODULE staged in ``folder``, a new folder of the grader's (as a runner stages)."""
    folder.mkdir()
    (folder / "measured.py").write_text(MODULE)
    return Student(folder, [{"name": "measured"}], Limits(memory_mb=2048), Isolation.detect())


@pytest.fixture(scope="module")
def worker():
    folder = Path(tempfile.mkdtemp(prefix="autograder-measured-"))
    student = _measured_worker(folder / "submission")
    yield student
    student.close()
    shutil.rmtree(folder, ignore_errors=True)


def test_time_is_the_parents_clock(worker):
    seconds, _, _ = worker.measured.sleep.measure((0.3,))
    assert 0.3 <= seconds < 2.0


def test_a_cpu_budget_stops_the_call_that_uses_it_up_and_counts_no_waiting(worker):
    """The budget is the worker's CPU time (every thread, and the children it waited for), shared by the calls of the
    block: time spent waiting, as when other work shares the cores, is not counted."""
    from autograder.grading.proxy import StudentTimeout

    with worker.cpu_budget(2.0):
        assert worker.measured.sleep(2.5) is None  # longer than the budget by the wall clock, and no CPU time
        assert worker.measured.spin(0.5) == 0.5
        with pytest.raises(StudentTimeout, match=r"once your code had used 2 s of CPU time \(all its threads and "):
            worker.measured.spin(30)
        with pytest.raises(StudentTimeout, match="used 2 s of CPU time"):  # nothing is left for the next call
            worker.measured.spin(0.5)
    assert worker.cpu_left is None and worker.measured.spin(0.5) == 0.5  # outside the block, no budget


def test_a_cpu_budget_counts_the_processes_the_code_starts(worker):
    from autograder.grading.proxy import StudentTimeout

    with worker.cpu_budget(1.0), pytest.raises(StudentTimeout, match="used 1 s of CPU time"):
        worker.measured.spin(30, in_child=True)


def test_peak_memory_is_read_from_outside_the_worker(worker):
    _, small, _ = worker.measured.allocate.measure((1000,))
    _, large, _ = worker.measured.allocate.measure((50_000_000,))  # 200 MB of float32
    assert small is not None and small < 16 << 20
    assert large is not None and 180 << 20 < large < 260 << 20


def test_what_a_stopped_worker_printed_stays_in_the_tests_output(tmp_path):
    """A call that prints, then runs past the time limit; the next call in the same test starts a new worker. The
    test's feedback still shows what was printed before the stop (under load, a flooding call in the isolation
    catalogue ran out of time and its output vanished), then what the new worker printed; what loading printed is
    in neither (a test shows what its calls printed)."""
    from autograder.grading.proxy import StudentTimeout

    folder = Path(tempfile.mkdtemp(prefix="autograder-measured-"))
    student = _measured_worker(folder / "submission")
    try:
        mark = student.output_mark()
        student.deadline = time.monotonic() + 3
        with pytest.raises(StudentTimeout):
            student.measured.chatty(1, 60)
        student.deadline = time.monotonic() + 30
        assert student.measured.chatty(2, 0) == 2
        printed = student.output_since(mark)
        assert "loading" not in printed
        assert printed.index("chatty\n") < printed.index("started again") < printed.index("chatty chatty")
        assert student.output_since(student.output_mark()) == ""
        flooded = student.output_mark()
        student.measured.chatty(10_000, 0)
        assert "[... output truncated: 70000 bytes in all]" in student.output_since(flooded)
    finally:
        student.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_a_mark_counts_all_written_before_it_however_far_behind_the_draining_thread(monkeypatch):
    """What a worker flushed before its reply is counted by a mark taken after the reply, even by a capture whose
    thread has not run at all (under load, a chunk read but not yet counted let loading's print into a test)."""
    reader, writer = os.pipe()
    with monkeypatch.context() as patched:
        patched.setattr(threading.Thread, "start", lambda thread: None)
        capture = OutputCapture(os.fdopen(reader, "rb"), cap=100)
    os.write(writer, b"loading\n")
    mark = capture.settled_mark()
    assert mark == 8
    os.write(writer, b"x" * 1000)
    os.close(writer)
    assert capture.since(mark, limit=10) == "x" * 10 + "\n[... output truncated: 1000 bytes in all]"
    assert capture.since(0) == "loading\n" + "x" * 92 + "\n[... output truncated: 1008 bytes in all]"


def _comparison(student_ms: float, reference_ms: float, student_mb: float | None, reference_mb: float | None):
    def side(ms, mb):
        return timing.Side(seconds=[ms / 1e3] * 3, peaks=[None if mb is None else int(mb * 2**20)] * 3)

    return timing.Comparison(what="forward", device="cpu", student=side(student_ms, student_mb),
                             reference=side(reference_ms, reference_mb))


def test_verdicts_name_the_figures_and_the_limit():
    timing.check(_comparison(40, 10, 50, 40), max_time_ratio=5, max_memory_ratio=4)
    slower = r"yours 60\.0 ms, the reference 10\.0 ms: 6\.0x slower \(the limit is 5x\)"
    with pytest.raises(AssertionError, match=slower):
        timing.check(_comparison(60, 10, 50, 40), max_time_ratio=5)
    with pytest.raises(AssertionError, match=r"your peak memory 200\.0 MB, the reference's 40\.0 MB: 5\.0x"):
        timing.check(_comparison(10, 10, 200, 40), max_memory_ratio=4)


def test_a_run_within_the_limits_is_told_its_figures_and_one_over_them_its_verdict():
    within, over = Parts(), Parts()
    timing.grade(_comparison(20, 10, 50, 40), within, max_time_ratio=5, max_memory_ratio=4)
    assert within.all_passed and within.notes == [
        "Measured: forward on cpu, yours 20.0 ms, the reference 10.0 ms (2.0x); peak memory 50.0 MB, "
        "the reference's 40.0 MB (1.2x)."]
    tiny = Parts()
    timing.grade(_comparison(20, 10, 3, 1), tiny, max_time_ratio=5, max_memory_ratio=4)
    assert tiny.notes[0].endswith("the reference's 1.0 MB (0.8x, against 4.0 MB: smaller peaks are mostly allocator "
                                  "noise).")
    timing.grade(_comparison(60, 10, 50, 40), over, max_time_ratio=5, max_memory_ratio=4)
    assert [error is None for _, _, error in over.results] == [False, True] and not over.notes
    assert "6.0x slower" in over.summary()


def test_time_is_judged_on_the_fastest_round():
    """Load from elsewhere only adds time: two rounds slowed by it do not fail a fast implementation."""
    hit = timing.Side(seconds=[0.010, 0.090, 0.090], peaks=[None] * 3)
    steady = timing.Side(seconds=[0.010] * 3, peaks=[None] * 3)
    timing.check(timing.Comparison(what="forward", device="cpu", student=hit, reference=steady), max_time_ratio=5)


class _Scripted:
    """A side whose calls take the given seconds, one after another (the warm-up round first), and answer 1."""

    def __init__(self, *seconds: float, then: float | None = None):
        self.seconds, self.then, self.calls = list(seconds), then, 0

    def measure(self, args, kwargs, device):
        self.calls += 1
        return (self.seconds.pop(0) if self.seconds else self.then), None, 1


def _judged(student: _Scripted, reference: _Scripted) -> timing.Comparison:
    return timing.compare(student, reference, lambda index: ((), {}), what="forward", max_time_ratio=5)


def test_a_ratio_near_the_limit_is_measured_again_before_it_fails():
    """Five rounds of a correct implementation all slowed by load from elsewhere (6x): not a verdict yet."""
    loaded = _Scripted(*[0.060] * 6, then=0.020)
    comparison = _judged(loaded, _Scripted(then=0.010))
    timing.check(comparison, max_time_ratio=5)
    assert comparison.time_ratio == 2 and loaded.calls == 11


def test_a_decisive_ratio_is_decided_at_once_and_a_steady_one_over_the_limit_fails_after_every_batch():
    slow, steady = _Scripted(then=0.200), _Scripted(then=0.060)
    with pytest.raises(AssertionError, match="20.0x slower"):
        timing.check(_judged(slow, _Scripted(then=0.010)), max_time_ratio=5)
    with pytest.raises(AssertionError, match="6.0x slower"):
        timing.check(_judged(steady, _Scripted(then=0.010)), max_time_ratio=5)
    assert slow.calls == 6 and steady.calls == 1 + 5 * timing.MAX_BATCHES


def test_a_decisive_ratio_from_rounds_slowed_unevenly_is_measured_again():
    """Far over the limit, but the student's rounds are spread: load, not the code, may be the cause."""
    uneven = _Scripted(0.2, 0.2, 0.2, 0.9, 0.9, 0.9, then=0.02)
    timing.check(_judged(uneven, _Scripted(then=0.010)), max_time_ratio=5)
    assert uneven.calls == 11


def test_memory_is_judged_with_slack_for_tiny_references_and_skipped_when_unknown():
    timing.check(_comparison(10, 10, 12, 0.5), max_memory_ratio=4)  # 12 MB against a 4 MB floor: 3x
    with pytest.raises(AssertionError, match="peak memory"):
        timing.check(_comparison(10, 10, 20, 0.5), max_memory_ratio=4)
    timing.check(_comparison(10, 10, None, 40), max_memory_ratio=4)


def test_gradings_wait_passively(tmp_path, monkeypatch):
    """Runners get OPENMP (a short spin, then passive waiting), side by side or alone, and pass it to their workers:
    the lm retraining's budgets count CPU time, and a spinning thread's is not work."""
    for name in OPENMP:
        monkeypatch.delenv(name, raising=False)
    for side_by_side in (True, False):
        runners = Runners(Isolation.detect(), side_by_side=side_by_side)
        runners.scratch = tmp_path
        assert OPENMP.items() <= runners.environment().items()

    for name, value in OPENMP.items():
        monkeypatch.setenv(name, value)
    folder = Path(tempfile.mkdtemp(prefix="autograder-measured-"))  # the sandbox's uid cannot reach tmp_path
    student = _measured_worker(folder / "submission")
    try:
        assert tuple(student.measured.wait_policy()) == ("PASSIVE", "1000")
    finally:
        student.close()
        shutil.rmtree(folder, ignore_errors=True)
