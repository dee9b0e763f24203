"""Hands in a predictions file that is a link to the hidden test labels in the grader's checkout."""
CLASS = "8 links and messages"
BASE = "skeleton"
EXPECT = "zero"
FILES = {"vanilla.test.predictions": {"link": "@REPO@/autograder/suites/lm/hidden/birth_test_labels.tsv"}}
