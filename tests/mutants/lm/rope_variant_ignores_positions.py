"""The rope variant uses the plain causal attention without rotating queries and keys, so the model gets no
position information at all."""
# target: model.py

_correct_block_init = Block.__init__


def _block_init(self, config):
    _correct_block_init(self, config)
    self.attn = CausalSelfAttention(config.n_embd, config.n_head, config.dropout)


Block.__init__ = _block_init

# autograder-hidden-canary-7d3e9a (never ships to students)
