// snowflake_adopt_worker_id(): a copy takes over the worker id its source
// used (fence.hpp), the operator's word that the source is gone for good.
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// Lifts the fence on the worker id in effect; returns it, or kNoWorker. Ids
// continue after `after_unix_ms` (0: none given; the operator's word that the
// source issued no id later); without it, refused (ERROR) while the clock is
// behind the latest clock reading the lease records: the source's later ids
// may be ahead of this clock.
std::uint32_t adopt_worker_id(SharedState& state, std::int64_t after_unix_ms);
}  // namespace snowflake::pg
