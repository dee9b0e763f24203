"""The rotary attention keeps its angle table in float32: m * theta loses digits as positions grow, so float64
results drift from the exact rotation (build the table with dtype=torch.float64, as the docstring says)."""
# target: positions.py


def _float32_table_init(self, d_model, n_head, dropout=0.0, max_positions=2048, base=10000.0):
    CausalSelfAttention.__init__(self, d_model, n_head, dropout)
    head_dim = d_model // n_head
    exponents = torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim
    table = torch.outer(torch.arange(max_positions, dtype=torch.float32), base ** -exponents)
    self.register_buffer("freqs", table, persistent=False)


RotaryCausalSelfAttention.__init__ = _float32_table_init

# autograder-hidden-canary-7d3e9a (never ships to students)
