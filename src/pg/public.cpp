// Public ids: a keyed, reversible form of an id that hides its
// time, node and volume — FF1 with AES over the id's 63 bits (src/core/ff1),
// written as 13 Crockford base32 characters that also name the key
// (src/core/codec). The keys are in the file snowflake.public_key_file names
// (src/core/keyfile), read as PostgreSQL reads ssl_key_file: at start and at
// reload, by every process; no setting, log line or catalog holds a key. A key
// id is bound to its key's fingerprint in pg_snowflake/public_keys, which the
// postmaster writes: a key file that binds a key id to another key is refused.
#include "../core/codec.hpp"
#include "../core/ff1.hpp"
#include "../core/keyfile.hpp"
#include "datadir.hpp"
#include "edge.hpp"

extern "C" {
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
}

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace snowflake;
using namespace snowflake::pg;

namespace {


char* public_key_file_setting = nullptr;
char* deprecated_public_key_setting = nullptr;
const PublicKeys* public_keys = nullptr;  // null: no key loaded

// OpenSSL contexts of the keys last used, one per key id, for the life of the
// process.
Ff1Key key_cache[kKeyIds];
Ff1Key given_cache;  // 1.0's forms given a key

// The bindings on disk (none when the file is missing): Read, or why not
// (errno set when Unreadable).
enum class BindingsFile { Read, Unreadable, Corrupt };
BindingsFile read_bindings(Bindings& bindings) {
    bindings = Bindings{};
    char text[kBindingsTextMax + 1];
    const ssize_t length = read_whole(kBindingsPath, text, sizeof text);
    if (length < 0 && errno == ENOENT) return BindingsFile::Read;
    if (length < 0) return BindingsFile::Unreadable;
    if (static_cast<std::size_t>(length) > kBindingsTextMax ||
        !parse_bindings(text, static_cast<std::size_t>(length), bindings))
        return BindingsFile::Corrupt;
    return BindingsFile::Read;
}
#define SNOWFLAKE_BINDINGS_UNREADABLE "could not read file \"%s\": %m", kBindingsPath
#define SNOWFLAKE_BINDINGS_CORRUPT "file \"%s\" is corrupt", kBindingsPath
#define SNOWFLAKE_BINDINGS_DETAIL "It binds each key id of public ids to the fingerprint of its key."
#define SNOWFLAKE_BINDINGS_HINT "Restore it from a backup of this data directory."
#define SNOWFLAKE_NEW_KEYS_LEFT_OUT "The public key file's new key ids are not loaded."

// Writes the bindings durably (write_durably); false, errno set, on failure.
bool write_bindings(const Bindings& bindings) {
    char text[kBindingsTextMax];
    return write_durably(kBindingsPath, text, format_bindings(bindings, text));
}

// pg_snowflake, open and locked (flock): the postmaster and
// snowflake_retire_public_key_id() change the bindings under it. -1 on
// failure, errno set.
int lock_bindings() {
    if (!make_data_directory()) return -1;
    const int fd = open(kDataDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    while (flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        const int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

// The process that binds new key ids: the postmaster (at start and reload,
// before its children reload), a single-user server, or a backend of a server
// that did not preload the library. Other processes load bound keys only.
bool binds_keys() { return !IsUnderPostmaster || shared_state() == nullptr; }

// Leaves out of keys those whose key id the bindings do not bind.
void keep_bound(PublicKeys& keys, const Bindings& bindings) {
    unsigned kept = 0;
    for (unsigned i = 0; i < keys.count; ++i)
        if (bindings.bound[keys.keys[i].id]) keys.keys[kept++] = keys.keys[i];
    explicit_bzero(&keys.keys[kept], sizeof(PublicKey) * (keys.count - kept));
    keys.count = kept;
}

// The keys a check hook loaded, for its assign hook, which binds the new key
// ids (a check hook only checks: it may run for a value never assigned).
struct LoadedKeys {
    PublicKeys keys;
    bool unbound;  // some key id not bound yet, in a process that binds
};

// Checks the keys against their bindings; false, with the check hook's
// message set, when the bindings cannot be read or a key id is bound to
// another key. Unbound key ids: left for the assign hook in a process that
// binds, left out in one that does not (the postmaster binds them first).
bool check_bound(LoadedKeys& loaded, const char* path) {
    Bindings bindings;
    const BindingsFile file = read_bindings(bindings);
    if (file == BindingsFile::Unreadable) {
        GUC_check_errmsg(SNOWFLAKE_BINDINGS_UNREADABLE);
        return false;
    }
    if (file == BindingsFile::Corrupt) {
        GUC_check_errmsg(SNOWFLAKE_BINDINGS_CORRUPT);
        GUC_check_errdetail(SNOWFLAKE_BINDINGS_DETAIL);
        GUC_check_errhint(SNOWFLAKE_BINDINGS_HINT);
        return false;
    }
    unsigned key_id = 0;
    const Binding binding = check_bindings(loaded.keys, bindings, key_id);
    if (binding == Binding::Other) {
        GUC_check_errcode(ERRCODE_CONFIG_FILE_ERROR);
        GUC_check_errmsg("key id %u of public key file \"%s\" is bound to another key", key_id, path);
        GUC_check_errdetail("Public ids under key id %u were made with the key this server first loaded under it "
                            "(its fingerprint is in \"%s\"); another key would decode them to other ids.",
                            key_id, kBindingsPath);
        GUC_check_errhint("Give key id %u its key back, or put the new key under a key id that is not bound. "
                          "To retire key id %u on purpose, remove its line, reload, and run SELECT "
                          "snowflake_retire_public_key_id(%u).",
                          key_id, key_id, key_id);
        return false;
    }
    loaded.unbound = binding == Binding::Unbound && binds_keys();
    if (binding == Binding::Unbound && !loaded.unbound) keep_bound(loaded.keys, bindings);
    return true;
}

// From the assign hook: binds the new key ids of keys under the lock, or,
// when that fails (said at LOG: an assign hook cannot refuse), leaves them out
// and keeps the keys already bound.
void bind_new(PublicKeys& keys) {
    Bindings bound;  // as on disk: what stays loaded if the new ids cannot be bound
    if (read_bindings(bound) != BindingsFile::Read) bound = Bindings{};
    const int directory = lock_bindings();
    if (directory < 0) {
        ereport(LOG, (errcode_for_file_access(), errmsg("snowflake: could not lock directory \"%s\": %m", kDataDirectory),
                      errdetail(SNOWFLAKE_NEW_KEYS_LEFT_OUT)));
        return keep_bound(keys, bound);
    }
    Bindings bindings;
    const BindingsFile file = read_bindings(bindings);
    if (file == BindingsFile::Read) bound = bindings;  // under the lock
    unsigned key_id = 0;
    const bool other = file == BindingsFile::Read && check_bindings(keys, bindings, key_id) == Binding::Other;
    bool ok = file == BindingsFile::Read && !other;
    if (file == BindingsFile::Unreadable)
        ereport(LOG, (errcode_for_file_access(), errmsg("snowflake: " SNOWFLAKE_BINDINGS_UNREADABLE),
                      errdetail(SNOWFLAKE_NEW_KEYS_LEFT_OUT)));
    else if (file == BindingsFile::Corrupt)
        ereport(LOG, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("snowflake: " SNOWFLAKE_BINDINGS_CORRUPT),
                      errdetail(SNOWFLAKE_BINDINGS_DETAIL), errhint(SNOWFLAKE_BINDINGS_HINT)));
    else if (other)  // bound meanwhile to another key (by a backend of a server without preload)
        ereport(LOG, (errmsg("snowflake: key id %u of the public key file was bound to another key meanwhile", key_id)));
    else if (!bind_keys(keys, bindings) || !write_bindings(bindings)) {
        ok = false;
        ereport(LOG, (errcode_for_file_access(), errmsg("snowflake: could not write file \"%s\": %m", kBindingsPath),
                      errdetail(SNOWFLAKE_NEW_KEYS_LEFT_OUT)));
    }
    close(directory);
    // (a corrupt file, or a key id bound to another key: no key is loaded, as the check refuses them)
    if (!ok) keep_bound(keys, file == BindingsFile::Corrupt || other ? Bindings{} : bound);
}

// Reads the key file as PostgreSQL reads ssl_key_file; false, with the check
// hook's message set, when it cannot be read, may be read by others or is
// malformed. The messages name the file and the line, never a key.
bool read_key_file(const char* path, PublicKeys& keys) {
    GUC_check_errcode(ERRCODE_CONFIG_FILE_ERROR);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        GUC_check_errcode(ERRCODE_UNDEFINED_FILE);
        GUC_check_errmsg("could not open public key file \"%s\": %m", path);
        return false;
    }
    struct stat st;
    KeyFileMode mode = KeyFileMode::NotRegular;
    if (fstat(fd, &st) == 0) mode = key_file_mode(st.st_uid, st.st_mode, geteuid());
    if (mode != KeyFileMode::Ok) {
        close(fd);
        if (mode == KeyFileMode::NotRegular)
            GUC_check_errmsg("public key file \"%s\" is not a regular file", path);
        else if (mode == KeyFileMode::Owner)
            GUC_check_errmsg("public key file \"%s\" must be owned by the database user or root", path);
        else {
            GUC_check_errmsg("public key file \"%s\" has group or world access", path);
            GUC_check_errdetail("File must have permissions u=rw (0600) or less if owned by the database user, "
                                "or permissions u=rw,g=r (0640) or less if owned by root.");
        }
        return false;
    }
    char text[kKeyFileMax + 1];
    const ssize_t length = read_all(fd, text, sizeof text);
    const int saved = errno;
    close(fd);
    if (length < 0) {
        errno = saved;
        GUC_check_errmsg("could not read public key file \"%s\": %m", path);
        return false;
    }
    unsigned line = 0;
    const char* problem = parse_public_keys(text, static_cast<std::size_t>(length), keys, line);
    explicit_bzero(text, sizeof text);
    if (problem != nullptr) {
        GUC_check_errmsg("invalid public key file \"%s\"", path);
        if (line > 0) GUC_check_errdetail("Line %u: %s.", line, problem);
        else GUC_check_errdetail("%c%s.", pg_toupper(static_cast<unsigned char>(problem[0])), problem + 1);
        GUC_check_errhint("A line is a key id 0..3, spaces, and 32, 48 or 64 hexadecimal digits; the first key "
                          "encodes; # starts a comment.");
        return false;
    }
    return true;
}

bool check_public_key_file(char** newval, void** extra, GucSource) {
    LoadedKeys keys{};
    const char* path = *newval != nullptr ? *newval : "";
    if (*path != '\0' && (!read_key_file(path, keys.keys) || !check_bound(keys, path))) {
        explicit_bzero(&keys, sizeof keys);
        return false;
    }
    auto* loaded = static_cast<LoadedKeys*>(guc_extra_alloc(sizeof(LoadedKeys)));
    if (loaded == nullptr) return false;
    *loaded = keys;
    explicit_bzero(&keys, sizeof keys);
    *extra = loaded;
    return true;
}

void assign_public_key_file(const char*, void* extra) {
    auto* loaded = static_cast<LoadedKeys*>(extra);
    if (loaded != nullptr && loaded->unbound) {
        bind_new(loaded->keys);
        loaded->unbound = false;
    }
    public_keys = loaded != nullptr && loaded->keys.count > 0 ? &loaded->keys : nullptr;
}

// 1.0's snowflake.public_key: a key in a setting is read by
// pg_read_all_settings, logged at reload and kept by pg_stat_statements.
bool check_deprecated_public_key(char** newval, void**, GucSource) {
    if (*newval == nullptr || **newval == '\0') return true;
    GUC_check_errcode(ERRCODE_FEATURE_NOT_SUPPORTED);
    GUC_check_errmsg("parameter \"snowflake.public_key\" is no longer supported");
    GUC_check_errdetail("A key in a setting is shown to members of pg_read_all_settings, written to the server "
                        "log at reload and kept by pg_stat_statements.");
    GUC_check_errhint("Put the keys in a file readable by the server's user only, a line \"<key id> <hex>\" "
                      "each, and name it in \"snowflake.public_key_file\".");
    return false;
}

// The cipher of a key, made once and kept while the key stays the same.
const Ff1Key& cipher_of(Ff1Key& cache, const std::uint8_t* bytes, std::size_t length) {
    if (cache.ctx != nullptr && cache.length == length && std::memcmp(cache.bytes, bytes, length) == 0)
        return cache;
    ff1_key_free(cache);
    if (!ff1_key_init(cache, bytes, length)) elog(ERROR, "snowflake: OpenSSL could not set up an AES key");
    return cache;
}

const Ff1Key& cipher_of(const PublicKey& key) { return cipher_of(key_cache[key.id], key.bytes, key.length); }

const PublicKeys& keys_or_refuse() {
    if (public_keys == nullptr)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("no key of public ids is loaded"),
                        errhint("Name a key file in postgresql.conf, snowflake.public_key_file = 'public_keys' (a "
                                "file in the data directory, mode 0600, a line \"<key id> <hex>\" each), and "
                                "reload; a file that could not be loaded is named in the server log.")));
    return *public_keys;
}

// The key loaded under a key id given as an argument.
const PublicKey& key_of_id(std::int32_t key_id) {
    if (key_id < 0 || key_id >= static_cast<std::int32_t>(kKeyIds))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("a public id key id is 0..3, not %d", key_id)));
    const PublicKeys& keys = keys_or_refuse();
    for (unsigned i = 0; i < keys.count; ++i)
        if (keys.keys[i].id == static_cast<unsigned>(key_id)) return keys.keys[i];
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("the public key file holds no key id %d", key_id)));
    pg_unreachable();
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
        "snowflake.public_key_file", "Sets the file of the keys of public ids.",
        "Relative to the data directory; a line \"<key id> <hex>\" each, the first encodes; empty: no key.",
        &public_key_file_setting, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY,
        SNOWFLAKE_CALLBACK(check_public_key_file, LOG), SNOWFLAKE_CALLBACK(assign_public_key_file, LOG),
        nullptr);
    DefineCustomStringVariable(
        "snowflake.public_key", "No longer supported: see snowflake.public_key_file.", nullptr,
        &deprecated_public_key_setting, "", PGC_SUSET, GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
        SNOWFLAKE_CALLBACK(check_deprecated_public_key, LOG), nullptr, nullptr);
}

SNOWFLAKE_FUNCTION(snowflake_to_public) {
    const std::uint64_t id = id_or_refuse(PG_GETARG_INT64(0));
    const PublicKey& key = keys_or_refuse().keys[0];
    return public_text(ff1_encrypt_id(cipher_of(key), id), key.id);
}

SNOWFLAKE_FUNCTION(snowflake_from_public) {
    const char* input = text_to_cstring(PG_GETARG_TEXT_PP(0));
    unsigned key_id = 0;
    const std::uint64_t value = parse_or_refuse(input, key_id);
    const PublicKeys& keys = keys_or_refuse();
    for (unsigned i = 0; i < keys.count; ++i)
        if (keys.keys[i].id == key_id) return decoded(ff1_decrypt_id(cipher_of(keys.keys[i]), value));
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("public snowflake id \"%s\" names key id %u, which the public key file does not hold",
                           input, key_id),
                    errhint("Its key was rotated out: put its line \"%u <hex>\" back in the file named by "
                            "\"snowflake.public_key_file\" and reload.",
                            key_id)));
    PG_RETURN_NULL();
}

// IMMUTABLE: a key id keeps its key (its binding) until retired on purpose.
SNOWFLAKE_FUNCTION(snowflake_to_public_key_id) {
    const std::uint64_t id = id_or_refuse(PG_GETARG_INT64(0));
    const PublicKey& key = key_of_id(PG_GETARG_INT32(1));
    return public_text(ff1_encrypt_id(cipher_of(key), id), key.id);
}

SNOWFLAKE_FUNCTION(snowflake_from_public_key_id) {
    const char* input = text_to_cstring(PG_GETARG_TEXT_PP(0));
    unsigned key_id = 0;
    const std::uint64_t value = parse_or_refuse(input, key_id);
    const PublicKey& key = key_of_id(PG_GETARG_INT32(1));
    if (key_id != key.id)
        ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                        errmsg("public snowflake id \"%s\" names key id %u, not key id %u", input, key_id, key.id)));
    return decoded(ff1_decrypt_id(cipher_of(key), value));
}

// Unbinds a key id that the key file no longer holds, so that another key
// may take it: its old public ids then decode to other ids. true if it was
// bound.
SNOWFLAKE_FUNCTION(snowflake_retire_public_key_id) {
    const std::int32_t key_id = PG_GETARG_INT32(0);
    if (key_id < 0 || key_id >= static_cast<std::int32_t>(kKeyIds))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("a public id key id is 0..3, not %d", key_id)));
    if (public_keys != nullptr)
        for (unsigned i = 0; i < public_keys->count; ++i)
            if (public_keys->keys[i].id == static_cast<unsigned>(key_id))
                ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                                errmsg("the public key file holds key id %d", key_id),
                                errhint("Remove its line from the file named by \"snowflake.public_key_file\", "
                                        "reload, then retire it.")));
    // no ERROR while the lock is held: the problem is reported after
    enum class Problem { None, Lock, Read, Write } problem = Problem::None;
    bool was_bound = false;
    const int directory = lock_bindings();
    Bindings bindings;
    BindingsFile file = BindingsFile::Read;
    if (directory < 0) problem = Problem::Lock;
    else if ((file = read_bindings(bindings)) != BindingsFile::Read) problem = Problem::Read;
    else if (bindings.bound[key_id]) {
        was_bound = true;
        bindings.bound[key_id] = false;
        if (!write_bindings(bindings)) problem = Problem::Write;
    }
    const int saved = errno;
    if (directory >= 0) close(directory);
    errno = saved;
    if (problem == Problem::Lock)
        ereport(ERROR, (errcode_for_file_access(), errmsg("could not lock directory \"%s\": %m", kDataDirectory)));
    if (problem == Problem::Read && file == BindingsFile::Unreadable)
        ereport(ERROR, (errcode_for_file_access(), errmsg(SNOWFLAKE_BINDINGS_UNREADABLE)));
    if (problem == Problem::Read)
        ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg(SNOWFLAKE_BINDINGS_CORRUPT),
                        errdetail(SNOWFLAKE_BINDINGS_DETAIL), errhint(SNOWFLAKE_BINDINGS_HINT)));
    if (problem == Problem::Write)
        ereport(ERROR, (errcode_for_file_access(), errmsg("could not write file \"%s\": %m", kBindingsPath)));
    if (was_bound) ereport(LOG, (errmsg("snowflake: public id key id %d retired: another key may take it", key_id)));
    PG_RETURN_BOOL(was_bound);
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
