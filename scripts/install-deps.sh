#!/usr/bin/env bash
# Installs what torii needs to build and to run its tests, from Debian 12's
# archive. Run as root (or through sudo). With --bench, also the peers and
# the plotting library that bench/run compares torii with (Caddy, h2o,
# matplotlib); nginx and HAProxy are always installed, for the tests.
#
# It never stops or restarts anything already running. Packages installed
# here only for tests (nginx) must not start a service of their own, so
# while apt runs, a policy-rc.d that answers "not now" keeps Debian's
# maintainer scripts from starting newly installed daemons (a daemon that
# was already running before is left alone either way).
set -euo pipefail
bench_packages=()
for arg in "$@"; do
  case "$arg" in
    --bench) bench_packages=(caddy h2o python3-matplotlib) ;;
    *) echo "usage: $0 [--bench]" >&2; exit 2 ;;
  esac
done
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

POLICY=/usr/sbin/policy-rc.d
placed_policy=0
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null
  $SUDO chmod 755 "$POLICY"
  placed_policy=1
fi
remove_policy() { if [ "$placed_policy" = 1 ]; then $SUDO rm -f "$POLICY"; fi; }
trap remove_policy EXIT

$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends \
  build-essential cmake pkg-config libcrypt-dev libpcre2-dev libssl-dev libnghttp2-dev zlib1g-dev libdeflate-dev libbrotli-dev libzstd-dev \
  libngtcp2-dev libngtcp2-crypto-gnutls-dev libnghttp3-dev libgnutls28-dev libc-ares-dev libgeoip-dev geoip-database libmaxminddb-dev libgd-dev libxml2-dev \
  libgtest-dev libgmock-dev clang libclang-rt-14-dev \
  python3 python3-pytest python3-h2 python3-grpcio python3-brotli python3-zstandard python3-cryptography python3-pil curl apache2-utils wrk nghttp2-client ngtcp2-client \
  nginx-light libnginx-mod-stream libnginx-mod-http-geoip libnginx-mod-stream-geoip libnginx-mod-http-headers-more-filter libnginx-mod-http-cache-purge libnginx-mod-http-image-filter libnginx-mod-http-dav-ext libnginx-mod-http-geoip2 libnginx-mod-stream-geoip2 libmaxmind-db-writer-perl haproxy openssl gnutls-bin libaprutil1 prometheus \
  php8.2-fpm php8.2-cli uwsgi uwsgi-plugin-python3 memcached iproute2 strace chromium cadaver \
  "${bench_packages[@]}"
