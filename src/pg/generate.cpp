// snowflake_nextval(), snowflake_nextvals(n) and snowflake_status().
#include "adopt.hpp"
#include "edge.hpp"
#include "fence.hpp"
#include "lease_file.hpp"
#include "lease_write.hpp"
#include "registry.hpp"
#include "repair.hpp"
#include "upgrade.hpp"

extern "C" {
#include "access/htup_details.h"
#include "access/xlog.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
}

using namespace snowflake;
using namespace snowflake::pg;

// The epoch or the layout was changed on a node that has issued ids:
// generation refuses, and so does decoding under the settings, which no
// longer fit the node's ids.
void snowflake::pg::refuse_changed_lease(const SharedState& state, bool decoding) {
    const char* old_epoch = pstrdup(timestamptz_to_str(timestamptz_of_unix_ms(state.lease_epoch_unix_ms)));
    if (state.blocked == Blocked::LayoutChanged) {
        char old_layout[kLayoutTextMax];
        format_node_layout(state.lease_layout, old_layout);
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("parameter \"snowflake.layout\" changed from \"%s\" to \"%s\" on a node that has issued ids",
                        old_layout, layout_setting),
                 errdetail("Ids already issued would decode to other times and workers, and new "
                           "ids could repeat them."),
                 decoding ? errhint("Decode with the layout of this node's ids, as in "
                                    "snowflake_decode_as(id, 'epoch=%lld %s'), or set snowflake.layout = "
                                    "'%s' again and restart.",
                                    static_cast<long long>(state.epoch_unix_ms), old_layout, old_layout)
                          : errhint("Set snowflake.layout = '%s' again and restart, or, to start a new "
                                    "id space on purpose, run SELECT snowflake_repair_lease().",
                                    old_layout)));
    }
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("parameter \"snowflake.epoch\" changed from \"%s\" to \"%s\" on a node that has issued ids",
                    old_epoch, epoch_setting),
             state.epoch_unix_ms > state.lease_epoch_unix_ms
                 ? errdetail("The new epoch is later: new ids would carry smaller times and could "
                             "repeat ids already issued.")
                 : errdetail("The new epoch is earlier: ids already issued would decode to times "
                             "%lld ms too early.",
                             static_cast<long long>(state.lease_epoch_unix_ms - state.epoch_unix_ms)),
             decoding ? errhint("Decode with the epoch of this node's ids, as in "
                                "snowflake_to_timestamp(id, '%s', '%s'), or set snowflake.epoch = '%s' "
                                "again and restart.",
                                old_epoch, layout_setting, old_epoch)
                      : errhint("Set snowflake.epoch = '%s' again and restart, or, to start a new "
                                "id space on purpose, run SELECT snowflake_repair_lease().",
                                old_epoch)));
}

namespace {

// Sleeps until the clock reads `unix_ms`: to the microsecond for the short
// waits of a backend at its lead limit (sleep_until_us: an absolute-deadline
// sleep, then a short spin), on the latch (a second at most) for the long ones
// after the clock went back.
void sleep_until(std::int64_t unix_ms) {
    const std::int64_t wait_us = unix_ms * 1000 - unix_now_us();
    if (wait_us <= 0) return;
    if (wait_us <= 2000) {
        (void)sleep_until_us(unix_ms * 1000);
        return;
    }
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                    std::min<std::int64_t>(wait_us / 1000, 1000), PG_WAIT_EXTENSION);
    ResetLatch(MyLatch);
}

// The generator, once every precondition holds; each refusal says what to do.
SharedState& generator_or_refuse() {
    SharedState* state = shared_state();
    if (state == nullptr)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("snowflake_nextval() requires snowflake in shared_preload_libraries"),
                 errhint("Add shared_preload_libraries = 'snowflake' to postgresql.conf and "
                         "restart the server. Decoding works without it.")));
    if (RecoveryInProgress())
        ereport(ERROR,
                (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                 errmsg("snowflake ids cannot be generated on a hot standby"),
                 errdetail("A standby shares its primary's \"snowflake.worker_id\"."),
                 errhint("Generate ids on the primary; decoding works here.")));
    if (state->blocked == Blocked::EpochChanged || state->blocked == Blocked::LayoutChanged)
        refuse_changed_lease(*state, false);
    if (state->blocked == Blocked::LeaseUnreadable || state->blocked == Blocked::LeaseCorrupt)
        ereport(ERROR,
                (errcode(ERRCODE_DATA_CORRUPTED),
                 state->blocked == Blocked::LeaseCorrupt
                     ? errmsg("the snowflake lease file \"pg_snowflake/lease\" is corrupt")
                     : errmsg("the snowflake lease file \"pg_snowflake/lease\" could not be read"),
                 state->blocked == Blocked::LeaseCorrupt
                     ? errdetail("Its CRC-32C checksum does not match its contents.")
                     : 0,
                 errhint("Run SELECT snowflake_repair_lease(): ids continue after the clock plus the lease "
                         "span and max_lead (or after the time it is given), and the fence is kept.")));
    if (state->blocked == Blocked::LeaseNotCarried)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("this data directory was made by pg_upgrade without its snowflake lease"),
                 errdetail("pg_upgrade does not copy the file \"pg_snowflake/lease\", which holds the "
                           "high-water mark of the ids issued before the upgrade; without it, new "
                           "ids could repeat them."),
                 errhint("%s", kCarryLeaseHint)));
    if (state->blocked == Blocked::UpgradedAway)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("this data directory was upgraded by pg_upgrade"),
                 errdetail("The upgraded cluster continues its ids under the same worker id; an id "
                           "issued here could repeat one issued there."),
                 errhint("%s", kUpgradedAwayHint)));
    return *state;
}

// Reserves 1..wanted ids, waiting (interruptibly) for the clock or the lease.
Reservation reserve_ids(std::uint64_t wanted) {
    SharedState& state = generator_or_refuse();
    const Config config = generator_config();
    bool waited = false;
    for (;;) {
        const Reservation r = reserve(state.generator, config, wanted, unix_now_ms);
        if (r.regression_units > 0)
            ereport(LOG, (errmsg("snowflake: the system clock moved back %llu ms; ids keep "
                                 "their last time until it catches up",
                                 static_cast<unsigned long long>(ms_of(state, r.regression_units)))));
        switch (r.status) {
            case Status::Granted:
                if (r.lease_low) {
                    if (Latch* latch = state.lease_writer_latch.load(std::memory_order_relaxed))
                        SetLatch(latch);
                }
                return r;
            case Status::WaitForClock:
                if (!waited) state.generator.waits.fetch_add(1, std::memory_order_relaxed);
                waited = true;
                sleep_until(config.epoch_unix_ms + static_cast<std::int64_t>(ms_of(state, r.wait_until_units)));
                break;
            case Status::NeedLease:
                extend_lease(state, r.lease_needed_units);
                break;
            default:
                refuse_call(r.status);
        }
        CHECK_FOR_INTERRUPTS();
    }
}

constexpr std::int64_t kMaxNextvals = 1000000;

struct Batch {
    std::uint64_t first;
    std::uint64_t count;
};

struct BatchCursor {
    Batch* batches;
    std::uint32_t batch_count;
    std::uint32_t batch_index;
    std::uint64_t offset;  // within batches[batch_index]
};

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_nextval) {
    const Reservation r = reserve_ids(1);
    PG_RETURN_INT64(static_cast<std::int64_t>(r.first));
}

// All n ids are reserved in the first call, in as few batches as the lead allows.
SNOWFLAKE_FUNCTION(snowflake_nextvals) {
    FuncCallContext* context;
    if (SRF_IS_FIRSTCALL()) {
        const std::int64_t wanted = PG_GETARG_INT64(0);
        if (wanted < 1)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("snowflake_nextvals() needs a count of at least 1, not %lld",
                                   static_cast<long long>(wanted))));
        // A bound per call: 1000000 ids are at most 245 ms of one node's ids
        // (4096 a millisecond), so no call holds the node at its lead for long.
        if (wanted > kMaxNextvals)
            ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                            errmsg("snowflake_nextvals() returns at most %lld ids per call, not %lld",
                                   static_cast<long long>(kMaxNextvals),
                                   static_cast<long long>(wanted)),
                            errhint("Call it again for more.")));
        context = SRF_FIRSTCALL_INIT();
        MemoryContext old = MemoryContextSwitchTo(context->multi_call_memory_ctx);
        auto* cursor = static_cast<BatchCursor*>(palloc0(sizeof(BatchCursor)));
        std::uint32_t capacity = 4;
        cursor->batches = static_cast<Batch*>(palloc(capacity * sizeof(Batch)));
        for (std::uint64_t remaining = static_cast<std::uint64_t>(wanted); remaining > 0;) {
            const Reservation r = reserve_ids(remaining);
            if (cursor->batch_count == capacity) {
                capacity *= 2;
                cursor->batches =
                    static_cast<Batch*>(repalloc(cursor->batches, capacity * sizeof(Batch)));
            }
            cursor->batches[cursor->batch_count++] = Batch{r.first, r.count};
            remaining -= r.count;
        }
        MemoryContextSwitchTo(old);
        context->user_fctx = cursor;
    }
    context = SRF_PERCALL_SETUP();
    auto* cursor = static_cast<BatchCursor*>(context->user_fctx);
    if (cursor->batch_index == cursor->batch_count) SRF_RETURN_DONE(context);
    const Batch& batch = cursor->batches[cursor->batch_index];
    const std::uint64_t id = advance(batch.first, cursor->offset, shared_state()->layout);
    if (++cursor->offset == batch.count) {
        cursor->offset = 0;
        ++cursor->batch_index;
    }
    SRF_RETURN_NEXT(context, Int64GetDatum(static_cast<std::int64_t>(id)));
}

// Only what is known: last_id and lead_ms are NULL until an id is issued
// after start; restart_floor is the mark that ids before the start are under.
namespace {

// Why a node does not generate, in a line (snowflake_status.not_generating),
// what the refusal's error says at length; nullptr while it generates.
const char* not_generating(const SharedState& state, std::uint32_t worker_id, bool in_window) {
    switch (state.blocked.load()) {
        case Blocked::No:
            break;
        case Blocked::EpochChanged:
        case Blocked::LayoutChanged:
            return "the lease was taken under another snowflake.epoch or snowflake.layout: set it back, or run "
                   "snowflake_repair_lease() to start a new id space";
        case Blocked::LeaseUnreadable:
        case Blocked::LeaseCorrupt:
            return "the lease file is damaged: run snowflake_repair_lease()";
        case Blocked::LeaseNotCarried:
            return "pg_upgrade made this data directory without the old one's lease: copy pg_snowflake/lease in";
        case Blocked::UpgradedAway:
            return "pg_upgrade upgraded this data directory: the new one issues the ids";
    }
    if (RecoveryInProgress()) {
        const std::uint32_t configured = configured_worker_id();
        if (!registry_mode() && configured != kNoWorker && is_fenced(state.generator, configured))
            return psprintf("in recovery; once promoted, worker id %u is refused: this data directory is a copy "
                            "of another server's",
                            configured);
        return "in recovery: a standby issues no ids until it is promoted";
    }
    char error[sizeof state.registry.error];
    if (registry_mode()) registry_error(state.registry, error);
    if (worker_id == kNoWorker)
        return !registry_mode() ? "no worker id: snowflake.worker_id is not set"
                                : psprintf("no worker id granted by the registry yet%s%s", error[0] != '\0' ? ": " : "",
                                           error);
    if (is_fenced(state.generator, worker_id)) {
        if (state.moved_worker.load() == worker_id)
            return psprintf("fenced: the host name changed from %s to %s; worker id %u is refused until "
                            "snowflake.host_name names %s again, snowflake_adopt_worker_id() is run, or "
                            "snowflake.worker_id gives this server a worker id of its own",
                            moved_from_name(state), moved_to_name(), worker_id, moved_from_name(state));
        return psprintf("fenced: this data directory is a copy of another server's; worker id %u is refused until "
                        "snowflake.worker_id is set or snowflake_adopt_worker_id() is run",
                        worker_id);
    }
    if (!in_window)
        return psprintf("the registry's window for worker id %u ended at %s%s%s", worker_id,
                        timestamptz_to_str(timestamptz_of_unix_ms(state.registry.until_ms.load())),
                        error[0] != '\0' ? ": " : "", error);
    return nullptr;
}

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_status) {
    TupleDesc descriptor;
    if (get_call_result_type(fcinfo, nullptr, &descriptor) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "snowflake_status: return type must be a row type");
    descriptor = BlessTupleDesc(descriptor);
    // Columns are only ever appended (docs/development.md): an older SQL
    // definition gets its prefix; a newer one than this library is refused.
    enum Column {
        WorkerId, Epoch, LastId, RestartFloor, LeadMs, LeaseUntil, ClockRegressions, BorrowedMs, Waits,
        LeaseExtensions, Generating, WriterStalledMs, LayoutText, WindowUntil, RegistryReached, RegistryError,
        RegistryClockSkewMs, NotGenerating, kColumns
    };
    if (descriptor->natts > kColumns)
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("snowflake_status() is defined with %d columns, this library knows %d",
                               descriptor->natts, static_cast<int>(kColumns)),
                        errhint("Install the snowflake library of the extension's version, or run "
                                "ALTER EXTENSION snowflake UPDATE after installing the new one.")));
    Datum values[kColumns];
    bool nulls[kColumns];
    for (int i = 0; i < kColumns; ++i) nulls[i] = true;
    const auto set = [&](Column column, Datum value) {
        values[column] = value;
        nulls[column] = false;
    };
    const SharedState* state = shared_state();
    set(Epoch, TimestampTzGetDatum(timestamptz_of_unix_ms(epoch_unix_ms())));
    set(Generating, BoolGetDatum(false));
    char layout[kLayoutTextMax];
    format_node_layout(state != nullptr ? state->layout : node_layout(), layout);
    set(LayoutText, CStringGetTextDatum(layout));
    // the columns an older SQL definition lacks are not set
    const auto why = [&](const char* reason) {
        if (descriptor->natts > NotGenerating) set(NotGenerating, CStringGetTextDatum(reason));
    };
    if (state == nullptr) {  // not preloaded: the setting is all there is
        if (const std::uint32_t configured = configured_worker_id(); configured != kNoWorker)
            set(WorkerId, Int32GetDatum(static_cast<std::int32_t>(configured)));
        why("snowflake is not in shared_preload_libraries: this server decodes ids and issues none");
        PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(descriptor, values, nulls)));
    }
    const GeneratorState& g = state->generator;
    const Layout& l = state->layout;
    const auto ms = [state](std::uint64_t units) { return static_cast<std::int64_t>(ms_of(*state, units)); };
    const auto time_of_units = [state, &ms](std::uint64_t units) {
        return TimestampTzGetDatum(timestamptz_of_unix_ms(state->epoch_unix_ms + ms(units)));
    };
    // a fenced worker id (a copy's source's) is refused, not in effect: NULL
    const std::uint32_t worker_id = worker_in_effect(g);
    if (worker_id != kNoWorker && !is_fenced(g, worker_id))
        set(WorkerId, Int32GetDatum(static_cast<std::int32_t>(worker_id)));
    if (const std::uint64_t last = g.last_id.load(); last != 0) {
        set(LastId, Int64GetDatum(static_cast<std::int64_t>(last)));
        const std::int64_t lead = ms(time_of(last, l)) + state->epoch_unix_ms - unix_now_ms();
        set(LeadMs, Int64GetDatum(std::max<std::int64_t>(lead, 0)));
    }
    if (const std::uint64_t floor = g.floor_id.load(); floor != 0) set(RestartFloor, time_of_units(time_of(floor, l)));
    if (const std::uint64_t lease = g.lease_units.load(); lease != 0) set(LeaseUntil, time_of_units(lease));
    set(ClockRegressions, Int64GetDatum(static_cast<std::int64_t>(g.regressions.load())));
    set(BorrowedMs, Int64GetDatum(ms(g.borrowed_units.load())));
    set(Waits, Int64GetDatum(static_cast<std::int64_t>(g.waits.load())));
    set(LeaseExtensions, Int64GetDatum(static_cast<std::int64_t>(g.lease_extensions.load())));
    if (const std::int64_t stalled = writer_stalled_ms(*state); stalled > 0) set(WriterStalledMs, Int64GetDatum(stalled));
    const Grant grant = grant_of(g);
    std::uint64_t now = 0;
    const bool in_window = grant.until == kForever ||
                           (units_since_epoch(generator_config(), unix_now_ms(), now) && now < grant.until);
    set(Generating, BoolGetDatum(state->blocked == Blocked::No && !RecoveryInProgress() && worker_id != kNoWorker &&
                                 !is_fenced(g, worker_id) && in_window));
    if (const char* reason = not_generating(*state, worker_id, in_window); reason != nullptr) why(reason);
    if (registry_mode()) {  // the registry's window and when it answered last
        const SharedState::Registry& registry = state->registry;
        if (const std::int64_t until = registry.until_ms.load(); until != 0 && worker_id != kNoWorker)
            set(WindowUntil, TimestampTzGetDatum(timestamptz_of_unix_ms(until)));
        if (const std::int64_t reached = registry.reached_ms.load(); reached != 0)
            set(RegistryReached, TimestampTzGetDatum(timestamptz_of_unix_ms(reached)));
        char error[sizeof registry.error];
        registry_error(registry, error);
        if (error[0] != '\0') set(RegistryError, CStringGetTextDatum(error));
        if (registry.reached_ms.load() != 0)
            set(RegistryClockSkewMs, Int64GetDatum(registry.clock_skew_ms.load()));
    }
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(descriptor, values, nulls)));
}

// snowflake_adopt_worker_id(): a copy takes the worker id in effect, which its
// source used, on the operator's word that the source is gone for good.
SNOWFLAKE_FUNCTION(snowflake_adopt_worker_id) {
    SharedState& state = generator_or_refuse();
    // after: 1.1's argument (1.0's definition has none); NULL, none given
    std::int64_t after = 0;
    if (PG_NARGS() > 0 && !PG_ARGISNULL(0)) {
        const TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
        const std::int64_t last_ms =
            state.epoch_unix_ms + static_cast<std::int64_t>(ms_of(state, state.layout.max_time));
        after = TIMESTAMP_NOT_FINITE(ts) ? INT64_MAX : ts / 1000 + kUnixToPostgresMs;
        if (after > last_ms - lease_span_setting - max_lead_setting)
            ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                            errmsg("ids cannot continue after %s", timestamptz_to_str(ts)),
                            errdetail("That time is past the last time of snowflake.layout.")));
        after = std::max<std::int64_t>(after, 1);  // (0: none given)
    }
    const std::uint32_t adopted = adopt_worker_id(state, after);
    if (adopted == kNoWorker) {
        ereport(NOTICE, (errmsg("this server has no worker id to adopt"),
                         errdetail("Its worker id is not fenced: it is not a copy's source's, or was adopted "
                                   "already.")));
        PG_RETURN_NULL();
    }
    PG_RETURN_INT32(static_cast<std::int32_t>(adopted));
}

// snowflake_repair_lease(above): a new lease in place of a damaged one, or of
// one taken under another epoch or layout; the fence is kept (fence.hpp).
SNOWFLAKE_FUNCTION(snowflake_repair_lease) {
    SharedState* state = shared_state();
    if (state == nullptr)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("snowflake is not loaded by shared_preload_libraries"),
                        errdetail("There is no lease to repair.")));
    if (RecoveryInProgress())
        ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                        errmsg("the snowflake lease cannot be repaired during recovery")));
    std::int64_t above = 0;
    if (!PG_ARGISNULL(0)) {
        const TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
        above = TIMESTAMP_NOT_FINITE(ts) ? INT64_MAX : ts / 1000 + kUnixToPostgresMs;
        const std::int64_t last_ms = state->epoch_unix_ms + static_cast<std::int64_t>(ms_of(*state, state->layout.max_time));
        if (above > last_ms - lease_span_setting - max_lead_setting)
            ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                            errmsg("ids cannot continue after %s", timestamptz_to_str(ts)),
                            errdetail("That time is past the last time of snowflake.layout.")));
    }
    PG_RETURN_TIMESTAMPTZ(timestamptz_of_unix_ms(repair_lease(*state, above)));
}

