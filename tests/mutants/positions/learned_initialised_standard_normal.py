"""LearnedPositions initialises its table from N(0, 1) (torch.randn without the 0.02 scale) instead of
N(0, 0.02^2): position vectors fifty times larger than the docstring says drown the token embeddings at the start
of training."""
# target: positions.py
# unnamed: only a new module's random table differs; every graded output loads the grader's own values


def _standard_normal_init(self, block_size, d_model):
    nn.Module.__init__(self)
    self.block_size = block_size
    self.weight = nn.Parameter(torch.randn(block_size, d_model))


LearnedPositions.__init__ = _standard_normal_init

# autograder-hidden-canary-7d3e9a (never ships to students)
