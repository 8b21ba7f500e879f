// Public ids: a keyed, reversible form of an id that hides its
// time, node and volume — FF1 with AES over the id's 63 bits (src/core/ff1),
// written as 13 Crockford base32 characters that also name the key
// (src/core/codec). The key is snowflake.public_key, which only superusers
// may read or set.
#include "../core/codec.hpp"
#include "../core/ff1.hpp"
#include "edge.hpp"

extern "C" {
#include "utils/builtins.h"
#include "utils/guc.h"
}

using namespace snowflake;
using namespace snowflake::pg;

namespace {

// snowflake.public_key, parsed: "[<key id>:]<hex>[, ...]", the first the
// current key (it encodes), every one decodes the public ids naming it.
struct PublicKeys {
    int count;
    struct Entry {
        unsigned id;  // 0..3
        std::size_t length;
        std::uint8_t bytes[32];
    } keys[4];
};

char* public_key_setting = nullptr;
const PublicKeys* public_keys = nullptr;  // null: unset

// OpenSSL contexts of the keys last used, for the life of the process: one
// per key id of the setting, and one for the forms given a key.
Ff1Key setting_cache[4];
Ff1Key given_cache;

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The problem with a setting's text, or nullptr; never quotes the key.
const char* parse_keys(const char* text, PublicKeys& keys) {
    keys.count = 0;
    for (const char* p = text;;) {
        while (*p == ' ') ++p;
        if (*p == '\0') break;
        if (keys.count == 4) return "it holds more than 4 keys";
        PublicKeys::Entry& entry = keys.keys[keys.count];
        entry.id = 0;
        if (p[0] >= '0' && p[0] <= '3' && p[1] == ':') {
            entry.id = static_cast<unsigned>(p[0] - '0');
            p += 2;
        }
        for (int i = 0; i < keys.count; ++i)
            if (keys.keys[i].id == entry.id) return "two keys have one key id";
        std::size_t digits = 0;
        while (hex_digit(p[digits]) >= 0) ++digits;
        if (digits != 32 && digits != 48 && digits != 64)
            return "a key is 32, 48 or 64 hexadecimal digits (AES-128, AES-192, AES-256), after an optional key id 0..3 and a colon";
        entry.length = digits / 2;
        for (std::size_t i = 0; i < entry.length; ++i)
            entry.bytes[i] = static_cast<std::uint8_t>(hex_digit(p[2 * i]) << 4 | hex_digit(p[2 * i + 1]));
        p += digits;
        ++keys.count;
        while (*p == ' ') ++p;
        if (*p == ',') ++p;
        else if (*p != '\0') return "keys are separated by commas";
    }
    return nullptr;
}

bool check_public_key(char** newval, void** extra, GucSource) {
    PublicKeys keys;
    if (const char* problem = parse_keys(*newval != nullptr ? *newval : "", keys)) {
        GUC_check_errmsg("invalid value for parameter \"snowflake.public_key\"");
        GUC_check_errdetail("%s", problem);
        return false;
    }
    auto* parsed = static_cast<PublicKeys*>(guc_extra_alloc(sizeof(PublicKeys)));
    if (parsed == nullptr) return false;
    *parsed = keys;
    *extra = parsed;
    return true;
}

void assign_public_key(const char*, void* extra) {
    const auto* keys = static_cast<const PublicKeys*>(extra);
    public_keys = keys != nullptr && keys->count > 0 ? keys : nullptr;
}

// The cipher of a key, made once and kept while the key stays the same.
const Ff1Key& cipher_of(Ff1Key& cache, const std::uint8_t* bytes, std::size_t length) {
    if (cache.ctx != nullptr && cache.length == length && std::memcmp(cache.bytes, bytes, length) == 0)
        return cache;
    ff1_key_free(cache);
    if (!ff1_key_init(cache, bytes, length)) elog(ERROR, "snowflake: OpenSSL could not set up an AES key");
    return cache;
}

const PublicKeys& keys_or_refuse() {
    if (public_keys == nullptr)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("parameter \"snowflake.public_key\" is not set"),
                        errhint("A superuser sets it, to 32 or 64 hexadecimal digits of a random "
                                "key: ALTER SYSTEM SET snowflake.public_key = '<hex>'; SELECT "
                                "pg_reload_conf(); or give the key: snowflake_to_public(id, key).")));
    return *public_keys;
}

const Ff1Key& given_key(FunctionCallInfo fcinfo, int argument) {
    bytea* key = PG_GETARG_BYTEA_PP(argument);
    const auto length = static_cast<std::size_t>(VARSIZE_ANY_EXHDR(key));
    if (length != 16 && length != 24 && length != 32)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("a public id key is 16, 24 or 32 bytes, not %zu", length)));
    return cipher_of(given_cache, reinterpret_cast<const std::uint8_t*>(VARDATA_ANY(key)), length);
}

Datum public_text(std::uint64_t value, unsigned key_id) {
    if (value > kMaxId) elog(ERROR, "snowflake: OpenSSL could not encrypt an id");
    char out[kBase32Length + 1];
    to_public_text(value, key_id, out);
    PG_RETURN_TEXT_P(cstring_to_text_with_len(out, static_cast<int>(kBase32Length)));
}

// The public form's value and key id; 22P02 naming the input when malformed.
std::uint64_t parse_or_refuse(const char* input, unsigned& key_id) {
    std::uint64_t value = 0;
    if (from_public_text(input, value, key_id) != ParseResult::Ok)
        ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                        errmsg("invalid input syntax for a public snowflake id: \"%s\"", input),
                        errdetail("A public id is exactly 13 Crockford base32 characters: 0-9 and "
                                  "A-Z without U, in any case; I and L read as 1, O as 0.")));
    return value;
}

Datum decoded(std::uint64_t id) {
    if (id > kMaxId) elog(ERROR, "snowflake: OpenSSL could not decrypt a public id");
    PG_RETURN_INT64(static_cast<std::int64_t>(id));
}

}  // namespace

void snowflake::pg::define_public_key_setting() {
    DefineCustomStringVariable(
        "snowflake.public_key", "Sets the keys of public ids: [<key id>:]<hex>[, ...], the first encodes.",
        "Readable and settable by superusers only; empty: unset.", &public_key_setting, "", PGC_SUSET,
        GUC_SUPERUSER_ONLY, SNOWFLAKE_CALLBACK(check_public_key, ERROR),
        SNOWFLAKE_CALLBACK(assign_public_key, ERROR), nullptr);
}

SNOWFLAKE_FUNCTION(snowflake_to_public) {
    const std::uint64_t id = id_or_refuse(PG_GETARG_INT64(0));
    const PublicKeys::Entry& entry = keys_or_refuse().keys[0];
    const Ff1Key& key = cipher_of(setting_cache[entry.id], entry.bytes, entry.length);
    return public_text(ff1_encrypt_id(key, id), entry.id);
}

SNOWFLAKE_FUNCTION(snowflake_from_public) {
    const char* input = text_to_cstring(PG_GETARG_TEXT_PP(0));
    unsigned key_id = 0;
    const std::uint64_t value = parse_or_refuse(input, key_id);
    const PublicKeys& keys = keys_or_refuse();
    for (int i = 0; i < keys.count; ++i) {
        const PublicKeys::Entry& entry = keys.keys[i];
        if (entry.id == key_id) return decoded(ff1_decrypt_id(cipher_of(setting_cache[entry.id], entry.bytes, entry.length), value));
    }
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("public snowflake id \"%s\" names key id %u, which \"snowflake.public_key\" does not hold",
                           input, key_id),
                    errhint("Its key was rotated out: add it back after the current key, as '%u:<hex>'.",
                            key_id)));
    PG_RETURN_NULL();
}

SNOWFLAKE_FUNCTION(snowflake_to_public_with_key) {
    const std::uint64_t id = id_or_refuse(PG_GETARG_INT64(0));
    return public_text(ff1_encrypt_id(given_key(fcinfo, 1), id), 0);
}

SNOWFLAKE_FUNCTION(snowflake_from_public_with_key) {
    const char* input = text_to_cstring(PG_GETARG_TEXT_PP(0));
    unsigned key_id = 0;
    const std::uint64_t value = parse_or_refuse(input, key_id);
    if (key_id != 0)
        ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                        errmsg("public snowflake id \"%s\" names key id %u, not the key given (key id 0)",
                               input, key_id)));
    return decoded(ff1_decrypt_id(given_key(fcinfo, 1), value));
}
