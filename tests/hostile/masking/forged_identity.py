"""Names someone else as its author: Gradescope's submission_metadata.json and an export's submission_metadata.yml,
forged inside the submission (the gradebook once credited whom the json named)."""
CLASS = "16 forged identity"
BASE = "reference"
EXPECT = "full"
FILES = {"submission_metadata.json": '{"id": 1, "users": [{"name": "Mallory Forger", "email": "m@example.com"}]}',
         "submission_metadata.yml": "masking-forged_identity:\n  :submitters:\n  - :name: Mallory Forger\n"}
PRESENT = ["Ignored: submission_metadata.json, submission_metadata.yml in your submission"]
