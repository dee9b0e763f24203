"""exact_match compares answers case-insensitively (lower() on both sides): "ulm" counts as the answer "Ulm"."""
# target: run.py
# unnamed: caught by a count, which no known mistake's output can be told apart by


def exact_match(predictions, answers):
    if len(predictions) != len(answers):
        raise ValueError(f"{len(predictions)} predictions for {len(answers)} answers")
    return sum(p.strip().lower() == a.strip().lower() for p, a in zip(predictions, answers, strict=True)), len(answers)

# autograder-hidden-canary-7d3e9a (never ships to students)
