"""Learned positions past block_size are silently clamped to the last row of the table instead of raising an
error (the embedding cannot extrapolate; the model would see many tokens "at" the last position)."""
# target: positions.py
# unnamed: only the error past block_size is checked: an output there has no reference value


def _clamped_forward(self, x):
    T = x.shape[-2]
    rows = torch.arange(T).clamp(max=self.block_size - 1)
    return x + self.weight[rows]


LearnedPositions.forward = _clamped_forward

# autograder-hidden-canary-7d3e9a (never ships to students)
