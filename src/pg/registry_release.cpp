// The registry's release of this server's worker id (registry_release.hpp):
// sent at a clean shutdown, or left in a file and sent at the next start.
#include "registry_release.hpp"

#include "datadir.hpp"
#include "registry_client.hpp"
#include "registry_settings.hpp"

#include <cinttypes>
#include <cstring>

namespace snowflake::pg {

namespace {

// snowflake_registry_release(): its result, or null with `error` set.
PGresult* send_release(const PendingRelease& release, int timeout_ms, char (&error)[256]) {
    char worker_id[16], fencing_epoch[24], used_until[24];
    snprintf(worker_id, sizeof worker_id, "%u", release.worker_id);
    snprintf(fencing_epoch, sizeof fencing_epoch, "%" PRId64, release.fencing_epoch);
    snprintf(used_until, sizeof used_until, "%" PRId64, release.used_until_ms);
    const char* values[] = {worker_id, fencing_epoch, release.holder, used_until};
    return registry_query("SELECT snowflake_registry_release($1::integer, $2::bigint, $3, $4::bigint)", 4, values,
                          timeout_ms, error);
}

void write_pending_release(const PendingRelease& release) {
    char text[kReleaseTextMax];
    const std::size_t length = format_release(release, text);
    if (length > 0 && write_durably(kReleasePath, text, length)) return;
    ereport(LOG, (errcode_for_file_access(), errmsg("snowflake: could not write file \"%s\": %m", kReleasePath)));
}

}  // namespace

void release_registry_grant(SharedState& state, std::int64_t used_until_ms) {
    SharedState::Registry& registry = state.registry;
    const std::uint32_t held = registry.worker_id.load();
    if (!registry_mode() || held == kNoWorker) return;
    PendingRelease release;
    release.worker_id = held;
    release.fencing_epoch = registry.fencing_epoch.load();
    std::memcpy(release.holder, incarnation, sizeof release.holder);
    release.used_until_ms = used_until_ms;
    if (registry.self_hosted.load()) {  // this server accepts no connection any more
        write_pending_release(release);
        ereport(LOG, (errmsg("snowflake: worker id %u is released at the next start: the registry %s is on this server",
                             held, registry_name())));
        return;
    }
    char error[256];
    PGresult* released = send_release(release, 3000, error);
    if (released == nullptr) {
        write_pending_release(release);
        ereport(LOG, (errmsg("snowflake: worker id %u could not be released to the registry %s: %s", held,
                             registry_name(), error),
                      errdetail("It is released at the next start of this server, or is free again once its "
                                "window and the quarantine have passed.")));
    } else {
        ereport(LOG, (errmsg("snowflake: worker id %u released to the registry %s", held, registry_name())));
        PQclear(released);
    }
    drop_registry_connection();
}

bool make_pending_release(std::int64_t timeout_ms, char (&error)[256]) {
    char text[kReleaseTextMax];
    const ssize_t length = read_whole(kReleasePath, text, sizeof text);
    if (length < 0 && errno == ENOENT) return true;
    PendingRelease release;
    if (length < 0) {
        ereport(LOG, (errcode_for_file_access(),
                      errmsg("snowflake: could not read file \"%s\": %m; it is removed, and the worker id it "
                             "held is not released: it rests until its window ends", kReleasePath)));
    } else if (!parse_release(text, static_cast<std::size_t>(length), release)) {
        ereport(LOG, (errmsg("snowflake: the file \"%s\" is damaged and removed; the worker id it held is "
                             "not released: it rests until its window ends", kReleasePath)));
    } else {
        PGresult* released = send_release(release, timeout_ms, error);
        if (released == nullptr) return false;
        ereport(LOG, (errmsg("snowflake: worker id %u %s to the registry %s at this start (left at the last shutdown)",
                             release.worker_id,
                             strcmp(PQgetvalue(released, 0, 0), "t") == 0 ? "released" : "was not released",
                             registry_name())));
        PQclear(released);
    }
    if (!remove_durably(kReleasePath))
        ereport(LOG, (errcode_for_file_access(), errmsg("snowflake: could not remove file \"%s\": %m", kReleasePath)));
    return true;
}

}  // namespace snowflake::pg
