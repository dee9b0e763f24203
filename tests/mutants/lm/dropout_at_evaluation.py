"""Dropout is applied even in eval mode (F.dropout(..., training=True) in the block), so evaluation and
generation are random."""
# target: model.py
# unnamed: its outputs are random (dropout in eval mode): no recorded value can match them


def _block_forward(self, x):
    p = self.mlp[3].p
    x = x + F.dropout(self.attn(self.ln1(x)), p, training=True)
    return x + F.dropout(self.mlp(self.ln2(x)), p, training=True)


Block.forward = _block_forward

# autograder-hidden-canary-7d3e9a (never ships to students)
