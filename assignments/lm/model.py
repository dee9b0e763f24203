"""A character-level GPT: transformer blocks, token and position embeddings, generation.

Conventions (the grader relies on them):
- B batch, T sequence length (at most block_size), D = n_embd, V = vocab_size.
- Variants: ``vanilla`` adds learned absolute positions (positions.LearnedPositions) to the token
  embeddings; ``rope`` adds none and uses positions.RotaryCausalSelfAttention in every block instead
  of masking.CausalSelfAttention.
- Parameter names are fixed: tok_emb, pos_emb (vanilla only), blocks.{i}.ln1,
  blocks.{i}.attn.{query,key,value,proj}, blocks.{i}.ln2, blocks.{i}.mlp.0 (D -> 4D), blocks.{i}.mlp.2 (4D -> D),
  ln_f, head (D -> V, no bias). So state dicts are interchangeable with the grader's model: it loads its own
  weights into yours, and grades the weights your training produced (model.state_dict(): exactly these float32
  parameters, no other persistent buffer) in its own model.
- The loss is the mean cross-entropy over the targets that are not the pad id (0).

This assignment carries your masking.py and positions.py: hand them in with these files.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from masking import CausalSelfAttention
from positions import LearnedPositions, RotaryCausalSelfAttention
from torch import nn

PAD_ID = 0
VARIANTS = ("vanilla", "rope")


@dataclass
class GPTConfig:
    """The model's shape.

    Args:
        vocab_size: V.
        block_size: the longest sequence T the model accepts.
        n_layer, n_head, n_embd: depth, heads per block, width D (D divisible by n_head).
        dropout: probability of every dropout (embeddings, attention weights, residual branches).
        variant: "vanilla" or "rope".
        rope_base: the RoPE frequency base.
    """

    vocab_size: int
    block_size: int
    n_layer: int = 4
    n_head: int = 8
    n_embd: int = 256
    dropout: float = 0.1
    variant: str = "vanilla"
    rope_base: float = 10000.0

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r}; choose one of {', '.join(VARIANTS)}")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")


class Block(nn.Module):
    """One pre-LayerNorm transformer block: x + attn(ln1(x)), then + mlp(ln2(x)).

    Submodules (keep the names): ln1, ln2 (nn.LayerNorm(D)); attn (masking.CausalSelfAttention for
    ``vanilla``, positions.RotaryCausalSelfAttention with max_positions=block_size and base=rope_base for
    ``rope``, both with the config's dropout); mlp = nn.Sequential(Linear(D, 4D), GELU(), Linear(4D, D), Dropout).
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        raise NotImplementedError('Block.__init__: two LayerNorms, the attention of the variant, and the 4x-wide GELU feed-forward in an nn.Sequential')

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, D) -> (B, T, D), causal: output t depends on inputs 0..t only."""
        raise NotImplementedError('Block.forward: two residual branches, each reading a LayerNorm of the running x')


class GPT(nn.Module):
    """The language model: embeddings, n_layer blocks, a final LayerNorm and the output head.

    Submodules (keep the names): tok_emb (nn.Embedding(V, D)); pos_emb (positions.LearnedPositions(
    block_size, D), ``vanilla`` only; None for ``rope``); drop (nn.Dropout); blocks (nn.ModuleList of
    Block); ln_f (nn.LayerNorm(D)); head (nn.Linear(D, V, bias=False)).
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        raise NotImplementedError('GPT.__init__: the embeddings (pos_emb only for vanilla, else None), dropout, the blocks, ln_f and the head')
        self.apply(_init_weights)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Next-character logits, and the loss when targets are given.

        Args:
            idx: (B, T) int64 ids, T <= block_size.
            targets: optional (B, T) int64 ids; positions whose target is the pad id carry no loss.
        Returns:
            logits (B, T, V) and the mean cross-entropy over non-pad targets (a 0-dim tensor), or None
            without targets.
        Raises:
            ValueError when T > block_size.
        """
        raise NotImplementedError('GPT.forward: refuse T > block_size; token embeddings (+ pos_emb for vanilla), dropout, blocks, ln_f, head; F.cross_entropy with ignore_index=PAD_ID over (B * T, V)')

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, max_new_tokens: int, sample: bool = False, temperature: float = 1.0,
                 top_k: int | None = None, stop_id: int | None = None,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        """Extend ``idx`` one token at a time, feeding each prediction back in.

        Args:
            idx: (B, T0) int64 prompt ids.
            max_new_tokens: how many tokens to add.
            sample: False for greedy decoding (argmax of the last position's logits), True to sample
                from softmax(logits / temperature), keeping only the top_k logits when top_k is given.
            stop_id: when given, stop early once every row has produced this id at least once (the
                rows may then be shorter than T0 + max_new_tokens; what follows a row's stop_id is
                whatever it produced meanwhile).
            generator: the random generator for sampling (None: torch's global one).
        Returns:
            (B, T0 + n) int64 ids, the prompt followed by n <= max_new_tokens generated tokens. The
            context fed to the model is the last block_size tokens. Call ``model.eval()`` first: this
            method does not change the training mode.
        """
        raise NotImplementedError("GPT.generate: loop: crop to the last block_size tokens, take the last position's logits, argmax (or top-k filter, softmax of logits / temperature and torch.multinomial), append; stop early when every row has produced stop_id")


def _init_weights(module: nn.Module) -> None:
    """GPT-2 style initialisation: N(0, 0.02) weights and zero biases for Linear and Embedding."""
    if isinstance(module, nn.Linear | nn.Embedding):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if getattr(module, "bias", None) is not None:
            nn.init.zeros_(module.bias)
