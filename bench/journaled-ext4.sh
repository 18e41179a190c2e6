#!/bin/bash
# A journaled ext4 made for one bench run, as a cloud image's root file
# system is, on this machine whose root ext4 has no journal
# (docs/benchmarks.md, "The machine").
#
#   bench/journaled-ext4.sh COMMAND [ARGS...]
#
# makes the file system, runs COMMAND ARGS... MOUNT_POINT (the mount point
# as its last argument, e.g. `chrt -f 10 build/bench/bench-fs 200`), and
# removes the file system again, also when COMMAND fails or the script is
# interrupted. bench/run-daemon-bench.sh sources it for --fs.
#
# The file system (docs/benchmarks.md, "On a journaled ext4", says what
# it is and what the loop device under it costs): an image file in
# $JEXT4_IMAGE_DIR (default /var/tmp, so that its writes and flushes reach
# this machine's disk) of $JEXT4_SIZE MiB (default 2048, whose journal is
# that of a root of 2 to 16 GiB); made by mkfs.ext4 with the system's
# defaults; on a loop device with direct I/O (no second page cache of the
# image); mounted in a temporary directory with $JEXT4_MOUNT_OPTIONS
# (default "defaults"). $JEXT4_MKFS_OPTIONS, when set, is added to
# mkfs.ext4's: "-O ^has_journal" makes the control without a journal.
# Only root can do this.
#
# The image is written with zeros first, and mkfs writes its zeros rather
# than asking for them: an image made by fallocate, or zeroed the fast
# way, has unwritten extents, and each first write to one of them (each of
# the journal's blocks, once) would cost the loop device an allocation in
# this machine's file system. The inode tables and the journal are written
# at once, so that no lazy initialisation runs in the background during
# the bench. Not mounted with "discard", as this machine's root and cloud
# images are: through a loop device a discard punches a hole in the image,
# and the next write there allocates again: work that a cloud disk leaves
# to its host.

jext4_image=
jext4_loop=
jext4_mnt=

# Undo whatever jext4_make made, in reverse order; safe to call twice.
jext4_remove() {
    if [ -n "$jext4_mnt" ]; then
        # A consumer killed with the bench may hold it for a moment.
        umount "$jext4_mnt" 2>/dev/null || umount -l "$jext4_mnt" || true
        rmdir "$jext4_mnt" 2>/dev/null || true
        jext4_mnt=
    fi
    if [ -n "$jext4_loop" ]; then
        losetup -d "$jext4_loop" || true
        jext4_loop=
    fi
    if [ -n "$jext4_image" ]; then
        rm -f "$jext4_image"
        jext4_image=
    fi
}

# Make the file system and mount it; its mount point is then in $jext4_mnt.
# The caller sets a trap that calls jext4_remove.
jext4_make() {
    if [ "$(id -u)" != 0 ]; then
        echo "journaled-ext4: only root can make and mount the file system" >&2
        return 2
    fi
    local opts=${JEXT4_MOUNT_OPTIONS:-defaults}
    jext4_image=$(mktemp "${JEXT4_IMAGE_DIR:-/var/tmp}/bench-ext4.XXXXXX.img")
    dd if=/dev/zero of="$jext4_image" bs=1M count="${JEXT4_SIZE:-2048}" conv=fsync status=none
    # shellcheck disable=SC2086 # a list of options
    UNIX_IO_NOZEROOUT=1 mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 \
        ${JEXT4_MKFS_OPTIONS:-} "$jext4_image"
    jext4_loop=$(losetup --find --show --direct-io=on "$jext4_image")
    jext4_mnt=$(mktemp -d /tmp/bench-ext4.XXXXXX)
    mount -t ext4 -o "$opts" "$jext4_loop" "$jext4_mnt"
}

# The pid of the mounted file system's journal thread (jbd2/loopN-8).
jext4_journal_thread() {
    local dev
    dev=$(basename "$jext4_loop")
    grep -o '^[0-9]*' "/sys/fs/ext4/$dev/journal_task" 2>/dev/null || true
}

# One line that says what the file system is.
jext4_describe() {
    local dev features
    dev=$(basename "$jext4_loop")
    features=$(dumpe2fs -h "$jext4_loop" 2>/dev/null | sed -n 's/^Filesystem features: *//p')
    echo "# ext4 on $jext4_loop (image $jext4_image, ${JEXT4_SIZE:-2048} MiB," \
        "direct I/O), mounted on $jext4_mnt with $(findmnt -no OPTIONS "$jext4_mnt");" \
        "features: $features; journal thread: $(cat "/sys/fs/ext4/$dev/journal_task")"
}

# One line of what the file system's journal did since it was mounted,
# from /proc/fs/jbd2/<dev>-8/info: its commits and what an average one took.
jext4_commits() {
    local info
    info="/proc/fs/jbd2/$(basename "$jext4_loop")-8/info"
    [ -r "$info" ] || return 0
    awk '
        NR == 1 { n = $1; req = substr($3, 2) }
        /waiting for transaction/ { wait = $1 }
        /flushing data/ { data = $1 }
        /logging transaction/ { logging = $1 }
        /average transaction commit time/ { commit = $1 }
        /handles per transaction/ { handles = $1 }
        / blocks per transaction/ { blocks = $1 }
        END { printf "# journal commits: %s (%s asked for by a flush); average %s commit, %s of it" \
              " flushing ordered data and %s logging; %s handles and %s blocks per commit;" \
              " %s waiting for a transaction\n", n, req, commit, data, logging, handles, blocks, wait }
    ' "$info"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    [ $# -ge 1 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
    trap jext4_remove EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    jext4_make
    jext4_describe
    "$@" "$jext4_mnt"
    jext4_commits
fi
