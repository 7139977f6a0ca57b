#!/usr/bin/env bash
# Installs the Debian packages ckptbench builds and tests with. Idempotent: when every
# package is already present it returns in well under a second without touching apt.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev hdf5-tools python3-h5py
  liburing-dev
  libcurl4-openssl-dev
  libzstd-dev zstd
  libtomlplusplus-dev nlohmann-json3-dev libcli11-dev libfmt-dev libxxhash-dev
  libbenchmark-dev libgtest-dev
  libtrilinos-kokkos-dev
  fio
  python3-venv
  help2man
  clang clang-format libclang-rt-14-dev lld
  chromium
)

# The gds backend compiles against cuFile's own header, which no Debian package has; PyPI's
# nvidia-cufile wheel (for CUDA 13) carries it. It goes into .deps/cufile (ignored by git), where
# CMake looks first; the library itself is loaded at run time, never linked. Not fatal: without
# it CKPT_BACKEND_GDS=AUTO leaves the backend out and says why.
cufile_wheel="nvidia-cufile==1.15.1.6"
cufile_dir="$(cd "$(dirname "$0")/.." && pwd)/.deps/cufile"
if [ ! -f "$cufile_dir/nvidia/cu13/include/cufile.h" ]; then
  echo "ci/setup.sh: installing $cufile_wheel into .deps/cufile (cufile.h for the gds backend)"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "$cufile_dir" \
      "$cufile_wheel" ||
    echo "ci/setup.sh: warning: could not install $cufile_wheel; the gds backend will not be built"
fi

# The Python check of safetensors files (tests/python) reads them with the official package,
# pinned, in .deps/venv (ignored by git). Not fatal: without it that ctest is skipped and says why.
venv_dir="$(cd "$(dirname "$0")/.." && pwd)/.deps/venv"
venv_packages=("safetensors==0.4.5" "numpy==1.26.4")
install_venv() {
  if ! "$venv_dir/bin/python" -c "import safetensors, numpy; assert safetensors.__version__ == '0.4.5'" 2>/dev/null; then
    echo "ci/setup.sh: installing ${venv_packages[*]} into .deps/venv (the Python safetensors check)"
    { python3 -m venv "$venv_dir" &&
        "$venv_dir/bin/pip" install --quiet --disable-pip-version-check "${venv_packages[@]}"; } ||
      echo "ci/setup.sh: warning: could not make .deps/venv; the Python safetensors check will be skipped"
  fi
  install_moto
}

# The s3 backend's tests run against moto's S3 server (tests/backends/s3/moto_fixture.py starts it
# on a free port of 127.0.0.1), pinned, in the same venv. Not fatal: without it they are skipped.
moto_package="moto[server]==5.2.5"
install_moto() {
  if ! "$venv_dir/bin/python" -c "import moto, boto3; assert moto.__version__ == '5.2.5'" 2>/dev/null; then
    echo "ci/setup.sh: installing $moto_package into .deps/venv (the S3 server of the s3 backend's tests)"
    "$venv_dir/bin/pip" install --quiet --disable-pip-version-check "$moto_package" ||
      echo "ci/setup.sh: warning: could not install $moto_package; the s3 backend's tests will be skipped"
  fi
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  install_venv
  echo "ci/setup.sh: all ${#packages[@]} packages present"
  exit 0
fi

echo "ci/setup.sh: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_venv
echo "ci/setup.sh: done"
