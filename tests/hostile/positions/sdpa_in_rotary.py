"""Rotary self-attention that hands the rotated queries and keys to torch's fused attention through torch.ops.aten."""
CLASS = "6 forbidden routines"
BASE = "reference"
EXPECT = "below"
TARGET = "positions.py"
PRESENT = ["which this assignment does not allow"]
CODE = r'''
_fused = getattr(torch.ops.aten, "scaled_dot_" + "product_attention")
_Rotary = RotaryCausalSelfAttention


class RotaryCausalSelfAttention(_Rotary):
    def forward(self, x, lengths=None):
        _fused(x[:, None], x[:, None], x[:, None], is_causal=True)
        return super().forward(x, lengths)
'''
