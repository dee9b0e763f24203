"""Learned positions are looked up from row 1 (x + weight[1:T + 1], the offset some codebases reserve for a padding
position) instead of row 0: the token at position t gets weight[t]."""
# target: positions.py


def _offset_forward(self, x):
    T = x.shape[-2]
    if T > self.block_size:
        raise ValueError(f"{T} tokens is longer than block_size={self.block_size}")
    return x + self.weight[1:T + 1]


LearnedPositions.forward = _offset_forward

# autograder-hidden-canary-7d3e9a (never ships to students)
