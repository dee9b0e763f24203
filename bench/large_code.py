"""What a large code file costs the trusted side: the runner's peak memory and the similarity check's time, in one run.

    python bench/large_code.py [--mb 6]

A masking submission whose ``masking.py`` is the reference followed by ``x = 1`` lines up to ``--mb`` MB (within the
size a code file may have), against the baseline, the reference alone, each measured in an interpreter of its own:
the runner's peak resident memory (``grade_one`` in that process, which is then the runner, as in
``autograder check``: public tests, no runtime tests) and its seconds; and the similarity check's seconds and peak on a
class of two (the reference and the file measured). Prints each figure and its ratio to the baseline's. A 6 MB file
took the runner to 1.83 GB in the static check's ``ast.parse`` and the report 110 to 140 s (issue 41): both are bounded
by what they read now (``staticcheck.MAX_PARSED``, ``similarity.MAX_FINGERPRINTED``). The targets (``TARGETS``): the
runner's peak at most 1.5 times the reference's, the similarity check's CPU seconds at most 3 times. Not part of CI.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder import course

# The targets, as ratios to the baseline: the runner's peak memory, and the similarity check's CPU seconds.
TARGETS = {"runner": ("peak_mb", 1.5), "similarity": ("cpu", 3.0)}


def submission(folder: Path, mb: float) -> Path:
    """A masking submission: the reference, then filler to ``mb`` MB (none for 0)."""
    folder.mkdir(parents=True)
    reference = (course.load("masking").solution_dir / "masking.py").read_text()
    (folder / "masking.py").write_text(reference + "x = 1\n" * int((mb * (1 << 20)) // 6))
    return folder


def measure(what: str, mb: float) -> dict:
    """One figure, in this process: ``runner`` or ``similarity`` on a file of ``mb`` MB."""
    root = Path(tempfile.mkdtemp())
    started, used = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    if what == "runner":
        from autograder.grading.runner import grade_one
        from autograder.grading_options import GradingOptions

        grade_one(course.load("masking"), submission(root / "large", mb), None, name="large",
                  options=GradingOptions(public_only=True, skip_tags=("runtime",)))
    else:
        from autograder.report.similarity import similar_pairs

        similar_pairs(course.load("masking"), {"reference": submission(root / "reference", 0),
                                               "large": submission(root / "large", mb)})
    after = resource.getrusage(resource.RUSAGE_SELF)
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return {"seconds": time.perf_counter() - started,
            "cpu": after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime,
            "peak_mb": int(status["VmHWM"].split()[0]) >> 10}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=6.0, help="size of the large file in MB (default 6)")
    parser.add_argument("--measure", choices=["runner", "similarity"], help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.measure:
        print(json.dumps(measure(options.measure, options.mb)))
        return
    for what in ("runner", "similarity"):
        figures = {mb: json.loads(subprocess.run([sys.executable, __file__, "--measure", what, "--mb", str(mb)],
                                                 capture_output=True, text=True, check=True).stdout.splitlines()[-1])
                   for mb in (0.0, options.mb)}
        base, large = figures[0.0], figures[options.mb]
        print(f"{what}: reference {base['seconds']:.1f} s ({base['cpu']:.1f} s CPU), {base['peak_mb']} MB peak; "
              f"{options.mb:g} MB file {large['seconds']:.1f} s ({large['cpu']:.1f} s CPU), {large['peak_mb']} MB "
              f"peak; ratios {large['cpu'] / max(base['cpu'], 1e-9):.2f} (CPU), "
              f"{large['peak_mb'] / base['peak_mb']:.2f} (peak)")
        key, most = TARGETS[what]
        ratio = large[key] / max(base[key], 1e-9)
        print(f"{what}: {'meets' if ratio <= most else 'misses'} the target ({key} at most {most:g} times the "
              "reference's)")


if __name__ == "__main__":
    main()
