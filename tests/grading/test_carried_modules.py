"""Carried modules: a later assignment's submission holds the student's own copy of an earlier assignment's file
(positions carries masking.py). Parsing, staging messages, detection, mutants, loading, the static scan, and the
notes a grading run attaches when the carried file is the cause."""

from __future__ import annotations

import sys
import zipfile
from dataclasses import asdict

import pytest
import torch

from autograder import course
from autograder.batch.discovery import assignment_of
from autograder.grading import Parts, mutants, run_check, staticcheck, trusted_import
from autograder.grading.runner import carried_notes
from autograder.sandbox.config import Limits
from autograder.submission import SubmissionError, stage

POSITIONS = course.load("positions")
MASKING = course.load("masking")


def write_suite(root, name: str, modules: str) -> None:
    (root / name).mkdir(parents=True)
    limits = "".join(f"{key} = {value}\n" for key, value in asdict(Limits()).items())
    (root / name / "assignment.toml").write_text(f'title = "{name}"\nmodules = {modules}\n\n[limits]\n{limits}')


def folder(tmp_path, name: str, files: list[str]):
    path = tmp_path / name
    path.mkdir()
    for file in files:
        (path / file).write_text("x = 1\n")
    return path


def test_assignment_tells_own_files_from_carried_ones():
    assert POSITIONS.files == ["masking.py", "positions.py", "positions.ipynb"]
    assert POSITIONS.own_files == ["positions.py", "positions.ipynb"]
    assert POSITIONS.carried == {"masking.py": "masking"}
    assert MASKING.carried == {} and MASKING.own_files == MASKING.files == ["masking.py"]


def test_a_carried_module_must_be_an_own_module_of_an_existing_assignment(tmp_path, monkeypatch):
    monkeypatch.setattr(course, "SUITES_DIR", tmp_path)
    write_suite(tmp_path, "first", '[{ name = "first" }]')
    write_suite(tmp_path, "good", '[{ name = "first", carried = "first" }, { name = "good" }]')
    write_suite(tmp_path, "nowhere", '[{ name = "first", carried = "missing" }, { name = "nowhere" }]')
    write_suite(tmp_path, "stranger", '[{ name = "other", carried = "first" }, { name = "stranger" }]')
    assert course.load("good").carried == {"first.py": "first"}
    with pytest.raises(course.AssignmentError, match="carried from 'missing', which is not an assignment"):
        course.load("nowhere")
    with pytest.raises(course.AssignmentError, match=r"'first' does not have it among its own modules \(first\)"):
        course.load("stranger")


def test_a_missing_carried_file_names_the_assignment_it_comes_from(tmp_path):
    source = folder(tmp_path, "alice", ["positions.py", "positions.ipynb"])
    with pytest.raises(SubmissionError) as caught:
        stage(source, POSITIONS.files, tmp_path / "work", POSITIONS.carried)
    message = str(caught.value)
    assert message.startswith("the submission has no masking.py")
    assert "masking.py is your file from the masking assignment, which this one builds on: copy it" in message


def test_a_missing_file_is_not_confused_with_another_required_file(tmp_path):
    """positions.py is not a misnamed positions.ipynb."""
    source = folder(tmp_path, "bob", ["positions.py", "masking.py"])
    with pytest.raises(SubmissionError) as caught:
        stage(source, POSITIONS.files, tmp_path / "work", POSITIONS.carried)
    assert "no positions.ipynb" in str(caught.value) and "rename" not in str(caught.value)
    near = folder(tmp_path, "carol", ["positions.py", "masking.py", "Positions (1).ipynb"])
    with pytest.raises(SubmissionError, match="rename it to 'positions.ipynb'"):
        stage(near, POSITIONS.files, tmp_path / "work2", POSITIONS.carried)


@pytest.mark.parametrize("files, expected", [
    (["masking.py"], "masking"),
    (["masking.py", "positions.py", "positions.ipynb"], "positions"),
    (["masking.py", "positions.py"], "positions"),  # the notebook is missing: still positions, staging says so
    (["positions.py", "positions.ipynb"], "positions"),  # masking.py is missing: idem
    (["notes.txt"], None),
])
def test_detect_decides_by_own_files(tmp_path, files, expected):
    assert assignment_of(folder(tmp_path, "submission", files)) == expected
    archive = tmp_path / "submission.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for file in files:
            handle.writestr(f"work/{file}", "x = 1\n")
    assert assignment_of(archive) == expected


def test_mutants_target_own_files_and_borrow_the_carried_assignments_mutants(tmp_path):
    stray = tmp_path / "stray.py"
    stray.write_text('"""A mutant of the carried file."""\n# target: masking.py\n')
    with pytest.raises(mutants.MutantError, match="never a file carried"):
        mutants.Mutant(POSITIONS, stray).target  # noqa: B018
    own = mutants.catalog(POSITIONS)
    assert own and all(m.origin is None and m.target in POSITIONS.own_files for m in own)
    borrowed = [m for m in mutants.fingerprints(POSITIONS) if m.origin is not None]
    assert {m.name for m in borrowed} == {m.name for m in mutants.catalog(MASKING)}
    no_scaling = next(m for m in borrowed if m.name == "no_scaling")
    assert no_scaling.target == "masking.py"
    assert no_scaling.description.startswith("in your masking.py (from the masking assignment): The attention scores")


def test_materialize_copies_the_linked_carried_file(tmp_path):
    assert (POSITIONS.solution_dir / "masking.py").is_symlink()
    mutant = next(m for m in mutants.fingerprints(POSITIONS) if m.name == "no_scaling")
    built = mutant.materialize(tmp_path / "built")
    copied = built / "masking.py"
    assert not copied.is_symlink() and "# ---- mutant no_scaling ----" in copied.read_text()
    assert (MASKING.solution_dir / "masking.py").read_text() in copied.read_text()
    assert "mutant" not in (MASKING.solution_dir / "masking.py").read_text()  # the source is untouched


def test_loading_imports_the_carried_module_from_the_same_folder():
    before = {name: sys.modules.get(name) for name in ("masking", "positions")}
    reference = trusted_import.load(POSITIONS.solution_dir, POSITIONS.modules)
    assert issubclass(reference.positions.RotaryCausalSelfAttention, reference.masking.CausalSelfAttention)
    assert {name: sys.modules.get(name) for name in ("masking", "positions")} == before
    mutant = next(m for m in mutants.fingerprints(POSITIONS) if m.name == "no_scaling").implementation
    assert mutant.masking is not reference.masking
    q = k = v = torch.randn(1, 3, 4, generator=torch.Generator().manual_seed(0))
    rotary = [impl.positions.RotaryCausalSelfAttention(4, 1) for impl in (reference, mutant)]
    rotary[1].load_state_dict(rotary[0].state_dict())
    assert not torch.allclose(rotary[0](q), rotary[1](q))  # the borrowed mistake reaches the later module
    assert torch.allclose(mutant.masking.scaled_dot_product_attention(q, k, v)[1],
                          torch.softmax(q @ k.transpose(-2, -1), dim=-1))


def test_notebooks_of_mutants_run_on_first_use():
    mutant = mutants.catalog(POSITIONS)[0].implementation
    assert "positions_notebook" not in vars(mutant) and "positions_notebook" in vars(mutant)["_deferred"]
    notebook = mutant.positions_notebook
    assert notebook.apply_rope is mutant.positions.apply_rope  # its imports resolve to the mutant's own modules
    assert "positions_notebook" in vars(mutant) and "positions_notebook" not in sys.modules


def test_the_static_scan_covers_carried_files(tmp_path):
    (tmp_path / "masking.py").write_text("import torch.nn.functional as F\n\n\n"
                                         "def scaled_dot_product_attention(q, k, v):\n"
                                         "    return F.scaled_dot_product_attention(q, k, v), None\n")
    (tmp_path / "positions.py").write_text("x = 1\n")
    found = staticcheck.scan(tmp_path, POSITIONS.files, POSITIONS.forbidden)
    assert found == {"scaled_dot_product_attention": [
        "masking.py, line 5: uses torch.nn.functional.scaled_dot_product_attention"]}


def test_a_load_error_in_a_carried_file_points_at_its_assignment():
    broken = 'importing masking.py, positions.py raised SyntaxError: invalid syntax\n  File "masking.py", line 3\n'
    assert carried_notes(POSITIONS, broken) == [
        "The error is in masking.py, your file from the masking assignment, which this one builds on: fix it there "
        "(`autograder check masking` runs its public tests) and copy it into this submission again."]
    assert carried_notes(POSITIONS, broken.replace('"masking.py"', '"positions.py"')) == []


def test_run_check_runs_another_suites_test_with_its_fixtures():
    def check(value, parts):
        with parts("is positive"):
            assert value > 0, "not positive"
        with parts("is even"):
            assert value % 2 == 0, "odd"

    run_check(check, value=4)
    with pytest.raises(AssertionError, match="FAILED: is even") as caught:
        run_check(check, value=3, unused=None)
    assert "passed: is positive" in str(caught.value)
    with pytest.raises(TypeError, match=r"needs the fixtures \['value'\]"):
        run_check(check, other=1)
    assert Parts().all_passed
