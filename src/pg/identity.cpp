// The data directory's identity (identity.hpp).
#include "identity.hpp"

extern "C" {
#include "miscadmin.h"
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
// The host name is `name`: snowflake.host_name's, or the kernel's
// (server_host_name()), or the one a rename gives it (renaming_to).
void own_directory(const char* name, std::uint64_t& host, std::uint64_t& inode) {
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

// The host name this server's leases are stamped with: the one it runs
// under, or, at a clean shutdown that records a rename, the new one (F13R).
const char* stamped_name(const SharedState* state) {
    return state != nullptr && state->renaming_to[0] != '\0' ? state->renaming_to : server_host_name();
}

}  // namespace

// Whether a lease file was written by this data directory, by it under
// another host name (its volume, birth time and inode the same: moved, or a
// block clone on a host of another name), or elsewhere. A file written before
// the volume was recorded (by 1.0) has 0 in the high bits of its host: its
// host name and inode decide, until this server writes the lease again.
Writer writer_of(const Lease& lease) {
    std::uint64_t host, inode;
    own_directory(server_host_name(), host, inode);
    if ((lease.directory_host >> 32) == 0) host &= 0xFFFFFFFFu;
    if (lease.directory_host == host && lease.directory_inode == inode) return Writer::Here;
    // (a 1.0 lease, or a volume with neither an id read nor a birth time: the
    // inode alone, masked above)
    const bool same_place = (lease.directory_host >> 32) == (host >> 32) && lease.directory_inode == inode;
    return same_place ? Writer::OtherHostName : Writer::Elsewhere;
}

// The lease stamped with this data directory (under the name a rename gives
// it at a clean shutdown, F13R). A moved directory (fence.hpp,
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
        const char* name = stamped_name(state);
        own_directory(name, stamped.directory_host, stamped.directory_inode);
        std::memcpy(stamped.host_name.data(), name, strlen(name) + 1);
    }
    return stamped;
}

}  // namespace snowflake::pg
