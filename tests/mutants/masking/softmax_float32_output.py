"""masked_softmax returns float32 weights whatever the scores' dtype (torch.softmax(..., dtype=torch.float32)):
float64 scores must give float64 weights."""
# target: masking.py

_correct_masked_softmax = masked_softmax


def masked_softmax(scores, mask=None):
    return _correct_masked_softmax(scores.float(), mask)

# autograder-hidden-canary-7d3e9a (never ships to students)
