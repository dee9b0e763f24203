"""LearnedPositions: x_t + p_t, and a clear error instead of extrapolating past block_size."""

import torch

from autograder.grading import assert_close, assert_tensor, forward_backward, graded, read
from autograder.suites.positions import common


@graded(points=2, covers=["LearnedPositions"])
def test_learned_matches_reference(student, oracle, parts):
    """LearnedPositions: adds weight[t] to the token at position t (float32 and float64, T up to block_size)"""
    for index, (block_size, d_model, B, T, dtype) in enumerate([(8, 6, 2, 5, torch.float32),
                                                                 (5, 4, 3, 5, torch.float64),
                                                                 (16, 8, 1, 1, torch.float32)]):
        weight = common.vectors((block_size, d_model), seed=200 + index, dtype=dtype)
        x = common.vectors((B, T, d_model), seed=210 + index, dtype=dtype)

        def run(impl, block_size=block_size, d_model=d_model, weight=weight, x=x):
            return common.learned(impl, block_size, d_model, weight)(x)

        with parts(f"block_size={block_size}, x {tuple(x.shape)}, {dtype}"):
            got = run(student)
            assert_tensor(got, "the output", shape=tuple(x.shape), dtype=dtype)
            assert_close(got, oracle(run), "the output")


@graded(points=2, covers=["LearnedPositions"])
def test_learned_refuses_long_sequences(student, parts):
    """LearnedPositions: a sequence longer than block_size raises a ValueError that names the limit"""
    for block_size, T in [(4, 5), (6, 9)]:
        module = common.learned(student, block_size, 3, common.vectors((block_size, 3), seed=220))
        with parts(f"block_size={block_size}, T={T}"):
            common.assert_raises_value_error(
                lambda module=module, T=T: module(common.vectors((2, T, 3), seed=221)),
                f"LearnedPositions(block_size={block_size}) on {T} tokens",
                "there is no learned vector past the table, and silently clamping or wrapping positions gives wrong "
                "embeddings without any warning; say that the embedding cannot extrapolate and name the limit",
                mention=str(block_size))


@graded(points=1, covers=["LearnedPositions"])
def test_learned_gradients(student):
    """LearnedPositions: the gradient reaches weight[t] for t < T only"""
    weight = common.vectors((6, 4), seed=230, dtype=torch.float64)
    x = common.vectors((2, 4, 4), seed=231, dtype=torch.float64)
    grad = common.vectors((2, 4, 4), seed=232, dtype=torch.float64)
    got = forward_backward(common.learned(student, 6, 4, weight), x, grad_output=grad)
    value = got["param_grads"].get("weight")
    assert value is not None, "weight received no gradient: keep it an nn.Parameter named weight and use it in forward"
    expected = torch.cat([grad.sum(0), torch.zeros(2, 4, dtype=torch.float64)])
    assert_close(value, expected, "the gradient of weight (row t sums the output gradients at position t over the "
                 "batch; rows T and beyond get none)")
    assert_close(got["input_grads"][0], grad, "the gradient of x (the embeddings are added, so it passes unchanged)")


@graded(points=1, covers=["LearnedPositions"])
def test_learned_initialisation(student):
    """LearnedPositions: a new table is drawn from N(0, 0.02^2) (its spread and its tails, not only its mean)"""
    student.seed(0)
    module = student.positions.LearnedPositions(256, 64)
    weight = read(module, "weight")
    assert_tensor(weight, "a new LearnedPositions(256, 64).weight", shape=(256, 64), dtype=torch.float32)
    # the table as forward adds it: a module whose forward is missing or wrong earns nothing for its table alone
    assert_close(module(torch.zeros(1, 256, 64))[0], weight, "a new LearnedPositions(256, 64) applied to zeros (it "
                 "adds the table, so the result is weight itself)")
    values = weight.double()
    mean, std = float(values.mean()), float(values.std())
    tails = float((values.abs() > 0.04).double().mean())  # beyond two standard deviations: 4.6% of a normal draw
    assert abs(mean) < 0.002 and 0.019 <= std <= 0.021, (
        f"a new table has mean {mean:.4f} and standard deviation {std:.4f}; initialise it from N(0, 0.02^2): "
        "0.02 * torch.randn(block_size, d_model)")
    assert 0.035 <= tails <= 0.056, (
        f"{tails:.1%} of a new table's entries lie beyond 0.04 (two standard deviations), where a normal draw puts "
        "4.6%: draw from a normal distribution (torch.randn), not a uniform one")
