#!/usr/bin/env bash
# scripts/fetch-tools.sh DEST   (SUITE=trixie by default; SUITE=bookworm on a Debian 13 machine)
#
# Download another Debian release's promtool and amtool/Alertmanager (default Debian 13, trixie)
# and unpack them under DEST/root, without installing anything system-wide
# (the machine's own dpkg database and /usr/bin are left untouched).
#
# Result (trixie versions at time of writing):
#   DEST/root/usr/bin/promtool                 (package promtool 2.53.3)
#   DEST/root/usr/bin/amtool                   (package prometheus-alertmanager 0.28.1)
#   DEST/root/usr/bin/prometheus-alertmanager  (same package)
#
# Idempotent: re-running refreshes the package lists, re-downloads only
# what is missing, and re-extracts over the same tree.
# Needs: root or write access to DEST, apt-get, dpkg, network access to the
# Debian archive, /usr/share/keyrings/debian-archive-keyring.gpg.
set -euo pipefail

DEST="${1:?usage: $0 DEST_DIR}"
MIRROR="${DEBIAN_MIRROR:-$(apt-cache policy 2>/dev/null | grep -o 'https\?://[^ ]*debian/\?' | grep -v security | head -1)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
SUITE="${SUITE:-trixie}"
KEYRING="/usr/share/keyrings/debian-archive-keyring.gpg"
# In trixie promtool is its own package; prometheus itself is not needed.
PACKAGES=(promtool prometheus-alertmanager)
# In bookworm promtool ships inside the prometheus package.
if [ "$SUITE" = bookworm ]; then PACKAGES=(prometheus prometheus-alertmanager); fi

mkdir -p "$DEST"
DEST="$(cd "$DEST" && pwd)"
APT_DIR="$DEST/apt"
DEB_DIR="$DEST/debs"
ROOT_DIR="$DEST/root"

# Private apt state: own sources list, lists and cache, so the system's
# apt configuration and package lists are not touched.
mkdir -p "$APT_DIR/state/lists/partial" "$APT_DIR/cache/archives/partial" \
         "$DEB_DIR" "$ROOT_DIR"
echo "deb [signed-by=$KEYRING] $MIRROR $SUITE main" > "$APT_DIR/sources.list"

APT_OPTS=(
  -o "Dir::Etc::SourceList=$APT_DIR/sources.list"
  -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::State=$APT_DIR/state"
  -o "Dir::State::status=/var/lib/dpkg/status"
  -o "Dir::Cache=$APT_DIR/cache"
  # Downloads land in DEB_DIR, which the _apt user may not be able to write.
  -o "APT::Sandbox::User=root"
)

apt-get "${APT_OPTS[@]}" -q update

# Pin to the trixie release ("pkg/trixie") so a locally installed bookworm
# version listed in the dpkg status file can never be chosen instead.
cd "$DEB_DIR"
for pkg in "${PACKAGES[@]}"; do
  ver="$(apt-cache "${APT_OPTS[@]}" madison "$pkg" \
         | awk -F' *[|] *' -v s="$SUITE" '$3 ~ (" " s "/") {print $2; exit}')"
  if [ -z "$ver" ]; then
    echo "error: $pkg not found in $SUITE" >&2
    exit 1
  fi
  # apt-get download names files NAME_VERSION_ARCH.deb, ':' escaped as '%3a'.
  debs=( "${pkg}_${ver//:/%3a}_"*.deb )
  if [ ! -e "${debs[0]}" ]; then
    apt-get "${APT_OPTS[@]}" -q download "$pkg=$ver"
    debs=( "${pkg}_${ver//:/%3a}_"*.deb )
  fi
  # Unpack into the private root (overwrites files from an earlier run).
  dpkg -x "${debs[0]}" "$ROOT_DIR"
done

# Sanity check: the binaries run here and report their versions.
"$ROOT_DIR/usr/bin/promtool" --version | head -n1
"$ROOT_DIR/usr/bin/amtool" --version | head -n1
"$ROOT_DIR/usr/bin/prometheus-alertmanager" --version | head -n1
