"""The learned position table is a plain tensor attribute, not an nn.Parameter: it receives no gradient, is
never trained, is missing from the state dict (so loading a checkpoint fails) and ignores .double()."""
# target: positions.py
# unnamed: caught by the module's structure (parameters, state dict, dtype), not by an output


def _plain_tensor_init(self, block_size, d_model):
    nn.Module.__init__(self)
    self.block_size = block_size
    self.weight = 0.02 * torch.randn(block_size, d_model)


LearnedPositions.__init__ = _plain_tensor_init

# autograder-hidden-canary-7d3e9a (never ships to students)
