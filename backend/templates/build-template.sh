#!/usr/bin/env bash
# Builds one sandbox template from backend/templates/<name>.recipe into
# <out>/<name>/rootfs, unless <out>/<name>/RECIPE_HASH already matches the
# recipe (and this script, and who builds it). Uses the machine's own apt
# sources and mmdebstrap. Quiet unless it fails.
#
# As root the files belong to root and the template's users, as a full-
# isolation backend wants them. As another user it is built with mmdebstrap
# --mode=unshare from that user's subordinate ids (/etc/subuid: the
# template's id X becomes subordinate id X), as a rootless backend run by the
# same user wants them; a tree of such files is removed through the same
# mapping (unshare --map-auto).
#
#   build-template.sh <recipe> <out-dir>
set -euo pipefail
recipe=$(realpath "$1")
out=$2
name=$(basename "$recipe" .recipe)
dest=$out/$name
mode=root
[ "$(id -u)" = 0 ] || mode=unshare
hash=$( (cat "$recipe" "$0"; echo "$mode") | sha256sum | cut -d' ' -f1)
if [ -f "$dest/RECIPE_HASH" ] && [ "$(cat "$dest/RECIPE_HASH")" = "$hash" ] && [ -d "$dest/rootfs/etc" ]; then
	exit 0
fi
# A tree owned by subordinate ids is removed from inside their mapping.
remove_tree() {
	[ -e "$1" ] || return 0
	if [ $mode = root ]; then
		rm -rf "$1"
	else
		unshare --user --map-auto --map-root-user rm -rf "$1" 2>/dev/null || true
		rm -rf "$1"
	fi
}
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
mkdir -p "$dest"
tmp=$dest/rootfs.new
remove_tree "$tmp"
remove_tree "$dest/rootfs.old"
log=$dest/build.log
echo "building template '$name' (mmdebstrap --mode=$mode, log in $log)" >&2
packages=
# shellcheck source=/dev/null
. "$recipe"
# The recipe's setup runs as a customize hook, as root of the build (in
# unshare mode: root of its user namespace), with the new root as $ROOT.
if ! E2BW_RECIPE=$recipe mmdebstrap --quiet --mode=$mode --variant=minbase --include="${packages// /,}" \
	--skip=check/empty \
	--customize-hook='ROOT="$1" bash -c '"'"'set -e; . "$E2BW_RECIPE"; setup'"'" \
	bookworm "$tmp" "$sources" >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	echo "template '$name': mmdebstrap (or the recipe's setup) failed" >&2
	exit 1
fi
# Swap in the new root filesystem; the old one may still be a lower layer of
# a running backend's sandboxes, so it is removed only after the swap.
[ -d "$dest/rootfs" ] && mv "$dest/rootfs" "$dest/rootfs.old"
mv "$tmp" "$dest/rootfs"
remove_tree "$dest/rootfs.old"
echo "$hash" > "$dest/RECIPE_HASH"
