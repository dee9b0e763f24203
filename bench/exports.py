"""What a class-sized Gradescope export costs ``autograder grade`` before any grading, in one run.

    python bench/exports.py [--submissions 500]

Writes an "Export Submissions" zip of ``--submissions`` masking submissions (the reference, each with a line of its
own) and its ``submission_metadata.yml``, then times, in wall and CPU seconds: the baseline, ``zipfile``'s plain
``extractall`` of the same zip; finding the submissions (``discovery.discovered``: the bounded extraction, the layout
checks, each submission's assignment); naming their students (``gradescope_metadata.students``); and what ``grade
--resume`` adds (``resume.plan``: every submission staged and its content digested). It prints each as a ratio to the
baseline. Not part of CI.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
import zipfile
from pathlib import Path

import yaml

from autograder import course
from autograder.batch import resume
from autograder.batch.discovery import discovered
from autograder.gradescope_metadata import students


def export(path: Path, count: int) -> Path:
    code = (course.load("masking").solution_dir / "masking.py").read_text()
    people = {f"submission_{i}": {":submitters": [{":name": f"Student {i}", ":sid": str(i), ":email": f"s{i}@x"}]}
              for i in range(count)}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("assignment_1_export/submission_metadata.yml", yaml.safe_dump(people))
        for i in range(count):
            archive.writestr(f"assignment_1_export/submission_{i}/masking.py", f"{code}\n# student {i}\n")
    return path


class Clock:
    """Wall and CPU seconds (this process's) from its making to ``stop``, or of a ``with`` block."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), self._cpu()

    @staticmethod
    def _cpu() -> float:
        used = resource.getrusage(resource.RUSAGE_SELF)
        return used.ru_utime + used.ru_stime

    def stop(self) -> Clock:
        self.wall, self.cpu = time.perf_counter() - self.wall, self._cpu() - self.cpu
        return self

    def __enter__(self) -> Clock:
        return self

    def __exit__(self, *_) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=500)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        zipped = export(Path(temp) / "assignment_1_export.zip", options.submissions)
        size = zipped.stat().st_size
        with Clock() as baseline, zipfile.ZipFile(zipped) as archive:
            archive.extractall(Path(temp) / "plain")
        finding = Clock()
        with discovered([zipped]) as jobs:
            finding.stop()
            with Clock() as naming:
                named = sum(bool(students(job.source, given=job.given)) for job in jobs)
            with Clock() as planning:
                todo = len(resume.plan(jobs, []).todo)
    assert len(jobs) == named == todo == options.submissions, (len(jobs), named, todo)
    print(f"{options.submissions} submissions, {size >> 10} KiB zipped")
    print(f"{'step':<40} {'wall s':>8} {'CPU s':>8} {'CPU / baseline':>15}")
    for name, clock in (("baseline: zipfile.extractall", baseline), ("discovered (unpack, detect)", finding),
                        ("students (names from the metadata)", naming), ("resume.plan (stage, digest)", planning)):
        print(f"{name:<40} {clock.wall:8.2f} {clock.cpu:8.2f} {clock.cpu / max(baseline.cpu, 1e-3):15.1f}")


if __name__ == "__main__":
    main()
