"""The positions suite's naming experiments (``autograder.grading.naming``): the carried masking.py's (the masking
suite's probes) and, for each function of positions.py, a family of fixed inputs: the ordinary and those where known
mistakes part ways (other bases, head widths, positions given out of order, long tables). Which input confirms which
mistake is derived from the values, never written here: add inputs where a new mistake could hide, not mistakes.
"""

import torch

from autograder.grading import Probe
from autograder.suites.masking.probes import PROBES as MASKING_PROBES
from autograder.suites.positions import common


def _frequencies(head_dim, max_positions, base=None, dtype=torch.float64):
    def probe(impl, head_dim=head_dim, max_positions=max_positions, base=base, dtype=dtype):
        if base is None:
            return impl.positions.rope_frequencies(head_dim, max_positions, dtype=dtype)
        return impl.positions.rope_frequencies(head_dim, max_positions, base, dtype=dtype)
    return probe


def _rope(shape, max_positions, seed, *, positions=None, dtype=torch.float64):
    x = common.vectors(shape, seed, dtype)
    table = common.angle_table(shape[-1], max_positions, seed)

    def probe(impl, x=x, table=table, positions=positions):
        if positions is None:
            return impl.positions.apply_rope(x, table)
        return impl.positions.apply_rope(x, table, positions)
    return probe


def _rotary(d_model, n_head, seed, *, base=10000.0, lengths=None, T=6):
    state = common.attention_state(d_model, seed, torch.float64)
    x = common.inputs(2, T, d_model, seed, torch.float64)
    lengths = None if lengths is None else torch.tensor(lengths)

    def probe(impl, state=state, x=x, lengths=lengths):
        module = common.rotary(impl, d_model, n_head, state, max_positions=16, base=base)
        out = module(x) if lengths is None else module(x, lengths)
        return out if lengths is None else out[torch.arange(T)[None, :] < lengths[:, None]]
    return probe


def _learned(block_size, d_model, T, seed):
    weight = common.vectors((block_size, d_model), seed, torch.float64)
    x = common.vectors((2, T, d_model), seed + 1, torch.float64)

    def probe(impl, weight=weight, x=x):
        return common.learned(impl, block_size, d_model, weight)(x)
    return probe


def _attention_ffn(d_model, T, seed, *, perm=False, positions=False):
    weights = common.ffn_weights(d_model, 2 * d_model, seed, torch.float64)
    x = common.vectors((2, T, d_model), seed + 1, torch.float64)
    order = common.permutation(T, seed)
    added = common.vectors((T, d_model), seed + 2, torch.float64) if positions else None

    def probe(impl, weights=weights, x=x, order=order, added=added):
        if not perm:
            return impl.positions.attention_ffn(x, weights)
        distance = impl.positions.permute_check(x, order, weights, added)
        return round(float(distance), 6) if added is not None else float(distance) < 1e-9
    return probe


PROBES = [
    *MASKING_PROBES,
    Probe("attention_ffn", "D 6, T 4", _attention_ffn(6, 4, 50)),
    Probe("attention_ffn", "D 9, T 5", _attention_ffn(9, 5, 51)),
    Probe("permute_check", "without positions", _attention_ffn(6, 5, 52, perm=True)),
    Probe("permute_check", "with positions", _attention_ffn(6, 5, 53, perm=True, positions=True)),
    Probe("LearnedPositions", "T below block_size", _learned(8, 6, 5, 54)),
    Probe("LearnedPositions", "T = block_size", _learned(4, 3, 4, 55)),
    Probe("sinusoidal", "T 6, d 8", lambda impl: impl.positions.sinusoidal(6, 8, torch.float64)),
    Probe("sinusoidal", "T 40, d 12", lambda impl: impl.positions.sinusoidal(40, 12, torch.float64)),
    Probe("sinusoidal", "float32", lambda impl: impl.positions.sinusoidal(9, 6)),
    Probe("shift_operator", "k 3, d 6", lambda impl: impl.positions.shift_operator(3, 6, torch.float64)),
    Probe("shift_operator", "k -2, d 8", lambda impl: impl.positions.shift_operator(-2, 8, torch.float64)),
    Probe("rope_frequencies", "head_dim 8, default base", _frequencies(8, 6)),
    Probe("rope_frequencies", "head_dim 12, base 10000 given", _frequencies(12, 5, 10000.0)),
    Probe("rope_frequencies", "head_dim 8, base 100", _frequencies(8, 6, 100.0)),
    Probe("rope_frequencies", "head_dim 6, base 500", _frequencies(6, 7, 500.0)),
    Probe("rope_frequencies", "float32", _frequencies(10, 3000, dtype=torch.float32)),
    Probe("apply_rope", "positions 0..T-1", _rope((2, 3, 5, 8), 9, 60)),
    Probe("apply_rope", "float32", _rope((2, 4, 6), 6, 61, dtype=torch.float32)),
    Probe("apply_rope", "positions given out of order",
          _rope((3, 4, 6), 12, 62, positions=torch.tensor([7, 0, 3, 11]))),
    Probe("apply_rope", "positions per sequence", _rope((2, 3, 4), 9, 63, positions=torch.tensor([[5], [2]]))),
    Probe("apply_rope", "float32, far positions (angles in the thousands)",
          _rope((1, 2, 3, 8), 3000, 67, positions=torch.tensor([2999, 1700, 2500]), dtype=torch.float32)),
    Probe("RotaryCausalSelfAttention", "D 16, 4 heads", _rotary(16, 4, 64)),
    Probe("RotaryCausalSelfAttention", "D 24, 2 heads, base 100", _rotary(24, 2, 65, base=100.0)),
    Probe("RotaryCausalSelfAttention", "D 12, 3 heads, padded", _rotary(12, 3, 66, lengths=[6, 3])),
]
