"""The ``autograder`` command (``build_parser`` lists its subcommands, each with a summary and an example):
students check and zip their work; instructors grade, build zips and worlds; maintainers build and validate.
An assignment may add subcommands of its own in its assignment.toml (lm: `autograder world`, a generated world).
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import importlib.util
import logging
import os
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

from rich.console import Console
from rich.markdown import Markdown

from autograder import course, sinks
from autograder.results import STOPPED, Status
from autograder.sandbox import config as sandbox_config
from autograder.sandbox import zygote as worker_zygote
from autograder.sandbox.config import LOCK_ENV

log = logging.getLogger("autograder")

# Commands for course staff live in ``autograder.instructor``, imported by name when one runs: the student copy of the
# harness does not hold it (``dist.STUDENT_ENTRY_POINTS``), so a student who runs one is told what it is rather than
# shown a missing module, and nothing a student runs imports batch, report or authoring (pyproject.toml's contracts).
INSTRUCTOR_COMMANDS = ("grade", "report", "validate", "build", "dist", "new", "doctor")  # autograder.instructor


DESCRIPTION = """Autograded transformer assignments and the sandboxed grader that scores them.
Students: check, zip. Instructors: grade, dist, world, list.
Maintainers: build, validate."""

CHECK_DESCRIPTION = """Run the public tests of an assignment on your files (in a sandbox) and print your
score on them and, for every test, PASS or FAIL with what is wrong: the first
wrong index, the largest error, the known mistake it looks like. The hidden
tests, run when you hand in, use other inputs and check more.

exit status: 0 every public test passed; 1 some failed; 2 the folder or the
assignment cannot be used (nothing was graded); 130 stopped (Ctrl-C)."""

GRADE_DESCRIPTION = """Grade submissions (folders or zips, or folders of them, or Gradescope's "Export
Submissions" zip as downloaded): a results folder each (results.json in
Gradescope's format, feedback.md, grader.log), then gradebook.csv, summary.md,
report.html and a table of every result in the results folder, each with its
status. After a stop, --resume OUT grades only what has no final grade in OUT.

exit status: 0 every submission was graded; 1 some were not (each is listed at
the end with the reason: not a zip, no assignment's files, ...); 2 a path does
not exist or cannot be read, or holds no submission, or --out holds results of
other submissions (without --force or --resume; nothing was written);
130 stopped (Ctrl-C)."""


def build_parser() -> argparse.ArgumentParser:
    """The command line: every subcommand with a one-line summary, in the top-level help with an example."""
    parser = argparse.ArgumentParser(prog="autograder", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('transformer-autograder')}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands")
    examples: list[str] = []

    def command(name: str, summary: str, example: str, description: str | None = None) -> argparse.ArgumentParser:
        examples.append(f"  {example}")
        return commands.add_parser(name, help=summary, description=description or summary + ".",
                                   epilog=f"example:\n  {example}",
                                   formatter_class=argparse.RawDescriptionHelpFormatter)

    check = command("check", "students: run the public tests on your files, see what is wrong",
                    "autograder check masking masking/", CHECK_DESCRIPTION)
    check.add_argument("assignment", help="assignment name, e.g. masking")
    check.add_argument("folder", nargs="?", type=Path, default=Path("."), help="folder with your files (default .)")

    pack = command("zip", "students: zip exactly the files to hand in",
                   "autograder zip lm lm/ vanilla.test.predictions")
    pack.add_argument("assignment", help="assignment name, e.g. masking")
    pack.add_argument("folder", nargs="?", type=Path, default=Path("."), help="folder with your files (default .)")
    pack.add_argument("extra", nargs="*", type=Path, help="more files to hand in (a predictions file, ...)")
    pack.add_argument("--out", type=Path, help="the zip to write (default: NAME-submission.zip here)")

    grade = command("grade", "instructors: grade submissions into a results folder",
                    "autograder grade submissions/ --out results/ --jobs 4", GRADE_DESCRIPTION)
    grade.add_argument("paths", nargs="+", type=Path, help="submissions (folders or zips), or folders of them")
    into = grade.add_mutually_exclusive_group(required=True)
    into.add_argument("--out", type=Path, help="results folder (one subfolder per submission)")
    into.add_argument("--resume", type=Path, metavar="OUT", help="grade into the results folder OUT only what has no "
                      "final grade there (matched by content; a stopped batch, a class that grew), then rewrite its "
                      "gradebooks and report")
    grade.add_argument("--force", action="store_true", help="grade into an --out folder that holds results of other "
                       "submissions (kept: its gradebooks and report list them too)")
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded in parallel (default 1)")
    grade.add_argument("--assignment", help="grade every path as this assignment (default: detect from files)")
    grade.add_argument("--public-only", action="store_true", help="run only the public tests")
    grade.add_argument("--quiet", action="store_true", help="no progress bar or table")
    grade.add_argument("--skip-tag", action="append", default=[], metavar="TAG",
                       help="do not run the tests tagged TAG (e.g. retraining); repeatable; they carry no points")
    add_engine_arguments(grade)

    report = command("report", "instructors: the class report (report.html) of a results folder",
                     "autograder report results/ --submissions submissions/")
    report.add_argument("results", type=Path, help="a results folder written by `autograder grade --out`")
    report.add_argument("--submissions", nargs="+", type=Path, default=[], metavar="PATH",
                        help="the folders or zips that were graded (the same paths as to grade): adds the similarity "
                             "check and Gradescope's student names")

    dist = command("dist", "instructors: build the student zips or the Gradescope zips",
                   "autograder dist gradescope masking --out dist/ --secret NEW-TERM-SECRET")
    dist.add_argument("kind", choices=["student", "gradescope"], help="what to build")
    dist.add_argument("names", nargs="*", help="assignments (default: all; student also writes student-all.zip)")
    dist.add_argument("--out", type=Path, required=True, help="folder for the zips")
    dist.add_argument("--secret", help="gradescope: the term's hidden seed to put in the zip (default: hidden/SECRET)")

    command("list", "the assignments, and the files each one hands in", "autograder list")

    build = command("build", "maintainers: skeletons and expectations from solutions/",
                    "autograder build --check")
    build.add_argument("names", nargs="*", help="assignments (default: all)")
    build.add_argument("--check", action="store_true", help="only report what is out of date (for CI)")

    validate = command("validate", "maintainers: reference full, skeleton none, mutants caught",
                       "autograder validate masking --jobs 2")
    validate.add_argument("names", nargs="*", help="assignments (default: all)")
    validate.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2)), help="parallel gradings")
    validate.add_argument("--out", type=Path, help="keep the graded results here")
    validate.add_argument("--fresh-secrets", type=int, metavar="N",
                          help="grade the hidden tests again under N fresh secrets (default 2; make test uses 1)")
    validate.add_argument("--retrain-alternatives", action=argparse.BooleanOptionalAction, default=True,
                          help="retrain the alternatives marked '# retraining', a minute each (default; make test: no)")
    validate.add_argument("--mutate", action="store_true",
                          help="instead: grade generated mutants of solutions/ (axis, slice, dropped call, ...) and "
                               "list those no test kills (docs/authoring.md#mutation-testing)")
    validate.add_argument("--limit", type=int, metavar="N", help="--mutate: a sample of N mutants per assignment")
    validate.add_argument("--function", action="append", default=[], metavar="NAME",
                          help="--mutate: only mutants in this function (repeatable; CausalSelfAttention.forward)")
    add_engine_arguments(validate)

    for grading in (check, grade, validate):
        grading.add_argument("--lock-files", action="store_true",
                             help="as root without namespaces or Landlock: make the checkout's folders, the results "
                                  "and the submissions readable by root only (AUTOGRADER_LOCK_FILES=1; otherwise a "
                                  "warning says what to change; docs/security.md)")

    new = command("new", "instructors: scaffold a new assignment (docs/authoring.md)",
                  "autograder new softmax")
    new.add_argument("name", help="its name, a lower-case Python identifier (the module students write)")

    doctor = command("doctor", "instructors: the sandbox here; --gpu: does CUDA reach workers",
                     "autograder doctor --gpu")
    doctor.add_argument("--gpu", action="store_true", help="start a worker with every layer of the sandbox on, then "
                        "with each off, and say which one stops CUDA (docs/security.md#gpu-machines)")
    for name, handler in course.add_commands(command, [*COMMANDS, *commands.choices]).items():
        commands.choices[name].set_defaults(handler=handler)  # an assignment's own subcommand, e.g. lm's world

    parser.epilog = "examples (`autograder COMMAND --help` says more):\n" + "\n".join(examples)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    options = parser.parse_args(argv)
    if getattr(options, "address", None) and options.engine != "ray":
        parser.error("--address is the Ray cluster's: add --engine ray")
    sinks.log_to_terminal()
    if getattr(options, "lock_files", False):  # read where files are locked: the batch, its runners, a check
        os.environ[LOCK_ENV] = "1"
    handler = getattr(options, "handler", COMMANDS.get(options.command))
    if options.command in INSTRUCTOR_COMMANDS:
        if importlib.util.find_spec("autograder.instructor") is None:
            log.error("error: `autograder %s` is for course staff and needs the instructor repository; this student "
                      "copy does not include it. Students use `autograder check` and `autograder zip`.",
                      options.command)
            return 2
        handler = getattr(importlib.import_module("autograder.instructor"), options.command)
    try:
        return handler(options)
    except course.AssignmentError as exc:
        log.error("error: %s", exc)
        return 2
    except KeyboardInterrupt as stop:  # SIGINT or SIGTERM: the gradings started were stopped and cleaned up
        detail = getattr(stop, "detail", "")  # a batch's: what it wrote, in the summary's words
        log.error("stopped%s", f": {detail}" if detail else "")
        return 130


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", choices=["local", "ray"], default="local",
                        help="local: runners on this machine (default); ray: one Ray task per submission on a cluster "
                             '(pip install -e ".[cluster]"; --jobs is then the cluster\'s to decide)')
    parser.add_argument("--address", help="with --engine ray: the cluster (HOST:PORT, auto for the one `ray start` "
                                           "started here, ray://HOST:PORT); default: a local cluster for this command")


def cmd_check(options) -> int:
    # The toml only (nothing hidden), then the workers' zygote first: it imports torch on the other core while this
    # process imports the runner, and pyplot only for notebooks, which may plot.
    assignment = course.load(options.assignment)
    portable = sandbox_config.without_linux_asked()  # a test aid: the path of systems without Linux's layers
    if not portable:
        worker_zygote.start(plots=bool(assignment.notebooks))
    from autograder import handin
    from autograder.grading.runner import grade_one
    from autograder.grading_options import GradingOptions
    from autograder.sandbox.isolation import Isolation

    folder = options.folder.resolve()
    if not folder.is_dir():
        log.error("error: %s %s; give the folder that holds your %s (`autograder check %s FOLDER`)", options.folder,
                  "is not a folder" if folder.exists() else "does not exist", ", ".join(assignment.files),
                  assignment.name)
        return 2
    try:
        folder = handin.locate(assignment.name, folder)
    except handin.HandInError as exc:
        log.error("error: %s", exc)
        return 2
    isolation = Isolation.portable() if portable else Isolation.detect()
    for line in isolation.skipped():
        log.info("sandbox: %s", line)
    results = grade_one(assignment, folder, None, name=folder.name, options=GradingOptions(public_only=True),
                        isolation=isolation)
    if results.status is Status.INCOMPLETE and results.reason == STOPPED:
        raise KeyboardInterrupt
    if results.status is Status.NOT_GRADED:
        log.error("error: %s", results.reason)
        return 2
    console = Console()
    console.print(Markdown(results.feedback()))
    if results.score < results.max_score:
        console.print("\nThe hidden tests check more cases than these; passing every public test is a start.")
    return 0 if results.score == results.max_score else 1


def cmd_zip(options) -> int:
    from autograder import handin

    target = handin.zip_path(options.assignment, options.out)
    try:
        folder = handin.locate(options.assignment, options.folder)
        replaced = target.exists()
        path = handin.pack_submission(options.assignment, folder, target, options.extra)
    except handin.HandInError as exc:
        log.error("error: %s", exc)
        return 2
    with zipfile.ZipFile(path) as packed:
        log.info("wrote %s (%s)%s; upload it to Gradescope", path, ", ".join(packed.namelist()),
                 ", replacing the zip that was there" if replaced else "")
    stubs, blanks = handin.unfinished(options.assignment, folder), handin.unfilled(options.assignment, folder)
    if stubs:
        log.warning("warning: %d function(s) still raise NotImplementedError, as the skeleton left them: %s.",
                    len(stubs), "; ".join(stubs))
    if blanks:
        log.warning("warning: %d notebook answer(s) are still as the skeleton left them: %s.", len(blanks),
                    "; ".join(blanks))
    if stubs or blanks:
        log.warning("Finish them, save, and zip again, or upload this zip if it is what you mean to hand in.")
    return 1 if stubs or blanks else 0


def cmd_list(options) -> int:
    for name in course.names():
        assignment = course.load(name)
        print(f"{name:12} {assignment.title}  (submit: {', '.join(assignment.files)})")
    return 0


COMMANDS = {"check": cmd_check, "zip": cmd_zip, "list": cmd_list}  # and INSTRUCTOR_COMMANDS


def run() -> None:
    """The ``autograder`` command: ``main``, then the exit handlers (the workers' zygote stopped, a local Ray cluster
    shut down, logs flushed), then exit without tearing the interpreter down. Torch's teardown (its modules and static
    objects freed one by one) added a noticeable part of a second to every command, a student's ``check`` included;
    the operating system frees it all at once."""
    code = main()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


if __name__ == "__main__":
    run()
