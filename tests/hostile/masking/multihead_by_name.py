"""Builds its self-attention on torch.nn.MultiheadAttention, reached through a name built at run time."""
CLASS = "6 forbidden routines"
BASE = "reference"
EXPECT = "below"
PRESENT = ["which this assignment does not allow"]
CODE = r'''
_Library = getattr(torch.nn, "Multihead" + "Attention")


class CausalSelfAttention(torch.nn.Module):
    def __init__(self, d_model, n_head, dropout=0.0):
        super().__init__()
        self.n_head = n_head
        self.inner = _Library(d_model, n_head, dropout=dropout, batch_first=True)

    def forward(self, x, lengths=None):
        T = x.shape[1]
        mask = ~causal_mask(T, x.device)
        return self.inner(x, x, x, attn_mask=mask, need_weights=False)[0]
'''
