"""The assignment's rules on library routines: the masking assignment's check, run on every file you hand in
(masking.py included)."""

from autograder.suites.masking.public.test_5_rules import test_only_allowed_routines

__all__ = ["test_only_allowed_routines"]
