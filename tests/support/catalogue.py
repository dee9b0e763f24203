"""The hostile catalogue: submissions that attack the grader, one file per attack in ``tests/hostile/<assignment>/``.

A case file holds literals only (read with ``ast``, never imported): its docstring (the first line names the attack),
``CLASS`` (which class of attack: the isolation issue's eight and the ones found since), ``BASE`` (what the attack is
added to: ``skeleton``, ``reference`` or ``mutant:NAME``), ``CODE`` (appended to ``TARGET``, by default the
assignment's first own file; later definitions win), ``FILES`` (more files: text, ``{"link": path}`` for a link, or
``{"append": text, "times": n}`` for text repeated after what the file holds: a large file the case need not spell),
``EXPECT`` (the score it must get: ``zero``, ``below`` the maximum, ``full``, ``base`` (no more than its base earns
alone) or ``any``), texts its feedback must show (``PRESENT``) or must not (``ABSENT``), ``RUNTIME = True`` for
an attack on the runtime tests (the others are graded without them: they start the reference's own worker), and
``RETRAINING = True`` for one on the lm retraining test (the others, and the bases, are graded without it: the
reference's retraining takes minutes), and ``MODES`` (default both) the isolation modes that grade it, with
``MODES_WHY`` saying why one is enough, and ``SUBMITTED_AS`` (default ``@LABEL@``, the case's label) the name of the
folder it is handed in as, which the batch shows as the submission's name.
``CODE`` may name ``@REPO@`` (the checkout), ``@MARKER@`` (a token unique to the case: another submission that
shows it has read this one), ``@COPY@`` (a second checkout's solutions on disk) and ``@PORT@`` (a local TCP port that
records who connects).

An attack on the batch itself (its names, an export's layout and metadata, a resume) says how the submission is
handed in: ``HANDED_IN`` maps paths under the case's folder to ``zip`` or ``folder`` (the submission written there
so), ``BESIDE`` holds files at the folder's top (an export's ``submission_metadata.yml``), ``RESUMED`` a second
``handed_in`` and ``beside`` given afterwards to ``grade --resume`` over the first's results; ``ROWS`` is the
gradebook it must leave (each results folder and the student it names, "" for none) and ``SAID`` what the command must
print. Such a case is graded by ``autograder grade`` in a results folder of its own
(tests/sandbox/test_hostile_catalogue.py), and ``EXPECT``, ``PRESENT`` and ``ABSENT`` apply to each of its results.
"""

from __future__ import annotations

import ast
import json
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder import course
from autograder.grading import mutants

HOSTILE = Path(__file__).parent.parent / "hostile"
EXPECTATIONS = ("zero", "below", "full", "base", "any")
# The isolation modes tests/sandbox/test_hostile_catalogue.py grades the catalogue in.
MODES = ("namespaces", "permissions")


@dataclass
class Case:
    """One hostile submission (see the module docstring)."""

    assignment: str
    name: str
    title: str
    kind: str
    base: str = "reference"
    code: str = ""
    target: str = ""
    files: dict = field(default_factory=dict)
    expect: str = "any"
    present: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    runtime: bool = False
    retraining: bool = False
    modes: tuple[str, ...] = MODES
    modes_why: str = ""
    submitted_as: str = "@LABEL@"
    # An attack on the batch itself (the module docstring): how it is handed in, and what the batch must leave.
    handed_in: dict = field(default_factory=dict)
    beside: dict = field(default_factory=dict)
    resumed: dict = field(default_factory=dict)
    rows: dict = field(default_factory=dict)
    said: list[str] = field(default_factory=list)

    def hand_in(self, folder: Path, values: dict[str, str], resumed: bool = False) -> Path:
        """The folder given to ``grade`` for an attack on the batch (``RESUMED``'s with ``resumed``): the submission
        written under ``folder/<label>[-resumed]`` at each path of ``handed_in``, zipped or as a folder, and the files
        ``beside`` at its top."""
        layout = self.resumed if resumed else {"handed_in": self.handed_in, "beside": self.beside}
        top = folder / (f"{self.label}-resumed" if resumed else self.label)
        one = self.materialize(folder / f"{top.name}-written", values)
        for path, kind in layout["handed_in"].items():
            (top / path).parent.mkdir(parents=True, exist_ok=True)
            if kind == "folder":
                shutil.copytree(one, top / path)
                continue
            with zipfile.ZipFile(top / path, "w") as archive:
                for file in sorted(one.rglob("*")):
                    if file.is_file():
                        archive.write(file, file.relative_to(one).as_posix())
        for name, text in layout.get("beside", {}).items():
            (top / name).write_text(text)
        return top

    @property
    def label(self) -> str:
        return f"{self.assignment}-{self.name}"

    @property
    def folder(self) -> str:
        """The name of the folder it is handed in as (``SUBMITTED_AS``)."""
        return self.submitted_as.replace("@LABEL@", self.label)

    @property
    def marker(self) -> str:
        return f"hostile-marker-{self.label}"

    def materialize(self, folder: Path, values: dict[str, str]) -> Path:
        """Write the submission into ``folder/<self.folder>``; ``values`` fill the ``@NAME@`` placeholders."""
        target = folder / self.folder
        write_base(self.assignment, self.base, target)
        assignment = course.load(self.assignment)
        own = target / (self.target or assignment.own_files[0])
        code = self.code
        for key, value in {**values, "MARKER": self.marker}.items():
            code = code.replace(f"@{key}@", value)
        if code and own.suffix == ".ipynb":  # a notebook gets the code as one more cell
            notebook = json.loads(own.read_text())
            notebook["cells"].append({"cell_type": "code", "execution_count": None, "id": self.name[:60],
                                      "metadata": {}, "outputs": [], "source": f"# {self.marker}\n{code}"})
            own.write_text(json.dumps(notebook))
        elif code:
            own.write_text(own.read_text() + f"\n# {self.marker}\n" + code)
        for name, content in self.files.items():
            path = target / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, dict) and "append" in content:
                with open(path, "a") as handle:
                    handle.write(content["append"] * content["times"])
                continue
            path.unlink(missing_ok=True)
            if isinstance(content, dict):
                path.symlink_to(content["link"].replace("@REPO@", values["REPO"]))
            else:
                path.write_text(content)
        return target


def write_base(name: str, base: str, target: Path) -> Path:
    """A submission folder holding ``base``: the reference, the untouched skeleton, or a mutant (without the canary
    line that marks the mutant files as hidden: here it stands for a student's own slow or wrong code)."""
    assignment = course.load(name)
    if base.startswith("mutant:"):
        mutant = next(m for m in mutants.catalog(assignment) if m.name == base.removeprefix("mutant:"))
        mutant.materialize(target)
        for path in target.rglob("*.py"):
            path.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                                    if course.CANARY not in line))
        return target
    source = {"reference": assignment.solution_dir, "skeleton": assignment.skeleton_dir}[base]
    shutil.copytree(source, target, symlinks=False)
    return target


def load() -> list[Case]:
    cases = []
    for path in sorted(HOSTILE.glob("*/*.py")):
        tree = ast.parse(path.read_text())
        values = {node.targets[0].id.lower(): ast.literal_eval(node.value) for node in tree.body
                  if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
        doc = ast.get_docstring(tree) or ""
        case = Case(assignment=path.parent.name, name=path.stem, title=doc.splitlines()[0] if doc else path.stem,
                    kind=values.pop("class"), **values)
        if case.expect not in EXPECTATIONS:
            raise ValueError(f"{path}: EXPECT must be one of {EXPECTATIONS}")
        if not case.modes or set(case.modes) - set(MODES):  # a misspelt mode would grade the case in neither
            raise ValueError(f"{path}: MODES must name one or both of {MODES}")
        if set(MODES) - set(case.modes) and not case.modes_why:
            raise ValueError(f"{path}: MODES grades it in fewer than both modes: say why in MODES_WHY")
        cases.append(case)
    return cases
