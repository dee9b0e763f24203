"""The similarity check's index (``similarity.candidates``) finds what comparing all pairs finds, and its measure is
copydetect's: on a small class of masking submissions (the reference, the bundled examples, some mutants) with a
planted copy of one, edited as a student would hide it (``classmates.edited``: names, comments, order)."""

from __future__ import annotations

import itertools
import random
import shutil

import pytest
from copydetect import CodeFingerprint, compare_files
from support.classmates import bases, edit_folder

from autograder import course
from autograder.report import similarity

MUTANTS = ("mutant-no_scaling", "mutant-softmax_wrong_axis", "mutant-mask_wrong_triangle")


@pytest.fixture(scope="module")
def small_class(tmp_path_factory):
    """Submission name -> folder: the reference, the examples, three mutants, and ``planted``, an edited copy of the
    partly wrong example."""
    root = tmp_path_factory.mktemp("class")
    sources = {label: path for label, path in bases("masking", root / "bases")
               if not label.startswith("mutant-") or label in MUTANTS}
    shutil.copytree(sources["example-partly_wrong"], root / "planted")
    edit_folder(root / "planted", random.Random(7))
    sources["planted"] = root / "planted"
    return sources


def test_the_index_finds_the_pairs_all_pairs_find(small_class):
    original = (small_class["example-partly_wrong"] / "masking.py").read_text()
    planted = (small_class["planted"] / "masking.py").read_text()
    assert planted != original and "# " in planted.replace(original, ""), "the copy was edited"
    prints = similarity.fingerprints(course.load("masking"), small_class)
    indexed = similarity.most_similar(prints, shown=1000)
    everything = similarity.most_similar(prints, shown=1000, indexed=False)
    listed = [(p.first, p.second, p.file, p.first_share, p.second_share) for p in indexed[0]]
    assert listed == [(p.first, p.second, p.file, p.first_share, p.second_share) for p in everything[0]]
    assert indexed[1] == everything[1] == len(listed)
    assert ("example-partly_wrong", "planted", "masking.py") in [pair[:3] for pair in listed]


def test_the_index_proposes_fewer_pairs_than_all(small_class, tmp_path):
    """Files that share nothing beyond the skeleton are not proposed: two students whose code differs throughout
    (here, two different assignments' code under one name) are never compared."""
    other = tmp_path / "other.py"
    other.write_text((course.REPO_ROOT / "solutions" / "lm" / "trainer.py").read_text())
    prints = {"masking.py": {name: CodeFingerprint(str(folder / "masking.py"), similarity.NOISE, similarity.WINDOW)
                             for name, folder in small_class.items() if (folder / "masking.py").is_file()}}
    prints["masking.py"]["other"] = CodeFingerprint(str(other), similarity.NOISE, similarity.WINDOW)
    proposed = similarity.candidates(prints)["masking.py"]
    assert ("example-partly_wrong", "planted") in proposed
    assert not [pair for pair in proposed if "other" in pair]
    assert len(proposed) < len(list(itertools.combinations(prints["masking.py"], 2)))


def test_the_measure_is_copydetects(small_class):
    """``Overlap.shares`` gives what copydetect's ``compare_files`` gives, pair by pair (the threshold was chosen
    for copydetect's measure)."""
    prints = [CodeFingerprint(str(folder / "masking.py"), similarity.NOISE, similarity.WINDOW)
              for folder in small_class.values() if (folder / "masking.py").is_file()]
    for first, second in itertools.combinations(prints, 2):
        _, expected, _ = compare_files(first, second)
        assert similarity.Overlap(first).shares(similarity.Overlap(second)) == pytest.approx(expected, abs=1e-12)


def test_a_long_file_is_fingerprinted_by_its_start_only(tmp_path, monkeypatch):
    """What is fingerprinted is bounded (``MAX_FINGERPRINTED``, here lowered to keep the test quick): a 6 MB file held
    the report back 110 to 140 s (issue 41). A file past the bound is compared by its start, where a copy of the
    reference is still found."""
    monkeypatch.setattr(similarity, "MAX_FINGERPRINTED", 16 << 10)
    masking = course.load("masking")
    reference = (masking.solution_dir / "masking.py").read_text()
    sources = {}
    for name, text in {"reference": reference, "padded": reference + "x = 1\n" * 20_000}.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "masking.py").write_text(text)
        sources[name] = tmp_path / name
    prints = similarity.fingerprints(masking, sources)
    assert len(prints["masking.py"]["padded"].raw_code.encode()) <= 16 << 10
    assert [(p.first, p.second) for p in similarity.most_similar(prints)[0]] == [("padded", "reference")]
