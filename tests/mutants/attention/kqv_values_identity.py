"""kqv_design leaves V = I: the queries pick the right tokens, but their values are not the ones c1 and c2 need."""
# target: attention.ipynb
# unnamed: only properties of its design are graded (a correct answer may differ from the reference's)


def kqv_design(u):
    u_a, u_b, u_c, u_d = u
    norm2 = u_a @ u_a
    Q = (torch.outer(u_b, u_a) + torch.outer(u_c, u_d)) / norm2
    return torch.eye(u.shape[1], dtype=u.dtype), Q, torch.eye(u.shape[1], dtype=u.dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
