/*
 * An LD_PRELOAD shim for test/chaos/run, a full disk without a file system of
 * its own (mounting one needs root): while the file named by
 * SNOWFLAKE_FULL_DISK exists, every write to a file under the directory named
 * by SNOWFLAKE_FULL_DISK_DIR (the data directory) fails with ENOSPC.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static int full(int fd)
{
    const char *flag = getenv("SNOWFLAKE_FULL_DISK");
    const char *dir = getenv("SNOWFLAKE_FULL_DISK_DIR");
    char link[64], path[4096];
    ssize_t n;
    if (flag == NULL || dir == NULL || access(flag, F_OK) != 0)
        return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = '\0';
    if (strncmp(path, dir, strlen(dir)) != 0)
        return 0;
    errno = ENOSPC;
    return 1;
}

#define REAL(fn) \
    static __typeof__(&fn) real; \
    if (real == NULL) \
        real = (__typeof__(&fn)) dlsym(RTLD_NEXT, #fn)

ssize_t write(int fd, const void *buf, size_t count)
{
    REAL(write);
    return full(fd) ? -1 : real(fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset)
{
    REAL(pwrite);
    return full(fd) ? -1 : real(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset)
{
    REAL(pwrite64);
    return full(fd) ? -1 : real(fd, buf, count, offset);
}

ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
    REAL(pwritev);
    return full(fd) ? -1 : real(fd, iov, iovcnt, offset);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
    REAL(pwritev64);
    return full(fd) ? -1 : real(fd, iov, iovcnt, offset);
}

int fallocate(int fd, int mode, off_t offset, off_t len)
{
    REAL(fallocate);
    return full(fd) ? -1 : real(fd, mode, offset, len);
}

int posix_fallocate(int fd, off_t offset, off_t len)
{
    REAL(posix_fallocate);
    return full(fd) ? ENOSPC : real(fd, offset, len);
}
