"""Causal and padding masks."""

import torch

from autograder.grading import assert_close, assert_tensor, graded


@graded(points=2, covers=["causal_mask"])
def test_causal_mask(masking, oracle, parts):
    """causal_mask: the lower-triangular "may attend" pattern, diagonal included"""
    for T in (1, 2, 5, 8):
        with parts(f"causal_mask({T})"):
            got = masking.causal_mask(T)
            assert_tensor(got, f"causal_mask({T})", shape=(T, T), dtype=torch.bool)
            assert_close(got, oracle(lambda impl, T=T: impl.masking.causal_mask(T)), f"causal_mask({T})")


@graded(points=1, covers=["lecture_causal_candidate"])
def test_lecture_candidate(masking, oracle):
    """lecture_causal_candidate: picks the causal mask among the lecture's three"""
    got = masking.lecture_causal_candidate()
    assert_close(got, oracle(lambda impl: impl.masking.lecture_causal_candidate()), "your answer")


@graded(points=2, covers=["padding_mask"])
def test_padding_mask(masking, oracle, parts):
    """padding_mask: True exactly at the real tokens of right-padded sequences"""
    cases = [(torch.tensor([0, 1, 3, 5]), 5), (torch.tensor([2]), 2), (torch.tensor([4, 1], dtype=torch.int32), 6)]
    for lengths, T in cases:
        label = f"padding_mask({lengths.tolist()}, {T})"
        with parts(label):
            got = masking.padding_mask(lengths, T)
            assert_tensor(got, label, shape=(len(lengths), T), dtype=torch.bool)
            assert_close(got, oracle(lambda impl, lengths=lengths, T=T: impl.masking.padding_mask(lengths, T)), label)


@graded(points=2, covers=["combined_mask", "causal_mask", "padding_mask"])
def test_combined_mask(masking, oracle, parts):
    """combined_mask: causal AND padding, shaped (B, 1, T, T) to broadcast over heads"""
    for lengths, T in [(torch.tensor([3, 5, 1]), 5), (torch.tensor([0, 4]), 4)]:
        label = f"combined_mask({lengths.tolist()}, {T})"
        with parts(label):
            got = masking.combined_mask(lengths, T)
            assert_tensor(got, label, shape=(len(lengths), 1, T, T), dtype=torch.bool)
            assert_close(got, oracle(lambda impl, lengths=lengths, T=T: impl.masking.combined_mask(lengths, T)), label)
