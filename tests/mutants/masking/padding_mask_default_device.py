"""padding_mask makes its positions with torch.arange(T) on the default device, whatever the device of lengths: on a
GPU the comparison fails. Make the positions on lengths.device."""
# target: masking.py
# unnamed: only the device of its output differs; its values are right


def padding_mask(lengths, T):
    return torch.arange(T)[None, :] < lengths[:, None]

# autograder-hidden-canary-7d3e9a (never ships to students)
