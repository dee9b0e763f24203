"""The block is post-LayerNorm (x = ln1(x + attn(x)), then ln2(x + mlp(x)), as in the original Transformer) instead
of pre-LayerNorm: each branch reads a LayerNorm of x and its output is added to x unnormalised,
x = x + attn(ln1(x)), then x + mlp(ln2(x))."""
# target: model.py


def _block_forward(self, x):
    x = self.ln1(x + self.attn(x))
    return self.ln2(x + self.mlp(x))


Block.forward = _block_forward

# autograder-hidden-canary-7d3e9a (never ships to students)
