/*
 * An LD_PRELOAD shim for test/chaos/run, a block-level clone of a volume on
 * one file system (the nemesis same_name_clone): a clone keeps the file
 * system's UUID, the data directory's birth time and its inode, but a copy on
 * the same file system gets an inode and a birth time of its own (a volume of
 * its own needs root). While SNOWFLAKE_CLONE_OF names a directory, statx() of
 * "." (the data directory: the server runs in it) answers that directory's
 * inode and birth time, so that the copy is, to snowflake, its source's
 * directory: what a clone mounted under its source's host name is.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf)
{
    static __typeof__(&statx) real;
    const char *source = getenv("SNOWFLAKE_CLONE_OF");
    struct statx of;
    int ret;
    if (real == NULL)
        real = (__typeof__(&statx)) dlsym(RTLD_NEXT, "statx");
    ret = real(dirfd, path, flags, mask, buf);
    if (ret == 0 && source != NULL && source[0] != '\0' && dirfd == AT_FDCWD && strcmp(path, ".") == 0
        && real(AT_FDCWD, source, flags, mask, &of) == 0)
    {
        buf->stx_ino = of.stx_ino;
        buf->stx_btime = of.stx_btime;
    }
    return ret;
}
