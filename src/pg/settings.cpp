// The settings and the shared state, which every file of src/pg reads; this
// file calls none of them (the bottom of src/pg, as module.cpp is its top).
#include "edge.hpp"

extern "C" {
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
}

#include <cerrno>
#include <csignal>
#include <unistd.h>

namespace snowflake::pg {

int worker_id_setting = -1;
int max_lead_setting = 1000;
int lease_span_setting = 2000;
char* epoch_setting = nullptr;
char* layout_setting = nullptr;
char* host_name_setting = nullptr;
bool replay_1_0_wal_setting = true;
char* registry_setting = nullptr;

bool registry_mode() { return registry_setting != nullptr && registry_setting[0] != '\0'; }
std::uint32_t configured_worker_id() {
    return registry_mode() || worker_id_setting < 0 ? kNoWorker : static_cast<std::uint32_t>(worker_id_setting);
}

namespace {

constexpr char kDefaultEpoch[] = "2024-01-01 00:00:00+00";
constexpr std::int64_t kDefaultEpochUnixMs = 1704067200000;

std::int64_t parsed_epoch_unix_ms = kDefaultEpochUnixMs;
Layout parsed_layout = kDefaultLayout;
SharedState* shared = nullptr;

bool check_epoch(char** newval, void** extra, GucSource) {
    std::int64_t unix_ms;
    if (*newval == nullptr || !parse_timestamp(*newval, unix_ms)) {
        GUC_check_errmsg("invalid value for parameter \"snowflake.epoch\": \"%s\"",
                         *newval ? *newval : "");
        GUC_check_errdetail("The epoch is a UTC timestamp from 1970-01-01 to 9999-12-31, "
                            "such as '2024-01-01 00:00:00+00'.");
        return false;
    }
    auto* parsed = static_cast<std::int64_t*>(guc_extra_alloc(sizeof(std::int64_t)));
    if (parsed == nullptr) return false;
    *parsed = unix_ms;
    *extra = parsed;
    return true;
}

void assign_epoch(const char*, void* extra) {
    if (extra != nullptr) parsed_epoch_unix_ms = *static_cast<std::int64_t*>(extra);
}

bool check_layout(char** newval, void** extra, GucSource) {
    Layout layout;
    const char* problem = "the layout is empty";
    // the epoch is defined (and checked) first: "sonyflake" needs Sonyflake's
    if (*newval == nullptr || !parse_node_layout(*newval, parsed_epoch_unix_ms, layout, problem)) {
        GUC_check_errmsg("invalid value for parameter \"snowflake.layout\": \"%s\"", *newval ? *newval : "");
        GUC_check_errdetail("%c%s.", pg_toupper(static_cast<unsigned char>(problem[0])), problem + 1);
        GUC_check_errhint("A layout is default, js53, sonyflake_style, or \"[unit=<n>ms] time=<bits> "
                          "worker=<bits> sequence=<bits>\" from the highest bits down: at most 63 "
                          "bits, 1..16 worker bits, 1..22 sequence bits, 1..1000 ms units.");
        return false;
    }
    auto* parsed = static_cast<Layout*>(guc_extra_alloc(sizeof(Layout)));
    if (parsed == nullptr) return false;
    *parsed = layout;
    *extra = parsed;
    return true;
}

void assign_layout(const char*, void* extra) {
    if (extra != nullptr) parsed_layout = *static_cast<Layout*>(extra);
}

// The worker id must fit the layout's worker field (at start and on reload).
bool check_worker_id(int* newval, void**, GucSource) {
    if (*newval >= 0 && registry_mode()) {
        GUC_check_errmsg("parameters \"snowflake.worker_id\" and \"snowflake.registry\" are both set");
        GUC_check_errdetail("With \"snowflake.registry\", the worker id is claimed from the registry.");
        GUC_check_errhint("Set one of them: remove \"snowflake.worker_id\", or empty \"snowflake.registry\".");
        return false;
    }
    if (*newval < 0 || static_cast<std::uint64_t>(*newval) <= parsed_layout.max_worker) return true;
    GUC_check_errmsg("%d is outside the valid range for parameter \"snowflake.worker_id\" (-1 .. %llu)",
                     *newval, static_cast<unsigned long long>(parsed_layout.max_worker));
    GUC_check_errdetail("The worker ids of \"snowflake.layout\", with %d worker bits, are 0 to %llu.",
                        parsed_layout.worker_bits, static_cast<unsigned long long>(parsed_layout.max_worker));
    return false;
}

}  // namespace

// PostgreSQL applies a preloaded library's settings from the configuration
// file with only a WARNING when they are bad, then uses the default. A wrong
// epoch or worker id must not go unnoticed: at server start it is fatal.
void refuse_bad_setting_at_start(const char* name, const char* value) {
    if (value == nullptr || !process_shared_preload_libraries_in_progress) return;
    (void)set_config_option(name, value, PGC_POSTMASTER, PGC_S_FILE, GUC_ACTION_SET,
                            false /* only check */, FATAL, false);
}

namespace {

// snowflake.host_name: empty, or a name a lease can record.
bool check_host_name(char** value, void**, GucSource) {
    if (**value == '\0' || recordable_host_name(*value)) return true;
    GUC_check_errdetail("A host name is 1 to %zu printable ASCII characters but space (empty: the kernel's).",
                        kHostNameMax);
    return false;
}

// A worker id is an identity, not a quantity: PostgreSQL would round 1.5 to 2
// for an integer setting. At start the configured text must be a whole number.
void refuse_fractional_worker_id_at_start(const char* value) {
    if (value == nullptr || !process_shared_preload_libraries_in_progress) return;
    const char* p = value;
    while (*p == ' ') ++p;
    if (*p == '-' || *p == '+') ++p;
    const char* digits = p;
    while (*p >= '0' && *p <= '9') ++p;
    const bool whole = p != digits;
    while (*p == ' ') ++p;
    if (whole && *p == '\0') return;
    ereport(FATAL, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("invalid value for parameter \"snowflake.worker_id\": \"%s\"", value),
                    errdetail("A worker id is a whole number from 0 to %llu (-1: unset), distinct on "
                              "every node.",
                              static_cast<unsigned long long>(parsed_layout.max_worker))));
}

}  // namespace

// The value the configuration gave a setting before it was defined, if any.
char* configured_value(const char* name) {
    const char* value = GetConfigOption(name, true, false);
    return value != nullptr ? pstrdup(value) : nullptr;
}

void define_settings() {
    char* worker_id = configured_value("snowflake.worker_id");
    char* epoch = configured_value("snowflake.epoch");
    char* max_lead = configured_value("snowflake.max_lead");
    char* lease_span = configured_value("snowflake.lease_span");
    char* layout = configured_value("snowflake.layout");
    char* host_name = configured_value("snowflake.host_name");

    DefineCustomStringVariable(
        "snowflake.epoch", "Sets the instant ids count milliseconds from (UTC).",
        "Fixed for the life of the data: ids made under another epoch do not sort with these.",
        &epoch_setting, kDefaultEpoch,
        // A library loaded after start-up may not define postmaster settings;
        // without preloading there is no generator, only decoding.
        process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, 0,
        SNOWFLAKE_CALLBACK(check_epoch, LOG), SNOWFLAKE_CALLBACK(assign_epoch, LOG), nullptr);
    refuse_bad_setting_at_start("snowflake.epoch", epoch);
    // the epoch, then the layout: the worker id is checked against it
    DefineCustomStringVariable(
        "snowflake.layout", "Sets the fields of the ids this node generates and decodes.",
        "Fixed for the life of the data, as the epoch: a preset (default, js53, sonyflake_style) or "
        "'[unit=<n>ms] time=<bits> worker=<bits> sequence=<bits>'.",
        &layout_setting, "time=41 worker=10 sequence=12",
        process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, 0,
        SNOWFLAKE_CALLBACK(check_layout, LOG), SNOWFLAKE_CALLBACK(assign_layout, LOG), nullptr);
    refuse_bad_setting_at_start("snowflake.layout", layout);
    DefineCustomIntVariable(
        "snowflake.worker_id", "Sets this node's worker id, distinct on every node (0..1023 in the default layout).",
        "-1 means unset: snowflake_nextval() refuses until it is set.", &worker_id_setting, -1,
        -1, static_cast<int>(kMaxAnyWorker), PGC_SIGHUP, 0, SNOWFLAKE_CALLBACK(check_worker_id, LOG), nullptr, nullptr);
    DefineCustomIntVariable(
        "snowflake.max_lead", "Sets how far ids may run ahead of the clock when borrowing.",
        "Past it, snowflake_nextval() waits for the clock.", &max_lead_setting, 1000, 0, 3600000,
        PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "snowflake.lease_span", "Sets how far the durable lease reaches past the lead window.",
        "Larger: fewer lease writes; smaller: a smaller jump of ids after a crash.",
        &lease_span_setting, 2000, 100, 600000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr,
        nullptr);
    DefineCustomStringVariable(
        "snowflake.host_name", "Sets the host name in this data directory's identity and the registry's holder name.",
        "Empty: the kernel's host name. A name that stays where host names do not (a container "
        "recreated, a pod rescheduled, a disk failed over): docs/containers.md.",
        &host_name_setting, "", process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, 0,
        SNOWFLAKE_CALLBACK(check_host_name, LOG), nullptr, nullptr);
    refuse_bad_setting_at_start("snowflake.host_name", host_name);
    DefineCustomBoolVariable(
        "snowflake.replay_1_0_wal", "Replays the lease records of WAL written by snowflake 1.0.",
        "1.0 logged them under RM_EXPERIMENTAL_ID (128), which another extension in development may need: "
        "turn it off for that extension only once no WAL from before the upgrade from 1.0 is to be replayed.",
        &replay_1_0_wal_setting, true, process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP,
        0, nullptr, nullptr, nullptr);
    refuse_fractional_worker_id_at_start(worker_id);
    refuse_bad_setting_at_start("snowflake.worker_id", worker_id);
    refuse_bad_setting_at_start("snowflake.max_lead", max_lead);
    refuse_bad_setting_at_start("snowflake.lease_span", lease_span);
}

std::int64_t epoch_unix_ms() { return parsed_epoch_unix_ms; }

const char* server_host_name() {
    if (host_name_setting != nullptr && host_name_setting[0] != '\0') return host_name_setting;
    return kernel_host_name();
}

const char* kernel_host_name() {
    static char kernel[kHostNameMax + 1];
    if (kernel[0] == '\0') {
        // as a lease can record it, and the setting can give it back: a
        // character it cannot hold becomes '?', the name at most kHostNameMax
        char name[256] = {};
        (void)gethostname(name, sizeof name - 1);
        std::size_t i = 0;
        for (; i < kHostNameMax && name[i] != '\0'; ++i) kernel[i] = name[i] > ' ' && name[i] <= '~' ? name[i] : '?';
        if (i == 0) kernel[i++] = '?';
        kernel[i] = '\0';
    }
    return kernel;
}
const Layout& node_layout() { return parsed_layout; }

SharedState* shared_state() { return shared; }
void set_shared_state(SharedState* state) { shared = state; }

void register_worker(const char* function, const char* name, BgWorkerStartTime start) {
    BackgroundWorker worker{};
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
    worker.bgw_start_time = start;
    worker.bgw_restart_time = 1;  // seconds: started again after it exits with 1
    copy_name(worker.bgw_library_name, "snowflake");
    copy_name(worker.bgw_function_name, function);
    copy_name(worker.bgw_name, name);
    copy_name(worker.bgw_type, name);
    RegisterBackgroundWorker(&worker);
}

namespace {
volatile sig_atomic_t terminated_by_postmaster = 0;

void handle_worker_sigterm(int, siginfo_t* info, void*) noexcept {
    const int saved = errno;
    if (info != nullptr && info->si_pid == PostmasterPid) terminated_by_postmaster = 1;
    ShutdownRequestPending = true;
    SetLatch(MyLatch);
    errno = saved;
}
}  // namespace

void install_worker_sigterm() {
    struct sigaction action = {};
    action.sa_sigaction = handle_worker_sigterm;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
}

void exit_worker() { proc_exit(terminated_by_postmaster ? 0 : 1); }

// The settings in ms, as the layout's time units (rounded up).
Config generator_config() {
    const auto units = [](int ms) {
        return static_cast<std::uint64_t>((ms + shared->layout.unit_ms - 1) / shared->layout.unit_ms);
    };
    return Config{shared->epoch_unix_ms, units(max_lead_setting), units(lease_span_setting), shared->layout};
}

}  // namespace snowflake::pg
