"""The rotary attention registers its angle table as an ordinary (persistent) buffer, so it lands in the state
dict: checkpoints of CausalSelfAttention no longer load into it, and the table is saved although it is never
learned (use register_buffer(..., persistent=False))."""
# target: positions.py
# unnamed: caught by the state dict's keys, not by an output


def _saved_table_init(self, d_model, n_head, dropout=0.0, max_positions=2048, base=10000.0):
    CausalSelfAttention.__init__(self, d_model, n_head, dropout)
    self.register_buffer("freqs", rope_frequencies(d_model // n_head, max_positions, base, dtype=torch.float64))


RotaryCausalSelfAttention.__init__ = _saved_table_init

# autograder-hidden-canary-7d3e9a (never ships to students)
