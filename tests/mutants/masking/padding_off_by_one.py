"""The padding mask is off by one: it keeps position t when t <= length, one padded position too many."""
# target: masking.py


def padding_mask(lengths, T):
    return torch.arange(T, device=lengths.device).unsqueeze(0) <= lengths.unsqueeze(1)

# autograder-hidden-canary-7d3e9a (never ships to students)
