#!/usr/bin/env bash
# Sets up and builds gnnc, then runs every test suite (lit and GoogleTest)
# through ctest, then the sanitizer job (scripts/sanitize.sh: the input
# parsers, graph builders and their unit tests under ASan + UBSan, and each
# libFuzzer target for GNN_FUZZ_SECONDS from its seed corpus; skipped with
# GNN_SKIP_SANITIZE=1). Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Python package's tests: pytest, and PyTorch for gnnc.torch (Debian's,
# for /usr/bin/python3); the data-parallel tests' two hosts: iproute2's
# network namespaces.
source scripts/install-packages.sh
install_missing_packages python3-pytest python3-torch iproute2 procps
scripts/setup.sh
# Two tests at a time on two cores: most are single-threaded processes that
# spend their first second loading MLIR.
ctest --test-dir build --output-on-failure -j "$(nproc)"
if [ "${GNN_SKIP_SANITIZE:-0}" != 1 ]; then
  scripts/sanitize.sh
fi
