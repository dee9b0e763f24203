"""exact_match compares the strings as they are, so an answer with a trailing space or newline counts as wrong."""
# target: run.py
# unnamed: checked on hand-written answers with known counts, not against the reference's values


def exact_match(predictions, answers):
    if len(predictions) != len(answers):
        raise ValueError(f"{len(predictions)} predictions for {len(answers)} answers")
    return sum(p == a for p, a in zip(predictions, answers, strict=True)), len(answers)

# autograder-hidden-canary-7d3e9a (never ships to students)
