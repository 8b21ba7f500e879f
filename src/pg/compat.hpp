// The one place that knows PostgreSQL majors differ: every PG_VERSION_NUM
// test of the project is here. Built and tested on 15, 17 and 18; compiled on
// 19 (README, "Supported versions").
#pragma once

extern "C" {
#include "postgres.h"

#include "utils/guc.h"
#include "utils/syscache.h"
}

#include <cstdlib>

struct JumbleState;  // nodes/queryjumble.h

#if PG_VERSION_NUM < 150000
#error "snowflake needs PostgreSQL 15 or later (shmem_request_hook, custom WAL resource managers)"
#endif

namespace snowflake::pg {

// The `extra` of a GUC check hook: PostgreSQL 16+ frees it with guc_free(),
// so it must come from guc_malloc(); before 16, from malloc().
inline void* guc_extra_alloc(std::size_t size) {
#if PG_VERSION_NUM >= 160000
    return guc_malloc(LOG, size);
#else
    return std::malloc(size);
#endif
}

// The cache id a syscache invalidation callback receives: an enum from 19 on.
#if PG_VERSION_NUM >= 190000
using SyscacheId = SysCacheIdentifier;
#else
using SyscacheId = int;
#endif

// The query jumble a post_parse_analyze_hook receives: const from 19 on.
#if PG_VERSION_NUM >= 190000
using JumbleStateArg = const ::JumbleState*;
#else
using JumbleStateArg = ::JumbleState*;
#endif

}  // namespace snowflake::pg
