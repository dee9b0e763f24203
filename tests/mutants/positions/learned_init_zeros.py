"""The learned position table starts at zeros instead of small random values N(0, 0.02^2): every position then
begins with the same embedding."""
# target: positions.py


def _zero_init(self, block_size, d_model):
    nn.Module.__init__(self)
    self.block_size = block_size
    self.weight = nn.Parameter(torch.zeros(block_size, d_model))


LearnedPositions.__init__ = _zero_init

# autograder-hidden-canary-7d3e9a (never ships to students)
