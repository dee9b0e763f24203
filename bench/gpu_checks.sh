#!/bin/bash
# The GPU checks, as one script for a lent GPU machine (docs/performance.md, GPU): tests/test_gpu_sandbox.py, the
# examples graded warm and cold on CUDA, then the gpu preset on the CS224N data (bench/gpu_tier.py) for what time is
# left. Run from the repository root there, with $OUT set (what comes back) and, carried beside the checkout:
#   .whl/    the wheels the machine lacks (landlockpy, pyseccomp, copydetect; pip download --python-version 3.12 ...)
#   .gpu/    the CS224N files (wiki.txt, birth_places_train.tsv, birth_dev.tsv) from ../shared/data/cs224n
# The machine's Python is not ours (3.12, its own torch): the checkout goes on its path through a .pth file, and the
# project's metadata (which `autograder --version` reads) is stood in for, since pyproject.toml asks for Python 3.11.
export PYTHONUNBUFFERED=1
BUDGET=${BUDGET:-480}
start=$(date +%s); stamp() { echo "[+$(( $(date +%s) - start ))s] $*"; }
stamp setup; nvidia-smi -L; python3 -V
SITE=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
python3 -m pip install -q --no-index --no-deps --no-compile .whl/*.whl 2>&1 | tail -2
echo "$PWD" > "$SITE/autograder-checkout.pth"
mkdir -p "$SITE/transformer_autograder-0.1.0.dist-info"
printf 'Metadata-Version: 2.1\nName: transformer-autograder\nVersion: 0.1.0\n' \
  > "$SITE/transformer_autograder-0.1.0.dist-info/METADATA"
stamp test_gpu_sandbox
timeout 90 python3 -m pytest tests/test_gpu_sandbox.py -q -p no:cacheprovider 2>&1 | tail -3 | tee $OUT/test_gpu_sandbox.txt
for mode in warm cold; do
  stamp "examples, $mode"
  cold=$([ $mode = cold ] && echo 1 || echo 0)
  ( time AUTOGRADER_COLD=$cold timeout 150 python3 -m autograder.cli grade examples --out /tmp/$mode --jobs 4 \
      --skip-tag retraining --quiet ) > $OUT/$mode.txt 2>&1
  tail -4 $OUT/$mode.txt; cp /tmp/$mode/summary.md $OUT/${mode}_summary.md 2>/dev/null
done
python3 bench/gpu_summary.py /tmp/warm /tmp/cold > $OUT/gradings.txt 2>&1
left=$(( BUDGET - ($(date +%s) - start) ))
stamp "the gpu preset, vanilla then rope, for $left s"
timeout $left python3 bench/gpu_tier.py --data .gpu --skip-scratch > $OUT/tier.txt 2>&1
stamp done; tr '\r' '\n' < $OUT/tier.txt | grep -v "^training" | tail -8
