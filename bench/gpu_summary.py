"""Summarise graded batches for bench/gpu_checks.sh: per submission the score, the device and isolation lines, and every
runtime or memory test and every test that lost points.

    python bench/gpu_summary.py RESULTS_FOLDER [RESULTS_FOLDER ...]
"""

import json
import sys
from pathlib import Path

WATCHED = ("runtime", "memory", "time and peak")


def main(folders: list[str]) -> None:
    for root in folders:
        print(f"== {root}")
        for path in sorted(Path(root).rglob("results.json")):
            data = json.loads(path.read_text())
            extra, tests = data.get("extra_data", {}), data.get("tests", [])
            maximum = sum(t.get("max_score", 0) for t in tests)
            print(f"{path.parent.relative_to(root)}: {data.get('score')} / {maximum}  device={extra.get('device')!r}  "
                  f"isolation={str(extra.get('isolation'))[:160]!r}")
            for test in tests:
                name = test.get("name", "")
                if any(word in name.lower() for word in WATCHED) or test.get("score") != test.get("max_score"):
                    output = (test.get("output") or "").replace("\n", " | ")[:300]
                    print(f"    {test.get('score')}/{test.get('max_score')} {name}: {output}")


if __name__ == "__main__":
    main(sys.argv[1:])
