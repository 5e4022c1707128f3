#!/usr/bin/env bash
# Builds one sandbox template from backend/templates/<name>.recipe into
# <out>/<name>/rootfs, unless <out>/<name>/RECIPE_HASH already matches the
# recipe (and this script). Needs root and mmdebstrap; uses the machine's own
# apt sources. Quiet unless it fails.
#
#   build-template.sh <recipe> <out-dir>
set -euo pipefail
recipe=$1
out=$2
name=$(basename "$recipe" .recipe)
dest=$out/$name
hash=$(cat "$recipe" "$0" | sha256sum | cut -d' ' -f1)
if [ -f "$dest/RECIPE_HASH" ] && [ "$(cat "$dest/RECIPE_HASH")" = "$hash" ] && [ -d "$dest/rootfs/etc" ]; then
	exit 0
fi
packages=
setup() { :; }
# shellcheck source=/dev/null
. "$recipe"
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
mkdir -p "$dest"
tmp=$dest/rootfs.new
rm -rf "$tmp" "$dest/rootfs.old"
log=$dest/build.log
echo "building template '$name' (mmdebstrap, log in $log)" >&2
if ! mmdebstrap --quiet --variant=minbase --include="${packages// /,}" \
	--skip=check/empty bookworm "$tmp" "$sources" >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	echo "template '$name': mmdebstrap failed" >&2
	exit 1
fi
ROOT=$tmp
export ROOT
if ! (setup) >>"$log" 2>&1; then
	tail -n 30 "$log" >&2
	echo "template '$name': setup failed" >&2
	exit 1
fi
# Swap in the new root filesystem; the old one may still be a lower layer of
# a running backend's sandboxes, so it is removed only after the swap.
[ -d "$dest/rootfs" ] && mv "$dest/rootfs" "$dest/rootfs.old"
mv "$tmp" "$dest/rootfs"
rm -rf "$dest/rootfs.old"
echo "$hash" > "$dest/RECIPE_HASH"
