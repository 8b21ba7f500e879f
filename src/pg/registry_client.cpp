// The registry's libpq client (registry_client.hpp).
#include "registry_client.hpp"

extern "C" {
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"
}

#include <cstdlib>

namespace snowflake::pg {

char incarnation[33];

void make_incarnation() {
    unsigned char bytes[16];
    if (!pg_strong_random(bytes, sizeof bytes))
        ereport(FATAL, (errmsg("snowflake: could not generate a random incarnation id")));
    for (std::size_t i = 0; i < sizeof bytes; ++i) snprintf(incarnation + 2 * i, 3, "%02x", bytes[i]);
}

namespace {

// One connection to the registry per process, kept between calls, to the
// host `current_host` of snowflake.registry's list. Each host is tried on
// its own connection: libpq, given them all, tries them in one attempt that
// a non-blocking connection bounds by no time-out (connect_timeout applies to
// blocking ones only), always from the first, so a frozen host listed first
// (it accepts the connection, never answers) would hold every call.
PGconn* connection = nullptr;
// The host tried first: the last that answered, or the one after a host that
// timed out or broke (this process's; a new process starts at the first).
int current_host = 0;

void drop_connection() {
    if (connection != nullptr) PQfinish(connection);
    connection = nullptr;
}

// Waits on this process's latch for the connection's socket, until the
// monotonic `deadline`; false on time-out, or when this background worker is
// asked to stop. A background worker exits when the postmaster dies; the
// postmaster (its release at shutdown) has no latch to wait on.
bool wait_socket(bool for_write, std::int64_t deadline) {
    for (;;) {
        const int fd = PQsocket(connection);
        const std::int64_t left = deadline - monotonic_ms();
        if (fd < 0 || left <= 0) return false;
        if (IsUnderPostmaster && ShutdownRequestPending) return false;
        int events = (for_write ? WL_SOCKET_WRITEABLE : WL_SOCKET_READABLE) | WL_TIMEOUT;
        if (IsUnderPostmaster) events |= WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;
        const int woke = WaitLatchOrSocket(IsUnderPostmaster ? MyLatch : nullptr, events, fd, static_cast<long>(left),
                                           PG_WAIT_EXTENSION);
        if (woke & WL_LATCH_SET) ResetLatch(MyLatch);  // the worker's loop reads its flags itself
        if (woke & (WL_SOCKET_READABLE | WL_SOCKET_WRITEABLE)) return true;
    }
}

// libpq's message, on one line.
void copy_message(char (&to)[256], const char* message) {
    copy_name(to, message != nullptr && message[0] != '\0' ? message : "unknown error");
    for (char* c = to; *c != '\0'; ++c)
        if (*c == '\n' || *c == '\t') *c = (c[1] == '\0' ? '\0' : ' ');
}

// The conninfo's options followed by "-c synchronous_commit=on"; false when
// they do not fit.
bool registry_options(const char* given, char (&options)[1024]) {
    if (given == nullptr) given = "";
    const int length = snprintf(options, sizeof options, "%s%s-c synchronous_commit=on", given,
                                given[0] != '\0' ? " " : "");
    return length > 0 && static_cast<std::size_t>(length) < sizeof options;
}

// The number of items of a comma-separated list of libpq's (0 when empty).
int list_length(const char* list) {
    if (list == nullptr || list[0] == '\0') return 0;
    int items = 1;
    for (const char* c = list; *c != '\0'; ++c) items += *c == ',';
    return items;
}

// Item `index` of such a list; false when it does not fit.
bool list_item(const char* list, int index, char (&to)[256]) {
    const char* begin = list;
    for (int i = 0; i < index; ++i) begin = strchr(begin, ',') + 1;
    const char* end = strchr(begin, ',');
    const std::size_t length = end != nullptr ? static_cast<std::size_t>(end - begin) : strlen(begin);
    if (length >= sizeof to) return false;
    memcpy(to, begin, length);
    to[length] = '\0';
    return true;
}

// A parsed conninfo's value of `keyword` (null when not given).
const char* option_value(const PQconninfoOption* parsed, const char* keyword) {
    for (const PQconninfoOption* option = parsed; option->keyword != nullptr; ++option)
        if (strcmp(option->keyword, keyword) == 0) return option->val;
    return nullptr;
}

// How many hosts the conninfo lists, as libpq counts them (hostaddr, else
// host); 1 when it lists none, or when the lists do not match each other
// (libpq then refuses the conninfo as given, saying why).
int host_count(const PQconninfoOption* parsed) {
    const int hosts = list_length(option_value(parsed, "host"));
    const int addresses = list_length(option_value(parsed, "hostaddr"));
    const int ports = list_length(option_value(parsed, "port"));
    const int count = addresses > 0 ? addresses : hosts;
    if (count <= 1 || (hosts > 0 && addresses > 0 && hosts != addresses) || (ports > 1 && ports != count)) return 1;
    return count;
}

// Starts a connection to host `index` of the parsed conninfo, every other
// option kept (user, TLS, target_session_attrs); `label` names the host.
PGconn* start_connection(const PQconninfoOption* parsed, int index, int hosts, char (&label)[256],
                         char (&error)[256]) {
    // the registry's pg_stat_activity names its holders' connections; a grant
    // is durable (and, where the registry replicates synchronously, on its
    // standby) before it is answered, whatever the registry's default: the
    // conninfo's own options, then synchronous_commit (the last -c wins)
    char options[1024];
    if (!registry_options(option_value(parsed, "options"), options)) {
        copy_name(error, "the options of snowflake.registry are too long");
        return nullptr;
    }
    constexpr int kMaxKeywords = 80;
    const char* keywords[kMaxKeywords];
    const char* values[kMaxKeywords];
    int count = 0;
    // this host's item of each list (a single port serves every host)
    static const char* const kListed[] = {"host", "hostaddr", "port"};
    char items[3][256] = {};
    for (const PQconninfoOption* option = parsed; option->keyword != nullptr; ++option) {
        if (option->val == nullptr || strcmp(option->keyword, "options") == 0 ||
            strcmp(option->keyword, "fallback_application_name") == 0)
            continue;
        const char* value = option->val;
        for (int k = 0; k < 3 && hosts > 1; ++k) {
            if (strcmp(option->keyword, kListed[k]) != 0) continue;
            if (!list_item(value, list_length(value) > 1 ? index : 0, items[k])) {
                snprintf(error, sizeof error, "a %s of snowflake.registry is too long", option->keyword);
                return nullptr;
            }
            value = items[k];
        }
        if (count + 3 > kMaxKeywords) {
            copy_name(error, "snowflake.registry has too many options");
            return nullptr;
        }
        keywords[count] = option->keyword;
        values[count++] = value;
    }
    snprintf(label, sizeof label, "%s%s%s", items[1][0] != '\0' ? items[1] : items[0], items[2][0] != '\0' ? ":" : "",
             items[2]);
    keywords[count] = "fallback_application_name";
    values[count++] = "snowflake registry worker";
    keywords[count] = "options";
    values[count++] = options;
    keywords[count] = nullptr;
    values[count] = nullptr;
    PGconn* started = PQconnectStartParams(keywords, values, 0);
    if (started == nullptr) copy_name(error, "out of memory");
    return started;
}

// Connects to host `current_host` (kept from an earlier call when it is
// still up), within `deadline`.
bool connect_registry(const PQconninfoOption* parsed, int hosts, std::int64_t deadline, char (&label)[256],
                      char (&error)[256]) {
    if (connection != nullptr && PQstatus(connection) == CONNECTION_OK) return true;
    drop_connection();
    connection = start_connection(parsed, current_host, hosts, label, error);
    if (connection == nullptr) return false;
    PostgresPollingStatusType polling = PGRES_POLLING_WRITING;
    while (PQstatus(connection) != CONNECTION_BAD && polling != PGRES_POLLING_OK &&
           polling != PGRES_POLLING_FAILED) {
        if (!wait_socket(polling == PGRES_POLLING_WRITING, deadline)) {
            copy_name(error, "timed out connecting");
            drop_connection();
            return false;
        }
        polling = PQconnectPoll(connection);
    }
    if (PQstatus(connection) == CONNECTION_OK) return true;
    copy_message(error, PQerrorMessage(connection));
    drop_connection();
    return false;
}

// Runs the query on host `current_host` within `deadline`: true when the
// registry answered (its one row returned, or null with its refusal in
// `error`), false when the host timed out, broke or could not be reached.
bool query_host(const PQconninfoOption* parsed, int hosts, const char* sql, int count, const char* const* values,
                std::int64_t deadline, PGresult*& row, char (&label)[256], char (&error)[256]) {
    row = nullptr;
    if (!connect_registry(parsed, hosts, deadline, label, error)) return false;
    if (PQsendQueryParams(connection, sql, count, nullptr, values, nullptr, nullptr, 0) == 0) {
        copy_message(error, PQerrorMessage(connection));
        return false;
    }
    int flushed;
    while ((flushed = PQflush(connection)) == 1)
        if (!wait_socket(true, deadline)) break;
    PGresult* last = nullptr;
    bool broken = flushed != 0;
    while (!broken) {
        while (PQisBusy(connection) && !broken)
            broken = !wait_socket(false, deadline) || PQconsumeInput(connection) == 0;
        if (broken) break;
        PGresult* next = PQgetResult(connection);
        if (next == nullptr) break;
        if (last != nullptr) PQclear(last);
        last = next;
    }
    if (broken) {
        copy_name(error, monotonic_ms() >= deadline ? "timed out waiting for an answer" : "the connection broke");
        if (last != nullptr) PQclear(last);
        return false;
    }
    if (last != nullptr && PQresultStatus(last) == PGRES_TUPLES_OK && PQntuples(last) == 1) {
        row = last;
        return true;
    }
    if (last != nullptr && PQresultStatus(last) != PGRES_TUPLES_OK)
        copy_message(error, PQresultErrorField(last, PG_DIAG_MESSAGE_PRIMARY));
    else
        copy_name(error, "an unexpected answer");
    if (last != nullptr) PQclear(last);
    return true;
}

// `message` of `label`'s host appended to `error` ("; " between hosts).
void add_failure(char (&error)[256], const char* label, const char* message, int hosts) {
    const std::size_t used = strlen(error);
    if (hosts > 1)
        snprintf(error + used, sizeof error - used, "%s%s: %s", used > 0 ? "; " : "", label, message);
    else
        snprintf(error + used, sizeof error - used, "%s", message);
}

}  // namespace

// Runs one query with text parameters, within `timeout_ms`; the result, or
// null with `error` set. The hosts of snowflake.registry are tried in turn,
// from `current_host`, each within an equal share of the time left: a host
// that does not answer costs the call its share, never the others' (and the
// next call starts after it). A time-out or a broken connection drops the
// connection, never cancels the query (see registry_client.hpp).
PGresult* registry_query(const char* sql, int count, const char* const* values, std::int64_t timeout_ms,
                         char (&error)[256]) {
    const std::int64_t deadline = monotonic_ms() + timeout_ms;
    error[0] = '\0';
    char* problem = nullptr;
    PQconninfoOption* parsed = PQconninfoParse(registry_setting, &problem);
    if (parsed == nullptr) {
        copy_message(error, problem != nullptr ? problem : "out of memory");
        if (problem != nullptr) PQfreemem(problem);
        return nullptr;
    }
    const int hosts = host_count(parsed);
    if (current_host >= hosts) current_host = 0;
    PGresult* row = nullptr;
    for (int tried = 0; tried < hosts; ++tried) {
        const std::int64_t left = deadline - monotonic_ms();
        if (left <= 0 || (IsUnderPostmaster && ShutdownRequestPending)) break;
        char label[256] = "", failure[256] = "";
        if (query_host(parsed, hosts, sql, count, values, monotonic_ms() + left / (hosts - tried), row, label,
                       failure)) {
            if (row == nullptr) copy_name(error, failure);  // the registry's refusal
            PQconninfoFree(parsed);
            return row;
        }
        add_failure(error, label, failure, hosts);
        drop_connection();
        current_host = (current_host + 1) % hosts;
    }
    if (error[0] == '\0') copy_name(error, "timed out connecting");
    PQconninfoFree(parsed);
    return nullptr;
}

std::int64_t monotonic_ms() { return monotonic_us() / 1000; }
std::int64_t registry_value(const PGresult* result, int column) {
    return std::strtoll(PQgetvalue(result, 0, column), nullptr, 10);
}
void drop_registry_connection() { drop_connection(); }

}  // namespace snowflake::pg
