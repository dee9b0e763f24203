"""Staging what students hand in."""

import os
import zipfile

import pytest

from autograder import submission, trees
from autograder.submission import SubmissionError, stage


def make_zip(path, entries):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def test_folder_with_nested_root_and_junk(tmp_path):
    source = tmp_path / "alice"
    (source / "hw" / "__pycache__").mkdir(parents=True)
    (source / "hw" / "masking.py").write_text("x = 1\n")
    (source / "hw" / "__pycache__" / "masking.cpython-311.pyc").write_bytes(b"junk")
    os.symlink("/etc/passwd", source / "hw" / "passwd")
    root = stage(source, ["masking.py"], tmp_path / "work")
    assert (root / "masking.py").read_text() == "x = 1\n"
    assert not (root / "passwd").exists() and not (root / "__pycache__").exists()


def test_links_are_followed_only_in_the_repository_reference_trees(tmp_path):
    from autograder.course import REPO_ROOT
    from autograder.submission import _copy_folder, _trusted

    assert _trusted(REPO_ROOT / "solutions" / "masking") and _trusted(REPO_ROOT / "examples" / "masking" / "reference")
    assert not _trusted(tmp_path) and not _trusted(REPO_ROOT / "examples" / "masking" / "partly_wrong")
    source = tmp_path / "linked"
    source.mkdir()
    os.symlink(REPO_ROOT / "solutions" / "masking" / "masking.py", source / "masking.py")
    _copy_folder(source, tmp_path / "followed", follow_links=True)
    assert (tmp_path / "followed" / "masking.py").read_text().startswith('"""Masking')
    with pytest.raises(SubmissionError, match="empty"):  # a student's link is dropped, not followed
        stage(source, ["masking.py"], tmp_path / "work")


def test_zip_of_a_folder(tmp_path):
    entries = {"Submission/masking.py": "y = 2\n", "__MACOSX/Submission/._masking.py": "j"}
    archive = make_zip(tmp_path / "s.zip", entries)
    root = stage(archive, ["masking.py"], tmp_path / "work")
    assert (root / "masking.py").read_text() == "y = 2\n"


@pytest.mark.parametrize("entries, message", [
    ({"../evil.py": "x"}, "unsafe entry"),
    ({"/abs/evil.py": "x"}, "unsafe entry"),
    ({"C:/evil.py": "x"}, "unsafe entry"),
])
def test_unsafe_zips_are_refused_before_extraction(tmp_path, entries, message):
    archive = make_zip(tmp_path / "s.zip", {"masking.py": "x", **entries})
    with pytest.raises(SubmissionError, match=message):
        stage(archive, ["masking.py"], tmp_path / "work")
    assert not (tmp_path / "evil.py").exists()


def test_zip_with_a_symlink_is_refused(tmp_path):
    archive = tmp_path / "s.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        info = zipfile.ZipInfo("masking.py")
        info.external_attr = (0o120777 << 16)
        handle.writestr(info, "/etc/shadow")
    with pytest.raises(SubmissionError, match="symbolic link"):
        stage(archive, ["masking.py"], tmp_path / "work")


def test_corrupted_zip(tmp_path):
    archive = tmp_path / "s.zip"
    archive.write_bytes(b"PK\x03\x04 this is not a zip")
    with pytest.raises(SubmissionError, match="not a readable zip"):
        stage(archive, ["masking.py"], tmp_path / "work")


def test_missing_file_suggests_a_rename(tmp_path):
    source = tmp_path / "bob"
    source.mkdir()
    (source / "Masking (1).py").write_text("x")
    with pytest.raises(SubmissionError, match="rename it to 'masking.py'"):
        stage(source, ["masking.py"], tmp_path / "work")


def test_empty_folder_and_missing_path(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SubmissionError, match="empty"):
        stage(tmp_path / "empty", ["masking.py"], tmp_path / "work")
    with pytest.raises(SubmissionError, match="does not exist"):
        stage(tmp_path / "nowhere", ["masking.py"], tmp_path / "work2")


@pytest.mark.parametrize(("name", "message"), [
    ("torch.py", "the name of the Python library torch"), ("numpy", "the name of the Python library numpy"),
    ("sitecustomize.py", "runs at start-up"), ("usercustomize.py", "runs at start-up"),
    ("hook.pth", "runs at start-up"), ("json.py", "the name of the Python library json"),
])
def test_files_that_would_replace_a_library_or_run_at_start_up_are_refused(tmp_path, name, message):
    source = tmp_path / "sub"
    source.mkdir()
    (source / "masking.py").write_text("x = 1\n")
    target = source / name
    if "." in name:
        target.write_text("import os\n")
    else:
        target.mkdir()
        (target / "__init__.py").write_text("")
    with pytest.raises(SubmissionError, match=message):
        stage(source, ["masking.py"], tmp_path / "work")


def test_the_staged_copy_is_one_folder_named_submission(tmp_path):
    source = tmp_path / "alice"
    (source / "deep" / "er" / "data").mkdir(parents=True)
    (source / "deep" / "er" / "masking.py").write_text("x = 1\n")
    (source / "deep" / "er" / "data" / "notes.txt").write_text("n")
    root = stage(source, ["masking.py"], tmp_path / "work")
    assert root == tmp_path / "work" / "submission" and (root / "data" / "notes.txt").is_file()
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["submission"]


def test_links_inside_a_submission_never_decide_what_it_is(tmp_path):
    """A masking folder holding a link named positions.py is not taken for positions (nor graded as one)."""
    from autograder.batch.discovery import assignment_of, discover
    from autograder.course import REPO_ROOT

    source = tmp_path / "sub"
    source.mkdir()
    (source / "masking.py").write_text("x = 1\n")
    os.symlink(REPO_ROOT / "solutions" / "positions" / "positions.py", source / "positions.py")
    assert assignment_of(source) == "masking"
    only_links = tmp_path / "links"
    only_links.mkdir()
    os.symlink(REPO_ROOT / "solutions" / "masking" / "masking.py", only_links / "masking.py")
    assert assignment_of(only_links) is None
    assert [job.assignment for job in discover([REPO_ROOT / "examples" / "masking"])].count("masking") == 6


def test_not_implemented_is_said_only_of_the_skeletons_stubs():
    from autograder.grading.proxy import StudentError

    stub = StudentError("masking.causal_mask(...)", {"type": "NotImplementedError",
                                                      "message": "causal_mask: start from torch.tril"})
    assert str(stub) == "masking.causal_mask(...) is not implemented yet. Hint: start from torch.tril"
    inner = StudentError("masking.combined_mask(...)", {"type": "NotImplementedError",
                                                         "message": "causal_mask is not implemented yet"})
    assert str(inner) == "masking.combined_mask(...) calls causal_mask, which is not implemented yet."
    torch_error = StudentError("masking.masked_softmax(...)", {"type": "NotImplementedError", "message":
                                                                "Cannot copy out of meta tensor; no data!",
                                                                "traceback": 'File "masking.py", line 3'})
    assert "not implemented yet" not in str(torch_error) and "Cannot copy out of meta tensor" in str(torch_error)


def test_a_file_error_says_which_files_graded_code_can_open():
    """Outside the allow-list a read fails (Landlock's PermissionError, or nothing there under namespaces): the
    feedback says what can be opened, not only the error."""
    from autograder.grading.proxy import FILES_NOTE, StudentError

    for kind in ("PermissionError", "FileNotFoundError"):
        error = StudentError("importing masking.py", {"type": kind, "message": "[Errno 13] '/home/ada/data.pt'"})
        assert str(error).endswith(FILES_NOTE) and "/home/ada/data.pt" in str(error)
    assert FILES_NOTE not in str(StudentError("masking.causal_mask(...)", {"type": "ValueError", "message": "x"}))


def test_packed_submissions_stage_as_their_sources(tmp_path):
    """What a Ray task unpacks stages as the source would here: a folder's links dropped (followed in the reference
    trees), a zip and any other file sent as they are."""
    from autograder.course import REPO_ROOT
    from autograder.submission import pack, unpack

    folder = tmp_path / "alice"
    (folder / "hw").mkdir(parents=True)
    (folder / "hw" / "masking.py").write_text("x = 1\n")
    os.symlink("/etc/passwd", folder / "hw" / "passwd")
    archive = make_zip(tmp_path / "bob.zip", {"hw/masking.py": "y = 2\n"})
    (tmp_path / "notes.txt").write_text("not a submission")
    sources = [folder, archive, tmp_path / "notes.txt", REPO_ROOT / "solutions" / "positions"]
    for index, source in enumerate(sources):
        required = ["positions.py", "masking.py"] if source.name == "positions" else ["masking.py"]
        unpacked = unpack(*pack(source), tmp_path / f"there-{index}")
        try:
            here = stage(source, required, tmp_path / f"here-{index}")
        except SubmissionError as refused:
            with pytest.raises(SubmissionError, match=str(refused).split(" ")[0]):
                stage(unpacked, required, tmp_path / f"staged-{index}")
            continue
        there = stage(unpacked, required, tmp_path / f"staged-{index}")
        assert sorted(p.relative_to(there) for p in there.rglob("*")) == sorted(p.relative_to(here)
                                                                               for p in here.rglob("*"))
        for path in here.rglob("*"):
            assert path.is_dir() or path.read_bytes() == (there / path.relative_to(here)).read_bytes()


def test_a_folder_deeper_or_wider_than_the_limits_is_refused_as_it_is_read(tmp_path):
    from support.machine import chain

    deep = tmp_path / "deep"
    deep.mkdir()
    (deep / "masking.py").write_text("x = 1\n")
    chain(deep, 5000)
    try:
        with pytest.raises(SubmissionError, match=f"more than {submission.MAX_DEPTH} levels of folders"):
            stage(deep, ["masking.py"], tmp_path / "work-deep")
    finally:
        trees.remove(deep)  # pytest's own clean-up of old temporary folders would raise RecursionError on it
    wide = tmp_path / "wide"
    for number in range(submission.MAX_FILES + 1):
        (wide / str(number)).mkdir(parents=True)
    (wide / "masking.py").write_text("x = 1\n")
    with pytest.raises(SubmissionError, match=f"more than {submission.MAX_FILES} files and folders"):
        stage(wide, ["masking.py"], tmp_path / "work-wide")


def test_a_deep_zip_and_a_zip_bomb_are_refused_before_extraction(tmp_path):
    deep = make_zip(tmp_path / "deep.zip", {"masking.py": "x", "a/" * (submission.MAX_DEPTH + 1) + "f.py": "x"})
    with pytest.raises(SubmissionError, match=f"more than {submission.MAX_DEPTH} levels of folders"):
        stage(deep, ["masking.py"], tmp_path / "work-deep")
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("masking.py", "x = 1\n")
        archive.writestr("zeros.bin", bytes(8 << 20))
    with pytest.raises(SubmissionError, match="zeros.bin.*more than 100 times"):
        stage(bomb, ["masking.py"], tmp_path / "work-bomb")
    assert not (tmp_path / "work-deep" / "unpacked").exists() and not (tmp_path / "work-bomb" / "unpacked").exists()


def test_a_notebook_too_large_to_parse_is_refused_unread(tmp_path, monkeypatch):
    from autograder import notebook_cells

    monkeypatch.setattr(notebook_cells, "MAX_BYTES", 1000)
    folder = tmp_path / "large"
    folder.mkdir()
    (folder / "attention.ipynb").write_text('{"cells": [], "padding": "' + "x" * 1000 + '"}')
    with pytest.raises(SubmissionError, match="attention.ipynb is 0 MB, more than the 0 MB a code file or notebook"):
        stage(folder, ["attention.ipynb"], tmp_path / "work")
    with pytest.raises(notebook_cells.NotebookUnreadable, match="Clear All Outputs"):
        notebook_cells.read_notebook(str(folder / "attention.ipynb"))


def test_a_deeply_nested_notebook_is_a_message_not_a_crash(tmp_path):
    from autograder.grading.answers import NotebookError, cells
    from autograder.notebook_cells import NotebookUnreadable, read_notebook

    nested = tmp_path / "attention.ipynb"
    nested.write_text('{"cells": [], "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(NotebookUnreadable, match="nested too deeply"):
        read_notebook(str(nested))
    with pytest.raises(NotebookError, match="nested too deeply"):
        cells(nested)


@pytest.mark.parametrize("entries", [submission.MAX_FILES + 1, 0xFFFF + 1])  # the second needs zip64's end record
def test_a_zip_of_too_many_entries_is_refused_before_its_directory_is_read(tmp_path, monkeypatch, entries):
    many = tmp_path / "many.zip"
    with zipfile.ZipFile(many, "w") as archive:
        for number in range(entries):
            archive.writestr(str(number), b"")
    monkeypatch.setattr(submission.zipfile, "ZipFile", None)  # reading the directory would fail differently
    with pytest.raises(SubmissionError, match=f"the zip holds {entries} entries"):
        stage(many, ["masking.py"], tmp_path / "work")
