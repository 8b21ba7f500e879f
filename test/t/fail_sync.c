/*
 * An LD_PRELOAD shim for test/t/072_sync.pl: while the file named by
 * SNOWFLAKE_FAIL_SYNC exists, fsync() and fdatasync() of any file under a
 * pg_snowflake directory fail with EIO (a disk that loses writes), and every
 * such call is counted in that file's name + ".count" (one byte per call).
 *
 * For test/t/071_stalled_writes.pl: while the file named by
 * SNOWFLAKE_STALL_SYNC exists, the first process to sync a file under
 * pg_snowflake (the one that creates that name + ".held", its pid in it)
 * waits in that call until the file is removed (a disk that stops
 * answering); the others pass while ".held" exists.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int under_pg_snowflake(int fd)
{
    char link[64], path[4096];
    ssize_t n;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = '\0';
    return strstr(path, "/pg_snowflake") != NULL;
}

static void stall_if_asked(int fd)
{
    const char *flag = getenv("SNOWFLAKE_STALL_SYNC");
    char held[4096], pid[32];
    int out;
    if (flag == NULL || access(flag, F_OK) != 0 || !under_pg_snowflake(fd))
        return;
    snprintf(held, sizeof held, "%s.held", flag);
    out = open(held, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (out < 0)
        return;    /* another process stalls */
    snprintf(pid, sizeof pid, "%d\n", (int) getpid());
    (void) !write(out, pid, strlen(pid));
    close(out);
    while (access(flag, F_OK) == 0)
        usleep(10000);
}

static int lease_fd_failing(int fd)
{
    const char *flag = getenv("SNOWFLAKE_FAIL_SYNC");
    char link[64], path[4096];
    ssize_t n;
    if (flag == NULL)
        return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = '\0';
    if (strstr(path, "/pg_snowflake") == NULL)
        return 0;
    {
        char count[4096];
        int out;
        snprintf(count, sizeof count, "%s.count", flag);
        out = open(count, O_WRONLY | O_APPEND | O_CREAT, 0600);
        if (out >= 0) {
            (void) !write(out, access(flag, F_OK) == 0 ? "F" : "s", 1);
            close(out);
        }
    }
    return access(flag, F_OK) == 0;
}

int fsync(int fd)
{
    static int (*real)(int);
    if (real == NULL)
        real = (int (*)(int)) dlsym(RTLD_NEXT, "fsync");
    stall_if_asked(fd);
    if (lease_fd_failing(fd)) {
        errno = EIO;
        return -1;
    }
    return real(fd);
}

int fdatasync(int fd)
{
    static int (*real)(int);
    if (real == NULL)
        real = (int (*)(int)) dlsym(RTLD_NEXT, "fdatasync");
    stall_if_asked(fd);
    if (lease_fd_failing(fd)) {
        errno = EIO;
        return -1;
    }
    return real(fd);
}
