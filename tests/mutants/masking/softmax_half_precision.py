"""The softmax is computed in float16 (scores.half()) and cast back, which loses precision: compute it in the
scores' own dtype."""
# target: masking.py

_correct_masked_softmax = masked_softmax


def masked_softmax(scores, mask=None):
    return _correct_masked_softmax(scores.half(), mask).to(scores.dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
