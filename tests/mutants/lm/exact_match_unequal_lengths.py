"""exact_match counts over zip without refusing lists of different lengths: the extra answers are silently left out
instead of raising the documented ValueError."""
# target: run.py
# unnamed: only whether it raises is checked, not a value to match


def exact_match(predictions, answers):
    return sum(p.strip() == a.strip() for p, a in zip(predictions, answers, strict=False)), len(answers)

# autograder-hidden-canary-7d3e9a (never ships to students)
