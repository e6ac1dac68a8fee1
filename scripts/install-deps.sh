#!/usr/bin/env bash
# Installs what torii needs to build and to run its tests, from Debian 12's
# archive. Run as root (or through sudo).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends \
  build-essential cmake pkg-config libpcre2-dev libssl-dev libnghttp2-dev zlib1g-dev \
  libgtest-dev libgmock-dev clang libclang-rt-14-dev \
  python3 python3-pytest curl apache2-utils wrk nghttp2-client nginx-light openssl
# The nginx package starts a server on port 80; torii only uses it for
# tests and benchmarks, started by them.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet nginx 2>/dev/null; then
  $SUDO systemctl stop nginx || true
fi
$SUDO pkill -x nginx 2>/dev/null || true
