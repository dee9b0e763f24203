"""causal_mask ignores its device argument: the mask is made on the default device (the CPU), and attention on a
GPU fails with "Expected all tensors to be on the same device". Pass device= to the tensor you create."""
# target: masking.py
# unnamed: only the device of its output differs; its values are right


def causal_mask(T, device=None):
    return torch.tril(torch.ones(T, T, dtype=torch.bool))

# autograder-hidden-canary-7d3e9a (never ships to students)
