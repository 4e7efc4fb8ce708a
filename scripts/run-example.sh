#!/usr/bin/env bash
# Sets up and builds gnnc, then decodes the bundled copy task's test set
# (examples/copy: 500 sequences of letters, a trained 2-layer Transformer)
# with gnn-run and prints the accuracy against the expected outputs. For a
# Universal Transformer (sort-ut) it also prints how many ACT steps the
# nodes took (a teacher-forced forward on the expected outputs).
#   scripts/run-example.sh [copy|sort|sort-ut] [extra gnn-run flags, e.g. --mode beam]
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== setting up and building gnn-run (the first time: packages and a build, about 15 minutes)"
scripts/setup.sh gnn-run >/dev/null
task=${1:-copy}
shift || true
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

echo "== gnn-run --config examples/$task/config.json --src examples/$task/test.src $*"
build/bin/gnn-run --config "examples/$task/config.json" \
  --src "examples/$task/test.src" --out "$dir/decoded.txt" "$@"
echo "== first lines (source => decoded)"
# sed reads all of paste's output (head would close the pipe early, and
# paste's SIGPIPE would end the script under pipefail).
paste -d'|' "examples/$task/test.src" "$dir/decoded.txt" |
  sed -n '1,3s/|/  =>  /p'
echo "== accuracy against examples/$task/test.ref"
python3 scripts/py/accuracy.py "$dir/decoded.txt" "examples/$task/test.ref"
if grep -q '"universal_transformer"' "examples/$task/config.json"; then
  echo "== ACT steps per node (forward on the expected outputs)"
  sed 's/^/<sos> /' "examples/$task/test.ref" >"$dir/tgt.txt"
  build/bin/gnn-run --config "examples/$task/config.json" \
    --src "examples/$task/test.src" --tgt "$dir/tgt.txt" --mode forward \
    --out "$dir/forward.safetensors" 2>/dev/null
  python3 scripts/py/step_histogram.py "$dir/forward.safetensors"
fi
