"""The learned position table starts as torch.randn(block_size, d_model), standard normal noise as large as the token
embeddings, instead of N(0, 0.02^2): multiply by 0.02, as the docstring says."""
# target: positions.py


def _unit_init(self, block_size, d_model):
    nn.Module.__init__(self)
    self.block_size = block_size
    self.weight = nn.Parameter(torch.randn(block_size, d_model))


LearnedPositions.__init__ = _unit_init

# autograder-hidden-canary-7d3e9a (never ships to students)
