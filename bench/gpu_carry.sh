#!/bin/bash
# What bench/gpu_checks.sh carries to a GPU machine, prepared here, from the repository root (needs the package index):
#   .whl/  landlockpy, pyseccomp and copydetect as wheels for that machine's Python 3.12 (40 kB)
#   .gpu/  the CS224N files of the gpu tier, from ../shared/data/cs224n (520 kB)
# Both are ignored by git (.git/info/exclude), and named in the call's carry: ["`.whl`", "`.gpu`"].
set -euo pipefail
exclude=$(git rev-parse --git-path info/exclude)
for folder in .whl .gpu; do grep -qx "/$folder/" "$exclude" 2>/dev/null || echo "/$folder/" >> "$exclude"; done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 -d .whl landlockpy==0.2.0 pyseccomp==0.1.2 copydetect==0.5.0
mkdir -p .gpu
cp ../shared/data/cs224n/{wiki.txt,birth_places_train.tsv,birth_dev.tsv} .gpu/
du -sh .whl .gpu
