# shellcheck shell=bash
# Installs what seatwatch needs to build, test and demo, from Debian packages.
# Idempotent: asks apt only when something is missing.

SEATWATCH_PACKAGES=(
  build-essential cmake pkg-config ccache git python3 python3-psycopg2 python3-django curl
  libpqxx-dev prometheus-cpp-dev libcivetweb-dev libtomlplusplus-dev
  libgtest-dev googletest
  postgresql postgresql-contrib pgbouncer
  prometheus prometheus-alertmanager
  zlib1g-dev libssl-dev openssl libcrypt-dev libsystemd-dev
  apache2-utils
  chromium fonts-dejavu-core
  dpkg-dev lintian systemd strace
)

# What the sanitizer and fuzzing builds need on top (gcc 12's runtimes come
# with build-essential, but a trimmed machine may lack them). clang's
# -fsanitize=fuzzer links libclang_rt.fuzzer from libclang-rt-14-dev, which
# clang only recommends.
SEATWATCH_ASAN_PACKAGES=(libasan8 libubsan1 liblsan0)
SEATWATCH_TSAN_PACKAGES=(libtsan2)
SEATWATCH_FUZZ_PACKAGES=(clang libclang-rt-14-dev)

# seatwatch_install_deps [default|asan|tsan|fuzz]
seatwatch_install_deps() {
  local wanted=("${SEATWATCH_PACKAGES[@]}")
  case "${1:-default}" in
    asan) wanted+=("${SEATWATCH_ASAN_PACKAGES[@]}") ;;
    tsan) wanted+=("${SEATWATCH_TSAN_PACKAGES[@]}") ;;
    fuzz) wanted+=("${SEATWATCH_FUZZ_PACKAGES[@]}") ;;
  esac
  local missing=()
  local pkg
  for pkg in "${wanted[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$pkg")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "seatwatch: installing ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Newest installed PostgreSQL server binaries (Debian keeps them off PATH).
seatwatch_pgbin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5n | tail -n 1
}
