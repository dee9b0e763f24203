"""The rotary attention keeps its angle table as a plain attribute (self.freqs = ...) instead of a registered buffer:
model.to(device) does not move it, so on a GPU the rotation meets a table left on the CPU (and it is not among the
module's buffers). Register it with register_buffer(..., persistent=False)."""
# target: positions.py
# unnamed: its values are right on the CPU; only a call on another device tells it


def _plain_table_init(self, d_model, n_head, dropout=0.0, max_positions=2048, base=10000.0):
    CausalSelfAttention.__init__(self, d_model, n_head, dropout)
    self.freqs = rope_frequencies(d_model // n_head, max_positions, base, dtype=torch.float64)


RotaryCausalSelfAttention.__init__ = _plain_table_init

# autograder-hidden-canary-7d3e9a (never ships to students)
