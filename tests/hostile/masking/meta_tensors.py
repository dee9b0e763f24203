"""Computes the softmax on the meta device: torch raises NotImplementedError, which must be reported as the error it
is, not as "not implemented yet"."""
CLASS = "8 links and messages"
BASE = "reference"
EXPECT = "below"
ABSENT = ["masked_softmax(...) is not implemented yet"]
CODE = r'''
def masked_softmax(scores, mask=None):
    meta = scores.to("meta").softmax(-1)
    return meta.cpu()
'''
