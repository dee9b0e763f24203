"""A loop over the heads, each with its own slice of the projections, and torch.softmax with NaN rows zeroed.

Style: the way many first attempts (and the Annotated Transformer's early readers) think of multi-head attention: one
single-head attention per head, on that head's rows of the query, key and value weights, the heads' outputs
concatenated along the features. The softmax is the library's (stable by construction) on scores filled with -inf,
with the rows that had no key to attend to (all -inf, so NaN) set to zero afterwards. The parameters keep the names
the docstring gives (query, key, value, proj: the grader loads its weights into them), so the per-head slices are
taken from them at each call rather than held as separate modules. Written from scratch for this catalogue.
"""
# target: masking.py


def causal_mask(T, device=None):
    return torch.tril(torch.ones(T, T, device=device)).bool()


def lecture_causal_candidate():
    target = causal_mask(4)
    matches = [i for i, candidate in enumerate(LECTURE_MASKS) if torch.equal(candidate != HIDE, target)]
    return matches[0]


def padding_mask(lengths, T):
    rows = [torch.arange(T, device=lengths.device) < length for length in lengths]
    return torch.stack(rows) if rows else torch.zeros(0, T, dtype=torch.bool, device=lengths.device)


def combined_mask(lengths, T):
    keys = padding_mask(lengths, T)
    return (causal_mask(T, lengths.device).unsqueeze(0) & keys.unsqueeze(1)).unsqueeze(1)


def masked_softmax(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    weights = torch.softmax(scores.masked_fill(mask.logical_not(), float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    d_k = q.size(-1)
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d_k)
    weights = masked_softmax(scores, mask)
    used = dropout(weights) if dropout is not None else weights
    return torch.matmul(used, v), weights


def split_heads(x, n_head):
    width = x.shape[-1] // n_head
    return torch.stack([x[..., h * width:(h + 1) * width] for h in range(n_head)], dim=1)


def merge_heads(x):
    return torch.cat([x[:, h] for h in range(x.shape[1])], dim=-1)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, dropout=0.0):
        super().__init__()
        if d_model % n_head != 0:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_head ({n_head})")
        self.n_head = n_head
        self.head_width = d_model // n_head
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def _head(self, linear, x, h):
        rows = slice(h * self.head_width, (h + 1) * self.head_width)
        return nn.functional.linear(x, linear.weight[rows], linear.bias[rows])

    def forward(self, x, lengths=None):
        T = x.shape[1]
        mask = causal_mask(T, x.device) if lengths is None else combined_mask(lengths, T)
        outputs = []
        for h in range(self.n_head):
            q, k, v = (self._head(linear, x, h) for linear in (self.query, self.key, self.value))
            head_mask = mask if lengths is None else mask[:, 0]
            out, _ = scaled_dot_product_attention(q, k, v, head_mask, dropout=self.attn_dropout)
            outputs.append(out)
        return self.resid_dropout(self.proj(torch.cat(outputs, dim=-1)))

# autograder-hidden-canary-7d3e9a (never ships to students)
