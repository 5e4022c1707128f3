#!/usr/bin/env bash
# Prepares what the cgroup v2 guest boots (docs/testing.md, "The cgroup v2 guest"),
# under build/guest/, each piece only when missing or stale:
#
#   kernel/          Debian 12's linux-image-cloud-amd64 (6.1), `apt-get download` +
#                    `dpkg -x` (never installed), with depmod's tables for its modules
#   busybox/         busybox-static, the same way: the initramfs's only program
#   initrd.gz        busybox, the modules that reach the host's files and the disks
#                    (virtio, virtiofs, virtio-blk, overlay for /etc) and
#                    tests/guest/initramfs-init
#   templates.ext4   the templates the guest's tests use (`base`; E2BW_GUEST_TEMPLATES
#                    names others) as an ext4 image (mke2fs -d): idmapped mounts and
#                    overlay lowers need a disk filesystem, which virtiofs is not
#
# Needs root (as the tests do) and, the first time, apt's package lists; nothing is
# installed into the host's /boot or /lib/modules. Prints nothing when all is ready.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${E2BW_BUILD:-$ROOT/build}
BUILD=$(cd "$BUILD" && pwd)
GUEST=$BUILD/guest
HERE=$ROOT/tests/guest

say() { printf 'guest: %s\n' "$*" >&2; }
die() { printf 'tests/guest/prepare.sh: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (virtiofsd, the guest's disks): run it as root, as ./build.sh test does"
for tool in qemu-system-x86_64 /usr/lib/qemu/virtiofsd depmod mke2fs dpkg; do
  command -v "$tool" >/dev/null || die "$tool is missing (apt-get install qemu-system-x86 kmod e2fsprogs)"
done
mkdir -p "$GUEST"

# apt-get download into $1 (as root, apt would try its _apt user, which cannot write there).
download() {
  local dir=$1; shift
  (cd "$dir" && apt-get download -q -o APT::Sandbox::User=root "$@" >/dev/null) ||
    die "apt-get download $* failed (run apt-get update?)"
}

# The kernel: the package linux-image-cloud-amd64 depends on, taken once and kept
# (build/guest/kernel/VERSION); delete build/guest/kernel to take a newer one.
prepare_kernel() {
  [ -f "$GUEST/kernel/VERSION" ] && return 0
  local pkg work=$GUEST/kernel.tmp
  local depends='s/^ *Depends: \(linux-image-[0-9].*-cloud-amd64\)$/\1/p'
  pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null | sed -n "$depends" | head -n 1)
  if [ -z "$pkg" ]; then # a fresh machine's apt may have no package lists yet
    apt-get update -q >/dev/null || die "apt-get update failed"
    pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null | sed -n "$depends" | head -n 1)
  fi
  [ -n "$pkg" ] || die "apt knows no linux-image-cloud-amd64 (is this Debian 12?)"
  say "downloading $pkg (apt-get download, unpacked under $GUEST/kernel)"
  rm -rf "$work" && mkdir -p "$work"
  download "$work" "$pkg"
  dpkg -x "$work"/*.deb "$work/root"
  local version=${pkg#linux-image-}
  [ -f "$work/root/boot/vmlinuz-$version" ] || die "$pkg holds no boot/vmlinuz-$version"
  depmod -b "$work/root" "$version"
  echo "$version" > "$work/root/VERSION"
  rm -rf "$GUEST/kernel" && mv "$work/root" "$GUEST/kernel" && rm -rf "$work"
}

# modprobe for the guest kernel's modules, where the guest's kernel and tests/guest/guest-init.sh call it.
prepare_modprobe() {
  local want
  want=$(printf '#!/bin/sh\nexec /usr/sbin/modprobe -d %s "$@"\n' "$GUEST/kernel")
  [ "$(cat "$GUEST/modprobe" 2>/dev/null)" = "$want" ] && return 0
  printf '%s\n' "$want" > "$GUEST/modprobe"
  chmod 755 "$GUEST/modprobe"
}

prepare_busybox() {
  [ -x "$GUEST/busybox/bin/busybox" ] && return 0
  local work=$GUEST/busybox.tmp
  say "downloading busybox-static (apt-get download, unpacked under $GUEST/busybox)"
  rm -rf "$work" && mkdir -p "$work"
  download "$work" busybox-static
  dpkg -x "$work"/*.deb "$work/root"
  rm -rf "$GUEST/busybox" && mv "$work/root" "$GUEST/busybox" && rm -rf "$work"
}

# The modules the initramfs loads, in the order modprobe would (dependencies first).
INITRD_MODULES="virtio_pci virtiofs virtio_blk virtio_console overlay"
prepare_initrd() {
  local version stamp
  version=$(cat "$GUEST/kernel/VERSION")
  stamp="$version $INITRD_MODULES $(sha256sum "$HERE/initramfs-init" | cut -d' ' -f1)"
  [ -f "$GUEST/initrd.gz" ] && [ "$(cat "$GUEST/initrd.stamp" 2>/dev/null)" = "$stamp" ] && return 0
  local work=$GUEST/initrd.tmp module
  rm -rf "$work" && mkdir -p "$work/bin" "$work/modules"
  cp "$GUEST/busybox/bin/busybox" "$work/bin/busybox"
  cp "$HERE/initramfs-init" "$work/init"
  chmod 755 "$work/init"
  for module in $INITRD_MODULES; do
    modprobe -d "$GUEST/kernel" -S "$version" --show-depends "$module" | awk '$1 == "insmod" { print $2 }'
  done | awk '!seen[$0]++' | while read -r module; do
    cp "$module" "$work/modules/"
    basename "$module" >> "$work/modules/order"
  done
  (cd "$work" && find . | "$GUEST/busybox/bin/busybox" cpio -o -H newc 2>/dev/null | gzip -1 > "$GUEST/initrd.gz.tmp")
  mv "$GUEST/initrd.gz.tmp" "$GUEST/initrd.gz"
  echo "$stamp" > "$GUEST/initrd.stamp"
  rm -rf "$work"
}

# The templates the guest's tests use (tests/cgroup2/ start only `base`), from
# build/templates onto ext4, remade when one was rebuilt (its RECIPE_HASH). Only
# these: the disk is written whole (mke2fs -d) before each boot that finds it stale.
GUEST_TEMPLATES=${E2BW_GUEST_TEMPLATES:-base}
prepare_templates() {
  [ -d "$BUILD/templates" ] || die "no $BUILD/templates: run ./build.sh first"
  local name stamp kib=0 size
  for name in $GUEST_TEMPLATES; do
    [ -f "$BUILD/templates/$name/RECIPE_HASH" ] || die "no template $name in $BUILD/templates: run ./build.sh first"
  done
  stamp=$(cd "$BUILD/templates" && for name in $GUEST_TEMPLATES; do printf '%s %s\n' "$name" "$(cat "$name/RECIPE_HASH")"; done | sha256sum | cut -d' ' -f1)
  [ -f "$GUEST/templates.ext4" ] && [ "$(cat "$GUEST/templates.stamp" 2>/dev/null)" = "$stamp" ] && return 0
  say "making $GUEST/templates.ext4 from $GUEST_TEMPLATES in $BUILD/templates (mke2fs -d)"
  for name in $GUEST_TEMPLATES; do
    size=$(du -sk "$BUILD/templates/$name/" | cut -f1) # (the slash: through a symbolic link)
    kib=$((kib + size))
  done
  # The chosen templates side by side: bind mounts in a mount namespace of its own.
  local stage=$GUEST/templates.stage
  rm -f "$GUEST/templates.ext4.tmp" && : > "$GUEST/templates.ext4.tmp" # (else mke2fs says it creates it)
  rm -rf "$stage" && mkdir -p "$stage"
  for name in $GUEST_TEMPLATES; do mkdir "$stage/$name"; done
  # Room for ext4's own tables and the inodes: twice the files, at least 256 MiB.
  unshare --mount --propagation private sh -c '
    set -e
    stage=$1 templates=$2 image=$3 kib=$4; shift 4
    for name in "$@"; do mount --bind "$templates/$name" "$stage/$name"; done
    mke2fs -q -t ext4 -L e2b-templates -m 0 -d "$stage" -F "$image" "${kib}k"' sh \
    "$stage" "$BUILD/templates" "$GUEST/templates.ext4.tmp" "$(( kib * 2 > 262144 ? kib * 2 : 262144 ))" $GUEST_TEMPLATES ||
    die "mke2fs -d of the templates failed"
  rmdir "$stage"/* "$stage"
  mv "$GUEST/templates.ext4.tmp" "$GUEST/templates.ext4"
  echo "$stamp" > "$GUEST/templates.stamp"
}

prepare_kernel
prepare_modprobe
prepare_busybox
prepare_initrd
prepare_templates
