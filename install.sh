#!/bin/sh
# Install hermit, one self-contained executable, for the current user (no root needed):
#
#   curl -fsSL https://github.com/hermit-sh/hermit/releases/latest/download/install.sh | sh
#
# Environment:
#   HERMIT_VERSION        version to install, "1.2.3" or "v1.2.3" (default: the latest release)
#   HERMIT_INSTALL        directory to install into (default: $HOME/.local/bin; created if missing)
#   HERMIT_DOWNLOAD_BASE  where releases live (default: https://github.com/hermit-sh/hermit/releases);
#                         files are fetched as $BASE/latest/download/FILE or $BASE/download/vX.Y.Z/FILE
#   HERMIT_TARGET         skip platform detection: linux-x64, linux-arm64, linux-x64-musl,
#                         darwin-x64, darwin-arm64 or windows-x64
#
# The binary is checked against the release's SHA256SUMS before it is installed, and it replaces
# an existing hermit atomically. No shell startup file is edited; a PATH hint is printed instead.
# Everything below only defines functions: nothing runs until the last line, so a download cut
# short runs nothing. All messages go to stderr.

say() { printf '%s\n' "$*" >&2; }
die() {
  say "error: $*"
  exit 1
}
have() { command -v "$1" >/dev/null 2>&1; }

# True on a musl-based Linux (Alpine, ...), where the glibc builds do not run. What counts is the
# C library the system itself uses, which ldd names. Without ldd: a glibc loader means glibc (a
# musl loader alone proves nothing there: Debian's "musl" package installs one beside glibc), and
# a musl loader without one means musl.
is_musl() {
  case $(ldd --version 2>&1) in
    *musl*) return 0 ;;
    *GLIBC* | *"GNU libc"* | *"GNU C Library"*) return 1 ;;
  esac
  for f in /lib64/ld-linux-*.so.* /lib/ld-linux-*.so.* /lib/*-linux-gnu/ld-linux-*.so.*; do
    [ -e "$f" ] && return 1
  done
  for f in /lib/ld-musl-*.so.1; do [ -e "$f" ] && return 0; done
  return 1
}

# Print this machine's release target, e.g. linux-x64.
detect_target() {
  os=$(uname -s) || die "uname failed"
  arch=$(uname -m) || die "uname failed"
  case $os in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    MINGW* | MSYS* | CYGWIN*) os=windows ;;
    *) die "unsupported operating system: $os (set HERMIT_TARGET to override)" ;;
  esac
  case $arch in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "unsupported CPU architecture: $arch (set HERMIT_TARGET to override)" ;;
  esac
  # An x64 shell under Rosetta 2 on Apple silicon: the native arm64 build is the right one.
  if [ "$os" = darwin ] && [ "$arch" = x64 ]; then
    [ "$(sysctl -n sysctl.proc_translated 2>/dev/null)" = 1 ] && arch=arm64
  fi
  if [ "$os" = linux ] && is_musl; then
    [ "$arch" = x64 ] || die "no hermit build for musl on $arch (only linux-x64-musl exists)"
    printf '%s\n' linux-x64-musl
    return
  fi
  if [ "$os-$arch" = windows-arm64 ]; then
    die "no hermit build for windows-arm64 (HERMIT_TARGET=windows-x64 runs under emulation)"
  fi
  printf '%s\n' "$os-$arch"
}

# download URL FILE: with curl or wget, whichever exists (main checked there is one).
download() {
  if have curl; then
    curl -fsSL "$1" -o "$2" </dev/null || die "download failed: $1"
  else
    wget -q -O "$2" "$1" </dev/null || die "download failed: $1"
  fi
}

# Print the SHA-256 of FILE in lowercase hex, with whichever tool exists (main checked).
sha256_of() {
  if have sha256sum; then
    sum=$(sha256sum <"$1") || die "sha256sum failed on $1" # "<hex>  -"
  elif have shasum; then
    sum=$(shasum -a 256 <"$1") || die "shasum failed on $1" # "<hex>  -"
  else
    sum=$(openssl dgst -sha256 <"$1") || die "openssl failed on $1" # "SHA2-256(stdin)= <hex>"
    sum=${sum##* }
  fi
  printf '%s\n' "${sum%% *}"
}

# Print the hash SHA256SUMS-FILE lists for NAME (nothing when it has no line for NAME).
expected_sha256() {
  while read -r hash name || [ -n "$hash" ]; do
    name=${name#\*} # "<hex> *<name>" is binary mode
    if [ "$name" = "$2" ]; then
      printf '%s\n' "$hash"
      return
    fi
  done <"$1"
}

# Remove what a run leaves behind; the EXIT trap calls it, whatever the outcome.
cleanup() {
  if [ -n "${tmp_bin:-}" ]; then rm -f -- "$tmp_bin"; fi
  if [ -n "${tmp_sums:-}" ]; then rm -f -- "$tmp_sums"; fi
}

main() {
  set -u

  # 0. The tools, before anything is created or downloaded.
  have curl || have wget || die "neither curl nor wget is installed; install one of them and run this again"
  have sha256sum || have shasum || have openssl ||
    die "need sha256sum, shasum or openssl to verify the download"

  # 1. What to fetch.
  targets="linux-x64 linux-arm64 linux-x64-musl darwin-x64 darwin-arm64 windows-x64"
  if [ -n "${HERMIT_TARGET:-}" ]; then
    target=$HERMIT_TARGET
    case " $targets " in
      *" $target "*) ;;
      *) die "unknown HERMIT_TARGET '$target' (expected one of: $targets)" ;;
    esac
  else
    target=$(detect_target) || exit 1
  fi
  exe=
  [ "$target" = windows-x64 ] && exe=.exe
  file="hermit-$target$exe"

  base=${HERMIT_DOWNLOAD_BASE:-https://github.com/hermit-sh/hermit/releases}
  base=${base%/}
  version=${HERMIT_VERSION:-latest}
  version=${version#v}
  case $version in
    latest) url="$base/latest/download" ;;
    '' | *[!0-9A-Za-z.+-]*) die "invalid HERMIT_VERSION '${HERMIT_VERSION:-}' (expected 1.2.3 or v1.2.3)" ;;
    *) url="$base/download/v$version" ;;
  esac

  # 2. Where to put it (an absolute path, so the PATH hint below is exact).
  if [ -n "${HERMIT_INSTALL:-}" ]; then
    dir=$HERMIT_INSTALL
  else
    [ -n "${HOME:-}" ] || die "HOME is not set; set HERMIT_INSTALL to the directory to install into"
    dir=$HOME/.local/bin
  fi
  mkdir -p -- "$dir" || die "cannot create $dir"
  dir=$(CDPATH='' cd -- "$dir" && pwd) || die "cannot enter $dir"
  [ -w "$dir" ] || die "$dir is not writable; set HERMIT_INSTALL to a directory you own"
  dest="$dir/hermit$exe"

  # 3. Download next to the destination (same file system, so the final mv is atomic).
  tmp_bin="$dir/.hermit-install-$$-$file"
  tmp_sums="$dir/.hermit-install-$$-SHA256SUMS"
  trap cleanup EXIT
  trap 'exit 129' HUP
  trap 'exit 130' INT
  trap 'exit 143' TERM
  say "downloading $file ($version) from $url"
  download "$url/$file" "$tmp_bin"
  download "$url/SHA256SUMS" "$tmp_sums"

  # 4. Verify: refuse unless SHA256SUMS lists exactly this file's hash.
  want=$(expected_sha256 "$tmp_sums" "$file")
  [ -n "$want" ] || die "SHA256SUMS has no entry for $file; refusing to install it"
  got=$(sha256_of "$tmp_bin") || exit 1
  [ "$got" = "$want" ] || die "checksum mismatch for $file: expected $want, got $got; refusing to install it"

  # 5. Make sure it runs here before it replaces anything. A HERMIT_TARGET set on purpose may
  #    name another machine's build: then install it anyway, with a warning.
  chmod 755 "$tmp_bin" || die "cannot chmod $tmp_bin"
  if installed=$("$tmp_bin" --version 2>&1 </dev/null); then
    :
  elif [ -n "${HERMIT_TARGET:-}" ]; then
    say "warning: $file does not run on this machine (HERMIT_TARGET=$HERMIT_TARGET); installing it anyway"
    installed="$file ($version)"
  else
    die "$file does not run on this machine (detected $target; set HERMIT_TARGET if wrong): $installed"
  fi

  # 6. Atomic replace: $dest is always either the old hermit or the new one, never half of one,
  #    and a hermit that is running keeps its own (old) file.
  mv -f -- "$tmp_bin" "$dest" || die "cannot move the new hermit into $dest"
  tmp_bin=
  say "installed $installed to $dest"

  case ":${PATH:-}:" in
    *":$dir:"* | *":$dir/:"*) ;;
    *)
      say ""
      say "$dir is not on your PATH. Add this line to your shell's profile (~/.profile, ~/.zshrc, ...):"
      say "  export PATH=\"$dir:\$PATH\""
      ;;
  esac
}

main "$@"
