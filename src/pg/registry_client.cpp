// The registry's libpq client (registry_client.hpp).
#include "registry_client.hpp"

extern "C" {
#include "miscadmin.h"
#include "postmaster/interrupt.h"
#include "storage/pmsignal.h"
}

#include <poll.h>

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

// One connection to the registry per process, kept between calls.
PGconn* connection = nullptr;

void drop_connection() {
    if (connection != nullptr) PQfinish(connection);
    connection = nullptr;
}

// Waits for the connection's socket, until the monotonic `deadline`; false
// on time-out, or when this background worker is asked to stop or the
// postmaster is gone (checked every 100 ms).
bool wait_socket(bool for_write, std::int64_t deadline) {
    const int fd = PQsocket(connection);
    if (fd < 0) return false;
    for (;;) {
        const std::int64_t left = deadline - monotonic_ms();
        if (left <= 0) return false;
        if (IsUnderPostmaster && (ShutdownRequestPending || !PostmasterIsAlive())) return false;
        pollfd p{fd, static_cast<short>(for_write ? POLLOUT : POLLIN), 0};
        const int n = poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left, 100)));
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return false;
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
bool registry_options(char (&options)[1024]) {
    PQconninfoOption* parsed = PQconninfoParse(registry_setting, nullptr);
    const char* given = "";
    for (const PQconninfoOption* option = parsed; option != nullptr && option->keyword != nullptr; ++option)
        if (strcmp(option->keyword, "options") == 0 && option->val != nullptr) given = option->val;
    const int length = snprintf(options, sizeof options, "%s%s-c synchronous_commit=on", given,
                                given[0] != '\0' ? " " : "");
    if (parsed != nullptr) PQconninfoFree(parsed);
    return length > 0 && static_cast<std::size_t>(length) < sizeof options;
}

bool connect_registry(std::int64_t deadline, char (&error)[256]) {
    if (connection != nullptr && PQstatus(connection) == CONNECTION_OK) return true;
    drop_connection();
    // the registry's pg_stat_activity names its holders' connections; a grant
    // is durable (and, where the registry replicates synchronously, on its
    // standby) before it is answered, whatever the registry's default: the
    // conninfo's own options, then synchronous_commit (the last -c wins)
    char options[1024];
    if (!registry_options(options)) {
        copy_name(error, "the options of snowflake.registry are too long");
        return false;
    }
    const char* const keywords[] = {"dbname", "fallback_application_name", "options", nullptr};
    const char* const values[] = {registry_setting, "snowflake registry worker", options, nullptr};
    connection = PQconnectStartParams(keywords, values, 1);
    if (connection == nullptr) {
        copy_name(error, "out of memory");
        return false;
    }
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


}  // namespace

// Runs one query with text parameters, within `timeout_ms`; the result, or
// null with `error` set. A time-out or a broken connection drops the
// connection (the next call connects again).
PGresult* registry_query(const char* sql, int count, const char* const* values, std::int64_t timeout_ms,
                         char (&error)[256]) {
    const std::int64_t deadline = monotonic_ms() + timeout_ms;
    if (!connect_registry(deadline, error)) return nullptr;
    if (PQsendQueryParams(connection, sql, count, nullptr, values, nullptr, nullptr, 0) == 0) {
        copy_message(error, PQerrorMessage(connection));
        drop_connection();
        return nullptr;
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
        drop_connection();
        return nullptr;
    }
    if (last != nullptr && PQresultStatus(last) == PGRES_TUPLES_OK && PQntuples(last) == 1) return last;
    if (last != nullptr && PQresultStatus(last) != PGRES_TUPLES_OK)
        copy_message(error, PQresultErrorField(last, PG_DIAG_MESSAGE_PRIMARY));
    else
        copy_name(error, "an unexpected answer");
    if (last != nullptr) PQclear(last);
    return nullptr;
}

std::int64_t monotonic_ms() { return monotonic_us() / 1000; }
std::int64_t registry_value(const PGresult* result, int column) {
    return std::strtoll(PQgetvalue(result, 0, column), nullptr, 10);
}
void drop_registry_connection() { drop_connection(); }

}  // namespace snowflake::pg
