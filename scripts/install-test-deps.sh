#!/usr/bin/env bash
# Installs everything the test suite needs beyond Node.js and npm: the Debian packages (with sudo
# when not root) and the real host CLIs pinned in .ci/hosts (as the invoking user). This list is
# the one place those packages are named: .ci/run calls this script, and `deno task test` names it
# in its summary of skipped tests.
#
#   scripts/install-test-deps.sh            packages and host CLIs
#   scripts/install-test-deps.sh --list     print the Debian packages, one per line
set -euo pipefail
cd "$(dirname "$0")/.."

# install.sh is tested with curl and wget, under sh, dash and busybox sh (busybox-static: it also
# runs inside the tests' minimal root file systems), and with each hash tool (sha256sum, shasum
# from perl, openssl). The platform tests run the windows-x64 binary under Wine (wine64), the arm64
# one under qemu-user with Debian's arm64 glibc (libc6-arm64-cross), the musl one in a musl root
# file system (musl; gcc builds its C++ runtime shim), and the Dockerfile's layout with tini as
# PID 1. util-linux gives unshare, nsenter and script (a pseudo-terminal); procps gives ps.
# haproxy is the sticky load balancer in front of service replicas; git shows that runtime files
# never appear as changes in an adapter's repository; the sandbox tests fetch with curl and build
# a kernel-without-Landlock wrapper with gcc; the destination-list sandbox test probes TCP Fast Open
# with python3 (Node cannot send MSG_FASTOPEN). The watchdog runs under sh, dash and bash.
PACKAGES=(
  wget dash bash busybox-static perl openssl procps curl ca-certificates util-linux git python3
  wine64 qemu-user libc6-arm64-cross musl gcc tini haproxy
)

if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${PACKAGES[@]}"
  exit 0
fi

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else "$@"; fi; }

if command -v apt-get >/dev/null; then
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${PACKAGES[@]}" >/dev/null
else
  echo "install-test-deps: no apt-get here; install these packages by hand: ${PACKAGES[*]}" >&2
fi

# The real host CLIs for the integration tests (Claude Code, Codex, Gemini CLI, OpenCode, Pi and
# the Node.js 22 Pi needs), pinned in .ci/hosts.
npm --prefix .ci/hosts ci --no-audit --no-fund
