#!/usr/bin/env bash
# Builds one sandbox template from backend/templates/<name>.recipe into
# <out>/<name>/rootfs, unless <out>/<name>/RECIPE_HASH already matches the
# recipe (and the recipe it extends, the files it ships, this script, and
# who builds it). Uses the machine's own apt sources and mmdebstrap. Quiet
# unless it fails.
#
# A recipe may also set: extends=<name> (that recipe's packages are
# installed too and its setup runs first), files=<dir> (a directory beside
# the recipe, given to setup as $FILES), start_cmd and ready_cmd (written to
# <out>/<name>/START_CMD and READY_CMD: the backend starts the command in
# every sandbox of the template and answers the create once the ready
# command succeeds, as for a built template's setStartCmd).
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
dir=$(dirname "$recipe")
# shellcheck source=/dev/null
extends=$(. "$recipe"; echo "${extends:-}")
# shellcheck source=/dev/null
files=$(. "$recipe"; echo "${files:-}")
recipes=$recipe
[ -z "$extends" ] || recipes="$dir/$extends.recipe $recipe"
files_hash() { [ -z "$files" ] || (cd "$dir/$files" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); }
# shellcheck disable=SC2086
hash=$( (cat $recipes "$0"; files_hash; echo "$mode") | sha256sum | cut -d' ' -f1)
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
all_packages=
for r in $recipes; do
	# shellcheck source=/dev/null
	all_packages="$all_packages $(packages=; . "$r"; echo "$packages")"
done
all_packages=$(echo $all_packages)
start_cmd=
ready_cmd=
# shellcheck source=/dev/null
. "$recipe"
# Each recipe's setup (the extended one's first) runs as a customize hook,
# as root of the build (in unshare mode: root of its user namespace), with
# the new root as $ROOT and the recipe's files as $FILES.
if ! E2BW_RECIPES=$recipes E2BW_FILES=${files:+$dir/$files} mmdebstrap --quiet --mode=$mode --variant=minbase \
	--include="${all_packages// /,}" --skip=check/empty \
	--customize-hook='for r in $E2BW_RECIPES; do ROOT="$1" FILES="$E2BW_FILES" bash -c '"'"'set -e; . "$0"; setup'"'"' "$r" || exit 1; done' \
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
rm -f "$dest/START_CMD" "$dest/READY_CMD"
[ -z "$start_cmd" ] || printf '%s\n' "$start_cmd" > "$dest/START_CMD"
[ -z "$ready_cmd" ] || printf '%s\n' "$ready_cmd" > "$dest/READY_CMD"
echo "$hash" > "$dest/RECIPE_HASH"
