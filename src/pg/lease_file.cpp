// The lease file (lease_file.hpp).
#include "lease_file.hpp"

extern "C" {
#include "miscadmin.h"
#include "parser/analyze.h"
#include "utils/builtins.h"
#include "storage/fd.h"
#include "storage/ipc.h"
}

#include <algorithm>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace snowflake::pg {
namespace {

// XFS_IOC_FSGEOMETRY_V1's answer (the kernel's ABI, xfs_fs.h), for the UUID.
struct XfsGeometryV1 {
    std::uint32_t blocksize, rtextsize, agblocks, agcount, logblocks, sectsize, inodesize, imaxpct;
    std::uint64_t datablocks, rtblocks, rtextents, logstart;
    unsigned char uuid[16];
    std::uint32_t sunit, swidth;
    std::int32_t version;
    std::uint32_t flags, logsectsize, rtsectsize, dirblocksize;
};
constexpr unsigned long kXfsGeometryV1 = _IOR('X', 100, XfsGeometryV1);

// The id of the file system "." is on, 0 when none is read: ext2/3/4's and
// btrfs's f_fsid (made from the UUID), ZFS's (the dataset's guid: a clone or
// a received copy has its own) and XFS's UUID (whose f_fsid is the device's
// number: a block clone given a new UUID, as XFS needs to mount it beside its
// source, would keep the rest of the identity).
std::uint64_t volume_id() {
    struct statfs fs {};
    if (statfs(".", &fs) != 0) return 0;
    constexpr long kExt = 0xEF53, kBtrfs = 0x9123683E, kZfs = 0x2FC12FC1, kXfs = 0x58465342;
    std::uint64_t id = 0;
    if (fs.f_type == kExt || fs.f_type == kBtrfs || fs.f_type == kZfs) {
        std::memcpy(&id, &fs.f_fsid, std::min(sizeof id, sizeof fs.f_fsid));
    } else if (fs.f_type == kXfs) {
        XfsGeometryV1 geometry {};
        const int fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) return 0;
        if (ioctl(fd, kXfsGeometryV1, &geometry) == 0) {
            std::uint64_t halves[2];
            std::memcpy(halves, geometry.uuid, sizeof halves);
            id = halves[0] ^ halves[1];
        }
        close(fd);
    }
    return id;
}

enum class LeaseFile { Missing, Ok, Unreadable, Corrupt };

// Reads a lease file.
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

// Where this data directory is (the server runs in it): in the low 32 bits
// of `host` a hash of the host name, in its high 32 bits a hash of the
// directory's volume and birth (the file system's id where one is read,
// volume_id, and the directory's birth time), in `inode`
// its inode number. A copy made by any means (base backup, a copy of a
// stopped or running server, a copy of a copy, onto the root of another
// volume, where both roots are inode 2) is another directory, on this host or
// another; the same directory keeps them across restarts, reboots and
// remounts. A block-level clone of the volume keeps them too, unless given a
// new UUID (docs/ha-and-copies.md).
// The host name is snowflake.host_name's, or the kernel's (server_host_name()).
void own_directory(std::uint64_t& host, std::uint64_t& inode) {
    const char* name = server_host_name();
    struct statx st {};
    const bool known = statx(AT_FDCWD, ".", 0, STATX_INO | STATX_BTIME, &st) == 0;
    inode = known ? st.stx_ino : 0;
    std::uint64_t volume[3] = {};  // the file system's id, the birth time's s and ns: no padding
    if (known && (st.stx_mask & STATX_BTIME) != 0) {
        volume[1] = static_cast<std::uint64_t>(st.stx_btime.tv_sec);
        volume[2] = st.stx_btime.tv_nsec;
    }
    volume[0] = volume_id();
    const std::uint32_t where = volume[0] == 0 && volume[1] == 0 && volume[2] == 0
                                    ? 0
                                    : crc32c(volume, sizeof volume) | 1u;  // never 0: 0 is a 1.0 file's
    host = static_cast<std::uint64_t>(crc32c(name, strlen(name))) | static_cast<std::uint64_t>(where) << 32;
}

// Whether a lease file was written by this data directory, by it under
// another host name (its volume, birth time and inode the same: moved, or a
// block clone on a host of another name), or elsewhere. A file written before
// the volume was recorded (by 1.0) has 0 in the high bits of its host: its
// host name and inode decide, until this server writes the lease again.
enum class Writer { Here, OtherHostName, Elsewhere };
Writer writer_of(const Lease& lease) {
    std::uint64_t host, inode;
    own_directory(host, inode);
    if ((lease.directory_host >> 32) == 0) host &= 0xFFFFFFFFu;
    if (lease.directory_host == host && lease.directory_inode == inode) return Writer::Here;
    // (a 1.0 lease, or a volume with neither an id read nor a birth time: the
    // inode alone, masked above)
    const bool same_place = (lease.directory_host >> 32) == (host >> 32) && lease.directory_inode == inode;
    return same_place ? Writer::OtherHostName : Writer::Elsewhere;
}

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

// Removes the upgrade mark durably; false, reported at LOG, when that fails.
bool forget_upgrade() {
    if (remove_durably(kUpgradedPath)) return true;
    ereport(LOG, (errcode_for_file_access(), errmsg("could not remove file \"%s\": %m", kUpgradedPath)));
    return false;
}

// At start-up in a data directory pg_upgrade made: the lease copied in from
// the old data directory (written there, so not this directory's) is taken
// as this directory's own, without the clone fence: the upgrade replaces the
// old cluster. Without it, no id is issued.
void carry_upgraded_lease(SharedState& state, const Lease& lease, bool exists) {
    if (state.blocked != Blocked::No) return;  // refused for another reason, said already
    if (!exists || !state.lease_elsewhere) {
        state.blocked = Blocked::LeaseNotCarried;
        ereport(LOG, (errmsg("snowflake: this data directory was made by pg_upgrade without the old "
                             "data directory's lease; no id is issued"),
                      errhint("%s", kCarryLeaseHint)));
        return;
    }
    // The mark goes first: a crash before the lease is rewritten leaves a
    // lease written elsewhere and no mark, which the clone fence refuses.
    if (!forget_upgrade()) {
        state.blocked = Blocked::LeaseNotCarried;
        return;
    }
    state.lease_elsewhere = false;
    (void)write_lease(lease_of(state, units_of(state, lease.lease_ms), units_of(state, lease.clock_ms)), LOG);
    ereport(LOG, (errmsg("snowflake: the lease of the data directory this one was upgraded from is "
                         "carried over; ids continue above those issued before the upgrade")));
}

// Writes a mark file durably (also in _PG_init); FATAL when that fails.
void write_mark(const char* path, const char* text, const char* why) {
    if (!write_durably(path, text, strlen(text)))
        ereport(FATAL, (errcode_for_file_access(), errmsg("could not write file \"%s\": %m", path),
                        errdetail("%s", why)));
}

post_parse_analyze_hook_type previous_post_parse_analyze_hook = nullptr;
bool marked_away = false;  // by this backend

// In pg_upgrade's old cluster: once its schema is being dumped, the data
// directory is marked: the new one continues its ids. pg_upgrade runs
// pg_dumpall and pg_dump with --quote-all-identifiers, which set
// quote_all_identifiers in their sessions, and only in a real upgrade (never
// for --check, and none of its own sessions set it).
void mark_old_when_dumped(ParseState* parse, Query* query, JumbleStateArg jumble) {
    if (previous_post_parse_analyze_hook) previous_post_parse_analyze_hook(parse, query, jumble);
    if (!quote_all_identifiers || marked_away) return;
    struct stat st;
    // another of pg_upgrade's parallel pg_dump sessions marked it already
    if (stat(kUpgradedAwayPath, &st) == 0) {
        marked_away = true;
        return;
    }
    write_mark(kUpgradedAwayPath,
               "This data directory was upgraded by pg_upgrade: its ids continue in the new data\n"
               "directory, and snowflake issues none here. If the upgrade was abandoned and the new\n"
               "cluster never issued an id, remove this file.\n",
               "In pg_upgrade's old data directory, snowflake marks that the new one continues its ids.");
    marked_away = true;
}

// The host name recorded beside its hash, for the messages that name it.
void record_host_name(Lease& lease) {
    const char* name = server_host_name();
    std::memcpy(lease.host_name.data(), name, strlen(name) + 1);
}

}  // namespace

// The lease stamped with this data directory. A moved directory (fence.hpp,
// F13) keeps the identity its lease records, without the fence of this start,
// while the worker id it names is in effect; a lease under another worker id
// ends the move.
Lease as_written(const Lease& lease) {
    Lease stamped = lease;  // written by this data directory
    SharedState* state = shared_state();
    const std::uint32_t moved = state != nullptr ? state->moved_worker.load() : kNoWorker;
    if (moved != kNoWorker && lease.worker_id == moved) {
        stamped.directory_host = state->moved_from.directory_host;
        stamped.directory_inode = state->moved_from.directory_inode;
        stamped.host_name = state->moved_from.host_name;
        if (state->moved_fence) {
            const auto end = std::remove(stamped.fenced.begin(), stamped.fenced.begin() + stamped.fenced_count, moved);
            stamped.fenced_count = static_cast<std::uint32_t>(end - stamped.fenced.begin());
            std::fill(end, stamped.fenced.end(), 0u);
        }
    } else {
        if (moved != kNoWorker) state->moved_worker.store(kNoWorker);
        own_directory(stamped.directory_host, stamped.directory_inode);
        record_host_name(stamped);
    }
    return stamped;
}

namespace {

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

void mark_if_upgrading() {
    if (!IsBinaryUpgrade) return;
    struct stat st;
    // pg_upgrade keeps its output in the new data directory while it runs
    if (stat("pg_upgrade_output.d", &st) != 0 || !S_ISDIR(st.st_mode)) {
        // the old cluster: marked when pg_upgrade dumps it (only if preloaded)
        if (process_shared_preload_libraries_in_progress) {
            previous_post_parse_analyze_hook = post_parse_analyze_hook;
            post_parse_analyze_hook = SNOWFLAKE_CALLBACK(mark_old_when_dumped, FATAL);
        }
        return;
    }
    if (stat(kUpgradedPath, &st) == 0) return;
    write_mark(kUpgradedPath,
               "This data directory was made by pg_upgrade. Copy pg_snowflake/lease from the old data\n"
               "directory into this directory's pg_snowflake before starting the server; until then\n"
               "snowflake issues no id.\n",
               "In pg_upgrade's new data directory, snowflake marks that the old data directory's "
               "lease must be carried over.");
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

bool load_lease(SharedState& state, Lease& lease) {
    LeaseFile file = read_lease(kLeasePath, lease);
    // The fence's copy: its fence is kept whatever became of the lease file,
    // and it stands in for a lease file that was removed.
    Lease kept{};
    const LeaseFile fence_file = read_lease(kFencePath, kept);
    const char* damaged = file == LeaseFile::Unreadable || file == LeaseFile::Corrupt ? kLeasePath : kFencePath;
    if (file == LeaseFile::Missing && fence_file == LeaseFile::Ok) {
        lease = kept;
        file = LeaseFile::Ok;
        ereport(LOG, (errmsg("snowflake: the lease file \"%s\" is missing; the copy kept with the fence, "
                             "\"%s\", stands in for it", kLeasePath, kFencePath)));
    } else if (fence_file == LeaseFile::Unreadable || fence_file == LeaseFile::Corrupt) {
        if (file == LeaseFile::Missing) file = fence_file;  // the fence is in neither
        else ereport(LOG, (errmsg("snowflake: the fence's copy \"%s\" is damaged and ignored; the lease file "
                                  "holds the fence", kFencePath)));
    }
    const bool exists = file == LeaseFile::Ok;
    if (file == LeaseFile::Unreadable) state.blocked = Blocked::LeaseUnreadable;
    if (file == LeaseFile::Corrupt) state.blocked = Blocked::LeaseCorrupt;
    if (exists) (void)lease_changed(state, lease);
    if (state.blocked == Blocked::LeaseUnreadable || state.blocked == Blocked::LeaseCorrupt)
        ereport(LOG, (errmsg("snowflake: the lease file \"%s\" %s; no id is issued", damaged,
                             file == LeaseFile::Corrupt ? "is corrupt (its checksum does not match)"
                                                        : "could not be read"),
                      errhint("Run SELECT snowflake_repair_lease().")));
    init_state(state.generator, state.layout, configured_worker_id(), exists, units_of(state, lease.lease_ms),
               units_of(state, lease.clock_ms));
    // Under a registry the worker id is granted, never copied: no fence.
    for (std::uint32_t i = 0; exists && !registry_mode() && i < lease.fenced_count; ++i)
        fence(state.generator, lease.fenced[i], true);
    for (std::uint32_t i = 0; fence_file == LeaseFile::Ok && !registry_mode() && i < kept.fenced_count; ++i)
        fence(state.generator, kept.fenced[i], true);
    const Writer writer = exists ? writer_of(lease) : Writer::Here;
    state.lease_elsewhere = writer != Writer::Here;
    state.moved_worker = kNoWorker;
    if (writer == Writer::OtherHostName) state.moved_from = lease;  // fence_if_copy decides
    if (exists) state.lease_worker_id = lease.worker_id;
    struct stat st;
    if (!IsBinaryUpgrade && stat(kUpgradedPath, &st) == 0) carry_upgraded_lease(state, lease, exists);
    if (!IsBinaryUpgrade && state.blocked == Blocked::No && stat(kUpgradedAwayPath, &st) == 0) {
        state.blocked = Blocked::UpgradedAway;
        ereport(LOG, (errmsg("snowflake: this data directory was upgraded by pg_upgrade; no id is issued"),
                      errhint("%s", kUpgradedAwayHint)));
    }
    const std::int64_t ahead_ms =
        state.epoch_unix_ms + static_cast<std::int64_t>(lease.lease_ms) - unix_now_ms();
    if (exists && ahead_ms > 0)
        ereport(LOG, (errmsg("snowflake: ids continue after the lease high-water mark, "
                             "%lld ms ahead of the system clock",
                             static_cast<long long>(ahead_ms)),
                      errdetail("After a crash, or a restart with the clock set back, ids run "
                                "ahead of the clock until it catches up.")));
    return exists;
}

// At a clean shutdown, when every backend is gone, the lease shrinks to the
// last id issued, so that a restart continues from there and not a span later.
std::int64_t shrink_lease_at_shutdown(int code) {
    SharedState* state = shared_state();
    if (code != 0 || state == nullptr || state->blocked != Blocked::No) return -1;
    const GeneratorState& generator = state->generator;
    const std::uint64_t last = generator.last_id.load();
    const std::uint64_t mark = std::max(last, generator.floor_id.load());
    // nothing issued since start: the lease stays the floor (but it records
    // the worker id a registry granted, the one asked for at the next start)
    if (last != 0 || state->registry.worker_id.load() != kNoWorker)
        write_lease(lease_of(*state, time_of(mark, state->layout), generator.clock_high.load()), LOG);
    // every id issued by this node is below the time unit after the mark's
    return mark == 0 ? 0
                     : state->epoch_unix_ms +
                           static_cast<std::int64_t>(ms_of(*state, time_of(mark, state->layout) + 1));
}

}  // namespace snowflake::pg
