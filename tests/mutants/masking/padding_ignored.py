"""CausalSelfAttention ignores `lengths`: padded keys are attended to."""
# target: masking.py

_CorrectAttention = CausalSelfAttention


class CausalSelfAttention(_CorrectAttention):
    def forward(self, x, lengths=None):
        return super().forward(x, None)

# autograder-hidden-canary-7d3e9a (never ships to students)
