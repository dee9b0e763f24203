"""CausalSelfAttention ignores `lengths`: padded keys are attended to."""
# target: masking.py

_CorrectAttention = CausalSelfAttention


class CausalSelfAttention(_CorrectAttention):
    def forward(self, x, lengths=None):
        return super().forward(x, None)
