#!/bin/bash
# The GPU checks, as one script for a lent GPU machine (docs/performance.md, GPU), in one call of at most 10 minutes:
#   1. doctor   `autograder doctor --gpu`: the layer that keeps CUDA from a worker, if one does (docs/security.md)
#   2. tests    tests/sandbox/test_gpu_doctor.py, test_gpu_sandbox.py, test_memory_limit.py on the machine
#   3. warm     the examples graded (retraining skipped), warm workers, namespaces: the runtime tests on CUDA in
#               workers, and a slow masking (Python loops: tests/mutants/masking/attention_python_loops.py) that
#               must lose them
#   4. cold     masking, lm and the slow masking again with AUTOGRADER_COLD=1 (the compile cache of a sandbox uid)
#   5. perms    the same three warm without namespaces (AUTOGRADER_NAMESPACES=0: permissions mode, as on Gradescope)
#   6. tier     bench/gpu_tier.py on the CS224N data, one variant at a time (VARIANTS, vanilla first), each training
#               run capped so that the variant ends before the budget (a capped run's accuracy is not the target's:
#               the full recipe, over 7 minutes a variant on an H100, takes a call of its own: PARTS=tier)
# PARTS picks steps (default all, in that order); BUDGET the seconds in all (default 540); each step has a timeout and
# writes its output under $OUT (at most 8 files come back: doctor.txt, tests.txt, gradings.txt, tier.txt, log.txt).
#
# Run from the repository root there, with $OUT set, carrying (bench/gpu_carry.sh prepares both here, ignored by git):
#   .whl/  the wheels the machine lacks, 40 kB: landlockpy==0.2.0, pyseccomp==0.1.2, copydetect==0.5.0
#          (python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp
#           --platform manylinux2014_x86_64 -d .whl landlockpy==0.2.0 pyseccomp==0.1.2 copydetect==0.5.0)
#   .gpu/  the CS224N files, 520 kB: wiki.txt, birth_places_train.tsv, birth_dev.tsv (cp ../shared/data/cs224n/...)
# The machine's Python is not ours (3.12, its own torch 2.11 and Triton, the rest of its image): the checkout goes on
# its path through a .pth file, and the project's metadata (which `autograder --version` reads) is stood in for,
# since pyproject.toml asks for Python 3.11. Its commands run as root, so both root modes are graded.
# One call:  bash bench/gpu_checks.sh   (carry .whl and .gpu; timeout_s 600)
export PYTHONUNBUFFERED=1 AUTOGRADER_UIDS=${AUTOGRADER_UIDS:-61000-61511}
BUDGET=${BUDGET:-540}
PARTS=${PARTS:-doctor tests warm cold perms tier}
VARIANTS=${VARIANTS:-vanilla rope}
OUT=${OUT:-/tmp/gpu-checks}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
start=$(date +%s); stamp() { echo "[+$(( $(date +%s) - start ))s] $*"; }
left() { echo $(( BUDGET - ($(date +%s) - start) )); }
want() { [[ " $PARTS " == *" $1 "* ]]; }
stamp setup; nvidia-smi -L; python3 -V; uname -r; ls -l /dev/nvidia* 2>&1 | head -12
SITE=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
python3 -m pip install -q --no-index --no-deps --no-compile .whl/*.whl 2>&1 | tail -2
echo "$PWD" > "$SITE/autograder-checkout.pth"
mkdir -p "$SITE/transformer_autograder-0.1.0.dist-info"
printf 'Metadata-Version: 2.1\nName: transformer-autograder\nVersion: 0.1.0\n' \
  > "$SITE/transformer_autograder-0.1.0.dist-info/METADATA"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'

if want doctor; then
  stamp doctor
  timeout 120 python3 -m autograder.cli doctor --gpu > "$OUT/doctor.txt" 2>&1; echo "doctor: exit $?"
  grep -E "^(isolation|No NVIDIA|NVIDIA)|=>" "$OUT/doctor.txt"
fi
if want tests; then
  stamp tests
  timeout 90 python3 -m pytest tests/sandbox/test_gpu_doctor.py tests/sandbox/test_gpu_sandbox.py tests/sandbox/test_memory_limit.py -q \
    -p no:cacheprovider > "$OUT/tests.txt" 2>&1; tail -3 "$OUT/tests.txt"
fi
# A slow masking: the reference with the Python-loops mutant appended (later definitions win).
mkdir -p /tmp/slow/masking_slow
cat solutions/masking/masking.py tests/mutants/masking/attention_python_loops.py > /tmp/slow/masking_slow/masking.py
grade() {  # NAME TIMEOUT PATHS... (the environment says warm or cold, namespaces or not)
  local name=$1 limit=$2; shift 2
  stamp "grading: $name"
  ( time timeout "$limit" python3 -m autograder.cli grade "$@" /tmp/slow/masking_slow --out "/tmp/$name" --jobs 4 \
      --skip-tag retraining --quiet ) > "/tmp/$name.txt" 2>&1
  tail -4 "/tmp/$name.txt"; folders+=("/tmp/$name")
}
folders=()
want warm && AUTOGRADER_COLD=0 grade warm 100 examples/attention examples/masking examples/positions examples/lm
want cold && AUTOGRADER_COLD=1 grade cold 100 examples/masking/reference examples/lm/reference examples/lm/partly_wrong
want perms && AUTOGRADER_NAMESPACES=0 grade permissions 80 examples/masking/reference examples/lm/reference
if [ ${#folders[@]} -gt 0 ]; then
  python3 bench/gpu_summary.py "${folders[@]}" > "$OUT/gradings.txt" 2>&1
  grep -E "^(==|[a-z])" "$OUT/gradings.txt" | head -30
fi
if want tier; then
  for variant in $VARIANTS; do
    budget=$(left)
    [ "$budget" -lt 90 ] && { stamp "no time left for $variant"; break; }
    cap=$(( (budget - 60) / 2 ))  # pretraining and finetuning each capped, evaluation after
    stamp "tier: $variant, each training run capped at $cap s"
    timeout "$budget" python3 bench/gpu_tier.py --data .gpu --variants "$variant" --skip-scratch --max-seconds "$cap" \
      >> "$OUT/tier.txt" 2>&1
    tr '\r' '\n' < "$OUT/tier.txt" | grep -v "^training" | tail -3
  done
fi
stamp done
