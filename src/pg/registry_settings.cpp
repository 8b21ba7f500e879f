// The registry's settings: snowflake.registry (its check keeps passwords out)
// and its times, and the registry's name without secrets (registry_settings.hpp).
#include "registry_settings.hpp"

extern "C" {
#include "libpq-fe.h"
#include "utils/guc.h"
}

namespace snowflake::pg {

int registry_window_setting = 90000;
int registry_renew_setting = 30000;
int registry_max_skew_setting = 1000;

namespace {

bool check_registry(char** newval, void**, GucSource) {
    if (*newval == nullptr || (*newval)[0] == '\0') return true;
    char* problem = nullptr;
    PQconninfoOption* options = PQconninfoParse(*newval, &problem);
    if (options != nullptr) {
        // a password here would be readable by pg_read_all_settings: it belongs in a
        // password file (a URI's password is parsed into "password" too); never quoted
        const char* secret = nullptr;
        for (PQconninfoOption* o = options; o->keyword != nullptr && secret == nullptr; ++o)
            if ((strcmp(o->keyword, "password") == 0 || strcmp(o->keyword, "sslpassword") == 0) &&
                o->val != nullptr && o->val[0] != '\0')
                secret = o->keyword;
        if (secret == nullptr) {
            PQconninfoFree(options);
            return true;
        }
        GUC_check_errmsg("invalid value for parameter \"snowflake.registry\"");
        GUC_check_errdetail("The connection string holds a password (%s), which every role that may read settings "
                            "(pg_read_all_settings, pg_monitor) would read.", secret);
        if (strcmp(secret, "password") == 0)
            GUC_check_errhint("Keep the password in the password file of the server's operating-system user: "
                              "~/.pgpass, or the file named by passfile in the connection string or by "
                              "PGPASSFILE, readable by that user only.");
        else
            GUC_check_errhint("Keep the client key (sslkey) unencrypted, readable by the server's "
                              "operating-system user only.");
        PQconninfoFree(options);
        return false;
    }
    // libpq's message ends with a newline
    if (problem != nullptr) problem[strcspn(problem, "\n")] = '\0';
    GUC_check_errmsg("invalid value for parameter \"snowflake.registry\"");
    GUC_check_errdetail("The connection string cannot be parsed: %s.", problem != nullptr ? problem : "out of memory");
    GUC_check_errhint("It is a libpq connection string, such as 'host=registry.example dbname=fleet'.");
    if (problem != nullptr) PQfreemem(problem);
    return false;
}

}  // namespace

void define_registry_settings(GucContext postmaster) {
    char* configured = configured_value("snowflake.registry");
    DefineCustomStringVariable(
        "snowflake.registry", "Sets the registry this node claims its worker id from (a libpq connection string).",
        "Empty: the worker id is snowflake.worker_id, set by hand. Exclusive with it.", &registry_setting, "",
        postmaster, GUC_SUPERUSER_ONLY, SNOWFLAKE_CALLBACK(check_registry, LOG), nullptr, nullptr);
    refuse_bad_setting_at_start("snowflake.registry", configured);
    DefineCustomIntVariable(
        "snowflake.registry_window", "Sets how long a window of id times the registry grants.",
        "Generation goes on this long through a registry outage.", &registry_window_setting, 90000, 1000,
        86400000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "snowflake.registry_renew", "Sets how often the window is renewed.",
        "Renewals are at most a third of the granted window apart: more often than this when the "
        "registry grants less than snowflake.registry_window asks.",
        &registry_renew_setting, 30000, 100, 3600000,
        PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "snowflake.registry_max_skew", "Sets how far this server's clock may differ from the registry's for a claim.",
        nullptr, &registry_max_skew_setting, 1000, 1, 3600000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr,
        nullptr);
}

const char* registry_name() {
    static char name[256];
    if (name[0] != '\0' || !registry_mode()) return name;
    char* problem = nullptr;
    PQconninfoOption* options = PQconninfoParse(registry_setting, &problem);
    if (problem != nullptr) PQfreemem(problem);
    int length = 0;
    for (PQconninfoOption* o = options; o != nullptr && o->keyword != nullptr; ++o)
        for (const char* kept : {"host", "hostaddr", "port", "dbname", "user"})
            if (strcmp(o->keyword, kept) == 0 && o->val != nullptr && o->val[0] != '\0' &&
                length < static_cast<int>(sizeof name) - 1)
                length += snprintf(name + length, sizeof name - length, "%s%s=%s", length > 0 ? " " : "\"",
                                   o->keyword, o->val);
    if (options != nullptr) PQconninfoFree(options);
    if (length == 0) copy_name(name, "\"(defaults)");
    const std::size_t end = std::min(strlen(name), sizeof name - 2);
    name[end] = '"';
    name[end + 1] = '\0';
    return name;
}

}  // namespace snowflake::pg
