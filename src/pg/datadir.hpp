// pg_snowflake/: the files snowflake keeps in the data directory, every one
// of them listed here, and the one way each is written, read and removed.
// A data directory's copy (base backup, cp -a, snapshot) carries them all.
// Files with content are text: a version line first, a CRC-32C line last
// (src/core/text.hpp's checksum line); the two marks are read by presence.
// Never remove one by hand (docs/troubleshooting.md "The files of pg_snowflake").
#pragma once
#include <cstddef>
#include <sys/types.h>

namespace snowflake::pg {

inline constexpr char kDataDirectory[] = "pg_snowflake";

// The lease: the high-water mark no issued id passes, the worker id in effect,
// the fence and the data directory that wrote it ("snowflake lease 5";
// src/core/text.hpp). One 512-byte block, overwritten in place (lease_file.cpp).
inline constexpr char kLeasePath[] = "pg_snowflake/lease";
// The fence's copy: the lease as last written when the worker id or the fence
// changed, so that the fence outlives a lease file removed or damaged.
inline constexpr char kFencePath[] = "pg_snowflake/fence";
// A lease file snowflake_repair_lease() replaced, kept for a post-mortem.
inline constexpr char kDamagedLeasePath[] = "pg_snowflake/lease.replaced";
// A mark, in a data directory pg_upgrade made: until the old directory's
// lease is carried into it, no id is issued.
inline constexpr char kUpgradedPath[] = "pg_snowflake/upgraded";
// A mark, in a data directory pg_upgrade upgraded (its old one): no id is
// issued; the new one continues the ids.
inline constexpr char kUpgradedAwayPath[] = "pg_snowflake/upgraded_away";
// The public-id key ids bound to their keys' fingerprints ("snowflake public
// key bindings 1"; src/core/keyfile.hpp), written by the postmaster.
inline constexpr char kBindingsPath[] = "pg_snowflake/public_keys";
// A release of a registry grant left at a clean shutdown, made at the next
// start ("snowflake registry release 1"; src/core/text.hpp).
inline constexpr char kReleasePath[] = "pg_snowflake/registry_release";
// Each file is written as "<path>.<pid>.tmp" first, then renamed over it; a
// crash between the two can leave that temporary file, which nothing reads.

// Creates pg_snowflake/ if missing (durably: the data directory is synced);
// false, errno set, on failure.
bool make_data_directory();

// Writes a file of pg_snowflake/ durably: "<path>.<pid>.tmp", written and synced,
// renamed over the path, the directory synced; the old file stays in place
// on failure (false, errno set). Plain system calls: usable in any process,
// _PG_init included; reports nothing.
bool write_durably(const char* path, const void* data, std::size_t length);

// Reads at most `capacity` bytes of an open file (from where it is): their
// length; -1, errno set, on failure.
ssize_t read_all(int fd, char* out, std::size_t capacity);

// Reads at most `capacity` bytes of a file: its length; -1, errno set, if it
// cannot be read (ENOENT: it is missing).
ssize_t read_whole(const char* path, char* out, std::size_t capacity);

// Renames a file of pg_snowflake/ durably (the file synced, renamed, the
// directory synced); false, errno set, on failure.
bool rename_durably(const char* from, const char* to);

// Removes a file durably (a missing one is removed); false, errno set, on failure.
bool remove_durably(const char* path);

}  // namespace snowflake::pg
