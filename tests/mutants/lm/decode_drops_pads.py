"""Vocabulary.decode leaves out the pad id: a padded example decodes to a shorter string, and a finetuning example
can no longer be read back position by position. Decode every id, pads and masks included."""
# target: dataset.py
# unnamed: checked by a property (the decoded string), not by a comparison with the reference


def _decode_without_pads(self, ids):
    return "".join(self.itos[int(i)] for i in ids if int(i) != PAD_ID)


Vocabulary.decode = _decode_without_pads

# autograder-hidden-canary-7d3e9a (never ships to students)
