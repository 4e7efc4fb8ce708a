#!/usr/bin/env bash
# Installs what gnnc needs on Debian 12 (when missing), then configures and
# builds it in ./build: every target, or only the targets named (and what
# they link), e.g. `scripts/setup.sh gnn-run`. Safe to run again: it only
# does what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ python3
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  libfmt-dev libgtest-dev libopenblas-dev libxsmm-dev libomp-19-dev
  python3-matplotlib python3-pil
  python3-dev python3-numpy pybind11-dev
  openmpi-bin libopenmpi-dev
)
source scripts/install-packages.sh
install_missing_packages "${packages[@]}"

build_type=${GNN_BUILD_TYPE:-Release}
if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE="$build_type"
fi
cmake --build build ${1:+--target "$@"}
