// The lease file (lease_file.hpp).
#include "lease_file.hpp"

#include "identity.hpp"

extern "C" {
#include "storage/fd.h"
}

#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace snowflake::pg {
namespace {

// The lease file is one block of kLeaseBlock bytes, the text then NULs, so
// that extending the lease overwrites it in place: one write inside one
// 512-byte sector, which PostgreSQL assumes atomic for pg_control, and one
// fdatasync. Replacing it by rename costs three fsyncs and two journal
// commits, which compete with the WAL flushes of concurrent commits (the
// README's Performance section has the pgbench pairs).
constexpr std::size_t kLeaseBlock = 512;
static_assert(kLeaseTextMax <= kLeaseBlock);

// Overwrites a lease file that is already a block; false, with nothing
// reported, when it is not (missing, or not one block), or
// when the write or its fdatasync fails: the caller then replaces the file.
bool overwrite_lease(const char* path, const char (&block)[kLeaseBlock]) {
    const int fd = OpenTransientFile(path, O_WRONLY | PG_BINARY);
    if (fd < 0) return false;
    struct stat st;
    const bool done = fstat(fd, &st) == 0 && st.st_size == static_cast<off_t>(kLeaseBlock) &&
                      pwrite(fd, block, kLeaseBlock, 0) == static_cast<ssize_t>(kLeaseBlock) &&
                      pg_fdatasync(fd) == 0;
    CloseTransientFile(fd);
    return done;
}

// The lease's text as written (as_written), padded with NULs to a block.
void stamp(const Lease& lease, char (&block)[kLeaseBlock]) {
    std::memset(block, 0, sizeof block);
    (void)format_lease(as_written(lease), block);
}

// Writes a block as a new file (write_durably); a failure leaves the old file
// in place and is reported at `elevel`.
bool replace_file(const char* path, const char (&block)[kLeaseBlock], int elevel) {
    if (write_durably(path, block, kLeaseBlock)) return true;
    ereport(elevel, (errcode_for_file_access(), errmsg("could not write file \"%s\": %m", path)));
    return false;
}

}  // namespace

LeaseFile read_lease(const char* path, Lease& lease) {
    char text[kLeaseTextMax];
    const ssize_t length = read_whole(path, text, sizeof text);
    if (length < 0 && errno == ENOENT) return LeaseFile::Missing;
    if (length <= 0) return LeaseFile::Unreadable;
    // The text, without the NULs that pad it to a block (see write_lease).
    switch (parse_lease(text, strnlen(text, static_cast<std::size_t>(length)), lease)) {
        case LeaseText::Ok:
            return LeaseFile::Ok;
        case LeaseText::BadChecksum:
            return LeaseFile::Corrupt;
        case LeaseText::Malformed:
            break;
    }
    return LeaseFile::Unreadable;
}

// Writes the lease durably: in place when the file is a block already,
// otherwise (or when that fails) a new file: temp file, fsync, rename, fsync
// of the directory (and of the data directory when pg_snowflake is new). A
// failure leaves the old file in place and is reported at `elevel`; the
// caller then publishes nothing, so no id is ever issued beyond a mark that
// is not on disk. A failed in-place write is never retried on that file: its
// fsync state is unknown, so a fresh temp file replaces it.
bool write_lease(const Lease& lease, int elevel) {
    char block[kLeaseBlock];
    stamp(lease, block);
    return overwrite_lease(kLeasePath, block) || replace_file(kLeasePath, block, elevel);
}

bool write_fence_copy(const Lease& lease, int elevel) {
    char block[kLeaseBlock];
    stamp(lease, block);
    return replace_file(kFencePath, block, elevel);
}

// A lease taken under another epoch or layout blocks generation (and the
// decoding forms that read the settings): true if so.
bool lease_changed(SharedState& state, const Lease& lease) {
    if (lease.epoch_unix_ms != state.epoch_unix_ms) {
        state.lease_epoch_unix_ms = lease.epoch_unix_ms;
        state.blocked = Blocked::EpochChanged;
    } else if (lease.layout != state.layout) {
        state.lease_layout = lease.layout;
        state.blocked = Blocked::LayoutChanged;
    }
    return state.blocked == Blocked::EpochChanged || state.blocked == Blocked::LayoutChanged;
}

// The lease to write: the mark, the clock reading, the worker id in effect
// and the fence (the worker ids this node may not use, so that it outlives
// restarts).
// The generator's times (lease, clock) are in the layout's units; the file's in ms.
Lease lease_of(const SharedState& state, std::uint64_t lease_units, std::uint64_t clock_units) {
    Lease lease{state.epoch_unix_ms, ms_of(state, lease_units), ms_of(state, clock_units),
                worker_in_effect(state.generator)};
    lease.layout = state.layout;
    if (const std::uint32_t pending = state.pending_worker.load(); pending != lease.worker_id) lease.pending_worker = pending;
    for (std::uint32_t w = 0; w <= state.layout.max_worker && lease.fenced_count < kMaxFenced; ++w)
        if (is_fenced(state.generator, w)) lease.fenced[lease.fenced_count++] = w;
    return lease;
}

// At a clean shutdown, when every backend is gone, the lease shrinks to the
// last id issued, so that a restart continues from there and not a span later.
std::int64_t shrink_lease_at_shutdown(int code, bool renamed) {
    SharedState* state = shared_state();
    if (code != 0 || state == nullptr || state->blocked != Blocked::No) return -1;
    const GeneratorState& generator = state->generator;
    const std::uint64_t last = generator.last_id.load();
    const std::uint64_t mark = std::max(last, generator.floor_id.load());
    // nothing issued since start: the lease stays the floor (but it records
    // the worker id a registry granted, the one asked for at the next start).
    // A rename (stamped with the new name: as_written) writes the fence's
    // copy first (F13RW): if that fails, neither file takes the new name.
    const bool shrinks = last != 0 || state->registry.worker_id.load() != kNoWorker;
    const Lease lease = lease_of(*state, shrinks ? time_of(mark, state->layout) : generator.lease_units.load(),
                                 generator.clock_high.load());
    if (renamed && !write_fence_copy(lease, LOG)) {
        state->renaming_to[0] = '\0';
        renamed = false;
    }
    if ((shrinks || renamed) && write_lease(lease, LOG) && renamed)
        ereport(LOG, (errmsg("snowflake: the settings' files name this server \"%s\": a rename; its lease records "
                             "the new name for its next start", state->renaming_to),
                      errdetail("Started under it, on this host or another, it continues its ids. A copy of this "
                                "data directory refuses them as before.")));
    // every id issued by this node is below the time unit after the mark's
    return mark == 0 ? 0
                     : state->epoch_unix_ms +
                           static_cast<std::int64_t>(ms_of(*state, time_of(mark, state->layout) + 1));
}

}  // namespace snowflake::pg
