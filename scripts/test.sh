#!/usr/bin/env bash
# Sets up and builds gnnc, then runs every test suite (lit and GoogleTest)
# through ctest. Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure
