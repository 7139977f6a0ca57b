#!/usr/bin/env bash
# Builds, here, what ci/device-check.sh runs on a GPU machine that has a CUDA 13 driver and
# Python but no compiler, no Debian packages and no network.
#
#   ci/build-device.sh [extra cmake arguments]
#
# Result: build-device/bin (ckptbench, the test and benchmark programs) and build-device/lib
# (every shared library they load except glibc's and the NVIDIA driver's), small enough to
# carry: build-device/bin, build-device/lib and .deps/cufile (the nvidia-cufile wheel's library,
# used when the GPU machine has none of its own).
#
# The device build differs from the default one where the GPU machine needs it:
# - the CUDA runtime is linked statically (CMAKE_CUDA_RUNTIME_LIBRARY=Static) for sm_80 and
#   sm_90 (the H200 is sm_90; "native" cannot work here, where there is no GPU);
# - no MPI (CKPT_WITH_MPI=OFF, so no mpiio or parallel hdf5): the GPU machine has no mpirun,
#   and Open MPI's singleton start needs its orted; the device check runs one process anyway;
# - RPATH $ORIGIN/../lib, so the programs find the copied libraries wherever the tree lands.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-device
jobs="${CKPT_JOBS:-2}"

./ci/setup.sh
cmake -S . -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCKPT_WARNINGS_AS_ERRORS=ON \
  -DCKPT_WITH_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="80;90" \
  -DCMAKE_CUDA_RUNTIME_LIBRARY=Static \
  -DCKPT_BACKEND_GDS=ON \
  -DCKPT_WITH_MPI=OFF \
  -DCKPT_BACKEND_MPIIO=OFF \
  -DCKPT_BACKEND_HDF5=OFF \
  -DCMAKE_BUILD_RPATH='$ORIGIN/../lib' \
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=OFF \
  --no-warn-unused-cli \
  "$@" >/dev/null

# The programs the device check runs; a target this tree does not define (yet) is left out.
wanted=(ckptbench ckpt_backend_tests ckpt_unit_memory_tests ckpt_unit_engine_tests ckpt_unit_cli_tests
  ckpt_memory_tests ckpt_bench_memory ckpt_memory_bench)
defined="$(cmake --build "$build" --target help | sed -n 's/^\([A-Za-z0-9_]*\): .*/\1/p')"
targets=()
for t in "${wanted[@]}"; do
  if grep -qx "$t" <<<"$defined"; then targets+=("$t"); fi
done
echo "ci/build-device.sh: building ${targets[*]} in $build (-j $jobs)"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

# Every shared library the programs load, except those the GPU machine must provide itself:
# glibc (it must match the machine's loader) and the NVIDIA driver's (libcuda, libnvidia-*).
# libstdc++ and libgcc_s go to lib/compat, outside the RUNPATH: Debian 12's need glibc 2.36, so
# the machine's own are used, and ci/device-check.sh adds lib/compat only when they are too old.
mkdir -p "$build/lib/compat"
rm -f "$build"/lib/*.so* "$build"/lib/compat/*
for program in "$build"/bin/*; do
  [ -f "$program" ] && [ -x "$program" ] || continue
  ldd "$program" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | while read -r library; do
  case "$(basename "$library")" in
    libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | libresolv.so* | libutil.so* | \
      ld-linux* | libcuda.so* | libnvidia* | libcufile*) ;;
    libstdc++.so* | libgcc_s.so*) cp -L "$library" "$build/lib/compat/" ;;
    *) cp -L "$library" "$build/lib/" ;;
  esac
done
echo "ci/build-device.sh: libraries in $build/lib:" $(cd "$build/lib" && ls *.so* compat/*)
du -sh "$build/bin" "$build/lib" .deps/cufile 2>/dev/null | sed 's/^/ci\/build-device.sh: /'
