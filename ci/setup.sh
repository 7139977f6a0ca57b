#!/usr/bin/env bash
# Installs the Debian packages ckptbench builds and tests with. Idempotent: when every
# package is already present it returns in well under a second without touching apt.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev hdf5-tools
  liburing-dev
  libtomlplusplus-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libbenchmark-dev libgtest-dev
  libtrilinos-kokkos-dev
  fio
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "ci/setup.sh: all ${#packages[@]} packages present"
  exit 0
fi

echo "ci/setup.sh: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "ci/setup.sh: done"
