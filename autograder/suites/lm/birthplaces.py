"""Reading and writing the CS224N birthplace files, and scoring predictions by exact match.

The same functions read the real CS224N data (``wiki.txt``, ``birth_places_train.tsv``,
``birth_dev.tsv``, ``birth_test_inputs.tsv``) unchanged and the generated worlds of
``autograder.suites.lm.world``. A labelled line is ``Where was NAME born?<TAB>PLACE``; a few lines of the
published dev file separate the answer with spaces instead of a tab, so a line without a tab is
split after its question mark (and the reader logs how many it repaired). Predictions files hold
one answer a line, in the order of the questions, as CS224N's ``run.py evaluate`` writes them.

The lm assignment's students write their own ``exact_match`` in run.py; this is the grader's, which
never relies on the student's (it is a one-line rule, written here independently of the reference).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)

QUESTION = "Where was {name} born?"
_UNTABBED = re.compile(r"^(?P<question>.*\?)\s+(?P<answer>\S.*)$")


def read_corpus(path: Path | str) -> str:
    """The pretraining corpus (``wiki.txt``) as one string, exactly as stored."""
    return Path(path).read_text(encoding="utf-8")


def parse_pairs(text: str, source: str = "the data") -> list[tuple[str, str]]:
    """``(question, answer)`` for every non-empty line of a labelled tsv file.

    Raises:
        ValueError: naming the first line that has neither a tab nor an answer after its ``?``.
    """
    pairs, repaired = [], 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if "\t" in line:
            question, answer = line.split("\t", 1)
        else:
            match = _UNTABBED.match(line.strip())
            if match is None:
                raise ValueError(f"{source}, line {number}: {line!r} is not 'question<TAB>answer'; is this an "
                                 "unlabelled questions file (read it with read_questions)?")
            question, answer = match["question"], match["answer"]
            repaired += 1
        pairs.append((question.strip(), answer.strip()))
    if repaired:
        log.info("%s: %d line(s) had no tab; split after the question mark", source, repaired)
    return pairs


def read_pairs(path: Path | str) -> list[tuple[str, str]]:
    """``parse_pairs`` of a file (``birth_places_train.tsv``, ``birth_dev.tsv``, test labels)."""
    return parse_pairs(Path(path).read_text(encoding="utf-8"), str(path))


def read_questions(path: Path | str) -> list[str]:
    """The questions of a tsv file, labelled or not (``birth_test_inputs.tsv``)."""
    text = Path(path).read_text(encoding="utf-8")
    return [line.split("\t", 1)[0].strip() for line in text.splitlines() if line.strip()]


def read_predictions(path: Path | str) -> list[str]:
    """One predicted answer per line (an empty line is an empty answer)."""
    return [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines()]


def exact_match(predictions: Sequence[str], answers: Sequence[str]) -> tuple[int, int]:
    """``(correct, total)``: how many predictions equal their answer, after stripping spaces.

    Raises:
        ValueError: when the counts differ (a predictions file for another question file).
    """
    if len(answers) != len(predictions):
        raise ValueError(f"{len(predictions)} predictions for {len(answers)} questions: write one line per "
                         "question, in the order of the questions file")
    correct = sum(p.strip() == a.strip() for p, a in zip(predictions, answers, strict=True))
    return correct, len(answers)


def cloze_match(completions: Sequence[str], answers: Sequence[str]) -> tuple[int, int]:
    """``(correct, total)`` for the cloze probe: a completion is right when it starts with the answer
    followed by the end of the text or a character that cannot continue a name (not a letter)."""
    if len(completions) != len(answers):
        raise ValueError(f"{len(completions)} completions for {len(answers)} prompts")
    correct = sum(c.startswith(a) and not c[len(a):len(a) + 1].isalpha() for c, a in zip(completions, answers,
                                                                                      strict=True))
    return correct, len(answers)


def majority_answer(answers: Sequence[str]) -> str:
    """The commonest answer (ties: the first seen), e.g. "London" on the CS224N training file."""
    if not answers:
        raise ValueError("no answers to take the majority of")
    return Counter(answers).most_common(1)[0][0]


def write_lines(path: Path, lines: Sequence[str]) -> None:
    """Write ``lines``, one a line, UTF-8, ending with a newline."""
    Path(path).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def write_pairs(path: Path, pairs: Sequence[tuple[str, str]]) -> None:
    """Write ``question<TAB>answer`` lines."""
    write_lines(path, [f"{question}\t{answer}" for question, answer in pairs])
