"""The generated world of the LM assignment and the CS224N file formats it shares with the real data."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from autograder import cli
from autograder.course import REPO_ROOT, load
from autograder.suites.lm import birthplaces, world

REAL = REPO_ROOT.parent / "shared" / "data" / "cs224n"
needs_real_data = pytest.mark.skipif(not (REAL / "birth_dev.tsv").is_file(),
                                     reason=f"the CS224N data is not at {REAL} (it is never committed)")


@pytest.fixture(scope="module")
def small() -> world.World:
    return world.generate_world("test", people=120, dev=30, test=20, bios_per_person=3, templates=6)


def test_same_arguments_same_world_and_the_seed_matters(tmp_path, small):
    again = world.generate_world("test", people=120, dev=30, test=20, bios_per_person=3, templates=6)
    assert again == small
    other = world.generate_world("other", people=120, dev=30, test=20, bios_per_person=3, templates=6)
    assert other.bios != small.bios
    first, second = world.write_world(small, tmp_path / "a"), world.write_world(again, tmp_path / "b")
    assert all(first[key].read_bytes() == second[key].read_bytes() for key in first)


def test_sizes_splits_and_templates(small):
    assert len(small.people) == 120 and (len(small.train), len(small.dev), len(small.test)) == (70, 30, 20)
    names = [p.name for p in small.people]
    assert len(set(names)) == len(names), "names must be unique: a question must have one answer"
    assert {p.name for p in small.train}.isdisjoint({p.name for p in small.dev} | {p.name for p in small.test})
    assert {p.name for p in small.dev}.isdisjoint({p.name for p in small.test})
    assert len(small.entries) == 360
    per_person = Counter(person.name for person, _ in small.entries)
    assert set(per_person.values()) == {3}
    templates_of = {}
    for person, template in small.entries:
        templates_of.setdefault(person.name, []).append(template)
    assert all(len(set(t)) == 3 for t in templates_of.values()), "a person's biographies use distinct templates"
    assert {t for _, t in small.entries} == set(range(6))


def test_biographies_state_the_birthplace_and_start_with_the_name(small):
    for person, template in small.entries:
        line = world.render(world.TEMPLATES[template], person)
        assert line.startswith(f"{person.name}. ")
        assert person.birthplace in line
        assert "\n" not in line and "\t" not in line
    for person in small.people:
        assert person.birthplace not in (person.residence, person.death_place)


def test_every_question_character_is_in_the_corpus(small):
    """The vocabulary comes from wiki.txt, so the questions must not need any other character."""
    corpus = set("".join(small.bios))
    for people in (small.train, small.dev, small.test):
        for question, answer in small.pairs(people):
            assert set(question + answer) <= corpus


def test_cloze_prompts_stop_right_before_the_birthplace(small):
    items = small.cloze_items(small.dev)
    bios = small.bios
    for (prompt, place), person in zip(items, small.dev, strict=True):
        assert prompt.startswith(f"{person.name}. ") and place == person.birthplace
        assert any(line.startswith(prompt + place) for line in bios)


def test_birthplaces_are_skewed_like_the_real_data():
    """A majority baseline scores a few percent (CS224N: "always London" 5 % on dev)."""
    big = world.generate_world(3)
    counts = Counter(p.birthplace for p in big.people)
    share = counts.most_common(1)[0][1] / len(big.people)
    assert 0.02 < share < 0.10, share
    assert len(counts) > 100


def test_bad_sizes_say_what_to_change():
    with pytest.raises(ValueError, match="bios_per_person"):
        world.generate_world(0, people=10, dev=2, test=2, bios_per_person=4, templates=3)
    with pytest.raises(ValueError, match="at most people"):
        world.generate_world(0, people=10, dev=8, test=8)
    with pytest.raises(ValueError, match="templates"):
        world.generate_world(0, templates=len(world.TEMPLATES) + 1)


def test_written_files_have_the_cs224n_formats(tmp_path, small):
    paths = world.write_world(small, tmp_path / "data", tmp_path / "instructor")
    assert paths["test_labels"].parent == tmp_path / "instructor"
    assert not (tmp_path / "data" / "birth_test_labels.tsv").exists()
    wiki = paths["wiki"].read_text(encoding="utf-8")
    assert wiki.endswith("\n") and wiki.count("\n") == len(small.entries)
    question = re.compile(r"^Where was [^\t?]+ born\?$")
    for key, people in (("train", small.train), ("dev", small.dev), ("test_labels", small.test)):
        pairs = birthplaces.read_pairs(paths[key])
        assert pairs == small.pairs(people)
        assert all(question.match(q) and a for q, a in pairs)
        assert all(line.count("\t") == 1 for line in paths[key].read_text(encoding="utf-8").splitlines())
    inputs = paths["test_inputs"].read_text(encoding="utf-8").splitlines()
    assert "\t" not in "".join(inputs) and inputs == [q for q, _ in small.pairs(small.test)]
    assert birthplaces.read_questions(paths["test_inputs"]) == inputs
    assert birthplaces.read_questions(paths["dev"]) == [q for q, _ in small.pairs(small.dev)]


def test_world_command_writes_a_world_and_keeps_the_labels_apart(tmp_path):
    out = tmp_path / "world"
    assert cli.main(["world", "--out", str(out), "--seed", "7", "--size", "cpu-tier", "--people", "60",
                     "--dev", "10", "--test", "10"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["birth_dev.tsv", "birth_places_train.tsv",
                                                      "birth_test_inputs.tsv", "instructor", "wiki.txt"]
    labels = birthplaces.read_pairs(out / "instructor" / "birth_test_labels.tsv")
    expected = world.generate_world("7", **{**world.SIZES["cpu-tier"], "people": 60, "dev": 10, "test": 10})
    assert labels == expected.pairs(expected.test)
    assert len(birthplaces.read_pairs(out / "birth_places_train.tsv")) == 40


def test_the_public_world_is_committed_and_made_from_the_hidden_secret():
    """The files students get are exactly what `autograder world --public` writes, and their seed is not public."""
    data, hidden = world.public_paths()
    secret = load("lm").committed_secret
    assert secret, "autograder/suites/lm/hidden/SECRET is missing"
    expected = world.public_world(secret)
    assert birthplaces.read_corpus(data / "wiki.txt") == "".join(f"{line}\n" for line in expected.bios)
    assert birthplaces.read_pairs(data / "birth_places_train.tsv") == expected.pairs(expected.train)
    assert birthplaces.read_pairs(data / "birth_dev.tsv") == expected.pairs(expected.dev)
    assert birthplaces.read_questions(data / "birth_test_inputs.tsv") == [q for q, _ in expected.pairs(expected.test)]
    assert birthplaces.read_pairs(hidden / "birth_test_labels.tsv") == expected.pairs(expected.test)
    assert secret not in world.public_world_seed(secret)
    skeleton = REPO_ROOT / "assignments" / "lm" / "data"
    assert not (skeleton / "birth_test_labels.tsv").exists() and not (data / "birth_test_labels.tsv").exists()


def test_predictions_and_exact_match():
    assert birthplaces.exact_match(["Paris ", "Rome"], ["Paris", "Oslo"]) == (1, 2)
    with pytest.raises(ValueError, match="one line per question"):
        birthplaces.exact_match(["Paris"], ["Paris", "Oslo"])
    assert birthplaces.cloze_match(["Paris .", "Parisville", "Paris"], ["Paris"] * 3) == (2, 3)
    assert birthplaces.majority_answer(["b", "a", "a", "b", "c"]) == "b"


def test_untabbed_lines_are_split_after_the_question_mark(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_text("Where was A B born?\tOslo\nWhere was C D born?   New York\n\n", encoding="utf-8")
    assert birthplaces.read_pairs(path) == [("Where was A B born?", "Oslo"), ("Where was C D born?", "New York")]
    path.write_text("Where was A B born?\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 1"):
        birthplaces.read_pairs(path)


@needs_real_data
def test_always_london_scores_25_of_500_on_the_real_dev_set():
    pairs = birthplaces.read_pairs(REAL / "birth_dev.tsv")
    assert len(pairs) == 500
    assert birthplaces.exact_match(["London"] * len(pairs), [a for _, a in pairs]) == (25, 500)
    train = birthplaces.read_pairs(REAL / "birth_places_train.tsv")
    assert len(train) == 2000 and birthplaces.majority_answer([a for _, a in train]) == "London"


@needs_real_data
def test_the_real_files_read_unchanged():
    corpus = birthplaces.read_corpus(REAL / "wiki.txt")
    lines = [line for line in corpus.split("\n") if line]
    assert len(lines) == 2937 and all(re.match(r"^[^.]+\. ", line) for line in lines[:100])
    questions = birthplaces.read_questions(REAL / "birth_test_inputs.tsv")
    assert len(questions) == 437 and all(q.startswith("Where was ") and q.endswith("born?") for q in questions)
    names = [q[len("Where was "):-len(" born?")] for q in questions]
    assert all(any(line.startswith(f"{name}.") for line in lines) for name in names), "every test person has a bio"

