"""LearnedPositions initialises its table uniformly (with the right spread, 0.02) instead of from the normal
distribution N(0, 0.02^2) the docstring names: no entry lies beyond 0.035."""
# target: positions.py
# unnamed: only a new module's random table differs; every graded output loads the grader's own values


def _uniform_init(self, block_size, d_model):
    nn.Module.__init__(self)
    self.block_size = block_size
    self.weight = nn.Parameter((torch.rand(block_size, d_model) - 0.5) * 0.02 * 12 ** 0.5)


LearnedPositions.__init__ = _uniform_init

# autograder-hidden-canary-7d3e9a (never ships to students)
