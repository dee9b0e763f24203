"""padding_mask is True at the padded positions (the key_padding_mask convention of nn.MultiheadAttention) instead
of at the real tokens: return t < length."""
# target: masking.py


def padding_mask(lengths, T):
    return torch.arange(T, device=lengths.device).unsqueeze(0) >= lengths.unsqueeze(1)

# autograder-hidden-canary-7d3e9a (never ships to students)
