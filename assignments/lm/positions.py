"""Position information for attention: why it is needed, and three ways to add it.

Conventions (the grader relies on them):
- B batch, H heads, T sequence length, D = d_model model width, head_dim = D / H head width.
- A permutation ``perm`` is a (T,) integer tensor; "P X" means ``x[..., perm, :]`` (row t of P X is row
  perm[t] of X).
- Sinusoidal embeddings: Phi[t, 2i] = sin(t * w_i), Phi[t, 2i + 1] = cos(t * w_i), w_i = 10000^(-2i/d),
  positions t = 0, 1, ..., T - 1.
- Rotary embeddings (RoPE) rotate ADJACENT pairs: features (2i, 2i + 1) of a query or key at position m
  are rotated by the angle m * theta_i, theta_i = base^(-2i/head_dim):
      out[2i]     = x[2i] cos(m theta_i) - x[2i + 1] sin(m theta_i)
      out[2i + 1] = x[2i] sin(m theta_i) + x[2i + 1] cos(m theta_i)
  (some libraries rotate the two halves (i, i + head_dim/2) instead: that is a different convention).
- Angle tables are built in float64 and cast at the end: in float32, t * w loses digits at large t.
- Leave the caller's tensors as they were: never rotate queries or keys in place. Make every tensor on the device
  of the inputs. A module answers each call for that call's length, dtype and device (it may be called with another
  length, cast with .double() or moved with .to()): derive cos and sin per call, never once for the first call.

This assignment carries your masking.py from the masking assignment: hand in both files. The attention
here is the masking assignment's, so a mistake in masking.py shows up in these tests too.
"""

import torch
from masking import (
    CausalSelfAttention,
    causal_mask,
    combined_mask,
    merge_heads,
    scaled_dot_product_attention,
    split_heads,
)
from torch import nn

SINUSOIDAL_BASE = 10000.0


# ---------------------------------------------------------------- 1. why order is missing


def attention_ffn(x: torch.Tensor, weights: dict[str, torch.Tensor]) -> torch.Tensor:
    """One layer with no position information: unmasked single-head self-attention, then a
    position-wise feed-forward network.

        A = softmax(Q K^T / sqrt(D)) V  with Q = X W_query, K = X W_key, V = X W_value
        Z = ReLU(A W_ff_in) W_ff_out

    Args:
        x: (..., T, D) inputs.
        weights: ``{"query", "key", "value"}`` (D, D) and ``"ff_in"`` (D, F), ``"ff_out"`` (F, D) matrices,
            applied on the right (``x @ W``).
    Returns:
        (..., T, D) outputs Z. Use your masking.scaled_dot_product_attention (without a mask).
    """
    raise NotImplementedError('attention_ffn: project x with the three matrices, attend with scaled_dot_product_attention(q, k, v), then ReLU(a @ W_ff_in) @ W_ff_out')


def permute_check(x: torch.Tensor, perm: torch.Tensor, weights: dict[str, torch.Tensor],
                  positions: torch.Tensor | None = None) -> float:
    """How far ``attention_ffn`` is from permutation equivariance: max |Z(P X + E) - P Z(X + E)|.

    E is ``positions`` (added to the inputs after the tokens are permuted: position t stays position t)
    or 0 when ``positions`` is None. Without positions the result is zero up to rounding; with them it
    is not, because the embedding added at position t no longer travels with its token.

    Args:
        x: (..., T, D) inputs.
        perm: (T,) integer permutation of 0..T-1 (P X = ``x[..., perm, :]``).
        weights: the weights of ``attention_ffn``.
        positions: (T, D) position embeddings, or None.
    Returns:
        the largest absolute difference, a Python float.
    """
    raise NotImplementedError("permute_check: permute the tokens then add positions and run the layer; compare with the layer's output on x + positions, permuted afterwards")


# ---------------------------------------------------------------- 2. learned absolute embeddings


class LearnedPositions(nn.Module):
    """Learned absolute position embeddings: one trainable vector per position, added to the tokens.

    Args:
        block_size: the number of positions with a vector (the longest sequence the model accepts).
        d_model: embedding width D.
    The parameter is ``weight`` of shape (block_size, d_model), initialised from N(0, 0.02^2); keep the
    name, the grader loads its own values into it.
    """

    def __init__(self, block_size: int, d_model: int):
        super().__init__()
        self.block_size = block_size
        self.weight = nn.Parameter(0.02 * torch.randn(block_size, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Add the embedding of position t to the token at position t.

        Args:
            x: (B, T, D) token embeddings.
        Returns:
            (B, T, D): x[:, t] + weight[t].
        Raises:
            ValueError when T > block_size, with a message that says the embedding cannot extrapolate and
            names the limit (never clamp or wrap positions silently).
        """
        raise NotImplementedError('LearnedPositions.forward: refuse T > block_size with a ValueError naming the limit; otherwise add weight[:T] (it broadcasts over the batch)')


# ---------------------------------------------------------------- 3. sinusoidal embeddings


def sinusoidal(T: int, d: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The sinusoidal position embeddings of "Attention is all you need".

    Args:
        T: number of positions (t = 0, ..., T - 1).
        d: embedding width; must be even.
        dtype: dtype of the result (compute in float64, cast at the end).
    Returns:
        (T, d) tensor Phi with Phi[t, 2i] = sin(t / 10000^(2i/d)) and Phi[t, 2i + 1] = cos(t / 10000^(2i/d)).
    Raises:
        ValueError when d is odd (sin and cos come in pairs).
    """
    raise NotImplementedError('sinusoidal: refuse odd d; angles[t, i] = t / 10000 ** (2i / d) in float64 (torch.arange(0, d, 2) gives 2i); sin in the even columns, cos in the odd ones')


def shift_operator(k: int, d: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The matrix that moves sinusoidal embeddings k positions along: Phi[t + k] = Phi[t] @ M_k for every t.

    Args:
        k: the shift (any integer, negative too).
        d: embedding width; must be even.
        dtype: dtype of the result.
    Returns:
        (d, d) block-diagonal M_k: block i (rows and columns 2i, 2i + 1) is the 2x2 matrix that maps the
        row vector [sin(t w_i), cos(t w_i)] to [sin((t + k) w_i), cos((t + k) w_i)]; zero off the blocks.
        It does not depend on t: that is the relative-position property.
    Raises:
        ValueError when d is odd.
    """
    raise NotImplementedError('shift_operator: expand sin(a + b) and cos(a + b) with a = t w_i, b = k w_i, and write the row [sin, cos] at t + k as the row [sin, cos] at t times a 2x2 matrix that depends only on b')


# ---------------------------------------------------------------- 4. rotary embeddings


def rope_frequencies(head_dim: int, max_positions: int, base: float = 10000.0,
                     dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The rotation angles of RoPE for every position and feature pair.

    Args:
        head_dim: the width of a query or key (one head); must be even.
        max_positions: number of positions m = 0, ..., max_positions - 1.
        base: the frequency base (10000 in the RoPE paper).
        dtype: dtype of the result (compute in float64, cast at the end).
    Returns:
        (max_positions, head_dim // 2) angles; entry [m, i] = m * base^(-2i/head_dim).
    Raises:
        ValueError when head_dim is odd.
    """
    raise NotImplementedError('rope_frequencies: refuse odd head_dim; the outer product of the positions 0..max_positions-1 with theta_i = base ** (-2i / head_dim), in float64')


def apply_rope(x: torch.Tensor, freqs: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
    """Rotate adjacent feature pairs (2i, 2i + 1) of every vector by its position's angles.

    Args:
        x: (..., T, head_dim) queries or keys (for example (B, H, T, head_dim)).
        freqs: (max_positions, head_dim // 2) angles from ``rope_frequencies`` (any float dtype).
        positions: None for positions 0..T-1, or an integer tensor of shape (T,) or broadcastable to (..., T)
            giving each vector's position (for example (t,) when decoding one token at position t).
    Returns:
        a tensor of x's shape and dtype: out[..., 2i] = x[..., 2i] cos(a) - x[..., 2i+1] sin(a) and
        out[..., 2i+1] = x[..., 2i] sin(a) + x[..., 2i+1] cos(a), a = freqs[position, i]. With every
        position 0 it is x itself. Take cos and sin of the angles in freqs' own dtype (float64 from
        RotaryCausalSelfAttention) and cast the cos and sin to x's dtype afterwards, never the angles before:
        in float32 an angle near 3000 (a position far into a long context) is stored with an error up to
        1.2e-4 (half a float32 step at that size), which moves cos and sin by as much, ten times float32's
        tolerance; cast after, they are off by at most 6e-8.
    Raises:
        ValueError when a position is outside the table (T > max_positions) or the widths disagree.
    """
    raise NotImplementedError("apply_rope: look up the angles (freqs[:T] or freqs[positions]); cos and sin of the angles as they are (float64), then cast them to x's dtype; x[..., 0::2] and x[..., 1::2] are the pairs; rotate, then interleave again (torch.stack(..., dim=-1).flatten(-2))")


class RotaryCausalSelfAttention(CausalSelfAttention):
    """The masking assignment's CausalSelfAttention with RoPE on the queries and keys of every head.

    Args:
        d_model: model width D.
        n_head: number of heads H; head_dim = D / H must be even.
        dropout: dropout probability on the attention weights and on the output.
        max_positions: the longest sequence the frequency table covers.
        base: the RoPE frequency base.
    Same parameters (query, key, value, proj) as CausalSelfAttention, so state dicts are interchangeable.
    The angle table ``self.freqs`` = rope_frequencies(head_dim, max_positions, base, dtype=torch.float64) is
    a buffer registered with ``persistent=False`` (it is not learned and not saved). Values are never rotated.
    """

    def __init__(self, d_model: int, n_head: int, dropout: float = 0.0, max_positions: int = 2048,
                 base: float = 10000.0):
        super().__init__(d_model, n_head, dropout)
        head_dim = d_model // n_head
        if head_dim % 2:
            raise ValueError(f"RoPE rotates pairs of features, so the head width d_model / n_head must be even; "
                             f"got {d_model} / {n_head} = {head_dim}")
        self.register_buffer("freqs", rope_frequencies(head_dim, max_positions, base, dtype=torch.float64),
                             persistent=False)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Causal self-attention in which query-key scores depend on the relative position.

        Args:
            x: (B, T, D) inputs, T <= max_positions.
            lengths: optional (B,) real lengths of right-padded sequences (as in CausalSelfAttention: outputs
                at padded positions are unspecified).
        Returns:
            (B, T, D) outputs.
        """
        raise NotImplementedError('RotaryCausalSelfAttention.forward: as CausalSelfAttention.forward, with apply_rope(., self.freqs) on the split queries and keys (B, H, T, head_dim), never on the values')

