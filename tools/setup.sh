#!/usr/bin/env bash
# Installs what meshsim needs from Debian's packages (only what is missing), then
# configures and builds into a build folder. Idempotent; run as root on a fresh machine.
#   tools/setup.sh [--sanitize|--tsan|--fuzz] [--build-dir DIR]
# --tsan builds only the test programs that hold tools/test.sh --tsan's threaded tests (a
# ThreadSanitizer build of everything would cost CI minutes for tests it does not run).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
cmake_args=(-DMESHSIM_WERROR=ON)
targets=(all)
python=ON  # the Python package (tools/python), in the main build only
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) build_dir=build-asan; python=OFF; cmake_args+=(-DMESHSIM_SANITIZE=ON -DMESHSIM_BUILD_RL=OFF -DMESHSIM_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
    --tsan) build_dir=build-tsan; python=OFF; targets=(engine_tests tools_tests rl_tests); cmake_args+=(-DMESHSIM_TSAN=ON -DMESHSIM_BUILD_RL=OFF -DMESHSIM_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
    --fuzz) build_dir=build-fuzz; python=OFF; cmake_args+=(-DMESHSIM_FUZZ=ON -DMESHSIM_BUILD_TESTS=OFF -DMESHSIM_BUILD_RL=OFF -DMESHSIM_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
    --build-dir) build_dir="$2"; shift ;;
    *) echo "setup.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

packages=(build-essential cmake ninja-build ccache pkg-config
  libeigen3-dev libtorch-dev nlohmann-json3-dev libspdlog-dev libbenchmark-dev libgtest-dev
  libcli11-dev libyaml-cpp-dev python3-matplotlib libopenblas0-pthread libopenmpi-dev openmpi-bin libcpp-httplib-dev libgloo-dev)
if [ "$python" = ON ]; then packages+=(pybind11-dev python3-dev python3-numpy python3-pytest python3-pandas python3-torch python3-venv); fi
cmake_args+=(-DMESHSIM_PYTHON=$python)
if [[ " ${cmake_args[*]} " == *MESHSIM_FUZZ=ON* ]]; then packages+=(clang libclang-rt-dev); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Python-only tools come from the package index into a virtual environment over Debian's
# python3 (whose numpy, pandas and matplotlib it keeps): Gymnasium, whose Env and
# VectorEnv meshsim's environments are; scikit-build-core and pybind11, so `pip install .`
# (pyproject.toml) builds in it without fetching them; PyTorch's CPU build and
# Stable-Baselines3 for the example that trains SB3's PPO on them (optional: where no CPU
# build of torch is at hand the example's test skips, saying so).
if [ "$python" = ON ]; then
  venv=.venv
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
  if ! "$venv/bin/python" -c "import gymnasium, scikit_build_core, pybind11" 2>/dev/null; then
    echo "setup: installing gymnasium, scikit-build-core and pybind11 into $venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "gymnasium>=1.0,<2" "scikit-build-core>=0.10" "pybind11>=2.10"
  fi
  if ! "$venv/bin/python" -c "import stable_baselines3" 2>/dev/null; then
    echo "setup: installing torch (CPU) and stable-baselines3 into $venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "torch==2.13.0" "stable-baselines3>=2.3,<3" ||
      echo "setup: no Stable-Baselines3 (no CPU build of torch 2.13 here); its example's test will skip"
  fi
fi

# ccache hashes paths relative to the checkout, so a fresh clone elsewhere (as CI makes)
# reuses what an earlier clone compiled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
cmake -S . -B "$build_dir" -G Ninja "${cmake_args[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}"
