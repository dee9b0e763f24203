"""Learned positions past block_size silently wrap around (position t uses row t % block_size) instead of
raising an error."""
# target: positions.py
# unnamed: only the error past block_size is checked: an output there has no reference value


def _wrapped_forward(self, x):
    T = x.shape[-2]
    return x + self.weight[torch.arange(T) % self.block_size]


LearnedPositions.forward = _wrapped_forward

# autograder-hidden-canary-7d3e9a (never ships to students)
