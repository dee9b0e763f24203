"""Block builds its RotaryCausalSelfAttention without base=config.rope_base, so every rope model rotates with the
default base 10000 whatever the config says. Pass the config's rope_base."""
# target: model.py


def _block_init_default_base(self, config):
    nn.Module.__init__(self)
    D = config.n_embd
    self.ln1 = nn.LayerNorm(D)
    self.ln2 = nn.LayerNorm(D)
    if config.variant == "rope":
        self.attn = RotaryCausalSelfAttention(D, config.n_head, config.dropout, max_positions=config.block_size)
    else:
        self.attn = CausalSelfAttention(D, config.n_head, config.dropout)
    self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D), nn.Dropout(config.dropout))


Block.__init__ = _block_init_default_base

# autograder-hidden-canary-7d3e9a (never ships to students)
