"""RoPE as RoFormer writes it: a block-diagonal rotation matrix R_m per position, applied with a matrix product;
sinusoidal embeddings as the Annotated Transformer computes them (rates exp(-2i ln(10000) / d)); the permutation
check with a permutation matrix P; the shift operator filled block by block.

Style: the RoFormer paper's equation (15) taken literally (f(x, m) = R_m x with R_m block diagonal, each block the
2x2 rotation by m theta_i), which is what a student who starts from the paper writes, and Harvard NLP's Annotated
Transformer for the sinusoidal table (div_term = exp(arange(0, d, 2) * -(log(10000) / d))). The matrices are
built from cos and sin of the angles in freqs' own dtype and cast to x's dtype afterwards, as apply_rope's
docstring asks. It spends head_dim / 2 times the reference's multiplications on zeros; the head widths of the
graded tests are small, and the runtime test is the masking assignment's. Written from scratch for this catalogue.
"""
# target: positions.py
import math


def attention_ffn(x, weights):
    q = x @ weights["query"]
    k = x @ weights["key"]
    v = x @ weights["value"]
    a = scaled_dot_product_attention(q, k, v)[0]
    return torch.nn.functional.relu(a @ weights["ff_in"]) @ weights["ff_out"]


def permute_check(x, perm, weights, positions=None):
    T = x.shape[-2]
    P = torch.zeros(T, T, dtype=x.dtype)
    P[torch.arange(T), perm] = 1  # (P X)[t] = X[perm[t]]
    E = torch.zeros(T, x.shape[-1], dtype=x.dtype) if positions is None else positions
    difference = attention_ffn(P @ x + E, weights) - P @ attention_ffn(x + E, weights)
    return difference.abs().max().item()


class LearnedPositions(nn.Module):
    def __init__(self, block_size, d_model):
        super().__init__()
        self.block_size = block_size
        self.weight = nn.Parameter(torch.randn(block_size, d_model) * 0.02)

    def forward(self, x):
        T = x.shape[1]
        if not T <= self.block_size:
            raise ValueError(f"input has {T} positions; the learned table only has block_size = {self.block_size} "
                             "(learned positions cannot extrapolate beyond it)")
        return x + self.weight[torch.arange(T)].unsqueeze(0)


def sinusoidal(T, d, dtype=torch.float32):
    if d % 2 != 0:
        raise ValueError(f"d = {d} must be even: sine and cosine come in pairs")
    position = torch.arange(0, T, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * -(math.log(SINUSOIDAL_BASE) / d))
    pe = torch.zeros(T, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.to(dtype)


def shift_operator(k, d, dtype=torch.float32):
    if d % 2 != 0:
        raise ValueError(f"d = {d} must be even: sine and cosine come in pairs")
    M = torch.zeros(d, d, dtype=torch.float64)
    for i in range(d // 2):
        b = k * math.exp(-2 * i * math.log(SINUSOIDAL_BASE) / d)
        # [sin(a+b), cos(a+b)] = [sin a, cos a] @ [[cos b, -sin b], [sin b, cos b]]
        M[2 * i, 2 * i], M[2 * i, 2 * i + 1] = math.cos(b), -math.sin(b)
        M[2 * i + 1, 2 * i], M[2 * i + 1, 2 * i + 1] = math.sin(b), math.cos(b)
    return M.to(dtype)


def rope_frequencies(head_dim, max_positions, base=10000.0, dtype=torch.float32):
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim = {head_dim} must be even: RoPE rotates feature pairs")
    theta = torch.tensor([base ** (-2 * i / head_dim) for i in range(head_dim // 2)], dtype=torch.float64)
    return (torch.arange(max_positions, dtype=torch.float64)[:, None] * theta).to(dtype)


def _rotations(angles, dtype):
    """(..., head_dim // 2) angles -> (..., head_dim, head_dim) block-diagonal rotation matrices in ``dtype``."""
    c, s = angles.cos().to(dtype), angles.sin().to(dtype)
    half = angles.shape[-1]
    R = torch.zeros(*angles.shape[:-1], 2 * half, 2 * half, dtype=dtype, device=angles.device)
    i = torch.arange(half, device=angles.device)
    R[..., 2 * i, 2 * i], R[..., 2 * i, 2 * i + 1] = c, -s
    R[..., 2 * i + 1, 2 * i], R[..., 2 * i + 1, 2 * i + 1] = s, c
    return R


def apply_rope(x, freqs, positions=None):
    if x.shape[-1] != 2 * freqs.shape[1]:
        raise ValueError(f"x's width {x.shape[-1]} is not twice the {freqs.shape[1]} angles of freqs")
    T, P = x.shape[-2], freqs.shape[0]
    if positions is None:
        if T > P:
            raise ValueError(f"T = {T} is longer than the table's max_positions = {P}")
        positions = torch.arange(T)
    positions = torch.as_tensor(positions)
    if positions.numel() and (positions.min() < 0 or positions.max() > P - 1):
        raise ValueError(f"a position is outside 0..{P - 1}; build freqs for more positions")
    R = _rotations(freqs[positions], x.dtype)  # (..., T, head_dim, head_dim)
    return (R @ x.unsqueeze(-1)).squeeze(-1)


class RotaryCausalSelfAttention(CausalSelfAttention):
    def __init__(self, d_model, n_head, dropout=0.0, max_positions=2048, base=10000.0):
        super().__init__(d_model, n_head, dropout)
        if (d_model // n_head) % 2 != 0:
            raise ValueError(f"head width {d_model // n_head} must be even for RoPE")
        self.register_buffer("freqs", rope_frequencies(d_model // n_head, max_positions, base, torch.float64),
                             persistent=False)

    def forward(self, x, lengths=None):
        T = x.shape[1]
        heads = [split_heads(layer(x), self.n_head) for layer in (self.query, self.key, self.value)]
        q, k = (apply_rope(h, self.freqs) for h in heads[:2])
        mask = combined_mask(lengths, T) if lengths is not None else causal_mask(T, device=x.device)
        attended, _ = scaled_dot_product_attention(q, k, heads[2], mask, self.attn_dropout)
        return self.resid_dropout(self.proj(merge_heads(attended)))

# autograder-hidden-canary-7d3e9a (never ships to students)
