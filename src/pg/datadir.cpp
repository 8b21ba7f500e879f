// pg_snowflake/ (datadir.hpp).
#include "datadir.hpp"

extern "C" {
#include "postgres.h"

#include "common/file_perm.h"
}

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace snowflake::pg {
namespace {

// fsync of a directory; false, errno set, on failure.
bool sync_directory(const char* path) {
    const int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool synced = fsync(fd) == 0;
    const int saved = errno;
    close(fd);
    errno = saved;
    return synced;
}

// Writes all of data and syncs it; false, errno set (ENOSPC for a short write).
bool write_and_sync(int fd, const char* data, std::size_t length) {
    while (length > 0) {
        errno = 0;
        const ssize_t n = write(fd, data, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (errno == 0) errno = ENOSPC;
            return false;
        }
        data += n;
        length -= static_cast<std::size_t>(n);
    }
    return fsync(fd) == 0;
}

}  // namespace

bool make_data_directory() {
    if (mkdir(kDataDirectory, pg_dir_create_mode) == 0) return sync_directory(".");
    return errno == EEXIST;
}

bool write_durably(const char* path, const void* data, std::size_t length) {
    // a temporary file of this process's own: writers in several processes
    // (pg_upgrade's parallel pg_dump sessions marking the old directory) each
    // rename a whole file of theirs
    char temporary[MAXPGPATH];
    snprintf(temporary, sizeof temporary, "%s.%d.tmp", path, static_cast<int>(getpid()));
    if (!make_data_directory()) return false;
    const int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | PG_BINARY, pg_file_create_mode);
    if (fd < 0) return false;
    bool done = write_and_sync(fd, static_cast<const char*>(data), length);
    int saved = errno;
    if (close(fd) != 0 && done) {
        done = false;
        saved = errno;
    }
    if (done && rename(temporary, path) == 0) return sync_directory(kDataDirectory);
    if (done) saved = errno;
    (void)unlink(temporary);  // no leftover: a failed write leaves the old file only
    errno = saved;
    return false;
}

bool rename_durably(const char* from, const char* to) {
    const int fd = open(from, O_RDWR | O_CLOEXEC | PG_BINARY);
    if (fd < 0) return false;
    const bool synced = fsync(fd) == 0;
    const int saved = errno;
    close(fd);
    errno = saved;
    return synced && rename(from, to) == 0 && sync_directory(kDataDirectory);
}

ssize_t read_all(int fd, char* out, std::size_t capacity) {
    std::size_t length = 0;
    while (length < capacity) {
        const ssize_t n = read(fd, out + length, capacity - length);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        length += static_cast<std::size_t>(n);
    }
    return static_cast<ssize_t>(length);
}

ssize_t read_whole(const char* path, char* out, std::size_t capacity) {
    const int fd = open(path, O_RDONLY | O_CLOEXEC | PG_BINARY);
    if (fd < 0) return -1;
    const ssize_t length = read_all(fd, out, capacity);
    const int saved = errno;
    close(fd);
    errno = saved;
    return length;
}

bool remove_durably(const char* path) {
    if (unlink(path) != 0 && errno != ENOENT) return false;
    return sync_directory(kDataDirectory) || errno == ENOENT;
}

}  // namespace snowflake::pg
