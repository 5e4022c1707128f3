#!/bin/bash
# pid 1 of the cgroup v2 guest, after the initramfs (tests/guest/initramfs-init) has
# made the host's root, read-only over virtiofs, the guest's root. It makes the
# writable places, mounts cgroup2 with every controller, lays the cgroup tree out
# as systemd would (system.slice, and a user's user@UID.service delegated to that
# user), creates that user, runs the command the host asked for (the run directory's
# `command`, through tests/guest/as) with its output on the virtio port e2bw.out,
# writes its exit status to the run directory and powers the guest off.
#
# The run directory (e2bw.run= on the kernel command line) is the host's
# build/guest/runs/<id>, shared writable as virtiofs tag `run`; its `params` set
# RUN_AS, GUEST_USER, GUEST_MODPROBE and GUEST_TEMPLATES (tests/guest/guest.mjs writes it).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LANG=C.UTF-8
HERE=$(dirname "$(readlink -f "$0")")

log() { echo "guest-init: $*" > /dev/ttyS0; }
# QEMU runs with -no-reboot: a reboot ends it at once (no ACPI needed).
poweroff_now() {
	sync
	echo b > /proc/sysrq-trigger
	sleep 30
}
# A failure before the command: said on the console and on the output port.
die() {
	log "$*"
	[ -n "${OUT_PORT:-}" ] && echo "guest-init: $*" > "$OUT_PORT"
	poweroff_now
}

RUN=
REPO=
for word in $(cat /proc/cmdline); do
	case $word in
	e2bw.run=*) RUN=${word#e2bw.run=} ;;
	e2bw.repo=*) REPO=${word#e2bw.repo=} ;; # a repository outside the host's root filesystem
	esac
done

# Writable places: tmpfs for /run, the scratch disk (ext4: overlay uppers,
# idmapped mounts and loop images all work there, as on a host's disk) for
# /tmp, /var/tmp, /home and /root, a copy of /etc for the user made below.
mount -t tmpfs -o mode=755,nosuid,nodev tmpfs /run || die "cannot mount /run"
mkdir -p /dev/pts /dev/shm /run/e2bw
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts /dev/pts
ln -sf pts/ptmx /dev/ptmx 2>/dev/null || true
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
[ -n "$RUN" ] || die "no e2bw.run= on the kernel command line"
if [ -n "$REPO" ]; then
	mount -t virtiofs -o ro repo "$REPO" || die "cannot mount the repository (virtiofs tag repo)"
fi
mount -t virtiofs run "$RUN" || die "cannot mount the run directory (virtiofs tag run)"
# shellcheck source=/dev/null
. "$RUN/params" || die "no $RUN/params"

for port in /sys/class/virtio-ports/*; do
	[ "$(cat "$port/name" 2>/dev/null)" = e2bw.out ] && OUT_PORT=/dev/$(basename "$port")
done
[ -n "${OUT_PORT:-}" ] || die "no virtio port e2bw.out"

disk_with_serial() {
	local block
	for block in /sys/block/vd*; do
		[ "$(cat "$block/serial" 2>/dev/null)" = "$1" ] && { echo "/dev/$(basename "$block")"; return 0; }
	done
	return 1
}
scratch=$(disk_with_serial e2bw-scratch) || die "no scratch disk (serial e2bw-scratch)"
mkdir -p /run/e2bw/scratch
# noinit_itable: the image is a fresh sparse file, its inode tables already zero.
mount -t ext4 -o noinit_itable "$scratch" /run/e2bw/scratch || die "cannot mount the scratch disk"
for dir in tmp var-tmp home root; do mkdir -p "/run/e2bw/scratch/$dir"; done
chmod 1777 /run/e2bw/scratch/tmp /run/e2bw/scratch/var-tmp
chmod 700 /run/e2bw/scratch/root
mount --bind /run/e2bw/scratch/tmp /tmp
mount --bind /run/e2bw/scratch/var-tmp /var/tmp
mount --bind /run/e2bw/scratch/home /home
mount --bind /run/e2bw/scratch/root /root
cp -a /etc /run/e2bw/etc && mount --bind /run/e2bw/etc /etc || die "cannot copy /etc"
hostname e2bw-guest

# The build's templates, read-only on their own ext4 disk, over build/templates.
templates=$(disk_with_serial e2bw-templates) || die "no templates disk (serial e2bw-templates)"
mount -t ext4 -o ro,noload "$templates" "$GUEST_TEMPLATES" || die "cannot mount the templates disk on $GUEST_TEMPLATES"

# The guest kernel's modules: modprobe reads them from build/guest/kernel (the
# host has none of this kernel's, and no /usr/lib/modules to mount them on),
# the kernel's own requests (nf_tables' expressions, ...) included.
echo "$GUEST_MODPROBE" > /proc/sys/kernel/modprobe
# Those that no request loads: loop devices (the sandboxes' disks; devtmpfs shows
# /dev/loop-control only once loaded), overlay, and what sandbox networking uses.
for module in loop overlay veth nf_tables nft_chain_nat nft_ct nft_nat nft_masq nft_reject_inet nft_fib_inet \
	tun br_netfilter; do
	"$GUEST_MODPROBE" "$module" || log "modprobe $module failed"
done
ip link set lo up

# cgroup v2 as systemd mounts it, every controller enabled at the root, and the
# tree of a systemd machine: this process in init.scope, services under
# system.slice, and user.slice/user-UID.slice/user@UID.service delegated to the
# user (owned by it, cgroup.procs, cgroup.subtree_control and cgroup.threads
# too, as Delegate=yes does) with cpu, memory and pids enabled for its children.
CG=/sys/fs/cgroup
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 $CG || die "cannot mount cgroup2"
enable() { # DIR CONTROLLER...
	local c
	for c in "${@:2}"; do echo "+$c" > "$1/cgroup.subtree_control" || die "cannot enable $c in $1"; done
}
enable $CG $(cat $CG/cgroup.controllers)
mkdir -p $CG/init.scope && echo $$ > $CG/init.scope/cgroup.procs
mkdir -p $CG/system.slice && enable $CG/system.slice cpu io memory pids

id -u "$GUEST_USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$GUEST_USER" || die "cannot create $GUEST_USER"
# 65536 subordinate ids after any the host's /etc/subuid and /etc/subgid hand out.
sub_start=100000
while IFS=: read -r _ start count; do
	[[ $start =~ ^[0-9]+$ && $count =~ ^[0-9]+$ ]] && ((start + count > sub_start)) && sub_start=$((start + count))
done < <(cat /etc/subuid /etc/subgid 2>/dev/null)
grep -q "^$GUEST_USER:" /etc/subuid 2>/dev/null ||
	usermod --add-subuids "$sub_start-$((sub_start + 65535))" --add-subgids "$sub_start-$((sub_start + 65535))" "$GUEST_USER" ||
	die "cannot give $GUEST_USER subordinate ids"
uid=$(id -u "$GUEST_USER")
gid=$(id -g "$GUEST_USER")
mkdir -p "/run/user/$uid" && chown "$uid:$gid" "/run/user/$uid" && chmod 700 "/run/user/$uid"
user_slice=$CG/user.slice/user-$uid.slice
mkdir -p "$user_slice/user@$uid.service"
enable $CG/user.slice cpu io memory pids
enable "$user_slice" cpu io memory pids
delegated=$user_slice/user@$uid.service
chown "$uid:$gid" "$delegated" "$delegated/cgroup.procs" "$delegated/cgroup.subtree_control" "$delegated/cgroup.threads"
# What systemd --user does in its subtree: app.slice, cpu memory pids enabled.
enable "$delegated" cpu memory pids
mkdir -p "$delegated/app.slice" && enable "$delegated/app.slice" cpu memory pids
chown -R "$uid:$gid" "$delegated/app.slice"
export E2BW_GUEST_USER=$GUEST_USER E2BW_GUEST_DELEGATED=$delegated

# The command, as root or the user, each in a leaf cgroup of its own.
log "running the command as $RUN_AS"
date +%s.%N > "$RUN/started"
"$HERE/as" "$RUN_AS" -- /bin/bash "$RUN/command" < /dev/null > "$OUT_PORT" 2>&1
echo $? > "$RUN/status"
poweroff_now
