/* The reserve: plans/reserve, a file of preallocated blocks that the
 * journal gives back to the file system, a piece at a time, when an answer
 * (a result, an error result for a plan that could not be stored, a done
 * record) finds the disk full. So an answer can be recorded, and therefore
 * sent exactly once, even when plans have filled the disk; plans never
 * use it. journal_reserve_fill() takes the blocks back when there is room
 * again. The reference lists plans/ for entry directories only, so it
 * never sees the file. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "journal/journal-internal.h"

/* What one release gives back: room for a few answers (an entry
 * directory and its result.json take two blocks on ext4, one page on
 * tmpfs). */
#define RESERVE_CHUNK ((off_t)32 << 10)

/* The reserve's blocks as the file system counts them. */
static void reserve_measure(Journal *j)
{
        struct stat st;

        if (fstat(j->reserve_fd, &st) < 0)
                return;
        j->reserve_have = (uint64_t)st.st_blocks * 512;
        j->reserve_len = st.st_size;
}

int journal_reserve_fill(Journal *j)
{
        int r = 0;

        if (j->reserve_fd < 0 || j->reserve_size == 0)
                return 0;
        if (j->reserve_have >= j->reserve_size && j->reserve_len >= (off_t)j->reserve_size)
                return 0;
        if (j->ops.fallocate(j->reserve_fd, 0, 0, (off_t)j->reserve_size) < 0) {
                r = -errno;
                /* Blocks that a failed fallocate() took stay in the file
                 * until the next release or fill: nothing is lost. */
        }
        reserve_measure(j);
        if (r == 0 && j->reserve_have < j->reserve_size)
                j->reserve_have = j->reserve_size; /* a file system that counts no blocks */
        return r;
}

int journal_reserve_release(Journal *j)
{
        off_t len;

        if (j->reserve_fd < 0 || j->reserve_len == 0)
                return -ENOSPC;
        len = j->reserve_len > RESERVE_CHUNK ? j->reserve_len - RESERVE_CHUNK : 0;
        if (j->ops.ftruncate(j->reserve_fd, len) < 0)
                return -errno;
        reserve_measure(j);
        j->reserve_len = len;
        if (j->reserve_have > (uint64_t)len)
                j->reserve_have = (uint64_t)len;
        j->reserve_used++;
        return 0;
}

bool journal_reserve_retry(Journal *j, int r)
{
        return (r == -ENOSPC || r == -EDQUOT) && journal_reserve_release(j) == 0;
}

int journal_reserve_open(Journal *j)
{
        int fd;

        if (j->reserve_size == 0)
                return 0;
        fd = j->ops.openat(j->plans_fd, JOURNAL_RESERVE_FILE,
                           O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        j->reserve_fd = fd;
        reserve_measure(j);
        /* A full disk at start is no reason not to start: the reserve is
         * taken when there is room. */
        (void)journal_reserve_fill(j);
        return 0;
}

int journal_space(Journal *j, JournalSpace *ret)
{
        struct statvfs sv;
        int r = 0;

        pthread_mutex_lock(&j->io);
        r = journal_reserve_fill(j);
        if (r < 0 && r != -ENOSPC && r != -EDQUOT)
                goto out;
        r = 0;
        if (fstatvfs(j->plans_fd, &sv) < 0) {
                r = -errno;
                goto out;
        }
        *ret = (JournalSpace){
                .available = (uint64_t)sv.f_bavail * sv.f_frsize,
                .reserve_whole = j->reserve_fd < 0 || j->reserve_have >= j->reserve_size,
                .reserve_held = j->reserve_fd < 0 ? 0 : j->reserve_have,
                .reserve_used = j->reserve_used,
        };
out:
        pthread_mutex_unlock(&j->io);
        return r;
}
