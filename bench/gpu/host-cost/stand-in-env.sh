# Sourced by the GPU benchmarks (bench/gpu/train.sh, bench/gpu/run.sh) from
# the repository root: sets stand_in_env to the environment that runs a
# tool on the stand-in CUDA driver and cuBLAS (StandInDriver.cpp), built
# first if they are not, with its report of the run's driver calls on.
stand_in_dir=$PWD/build/bench/stand-in-driver
[[ -e $stand_in_dir/libcuda.so.1 ]] ||
  cmake --build build --target gnn-stand-in-cuda gnn-stand-in-cublas >/dev/null
stand_in_env=("LD_LIBRARY_PATH=$stand_in_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  GNNC_STAND_IN_REPORT=1)
