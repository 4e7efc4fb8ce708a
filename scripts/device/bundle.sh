#!/usr/bin/env bash
# Packs a built tree for a GPU test machine that has CUDA but neither
# Debian's LLVM/MLIR packages nor a network: the tools, the unit tests, lit
# with FileCheck, LLVM/MLIR's shared libraries and the Debian libraries they
# load. Each part stays under 64 MiB, for transfers of that size, one after
# the other:
#   .device-llvm/  libLLVM alone
#   .device-gnnc/  everything else
# Then, on the device: scripts/device/check.sh unpack-llvm, then
# scripts/device/check.sh run (see that script).
#   scripts/device/bundle.sh [--with-mpi] [BUILD_DIR]
# --with-mpi adds Open MPI (the launcher and its components, 3 MB) for the
# NCCL checks; with it, .device-gnnc and the repository's files together
# pass a 64 MiB transfer, so it is left out by default.
set -euo pipefail
cd "$(dirname "$0")/../.."
with_mpi=0
if [[ ${1:-} == --with-mpi ]]; then
  with_mpi=1
  shift
fi
build=${1:-build}
llvm=/usr/lib/llvm-19
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
for d in .device-llvm .device-gnnc; do
  grep -qx "/$d/" "$exclude" 2>/dev/null || echo "/$d/" >>"$exclude"
done
mkdir -p .device-llvm .device-gnnc

binaries=("$build"/bin/* "$build"/unittests/GNNUnitTests \
  "$build"/unittests/GNNRuntimeTests "$build"/lib/libgnnc_runtime.so \
  $llvm/bin/FileCheck $llvm/bin/not $llvm/bin/count $llvm/bin/mlir-translate)
# Open MPI for the data-parallel checks (the NCCL path on one GPU): the
# launcher, gnnc's plugin and the components Open MPI opens at run time.
mpi_files=()
if ((with_mpi)) && [[ -f "$build"/lib/libgnnc-mpi.so ]] && command -v orterun >/dev/null; then
  ompi=/usr/lib/x86_64-linux-gnu/openmpi
  binaries+=("$build"/lib/libgnnc-mpi.so "$(command -v orterun)"
    $(find $ompi -name '*.so' -type f))
  mpi_files=(usr/bin/orterun usr/bin/mpirun usr/bin/mpiexec "${ompi#/}"
    usr/share/openmpi etc/openmpi)
fi

# Libraries outside LLVM's tree and the build, except the C/C++ runtime the
# device's newer glibc and libstdc++ provide.
ldd "${binaries[@]}" 2>/dev/null | awk '/=> \//{print $3}' | sort -u |
  grep -v -e "^$llvm/" -e "^$PWD/$build/" \
    -e '/lib\(c\|m\|dl\|rt\|pthread\|stdc++\|gcc_s\)\.so' >"$build/device-deps.txt"
# The runtime opens OpenBLAS with dlopen, so ldd does not list it (packed
# under its soname, the name the runtime opens).
openblas=/lib/x86_64-linux-gnu/libopenblas.so.0
{ echo "$openblas"; ldd "$openblas" | awk '/=> \//{print $3}' |
  grep -v -e '/lib\(c\|m\|dl\|rt\|pthread\|stdc++\|gcc_s\)\.so'; } >>"$build/device-deps.txt"
sort -u -o "$build/device-deps.txt" "$build/device-deps.txt"

xz_tar() { # OUT DIR FILES...
  local out=$1 dir=$2
  shift 2
  tar -C "$dir" -chf - "$@" | xz -T0 -9 >"$out"
}
# What comes from packages is packed once (delete the folders to repack);
# the build, at every call.
[[ -f .device-llvm/llvm.tar.xz ]] ||
  xz_tar .device-llvm/llvm.tar.xz / "${llvm#/}/lib/libLLVM.so.19.1"
[[ -f .device-gnnc/llvm-rest.tar.xz ]] ||
  xz_tar .device-gnnc/llvm-rest.tar.xz / \
  "${llvm#/}"/lib/libMLIR.so.19.1 "${llvm#/}"/lib/libmlir_c_runner_utils.so.19.1 \
  "${llvm#/}"/lib/libmlir_float16_utils.so.19.1 "${llvm#/}"/lib/libomp.so.5 "${llvm#/}"/lib/libomp.so \
  "${llvm#/}"/bin/FileCheck "${llvm#/}"/bin/not "${llvm#/}"/bin/count \
  "${llvm#/}"/bin/mlir-translate \
  "${llvm#/}"/build/utils/lit
[[ -f .device-gnnc/deps.tar.xz ]] ||
  xz_tar .device-gnnc/deps.tar.xz / $(sed 's|^/||' "$build/device-deps.txt")
if ((${#mpi_files[@]})); then
  [[ -f .device-gnnc/mpi.tar.xz ]] || xz_tar .device-gnnc/mpi.tar.xz / "${mpi_files[@]}"
  mpi_plugin=("$build"/lib/libgnnc-mpi.so)
else
  rm -f .device-gnnc/mpi.tar.xz
  mpi_plugin=()
fi
xz_tar .device-gnnc/build.tar.xz . "$build"/bin "$build"/lib/libgnnc_runtime.so \
  "${mpi_plugin[@]}" \
  "$build"/unittests/GNNUnitTests "$build"/unittests/GNNRuntimeTests \
  "$build"/test/lit.site.cfg.py
du -sh .device-llvm .device-gnnc
