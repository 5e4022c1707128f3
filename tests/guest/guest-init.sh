#!/bin/bash
# pid 1 of the cgroup v2 guest, once tests/guest/initramfs-init has laid the
# filesystems out (the host's root read-only over virtiofs, the run directory,
# the scratch and templates disks). It loads the modules the backend uses,
# mounts cgroup2 with every controller, lays the cgroup tree out as systemd
# would (system.slice, and a user's user@UID.service delegated to that user),
# creates that user, runs the command the host asked for (the run directory's
# `command`, through tests/guest/as) with its output on the virtio port
# e2bw.out, writes its exit status to the run directory and ends the guest.
#
# Every program here comes over virtiofs and starts slowly under TCG: bash's
# own builtins do what they can. The run directory's `params` set RUN_AS,
# GUEST_USER, GUEST_MODPROBE and GUEST_TEMPLATES (tests/guest/guest.mjs).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LANG=C.UTF-8
HERE=${0%/*}

log() { echo "guest-init: $*" > /dev/ttyS0; }
# QEMU runs with -no-reboot: a reboot ends it at once (no ACPI needed).
end_guest() {
	sync
	echo b > /proc/sysrq-trigger
	sleep 30
}
# A failure before the command: said on the console and on the output port.
die() {
	log "$*"
	[ -n "${OUT_PORT:-}" ] && echo "guest-init: $*" > "$OUT_PORT"
	end_guest
}

read -r cmdline < /proc/cmdline
RUN=
for word in $cmdline; do
	case $word in e2bw.run=*) RUN=${word#e2bw.run=} ;; esac
done
# shellcheck source=/dev/null
. "$RUN/params" || die "no $RUN/params"
for port in /sys/class/virtio-ports/*; do
	read -r name < "$port/name" && [ "$name" = e2bw.out ] && OUT_PORT=/dev/${port##*/}
done
[ -n "${OUT_PORT:-}" ] || die "no virtio port e2bw.out"
echo e2bw-guest > /proc/sys/kernel/hostname

# The guest kernel's modules: modprobe reads them from build/guest/kernel (the
# host has no /usr/lib/modules for this kernel), the kernel's own requests
# (nf_tables' expressions, ...) included. Loaded now: those no request loads
# (loop devices for the sandboxes' disks: /dev/loop-control appears only once
# loaded) and what sandbox networking uses.
echo "$GUEST_MODPROBE" > /proc/sys/kernel/modprobe
"$GUEST_MODPROBE" -a loop veth nf_tables nft_chain_nat nft_ct nft_nat nft_masq nft_reject_inet nft_fib_inet tun br_netfilter ||
	log "modprobe failed"
ip link set lo up

# The user, as useradd would make it (written directly: each program is slow
# to start here), with 65536 subordinate ids after any the host's /etc/subuid
# and /etc/subgid hand out.
uid=1000
while IFS=: read -r _ _ id _; do ((id >= uid && id < 60000)) && uid=$((id + 1)); done < /etc/passwd
while IFS=: read -r _ _ id _; do ((id >= uid && id < 60000)) && uid=$((id + 1)); done < /etc/group
gid=$uid
sub_start=100000
for file in /etc/subuid /etc/subgid; do
	[ -f $file ] || continue
	while IFS=: read -r _ start count; do
		[[ $start =~ ^[0-9]+$ && $count =~ ^[0-9]+$ ]] && ((start + count > sub_start)) && sub_start=$((start + count))
	done < $file
done
echo "$GUEST_USER:x:$uid:$gid::/home/$GUEST_USER:/bin/bash" >> /etc/passwd
echo "$GUEST_USER:x:$gid:" >> /etc/group
echo "$GUEST_USER:!:20000:0:99999:7:::" >> /etc/shadow
echo "$GUEST_USER:$sub_start:65536" >> /etc/subuid
echo "$GUEST_USER:$sub_start:65536" >> /etc/subgid

# cgroup v2 as systemd mounts it, every controller enabled at the root, and the
# tree of a systemd machine: this process in init.scope, services under
# system.slice, and user.slice/user-UID.slice/user@UID.service delegated to the
# user (owned by it, cgroup.procs, cgroup.subtree_control and cgroup.threads
# too, as Delegate=yes does) with cpu, memory and pids enabled for its children
# and in its app.slice, as systemd --user does.
CG=/sys/fs/cgroup
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 $CG || die "cannot mount cgroup2"
delegated=$CG/user.slice/user-$uid.slice/user@$uid.service
mkdir -p $CG/init.scope $CG/system.slice "$delegated/app.slice" "/home/$GUEST_USER" "/run/user/$uid" ||
	die "cannot make the cgroup tree"
echo $$ > $CG/init.scope/cgroup.procs
enable() { # DIR CONTROLLER...
	local c
	for c in "${@:2}"; do echo "+$c" > "$1/cgroup.subtree_control" || die "cannot enable $c in $1"; done
}
read -r -a controllers < $CG/cgroup.controllers
enable $CG "${controllers[@]}"
enable $CG/system.slice cpu io memory pids
enable $CG/user.slice cpu io memory pids
enable "$CG/user.slice/user-$uid.slice" cpu io memory pids
enable "$delegated" cpu memory pids
enable "$delegated/app.slice" cpu memory pids
chown "$uid:$gid" "$delegated" "$delegated/cgroup.procs" "$delegated/cgroup.subtree_control" "$delegated/cgroup.threads" &&
	chown -R "$uid:$gid" "$delegated/app.slice" "/home/$GUEST_USER" "/run/user/$uid" || die "cannot give $GUEST_USER its subtree"
chmod 700 "/run/user/$uid"
export E2BW_GUEST_USER=$GUEST_USER

# A line on the console every minute while the command runs: a run that goes
# quiet shows whether the guest still ran (and how loaded it was) or had stopped.
# Builtins only (read -t on a pipe held open for writing, which nobody writes):
# no program to start over virtiofs.
heartbeat() {
	local up load procs never
	exec {never}<> <(:)
	while ! read -r -t 60 -u "$never" _; do
		read -r up _ < /proc/uptime
		read -r load _ < /proc/loadavg
		procs=0
		for _ in /proc/[0-9]*; do procs=$((procs + 1)); done
		log "alive: up ${up%.*} s, load $load, $procs processes"
	done
}

# The command, as root or the user, each in a leaf cgroup of its own.
log "running the command as $RUN_AS"
heartbeat &
beat=$!
: > "$RUN/started"
"$HERE/as" "$RUN_AS" -- /bin/bash "$RUN/command" < /dev/null > "$OUT_PORT" 2>&1
echo $? > "$RUN/status"
kill "$beat" 2>/dev/null
end_guest
