"""The Gradescope settings each assignment needs, measured: its autograder zip's reference graded in the simulated
container (``autograder.authoring.simulation``) at each of Gradescope's sizes, smallest first, until one gives full
marks with nothing killed for memory.

    sudo .venv/bin/python bench/gradescope_sizes.py [NAME ...] [--skip-tag retraining] [--write]

Prints, per assignment and size tried: the seconds, the container's peak memory, the kernel's kills, the score and
status; then the settings row (CPU, memory, timeout from ``container.timeout_for``). ``--write`` puts the rows in
``autograder/gradescope_settings.toml`` (what ``dist gradescope`` writes into the zip's README and
``run_autograder``'s budget): measured rows replace the assignment's own, the others stay. ``--skip-tag`` grades
without those tests (a row measured so is marked so, and is not for the zip: use it to see, not to write). Root and
version 1 control groups (``SimulationError`` says what is missing). Figures go in docs/instructors.md and
docs/performance.md with the date and the machine's load: timings under load are upper bounds.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from datetime import date
from pathlib import Path

from autograder import container, course, trees
from autograder.authoring import dist, simulation

PYTHON = str(Path(sys.prefix) / "bin" / "python")  # the environment's interpreter, as setup.sh's venv is


def measure(name: str, cpus: float, memory_mb: int, skip: list[str]) -> simulation.Run:
    with tempfile.TemporaryDirectory(prefix=f"gradescope-sizes-{name}-") as folder:
        zip_path = dist.build_gradescope([name], Path(folder))[0]
        root = simulation.unpack(Path(folder), zip_path, course.load(name).solution_dir)
        try:
            env = {"AUTOGRADER_SKIP_TAGS": ",".join(skip)} if skip else {}
            return simulation.simulate(root, cpus=cpus, memory_mb=memory_mb, python=PYTHON, env=env,
                                       budget=container.MAX_TIMEOUT_MIN * 60 - container.GRADESCOPE_MARGIN)
        finally:
            trees.remove(root)


def row(name: str, cpus: float, memory_mb: int, run: simulation.Run, note: str) -> str:
    return (f"[{name}]\ncpus = {cpus:g}\nmemory_mb = {memory_mb}\ntimeout_min = {container.timeout_for(run.seconds)}\n"
            f"peak_mb = {run.peak_mb:.0f}\nseconds = {run.seconds:.0f}\nmeasured = \"{note}\"\n")


def write(rows: dict[str, str]) -> None:
    """Replace the measured assignments' rows of the settings table, keeping the others and the header."""
    path = container.SETTINGS_FILE
    text = path.read_text() if path.is_file() else ""
    header, _, body = text.partition("\n[")
    kept = {}
    for block in ("[" + body).split("\n[") if body else []:
        block = block if block.startswith("[") else "[" + block
        kept[block[1:block.index("]")]] = block.strip() + "\n"
    kept.update(rows)
    ordered = sorted(kept, key=lambda n: (course.load(n).order, n))
    path.write_text(header.rstrip() + "\n\n" + "\n".join(kept[n] for n in ordered))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", default=course.names())
    parser.add_argument("--skip-tag", action="append", default=[])
    parser.add_argument("--write", action="store_true")
    options = parser.parse_args()
    load = os.getloadavg()[0]
    rows, failed = {}, []
    for name in options.names:
        for cpus, memory_mb in container.SIZES:
            run = measure(name, cpus, memory_mb, options.skip_tag)
            results = run.results
            full = results["score"] == results["extra_data"]["max_score"] > 0 and run.oom_kills == 0
            print(f"{name}: {cpus:g} CPU, {memory_mb} MB: {run.seconds:.0f} s, peak {run.peak_mb:.0f} MB, "
                  f"{run.oom_kills} killed, {results['score']:g}/{results['extra_data']['max_score']:g} "
                  f"({results['extra_data'].get('status', '')[:160]})", flush=True)
            if full:
                skipped = f", without the tests tagged {', '.join(options.skip_tag)}" if options.skip_tag else ""
                note = (f"{date.today()}, bench/gradescope_sizes.py, {os.cpu_count()} shared cores at load "
                        f"{load:.1f}{skipped}")
                rows[name] = row(name, cpus, memory_mb, run, note)
                print(rows[name])
                break
        else:
            failed.append(name)
            print(f"{name}: no size of Gradescope's gave the reference full marks", flush=True)
    if options.write:
        if options.skip_tag:
            print("not written: rows measured without every test are not for the zip")
            return 1
        write(rows)
        print(f"docs/instructors.md's table:\n\n{container.table(course.names())}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
