"""The ``autograder`` command: grade, check, validate, build, list.

    autograder grade PATHS... --out DIR [--jobs N]   instructors: one results folder per submission
                     [--engine ray [--address ADDR]]  ... graded on a Ray cluster
    autograder check NAME [FOLDER]                   students: the public tests on a working copy
    autograder validate [NAMES...]                   CI: reference full marks, skeleton none, mutants caught
    autograder build [NAMES...] [--check]            skeletons and recorded expectations from solutions/
    autograder dist student [NAMES...] --out DIR     instructors: student zips, refused if anything hidden leaks
    autograder dist gradescope [NAMES...] --out DIR  instructors: Gradescope autograder zips
    autograder zip NAME [FOLDER] [EXTRA...]          students: the submission zip, exactly the required files
    autograder world --out DIR [--seed S] [--people N] a generated LM world (wiki.txt and the tsv files)
    autograder list                                  the assignments this installation knows
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import zipfile
from pathlib import Path

from rich.console import Console
from rich.markdown import Markdown

from autograder import assignment as assignments
from autograder import batch, world
from autograder.cluster import ClusterError
from autograder.sandbox import Isolation

log = logging.getLogger("autograder")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograder", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    grade = commands.add_parser("grade", help="grade submission folders or zips")
    grade.add_argument("paths", nargs="+", type=Path, help="submissions (folders or zips), or folders of them")
    grade.add_argument("--out", type=Path, required=True, help="results folder (one subfolder per submission)")
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded in parallel (default 1)")
    grade.add_argument("--assignment", help="grade every path as this assignment (default: detect from files)")
    grade.add_argument("--public-only", action="store_true", help="run only the public tests")
    grade.add_argument("--quiet", action="store_true", help="no progress bar or table")
    grade.add_argument("--skip-tag", action="append", default=[], metavar="TAG",
                       help="do not run the tests tagged TAG (e.g. retraining); repeatable; they carry no points")
    add_engine_arguments(grade)

    check = commands.add_parser("check", help="run the public tests on your working copy")
    check.add_argument("assignment", help="assignment name, e.g. masking")
    check.add_argument("folder", nargs="?", type=Path, default=Path("."), help="folder with your files (default .)")

    validate = commands.add_parser("validate", help="reference full marks, skeleton none, every mutant loses")
    validate.add_argument("names", nargs="*", help="assignments (default: all)")
    validate.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2)), help="parallel gradings")
    validate.add_argument("--out", type=Path, help="keep the graded results here")
    add_engine_arguments(validate)

    build = commands.add_parser("build", help="generate assignments/ and public expectations from solutions/")
    build.add_argument("names", nargs="*", help="assignments (default: all)")
    build.add_argument("--check", action="store_true", help="only report what is out of date (for CI)")

    dist = commands.add_parser("dist", help="build the student zips or the Gradescope autograder zips")
    dist.add_argument("kind", choices=["student", "gradescope"], help="what to build")
    dist.add_argument("names", nargs="*", help="assignments (default: all; student also writes student-all.zip)")
    dist.add_argument("--out", type=Path, required=True, help="folder for the zips")
    dist.add_argument("--secret", help="gradescope: the term's hidden seed to put in the zip (default: hidden/SECRET)")

    pack = commands.add_parser("zip", help="zip your files for submission")
    pack.add_argument("assignment", help="assignment name, e.g. masking")
    pack.add_argument("folder", nargs="?", type=Path, default=Path("."), help="folder with your files (default .)")
    pack.add_argument("extra", nargs="*", type=Path, help="more files to hand in (a predictions file, ...)")
    pack.add_argument("--out", type=Path, help="the zip to write (default: NAME-submission.zip here)")

    world.add_arguments(commands.add_parser("world", help="generate a fictional world for the lm assignment"))

    commands.add_parser("list", help="list the assignments")

    options = parser.parse_args(argv)
    if getattr(options, "address", None) and options.engine != "ray":
        parser.error("--address is the Ray cluster's: add --engine ray")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        return COMMANDS[options.command](options)
    except (assignments.AssignmentError, ClusterError) as exc:
        log.error("error: %s", exc)
        return 2
    except KeyboardInterrupt as stop:  # SIGINT or SIGTERM: the gradings started were stopped and cleaned up
        finished = getattr(stop, "collected", None)
        log.error("stopped%s", "" if finished is None else f": {len(finished)} submission(s) had finished; their "
                  "results and the gradebook are written")
        return 130


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", choices=["local", "ray"], default="local",
                        help="local: runners on this machine (default); ray: one Ray task per submission on a cluster "
                             '(pip install -e ".[cluster]"; --jobs is then the cluster\'s to decide)')
    parser.add_argument("--address", help="with --engine ray: the cluster (HOST:PORT, auto for the one `ray start` "
                                           "started here, ray://HOST:PORT); default: a local cluster for this command")


def cmd_grade(options) -> int:
    if options.assignment:
        assignments.load(options.assignment)  # an unknown name fails here, with the list of known ones
    isolation = Isolation.detect()
    if isolation.mode != "namespaces":
        log.warning("note: %s", isolation.note())
    jobs = batch.discover(options.paths, options.assignment)
    if not jobs:
        log.error("error: no submissions found under %s", ", ".join(map(str, options.paths)))
        return 2
    collected = batch.grade_all(jobs, options.out, workers=options.jobs, public_only=options.public_only,
                                progress=not options.quiet, skip_tags=options.skip_tag, engine=options.engine,
                                address=options.address)
    if not options.quiet:
        batch.print_summary(collected)
        log.info("results: %s (gradebook.csv, summary.md, one folder per submission)", options.out)
    return 0


def cmd_check(options) -> int:
    from autograder.runner import grade_one

    assignment = assignments.load(options.assignment)
    folder = options.folder.resolve()
    results = grade_one(assignment, folder, None, name=folder.name, public_only=True)
    if results.extra_data.get("status") == "incomplete: the grader was stopped":
        raise KeyboardInterrupt
    console = Console()
    console.print(Markdown(results.feedback()))
    if results.score < results.max_score:
        console.print("\nThe hidden tests check more cases than these; passing every public test is a start.")
    return 0 if results.score == results.max_score else 1


def cmd_validate(options) -> int:
    from autograder.validate import validate

    names = options.names or assignments.names()
    engine = {"engine": options.engine, "address": options.address}
    if options.out is not None:
        return 0 if validate(names, options.out, options.jobs, **engine) else 1
    with tempfile.TemporaryDirectory(prefix="autograder-validate-") as temp:
        return 0 if validate(names, Path(temp), options.jobs, **engine) else 1


def cmd_build(options) -> int:
    from autograder.build import build

    names = options.names or assignments.names()
    problems = build(names, check=options.check)
    for problem in problems:
        log.error("%s", problem)
    if not problems:
        log.info("%s: %s", "up to date" if options.check else "built", ", ".join(names))
    return 1 if problems else 0


def cmd_dist(options) -> int:
    from autograder import dist, leaks

    for name in options.names:
        assignments.load(name)  # an unknown name fails here, with the list of known ones
    try:
        if options.kind == "student":
            written = dist.build_student(options.names or None, options.out)
        else:
            written = dist.build_gradescope(options.names or assignments.names(), options.out, options.secret)
    except (dist.DistError, leaks.LeakError) as exc:
        log.error("error: %s", exc)
        return 2
    for path in written:
        log.info("wrote %s (%.0f kB)", path, path.stat().st_size / 1024)
    return 0


def cmd_zip(options) -> int:
    from autograder import dist

    try:
        path = dist.pack_submission(options.assignment, options.folder, options.out, options.extra)
    except dist.DistError as exc:
        log.error("error: %s", exc)
        return 2
    with zipfile.ZipFile(path) as packed:
        log.info("wrote %s (%s); upload it to Gradescope", path, ", ".join(packed.namelist()))
    return 0


def cmd_list(options) -> int:
    for name in assignments.names():
        assignment = assignments.load(name)
        print(f"{name:12} {assignment.title}  (submit: {', '.join(assignment.files)})")
    return 0


COMMANDS = {"grade": cmd_grade, "check": cmd_check, "validate": cmd_validate, "build": cmd_build, "dist": cmd_dist,
            "zip": cmd_zip, "world": world.command, "list": cmd_list}


if __name__ == "__main__":
    sys.exit(main())
