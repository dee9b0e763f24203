"""Masking and causal self-attention.

Conventions (the grader relies on them):
- A mask is a boolean tensor in which True means "may attend": query i may use key j.
- B batch, H heads, T sequence length, D = d_model model width, d = D / H head width.
- Masks broadcast against attention scores of shape (..., T_q, T_k).
- Leave the caller's tensors as they were: never change an argument in place (scores, queries, ...).
- Make every tensor on the device of the inputs. A module answers each call for that call's length, dtype
  and device (it may be called with another length, cast with .double() or moved with .to()): build masks
  per call, never once for the first call.
- Leave the caller's tensors as they were: never change an argument in place (scores, queries, ...).
- Make every tensor on the device of the inputs. A module answers each call for that call's length, dtype
  and device (it may be called with another length, cast with .double() or moved with .to()): build masks
  per call, never once for the first call.
- Leave the caller's tensors as they were: never change an argument in place (scores, queries, ...).
- Make every tensor on the device of the inputs. A module answers each call for that call's length, dtype
  and device (it may be called with another length, cast with .double() or moved with .to()): build masks
  per call, never once for the first call.

Do not use torch.nn.functional.scaled_dot_product_attention, nn.MultiheadAttention or any
nn.Transformer* class: the grader checks, and tests that find them earn no points.
"""

import math

import torch
from torch import nn

# The three candidate masks from the lecture, for 4 tokens, written as additive masks: 0 keeps a
# score, HIDE (-inf) removes it before the softmax. Row i is query i, column j is key j.
HIDE = -math.inf
LECTURE_MASKS = [
    torch.tensor([[HIDE, HIDE, HIDE, HIDE],
                  [0, HIDE, HIDE, HIDE],
                  [0, 0, HIDE, HIDE],
                  [0, 0, 0, HIDE]]),
    torch.tensor([[0, 0, 0, 0],
                  [HIDE, 0, 0, 0],
                  [HIDE, HIDE, 0, 0],
                  [HIDE, HIDE, HIDE, 0]]),
    torch.tensor([[0, HIDE, HIDE, HIDE],
                  [0, 0, HIDE, HIDE],
                  [0, 0, 0, HIDE],
                  [0, 0, 0, 0]]),
]


def causal_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """The "may attend" pattern of causal (left-to-right) attention.

    Args:
        T: sequence length.
        device: where to create the mask.
    Returns:
        (T, T) bool tensor; entry [i, j] is True exactly when j <= i (a token sees itself and the past).
    """
    raise NotImplementedError('causal_mask: build a lower-triangular boolean matrix (torch.tril), diagonal included')


def lecture_causal_candidate() -> int:
    """Which of LECTURE_MASKS (0, 1 or 2) is the causal mask? Decide it with causal_mask, do not hard-code it.

    Returns:
        the index into LECTURE_MASKS.
    """
    raise NotImplementedError('lecture_causal_candidate: an additive mask keeps the entries that are 0; compare that pattern with causal_mask(4)')


def padding_mask(lengths: torch.Tensor, T: int) -> torch.Tensor:
    """Which positions hold real tokens, for right-padded sequences.

    Args:
        lengths: (B,) integer tensor, the number of real tokens of each sequence (0 <= length <= T).
        T: padded sequence length.
    Returns:
        (B, T) bool tensor; entry [b, t] is True exactly when t < lengths[b].
    """
    raise NotImplementedError('padding_mask: compare torch.arange(T) with lengths, broadcasting to (B, T)')


def combined_mask(lengths: torch.Tensor, T: int) -> torch.Tensor:
    """Causal and padding masks together, ready to broadcast over heads.

    Args:
        lengths: (B,) integer tensor of real lengths.
        T: padded sequence length.
    Returns:
        (B, 1, T, T) bool tensor; [b, 0, i, j] is True when j <= i and key j is a real token of sequence b.
    """
    raise NotImplementedError('combined_mask: the causal (T, T) pattern AND the padding mask of the keys (the last axis)')


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last axis that gives masked keys exactly zero weight.

    Args:
        scores: (..., T_q, T_k) floating tensor of attention scores.
        mask: bool tensor broadcastable to scores (True = may attend), or None for no mask.
    Returns:
        (..., T_q, T_k) weights of the same dtype. Each row sums to 1 over its unmasked keys;
        masked entries are exactly 0. A row whose keys are all masked is all zeros (there is
        nothing to attend to), never NaN. Stable for large scores: subtract the row maximum.
    """
    raise NotImplementedError('masked_softmax: fill masked scores with -inf, subtract the row max over unmasked keys, and divide only where the row sum is positive')


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 mask: torch.Tensor | None = None,
                                 dropout: nn.Module | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d_k)) v, with masking.

    Args:
        q: (..., T_q, d_k) queries.
        k: (..., T_k, d_k) keys.
        v: (..., T_k, d_v) values.
        mask: bool, broadcastable to (..., T_q, T_k), True = may attend; None for no mask.
        dropout: applied to the weights before they multiply v (for example an nn.Dropout); None for none.
    Returns:
        output (..., T_q, d_v) and weights (..., T_q, T_k) (the weights before dropout).
    """
    raise NotImplementedError('scaled_dot_product_attention: scores = q @ k.transpose(-2, -1) / sqrt(d_k); weights = masked_softmax(scores, mask)')


def split_heads(x: torch.Tensor, n_head: int) -> torch.Tensor:
    """Split the model width into heads.

    Args:
        x: (B, T, D) tensor, D divisible by n_head.
        n_head: number of heads H.
    Returns:
        (B, H, T, D // H) tensor; head h holds features h * (D // H) ... (h + 1) * (D // H) - 1.
    """
    raise NotImplementedError('split_heads: view as (B, T, H, D // H), then move the head axis before T')


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Inverse of split_heads.

    Args:
        x: (B, H, T, d) tensor.
    Returns:
        (B, T, H * d) tensor with head h in features h * d ... (h + 1) * d - 1.
    """
    raise NotImplementedError('merge_heads: move the head axis back after T before flattening (transpose, then reshape)')


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with attention and residual dropout.

    Args:
        d_model: model width D.
        n_head: number of heads H; D must be divisible by H. Each head has width d = D / H and
            scores are scaled by 1 / sqrt(d).
        dropout: dropout probability on the attention weights and on the output.
    The parameters are query, key, value (D -> D each) and proj (D -> D); keep these names, the
    grader loads its own weights into them.
    """

    def __init__(self, d_model: int, n_head: int, dropout: float = 0.0):
        super().__init__()
        if d_model % n_head != 0:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_head ({n_head})")
        self.n_head = n_head
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Attend causally within each sequence.

        Args:
            x: (B, T, D) inputs.
            lengths: optional (B,) real lengths of right-padded sequences; keys at padded positions
                are masked. Outputs at padded positions are unspecified (computed, zeroed, anything):
                nothing may read them.
        Returns:
            (B, T, D) outputs: proj(merged heads), after residual dropout.
        """
        raise NotImplementedError('CausalSelfAttention.forward: project to q, k, v and split heads; mask with causal_mask or combined_mask; attend (with self.attn_dropout); merge heads; project; residual dropout')
