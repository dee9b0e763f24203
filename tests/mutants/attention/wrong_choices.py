"""Multiple-choice misconceptions: softmax down the columns, the mask that hides the diagonal, a single head that
stays on the average, and c2 as the average of the other tokens."""
# target: attention.ipynb
# unnamed: multiple-choice answers are compared as values, not through the oracle

softmax_axis = 0
causal_candidate = 0
single_head_behaviour = "a"
c2_identity = "c"

# autograder-hidden-canary-7d3e9a (never ships to students)
