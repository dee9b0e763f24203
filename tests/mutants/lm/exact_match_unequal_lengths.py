"""exact_match accepts lists of different lengths and scores the pairs zip() makes of them, so a missing
prediction silently shortens the test set instead of raising a ValueError."""
# target: run.py
# unnamed: caught by the error it fails to raise, not by an output


def exact_match(predictions, answers):
    return sum(p.strip() == a.strip() for p, a in zip(predictions, answers, strict=False)), len(answers)

# autograder-hidden-canary-7d3e9a (never ships to students)
