// Text codecs: id input, the epoch setting, the lease file. Pure C++, no
// PostgreSQL header; nothing here allocates or throws.
#pragma once
#include "layout.hpp"

#include <array>
#include <type_traits>

#include <cstddef>
#include <cstdint>

namespace snowflake {

enum class ParseResult : std::uint8_t { Ok, Syntax, OutOfRange };

// The snowflake type's text form, and so its domain: every int8, as decimal
// digits with a leading '-' for a negative value (a sentinel such as -1; no
// id is negative), -2^63..2^63-1; no '+', no spaces, not empty.
ParseResult parse_snowflake(const char* text, std::int64_t& value) noexcept;

// A non-negative one: decimal digits only, 0..2^63-1 ("-1" is a syntax error).
ParseResult parse_id(const char* text, std::uint64_t& id) noexcept;

// 'YYYY-MM-DD[( |T)HH:MM[:SS[.fff]]][[ ](Z|UTC|+HH[:MM]|-HH[:MM])]', UTC unless an
// offset is given, years 1970..9999. Sets ms since 1970-01-01 00:00:00 UTC.
bool parse_timestamp(const char* text, std::int64_t& unix_ms) noexcept;

// The lease file: the epoch it was taken under, its high-water mark, the
// highest clock reading seen when it was written, the worker id in effect, the
// worker ids this node may not use, the data directory that wrote it (its
// host and inode number), so that a copy of the directory knows it is one,
// and the layout of its ids.
inline constexpr std::size_t kMaxFenced = 8;
// The longest host name a lease records (Linux's HOST_NAME_MAX).
inline constexpr std::size_t kHostNameMax = 64;

struct Lease {
    std::int64_t epoch_unix_ms;
    std::uint64_t lease_ms;                // every id issued has a time <= lease_ms
    std::uint64_t clock_ms;                // ms since the epoch
    std::uint32_t worker_id = kNoWorker;   // kNoWorker: none (or a version 1/2 file)
    std::uint64_t directory_host = 0;      // a hash of the host name; 0 and 0: not recorded (versions 1 to 3)
    std::uint64_t directory_inode = 0;     // the data directory's inode number
    // The worker ids this node may not use (a copy's sources'), ascending.
    std::uint32_t fenced_count = 0;
    std::array<std::uint32_t, kMaxFenced> fenced{};
    Layout layout = kDefaultLayout;        // the layout of the ids (versions 1 to 4: the default)
    // The host name directory_host hashes, for the messages that name it: 1
    // to kHostNameMax printable characters but space; "": not recorded (a
    // version 5 file, written so when empty).
    std::array<char, kHostNameMax + 1> host_name{};
    // The worker id the settings' files name while another is in effect (a
    // reload pending): the one this directory's server takes next, refused by
    // its copies (fence.hpp, F15); kNoWorker: none.
    std::uint32_t pending_worker = kNoWorker;
    bool operator==(const Lease&) const = default;
};

// Room for the text of any Lease, in range or not (at most 462 characters and
// a NUL: a negative epoch, 20-digit marks and directory numbers, 10-digit
// worker ids, a layout line of at most 71, a host name line of at most 75, a
// pending line of at most 19, the checksum line).
inline constexpr std::size_t kLeaseTextMax = 464;

// Whether a host name can be recorded in a lease: 1 to kHostNameMax
// printable ASCII characters but space.
bool recordable_host_name(const char* name) noexcept;

// CRC-32C (Castagnoli), as PostgreSQL checksums pg_control and the WAL.
std::uint32_t crc32c(const void* data, std::size_t length) noexcept;

// The line that ends the lease file and the key bindings: "crc32c ", the
// CRC-32C of all before it in 8 lower-case hexadecimal digits, "\n".
inline constexpr std::size_t kChecksumLine = 16;
enum class ChecksumLine { Malformed, Differs, Matches };
// Whether text[0, length) ends with a checksum line, and whether it matches.
ChecksumLine check_checksum_line(const char* text, std::size_t length) noexcept;

// Writes the lease as text into buf (kLeaseTextMax bytes), version 6 (5
// without a host name, as 1.0 wrote it: read by both), its
// last line the CRC-32C of the lines before it; returns its length. Only the
// first fenced_count (at most kMaxFenced) fenced worker ids are written; a
// pending worker id as a line "pending <id>" before the checksum (1.0 never
// wrote one).
std::size_t format_lease(const Lease& lease, char* buf) noexcept;

// The lease in the WAL: a fixed struct of its own, every byte set (no
// padding), versioned; not the in-memory Lease. Version 1 (as 1.0 writes
// it: the first 80 bytes) without a pending worker id, so that 1.0 and 1.1
// replay each other's; version 2 (all of it) with one.
struct LeaseRecord {
    std::uint32_t version;
    std::uint32_t worker_id;
    std::int64_t epoch_unix_ms;
    std::uint64_t lease_ms;
    std::uint64_t clock_ms;
    std::int64_t unit_ms;  // the layout: unit, field widths, order
    std::uint8_t time_bits;
    std::uint8_t worker_bits;
    std::uint8_t sequence_bits;
    std::uint8_t sequence_above_worker;
    std::uint32_t fenced_count;
    std::uint32_t fenced[kMaxFenced];
    std::uint32_t pending_worker;  // version 2
    std::uint32_t zero;            // version 2: 0
};
static_assert(sizeof(LeaseRecord) == 88 && std::has_unique_object_representations_v<LeaseRecord>,
              "a WAL record has no padding: every byte written is set");
inline constexpr std::uint32_t kLeaseRecordVersion = 2;
inline constexpr std::size_t kLeaseRecordV1Size = 80;
static_assert(offsetof(LeaseRecord, pending_worker) == kLeaseRecordV1Size, "version 2 appends to version 1");

LeaseRecord lease_record(const Lease& lease) noexcept;
// The bytes of a record that are written: its version's.
inline std::size_t record_size(const LeaseRecord& record) noexcept {
    return record.version == 1 ? kLeaseRecordV1Size : sizeof record;
}
// False when the record is not version 2 of exactly its size or version 1 of
// its 80 bytes, or holds a layout, fence or pending worker id a lease cannot.
bool lease_of_record(const void* data, std::size_t length, Lease& lease) noexcept;

enum class LeaseText : std::uint8_t { Ok, Malformed, BadChecksum };
// Strict: a file that is not exactly what format_lease writes (version 5: a
// checksum that does not match is BadChecksum), or wrote in versions 1 (no
// clock_ms: 0), 2 (no worker_id), 3 (no directory, no checksum) and 4 (no
// layout: the default), is refused. lease_ms and clock_ms are in ms since the
// epoch, whatever the layout's unit.
LeaseText parse_lease(const char* text, std::size_t length, Lease& lease) noexcept;

// A release of a registry grant left at a clean shutdown
// (pg_snowflake/registry_release), made at the next start: the worker id, its
// fencing epoch, the holder (its incarnation: 32 lower-case hex digits) and
// the time every id it issued is below (ms since 1970).
struct PendingRelease {
    std::uint32_t worker_id = 0;
    std::int64_t fencing_epoch = 0;
    char holder[33] = {};
    std::int64_t used_until_ms = 0;
    bool operator==(const PendingRelease& other) const noexcept;
};
// Room for the text of any release (at most 176 characters and a NUL).
inline constexpr std::size_t kReleaseTextMax = kLeaseTextMax;
// "snowflake registry release 1", a line each "worker_id", "fencing_epoch",
// "holder", "used_until_ms", then the checksum line; its length (0 when a field
// is out of range: a worker id past kMaxAnyWorker, a negative number, a holder
// that is not 32 hex digits).
std::size_t format_release(const PendingRelease& release, char* buf) noexcept;
// Strict: exactly what format_release writes, its checksum matching.
bool parse_release(const char* text, std::size_t length, PendingRelease& release) noexcept;

}  // namespace snowflake
