"""The commands for course staff: ``autograder grade``, ``report``, ``validate``, ``build``, ``dist``, ``new`` and
``doctor``.

The command line (``autograder.cli``) imports this module by name, only when one of them runs: the student copy of the
harness holds neither it nor the layers it uses (batch, report, authoring), and a student's ``check`` or ``zip`` never
loads them (the import contracts in pyproject.toml). Each command imports what only it needs when it runs: ``grade``
would otherwise load torch (the build) and matplotlib (the report) before its first grading."""

from __future__ import annotations

import contextlib
import functools
import logging

from autograder import ceilings, course, scratch, sinks
from autograder.batch import engine, folder, gradebook
from autograder.batch.discovery import UnreadablePath, discovered
from autograder.batch.engine import EngineError
from autograder.grading_options import GradingOptions
from autograder.sandbox.isolation import Isolation

log = logging.getLogger("autograder")


@ceilings.held(ceilings.COMMAND_MB)
def grade(options) -> int:
    """``autograder grade``: grade the submissions found under ``options.paths`` into ``options.out`` (or, with
    ``--resume``, only those without a final grade there: ``folder.prepare``), then write the folder's gradebooks,
    summary and report from every result in it (``_write_folder``), after a stop too (then re-raised)."""
    if options.assignment:
        course.load(options.assignment)  # an unknown name fails here, with the list of known ones
    out = options.resume or options.out
    isolation = Isolation.detect()
    if isolation.mode != "namespaces":
        log.warning("note: %s", isolation.note())
    try:
        with discovered(options.paths, options.assignment) as jobs:
            return _grade(options, out, jobs)
    except UnreadablePath as exc:
        log.error("error: %s; nothing was graded", exc)
        return 2


def _grade(options, out, jobs) -> int:
    if not jobs:
        log.error("error: no submissions found under %s", ", ".join(map(str, options.paths)))
        return 2
    try:
        todo = folder.prepare(out, jobs, resuming=bool(options.resume), force=options.force).todo
        collected = engine.grade_all(todo, out, GradingOptions(public_only=options.public_only,
                                                               skip_tags=tuple(options.skip_tag)),
                                     workers=options.jobs, progress=not options.quiet, engine=options.engine,
                                     address=options.address) if todo else []
    except (folder.FolderError, EngineError) as exc:
        log.error("error: %s", exc)
        return 2
    except engine.Interrupted as stop:
        unstarted = [job.name for job in todo if not (out / job.name / "results.json").is_file()]
        everything = _write_folder(out, jobs, unstarted, similarity=False)
        stop.detail = (f"{out} holds {gradebook.counts(everything)}"
                       + (f", and {len(unstarted)} submission(s) were not started" if unstarted else "")
                       + "; gradebook.csv, summary.md and report.html say which. `autograder grade "
                       + f"{' '.join(map(str, options.paths))} --resume {out}` grades the rest")
        raise
    everything = _write_folder(out, jobs)
    if not options.quiet:
        gradebook.print_summary(everything)
        log.info("results: %s (report.html, gradebook.csv, summary.md, one folder per submission)", out)
    missed = gradebook.ungraded(collected)
    for results in missed:
        log.error("not graded: %s: %s", sinks.line(results.submission), sinks.line(results.reason))
    if missed:
        log.error("error: %d of %d submissions were not graded (listed above; each one's feedback.md in %s says "
                  "why)", len(missed), len(collected), out)
        return 1
    return 0


def _write_folder(out, jobs, unstarted: list[str] | tuple[str, ...] = (), similarity: bool = True) -> list:
    """The folder's files from every result in ``out``, by its owner (``folder.write``), the report with them
    (``similarity``: ``page.write``'s); ``jobs``: the submissions given now. Returns those results."""
    from autograder.report import page  # matplotlib and copydetect: loaded once the gradings are done

    return folder.write(out, jobs, unstarted, report=functools.partial(page.write, similarity=similarity))


@ceilings.held(ceilings.COMMAND_MB)
def report(options) -> int:
    from autograder.report import page

    paths = options.submissions or []
    try:
        collected = page.read(options.results)
        with discovered(paths) as found:  # an export zip is unpacked for as long as the report needs its code
            jobs = page.jobs_for(collected, found, paths) if paths else {}
            collected = _write_folder(options.results, list(jobs.values()))
    except UnreadablePath as exc:
        log.error("error: no submissions found under %s: %s", ", ".join(map(str, paths)), exc)
        return 2
    except page.ReportError as exc:
        log.error("error: %s", exc)
        return 2
    log.info("wrote %s (%d submissions), gradebook.csv, gradebook-<assignment>.csv and summary.md",
             options.results / "report.html", len(collected))
    return 0


def validate(options) -> int:
    from autograder.authoring import validate as checks

    names = options.names or course.names()
    where = {"engine": options.engine, "address": options.address}
    if options.fresh_secrets is not None:
        where["fresh"] = options.fresh_secrets
    if not options.retrain_alternatives:
        where["retrain_alternatives"] = False
    try:
        if options.mutate:
            return _mutate(names, options, where)
        if options.out is not None:
            return 0 if checks.validate(names, options.out, options.jobs, **where) else 1
        with scratch.folder("validate") as temp:
            return 0 if checks.validate(names, temp, options.jobs, **where) else 1
    except EngineError as exc:
        log.error("error: %s", exc)
        return 2


def _mutate(names: list[str], options, where: dict) -> int:
    """``validate --mutate``: grade generated mutants, print the table and every survivor not recorded as equivalent."""
    from autograder.authoring import mutation_testing

    with contextlib.ExitStack() as stack:
        out = options.out or stack.enter_context(scratch.folder("mutate"))
        outcomes = mutation_testing.run(names, out, options.jobs, limit=options.limit,
                                        functions=tuple(options.function), engine=where["engine"],
                                        address=where["address"])
    print(mutation_testing.summary(outcomes))
    problems = [problem for outcome in outcomes for problem in outcome.problems]
    for problem in problems:
        log.error("%s", problem)
    return 1 if problems else 0


def build(options) -> int:
    from autograder.authoring import build as builder

    names = options.names or course.names()
    problems = builder.build(names, check=options.check)
    for problem in problems:
        log.error("%s", problem)
    if not problems:
        log.info("%s: %s", "up to date" if options.check else "built", ", ".join(names))
    return 1 if problems else 0

def dist(options) -> int:
    from autograder.authoring import dist as packaging
    from autograder.authoring import leaks

    for name in options.names:
        course.load(name)  # an unknown name fails here, with the list of known ones
    try:
        if options.kind == "student":
            written = packaging.build_student(options.names or None, options.out)
        else:
            written = packaging.build_gradescope(options.names or course.names(), options.out, options.secret)
    except (packaging.DistError, leaks.LeakError) as exc:
        log.error("error: %s", exc)
        return 2
    for path in written:
        log.info("wrote %s (%.0f kB)", path, path.stat().st_size / 1024)
    if options.kind == "gradescope":
        from autograder import container

        for name in options.names or course.names():
            log.info("%s: set Gradescope's Autograder Settings to %s (README.md in the zip says why)", name,
                     container.settings(name).line())
    return 0

def new(options) -> int:
    from autograder.authoring import build as builder
    from autograder.authoring import scaffold

    written = scaffold.create(options.name)
    problems = builder.build([options.name])
    for problem in problems:
        log.error("%s", problem)
    log.info("wrote %s; built its skeleton and recorded expectations. Next: `autograder validate %s`, then make it "
             "yours (docs/authoring.md)", ", ".join(str(p.relative_to(course.REPO_ROOT)) for p in written),
             options.name)
    return 1 if problems else 0


def doctor(options) -> int:
    """``autograder doctor``: the isolation this machine gives workers; with ``--gpu``, the layer that keeps CUDA from
    them (``autograder.sandbox.doctor``). Exit status 1 where a mode's whole sandbox keeps CUDA (or the stand-in)
    out."""
    isolation = Isolation.detect()
    log.info("isolation: %s: %s", isolation.mode, isolation.note())
    for line in isolation.skipped():
        log.info("sandbox: %s", line)
    if not options.gpu:
        return 0
    from autograder.sandbox import doctor as gpu_doctor

    found = gpu_doctor.examine(isolation=isolation, progress=lambda mode, outcome: log.info(
        "%s, %s: %s: %s", mode, outcome.row.name, "works" if outcome.works else "FAILS", outcome.what))
    log.info("%s", "\n".join(gpu_doctor.lines(found)))
    return 0 if all(outcomes[0].works for outcomes in found["modes"].values()) else 1
