"""Building what leaves the repository: the student zip and the Gradescope autograder zip, from one source.

Both are assembled in memory as ``{path inside the zip: bytes}`` and written deterministically (sorted
entries, fixed timestamps, fixed modes), so building twice gives identical zips.

- Student zip (``student-NAME.zip``, and ``student-all.zip`` when every assignment is built): the skeletons
  from ``assignments/`` (one folder per assignment, data included), the harness package with only the
  public part of each suite (``public/``, recorded expectations, ``manual.json``), ``requirements.txt`` and a
  ``pyproject.toml`` of its own listing what these assignments need (``student_requirements``), and a README rendered
  from ``templates/student_README.md``, whose set-up commands (``setup_commands``) tests and a benchmark run. It is
  scanned by ``autograder.authoring.leaks`` and refused, with every finding, before anything is written.
- Gradescope zip (``gradescope-NAME.zip``): ``setup.sh``, ``run_autograder`` and a README rendered from
  ``templates/``, the harness with this assignment's public and hidden suites, ``solutions/NAME/`` (carried
  modules' links resolved into files) and ``tests/mutants/NAME/``, laid out like the repository so the
  grader finds everything where it does here.

Templates use ``@NAME@`` placeholders; a placeholder left unfilled is an error, not a silent blank.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Iterable
from importlib.metadata import packages_distributions
from pathlib import Path

from autograder import container, course, handin
from autograder.authoring import leaks
from autograder.authoring.markers import SKIP
from autograder.batch.jobs import HARD_LIMIT_MARGIN
from autograder.sandbox.permissions import UID_POOL

TEMPLATES = course.PACKAGE_DIR / "templates"
PYPROJECT = course.REPO_ROOT / "pyproject.toml"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
RUNTIME_PREFIX = "/opt/autograder"
PYTHON = "3.11"  # where the image's own Python is not one the grader supports (setup.sh)
EXECUTABLES = frozenset({"setup.sh", "run_autograder"})
COURSE_FOLDER = "transformer-assignments"
PLACEHOLDER = re.compile(r"@([A-Z_]+)@")
# What a student's `check` and `zip` run, and the processes they start: the command line, the grading of one folder
# (`check`), the submission zip (`zip`) and the worker that runs the student's code (started as
# `python -m autograder.worker`, or imported by name in its zygote), and the notebooks' `grader.check` cells
# (`notebook_checks`). The student zip holds these, what they import and the public suites; the rest of the package
# (building, validating, distributing, the mutants) is the instructor's, and the student's `autograder` says so when
# asked for it (`cli.INSTRUCTOR_COMMANDS`).
STUDENT_ENTRY_POINTS = ("autograder.cli", "autograder.grading.runner", "autograder.handin",
                        "autograder.worker.__main__", "autograder.worker.zygote",
                        "autograder.grading.notebook_checks")
# The platforms of the student README's set-up section, one command block each, in this order.
SETUP_PLATFORMS = ("linux", "macos")
# What a worker imports first for a notebook assignment, whose cells may plot (``autograder.worker.zygote``).
PLOTS = ("matplotlib",)
# The templates of `autograder new` hold a solution and a mutant: they would be the new assignment's secrets.
INSTRUCTOR_ONLY = ("autograder/templates/new/",)
REQUIREMENTS_HEADER = ("# What `autograder check` and `autograder zip` need here, pinned as the course grader pins",
                       "# them. Install torch first as README.md says (on Linux and WSL, the CPU build).")


class DistError(Exception):
    """A distribution that cannot be built from this checkout; the message says what to do."""


def pinned_requirements() -> list[str]:
    """The runtime requirements exactly as ``pyproject.toml`` pins them."""
    return list(course.read_toml(PYPROJECT)["project"]["dependencies"])


def torch_requirement() -> str:
    found = [d for d in pinned_requirements() if re.match(r"torch\b", d)]
    if len(found) != 1 or "==" not in found[0]:
        raise DistError(f"{PYPROJECT} must pin torch exactly once (torch==X.Y.Z); found {found or 'none'}")
    return found[0]


def requirements_txt(extras: tuple[str, ...] = ()) -> bytes:
    """The pinned requirements, then those of the optional groups ``extras``: what the Gradescope image installs."""
    optional = course.read_toml(PYPROJECT)["project"]["optional-dependencies"]
    lines = ["# The grader's pinned requirements (from its pyproject.toml).", *pinned_requirements()]
    for extra in extras:
        lines += [f"# {extra}: from the optional dependencies of the grader's pyproject.toml.", *optional[extra]]
    return ("\n".join(lines) + "\n").encode()


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    return _canonical(re.match(r"[A-Za-z0-9._-]+", requirement).group())


def student_requirements(harness_files: dict[str, bytes], loaded: list[course.Assignment]) -> list[str]:
    """What a student installs for ``loaded``, pinned as ``pyproject.toml`` pins it: the packages imported when the
    student copy's modules load (``harness_files``: ``check``, ``zip``, the worker, the public suites), and those the
    starter code imports; for a notebook, what the worker imports to plot and what opens one (the ``notebooks``
    group). A notebook's ``import otter`` brings otter without the grading extras the grader pins: a student's kernel
    only checks. Imports made inside functions are not counted (so the report's HTML escaping and NVML's GPU readings
    stay the grader's); tests/authoring/test_dist.py installs each zip with only these and checks the reference from
    it."""
    own = {Path(file).stem for assignment in loaded for file in assignment.files}
    sources = [data for key, data in harness_files.items() if key.endswith(".py")]
    for assignment in loaded:
        for file in assignment.files:
            path = assignment.skeleton_dir / file
            sources += _notebook_code(path) if path.suffix == ".ipynb" else [path.read_bytes()]
    providers = packages_distributions()
    wanted = {_canonical(dist) for module in third_party_imports(sources) - own
              for dist in providers.get(module, [module])}
    notebooks = any(file.endswith(".ipynb") for assignment in loaded for file in assignment.files)
    if notebooks:
        wanted |= set(PLOTS)
    pinned = [re.sub(r"\[[^\]]*\]", "", line, count=1) for line in pinned_requirements()
              if _requirement_name(line) in wanted]
    return pinned + (course.read_toml(PYPROJECT)["project"]["optional-dependencies"]["notebooks"] if notebooks else [])


def _notebook_code(path: Path) -> list[bytes]:
    """The code cells of a built notebook, IPython's magics and shell escapes blanked."""
    code = [cell for cell in json.loads(path.read_bytes())["cells"] if cell["cell_type"] == "code"]
    return [re.sub(r"(?m)^\s*[%!].*$", "", "".join(cell["source"])).encode() for cell in code]


def third_party_imports(sources: Iterable[bytes]) -> set[str]:
    """The top-level names of the modules that ``sources`` import when they load, other than the standard library's
    and this package's."""
    found = set()
    for source in sources:
        for node in _module_level(ast.parse(source).body):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"autograder", "__future__"}


def render(template: str, **values: object) -> bytes:
    """``templates/<template>`` with every ``@KEY@`` replaced by ``values[KEY]``."""
    text = (TEMPLATES / template).read_text()
    missing = sorted(set(PLACEHOLDER.findall(text)) - set(values))
    if missing:
        raise DistError(f"{TEMPLATES / template}: no value for {', '.join(missing)}")
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text).encode()


def tree(folder: Path, prefix: str) -> dict[str, bytes]:
    """Every file under ``folder`` (links followed, caches skipped) as ``prefix/relative path``."""
    files = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_file() and not SKIP & set(relative.parts) and path.suffix != ".pyc":
            files[f"{prefix}/{relative.as_posix()}"] = path.read_bytes()
    return files


def harness(names: list[str], hidden: list[str] = ()) -> dict[str, bytes]:
    """The ``autograder`` package with the suites of ``names`` only, and the ``hidden/`` folders of ``hidden``."""
    files = {}
    for key, data in tree(course.PACKAGE_DIR, "autograder").items():
        parts = key.split("/")
        if key.startswith(INSTRUCTOR_ONLY):
            continue
        if len(parts) > 3 and parts[1] == "suites":
            if parts[2] not in names or (parts[3] == "hidden" and parts[2] not in hidden):
                continue
        files[key] = data
    return files


def student_harness(names: list[str]) -> dict[str, bytes]:
    """The part of the package a student's ``check`` and ``zip`` run: the public suites of ``names`` and the
    modules that ``STUDENT_ENTRY_POINTS`` and those suites import (``imported_modules``), nothing else."""
    files = harness(names)
    suites = [key for key in files if key.startswith("autograder/suites/") and key.endswith(".py")]
    needed = imported_modules([*STUDENT_ENTRY_POINTS, *(key.removesuffix(".py").replace("/", ".") for key in suites)])
    return {key: data for key, data in files.items() if key.startswith("autograder/suites/")
            or key.endswith(".py") and _module_name(key) in needed}


def _module_name(key: str) -> str:
    """``autograder/worker/__init__.py`` -> ``autograder.worker``; ``autograder/cli.py`` -> ``autograder.cli``."""
    return key.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def imported_modules(entries: list[str]) -> set[str]:
    """``entries`` and every module of the package they import at module level, transitively, with their
    packages' ``__init__``. Imports inside functions are left out on purpose: that is how a module defers what
    only the instructor has (``runner`` imports the mutant catalogue only when grading against the reference)."""
    found, todo = set(), list(entries)
    while todo:
        name = todo.pop()
        path = _module_path(name)
        if name in found or path is None:
            continue
        found.add(name)
        todo += [".".join(name.split(".")[:depth]) for depth in range(1, name.count(".") + 1)]
        for node in _module_level(ast.parse(path.read_bytes(), str(path)).body):
            if isinstance(node, ast.Import):
                todo += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                todo += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return found


def _module_level(body: list[ast.stmt]):
    """The statements run when a module is imported: its body, and the blocks of its top-level ifs and trys."""
    for node in body:
        yield node
        if isinstance(node, ast.If | ast.Try):
            handlers = [handler.body for handler in getattr(node, "handlers", [])]
            for block in (node.body, node.orelse, *handlers, getattr(node, "finalbody", [])):
                yield from _module_level(block)


def _module_path(name: str) -> Path | None:
    """The file of module ``name`` of this package, or None (another package, or a name that is not a module)."""
    if name.split(".")[0] != "autograder":
        return None
    base = course.PACKAGE_DIR.joinpath(*name.split(".")[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def with_carried(names: list[str]) -> list[str]:
    """``names`` and every assignment they carry modules from (transitively), in course order.

    A later suite uses the earlier ones it carries from (positions runs masking's public checks on the
    carried masking.py, and borrows masking's mutants as fingerprints), so a distribution ships them too.
    """
    found, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo += course.load(name).carried.values()
    return sorted(found, key=lambda n: (course.load(n).order, n))


def _load(name: str, *, skeleton: bool) -> course.Assignment:
    assignment = course.load(name)
    if not assignment.has_reference:
        raise DistError(f"{name}: the reference in {assignment.solution_dir} is missing; distributions are built "
                        "from the instructor repository")
    if skeleton and not assignment.skeleton_dir.is_dir():
        raise DistError(f"{name}: {assignment.skeleton_dir} is missing; run `autograder build {name}` first")
    return assignment


def assignment_section(assignment: course.Assignment) -> str:
    """The student README's paragraph about one assignment: where to work, what to submit, what to copy in."""
    name = assignment.name
    lines = [f"### `{name}`: {assignment.title}", "",
             f"- Work in `{name}/`: complete every function that raises `NotImplementedError` (the docstrings give "
             "the shapes; the hint says where to start).",
             f"- Check with `autograder check {name} {name}/`; submit {_listing(assignment.files)} "
             f"(`autograder zip {name} {name}/`)."]
    for file, source in assignment.carried.items():
        lines.append(f"- `{file}` is your own file from the `{source}` assignment: copy your finished "
                     f"`{source}/{file}` over `{name}/{file}` before you check or submit (the copy here is the "
                     "unfinished starter code). It is graded again as part of this assignment.")
    return "\n".join(lines)


def _listing(files: list[str]) -> str:
    return ", ".join(f"`{f}`" for f in files)


def student_files(names: list[str]) -> dict[str, bytes]:
    """The student distribution of ``names`` (see the module docstring)."""
    loaded = [_load(name, skeleton=True) for name in names]
    folder = COURSE_FOLDER if len(names) > 1 else f"{COURSE_FOLDER}-{names[0]}"
    title = "Transformer assignments" if len(names) > 1 else f"Transformer assignments: {loaded[0].title}"
    notebooks = any(file.endswith(".ipynb") for assignment in loaded for file in assignment.files)
    readme = render("student_README.md", TITLE=title, PYTHONS=" to ".join(student_pythons()), TORCH=torch_requirement(),
                    TORCH_INDEX=TORCH_CPU_INDEX, EXAMPLE=names[0],
                    NOTEBOOKS=render("student_README_notebooks.md").decode() if notebooks else "",
                    ASSIGNMENTS="\n\n".join(assignment_section(a) for a in loaded))
    harness_files = student_harness(with_carried(names))
    requirements = student_requirements(harness_files, loaded)
    files = {"README.md": readme, "requirements.txt": "\n".join([*REQUIREMENTS_HEADER, *requirements, ""]).encode(),
             "pyproject.toml": student_pyproject(requirements), **harness_files}
    for assignment in loaded:
        files.update(tree(assignment.skeleton_dir, assignment.name))
    return {f"{folder}/{key}": data for key, data in files.items()}


def setup_commands(readme: str) -> dict[str, list[str]]:
    """The commands of a student README's set-up section, by platform (``SETUP_PLATFORMS``, in the README's order):
    what tests and ``bench/student_install.py`` run, so the README says what was run."""
    section = readme.split("## Set up (once)", 1)[-1].split("\n## ", 1)[0]
    blocks = [block.strip().splitlines() for block in re.findall(r"^```\n(.*?)^```$", section, re.M | re.S)]
    if len(blocks) != len(SETUP_PLATFORMS):
        raise DistError(f"the student README's set-up section has {len(blocks)} command blocks, not one for each of "
                        f"{', '.join(SETUP_PLATFORMS)}")
    return dict(zip(SETUP_PLATFORMS, blocks, strict=True))


def student_pythons() -> tuple[str, str]:
    """The oldest and the newest Python that ``pyproject.toml``'s ``requires-python`` (``>=3.A,<3.B``) allows."""
    allowed = course.read_toml(PYPROJECT)["project"]["requires-python"]
    found = re.fullmatch(r">=3\.(\d+),\s*<3\.(\d+)", allowed)
    if found is None:
        raise DistError(f"{PYPROJECT}: requires-python must read >=3.A,<3.B (found {allowed!r})")
    return f"3.{found[1]}", f"3.{int(found[2]) - 1}"


def student_pyproject(requirements: list[str]) -> bytes:
    """The student copy's ``pyproject.toml``: the package's name, version and Pythons, the console script, and
    ``requirements`` (no comment of the grader's own: those are about its secrets)."""
    project = course.read_toml(PYPROJECT)["project"]
    return render("student_pyproject.toml", NAME=project["name"], VERSION=project["version"],
                  REQUIRES_PYTHON=project["requires-python"],
                  DEPENDENCIES="\n".join(f"    {json.dumps(line)}," for line in requirements))


def gradescope_files(name: str, secret: str | None = None) -> dict[str, bytes]:
    """The Gradescope autograder of ``name`` (see the module docstring); ``secret`` replaces ``hidden/SECRET``."""
    assignment = _load(name, skeleton=False)
    stated, pythons = container.settings(name), student_pythons()
    common = {"ASSIGNMENT": name, "PREFIX": RUNTIME_PREFIX, "PYTHON": PYTHON, "STUDENT_UID": UID_POOL.start,
              "BUDGET": stated.budget, "TIMEOUT_MIN": stated.timeout_min, "PYTHONS": " to ".join(pythons)}
    files = {
        "setup.sh": render("setup.sh", TORCH=torch_requirement(), TORCH_INDEX=TORCH_CPU_INDEX,
                           OLDEST=_version_tuple(pythons[0]), NEWEST=_version_tuple(pythons[1]), **common),
        "run_autograder": render("run_autograder", **common),
        "README.md": render("gradescope_README.md", TITLE=assignment.title, FILES=_listing(assignment.files),
                            TORCH=torch_requirement(), SUBMISSION_TIMEOUT=f"{assignment.submission_timeout:g}",
                            HARD_LIMIT=f"{assignment.submission_timeout + HARD_LIMIT_MARGIN:g}",
                            CPUS=f"{stated.cpus:g}", MEMORY=container.size_label(stated.memory_mb),
                            MEASURED=measured(stated), **common),
        "requirements.txt": requirements_txt(),
        "pyproject.toml": PYPROJECT.read_bytes(),
    }
    files.update(harness(with_carried([name]), hidden=[name]))
    for needed in map(course.load, with_carried([name])):
        files.update(tree(needed.solution_dir, f"solutions/{needed.name}"))
        if needed.mutants_dir.is_dir():
            files.update(tree(needed.mutants_dir, f"tests/mutants/{needed.name}"))
    if secret is not None:
        files[f"autograder/suites/{name}/hidden/SECRET"] = f"{secret}\n".encode()
    return files


def _version_tuple(version: str) -> str:
    """``3.10`` as Python's ``sys.version_info`` compares it: ``3, 10``."""
    return ", ".join(version.split("."))


def measured(stated: container.Settings) -> str:
    """What the settings were measured from, as the README says it."""
    if stated.seconds is None:
        return f"These are Gradescope's defaults: this assignment was not measured ({stated.measured})."
    return (f"Measured: the bundled reference, graded at this size, took {stated.seconds:.0f} s, the container's "
            f"memory peaking at {stated.peak_mb:.0f} MB ({stated.measured}).")


def write_zip(files: dict[str, bytes], path: Path) -> Path:
    """Write ``files`` as a reproducible zip (``handin.write_zip``), the Gradescope scripts executable."""
    return handin.write_zip(files, path, EXECUTABLES)


def build_student(names: list[str] | None, out: Path, secrets: leaks.Secrets | None = None) -> list[Path]:
    """Write ``student-NAME.zip`` per assignment (and ``student-all.zip`` when ``names`` is None).

    Every zip is scanned first; on any finding nothing is written and ``leaks.LeakError`` says what and why.
    """
    selected = names or course.names()
    planned = {f"student-{name}.zip": student_files([name]) for name in selected}
    if not names:
        planned["student-all.zip"] = student_files(selected)
    secrets = secrets or leaks.collect()
    for zip_name, files in planned.items():
        check_leaks(files, out / zip_name, secrets)
    return [write_zip(files, out / zip_name) for zip_name, files in planned.items()]


def check_leaks(files: dict[str, bytes], target: Path, secrets: leaks.Secrets) -> None:
    """Raise ``leaks.LeakError`` (naming ``target``, every file and why) when ``files`` would leak anything."""
    found = leaks.scan(files, secrets)
    if found:
        raise leaks.LeakError(str(target), found)


def build_gradescope(names: list[str], out: Path, secret: str | None = None) -> list[Path]:
    """Write ``gradescope-NAME.zip`` for each of ``names``."""
    return [write_zip(gradescope_files(name, secret), out / f"gradescope-{name}.zip") for name in names]
