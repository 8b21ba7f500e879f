// The public id key file and the key ids' bindings (keyfile.hpp).
#include "keyfile.hpp"

#include "text.hpp"

#include <openssl/evp.h>
#include <sys/stat.h>

#include <cstring>

namespace snowflake {
namespace {

int hex_digit(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool is_blank(char c) noexcept { return c == ' ' || c == '\t' || c == '\r'; }

// One line: "<key id> <hex>" into id and bytes (digits of one of the allowed
// counts): nullptr, with length 0 when the digits are not such; or the problem.
const char* parse_line(const char* p, const char* end, unsigned& id, std::uint8_t* bytes, std::size_t& length,
                       const std::size_t (&digit_counts)[3]) noexcept {
    if (p == end || *p < '0' || *p > '3' || (p + 1 != end && !is_blank(p[1])))
        return "a line is a key id 0..3 and its key, separated by spaces";
    id = static_cast<unsigned>(*p - '0');
    ++p;
    while (p != end && is_blank(*p)) ++p;
    std::size_t digits = 0;
    while (p + digits != end && hex_digit(p[digits]) >= 0) ++digits;
    const char* after = p + digits;
    while (after != end && is_blank(*after)) ++after;
    bool allowed = false;
    for (std::size_t count : digit_counts) allowed = allowed || (count != 0 && digits == count);
    if (!allowed || after != end) {  // the caller names the rule
        length = 0;
        return nullptr;
    }
    length = digits / 2;
    for (std::size_t i = 0; i < length; ++i)
        bytes[i] = static_cast<std::uint8_t>(hex_digit(p[2 * i]) << 4 | hex_digit(p[2 * i + 1]));
    return nullptr;
}

// Calls each(line_start, line_end, number) for every line that is neither
// blank nor a comment; stops at the first problem each returns.
template <typename Each>
const char* each_line(const char* text, std::size_t size, unsigned& number, Each each) noexcept {
    number = 0;
    const char* end = text + size;
    for (const char* p = text; p < end;) {
        const char* eol = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
        if (eol == nullptr) eol = end;
        ++number;
        const char* start = p;
        while (start != eol && is_blank(*start)) ++start;
        if (std::memchr(p, '\0', static_cast<std::size_t>(eol - p)) != nullptr) return "a line holds a NUL byte";
        if (start != eol && *start != '#')
            if (const char* problem = each(start, eol)) return problem;
        p = eol + 1;
    }
    return nullptr;
}

constexpr char kFingerprintPrefix[] = "snowflake public id key fingerprint";

}  // namespace

const char* parse_public_keys(const char* text, std::size_t size, PublicKeys& keys, unsigned& line) noexcept {
    keys.count = 0;
    if (size > kKeyFileMax) {
        line = 0;
        return "the file is larger than 8192 bytes";
    }
    static constexpr std::size_t kKeyDigits[3] = {32, 48, 64};
    const char* problem = each_line(text, size, line, [&](const char* p, const char* end) -> const char* {
        if (keys.count == kKeyIds) return "the file holds more than 4 keys";
        PublicKey& key = keys.keys[keys.count];
        key.length = 0;
        if (const char* bad = parse_line(p, end, key.id, key.bytes, key.length, kKeyDigits); bad != nullptr)
            return bad;
        if (key.length == 0)
            return "a key is 32, 48 or 64 hexadecimal digits (AES-128, AES-192, AES-256), after its key id";
        for (unsigned i = 0; i < keys.count; ++i)
            if (keys.keys[i].id == key.id) return "two keys have one key id";
        ++keys.count;
        return nullptr;
    });
    if (problem == nullptr && keys.count == 0) {
        line = 0;
        problem = "the file holds no key";
    }
    if (problem != nullptr) {
        std::memset(&keys, 0, sizeof keys);
        keys.count = 0;
    }
    return problem;
}

bool fingerprint_of(const PublicKey& key, std::uint8_t (&out)[kFingerprintBytes]) noexcept {
    std::uint8_t message[sizeof kFingerprintPrefix + 32];
    std::memcpy(message, kFingerprintPrefix, sizeof kFingerprintPrefix);  // with its NUL
    std::memcpy(message + sizeof kFingerprintPrefix, key.bytes, key.length);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_length = 0;
    const bool ok = EVP_Digest(message, sizeof kFingerprintPrefix + key.length, digest, &digest_length,
                               EVP_sha256(), nullptr) == 1 &&
                    digest_length >= kFingerprintBytes;
    if (ok) std::memcpy(out, digest, kFingerprintBytes);
    std::memset(message, 0, sizeof message);
    return ok;
}

namespace {
// pg_snowflake/public_keys: a version line, comments, a line per bound key
// id, and the CRC-32C of everything before the checksum line.
constexpr char kBindingsHeader[] = "snowflake public key bindings 1\n";
}  // namespace

bool parse_bindings(const char* text, std::size_t size, Bindings& bindings) noexcept {
    bindings = Bindings{};
    constexpr std::size_t header = sizeof kBindingsHeader - 1;
    if (size < header + kChecksumLine || std::memcmp(text, kBindingsHeader, header) != 0 ||
        check_checksum_line(text, size) != ChecksumLine::Matches)
        return false;
    static constexpr std::size_t kFingerprintDigits[3] = {2 * kFingerprintBytes, 0, 0};
    unsigned line = 0;
    const char* problem = each_line(text + header, size - header - kChecksumLine, line,
                                    [&](const char* p, const char* end) -> const char* {
        unsigned id = 0;
        std::uint8_t bytes[32];
        std::size_t length = 0;
        if (const char* bad = parse_line(p, end, id, bytes, length, kFingerprintDigits); bad != nullptr)
            return bad;
        if (length == 0 || bindings.bound[id]) return "malformed";
        bindings.bound[id] = true;
        std::memcpy(bindings.fingerprint[id], bytes, kFingerprintBytes);
        return nullptr;
    });
    return problem == nullptr;
}

std::size_t format_bindings(const Bindings& bindings, char* out) noexcept {
    static constexpr char kComment[] =
        "# each key id of public ids and the fingerprint of the key it is bound to\n"
        "# (snowflake_retire_public_key_id() unbinds one; never edit this file)\n";
    static constexpr char kDigits[] = "0123456789abcdef";
    std::size_t n = 0;
    for (const char* part : {kBindingsHeader, kComment}) {
        std::memcpy(out + n, part, std::strlen(part));
        n += std::strlen(part);
    }
    for (unsigned id = 0; id < kKeyIds; ++id) {
        if (!bindings.bound[id]) continue;
        out[n++] = static_cast<char>('0' + id);
        out[n++] = ' ';
        for (std::uint8_t byte : bindings.fingerprint[id]) {
            out[n++] = kDigits[byte >> 4];
            out[n++] = kDigits[byte & 15];
        }
        out[n++] = '\n';
    }
    const std::uint32_t sum = crc32c(out, n);
    std::memcpy(out + n, "crc32c ", 7);
    n += 7;
    for (int shift = 28; shift >= 0; shift -= 4) out[n++] = kDigits[(sum >> shift) & 15];
    out[n++] = '\n';
    out[n] = '\0';
    return n;
}

Binding check_bindings(const PublicKeys& keys, const Bindings& bindings, unsigned& key_id) noexcept {
    Binding result = Binding::Same;
    for (unsigned i = 0; i < keys.count; ++i) {
        const PublicKey& key = keys.keys[i];
        if (!bindings.bound[key.id]) {
            result = Binding::Unbound;
            continue;
        }
        std::uint8_t fingerprint[kFingerprintBytes];
        if (!fingerprint_of(key, fingerprint) ||
            std::memcmp(fingerprint, bindings.fingerprint[key.id], kFingerprintBytes) != 0) {
            key_id = key.id;
            return Binding::Other;
        }
    }
    return result;
}

bool bind_keys(const PublicKeys& keys, Bindings& bindings) noexcept {
    for (unsigned i = 0; i < keys.count; ++i) {
        const PublicKey& key = keys.keys[i];
        if (bindings.bound[key.id]) continue;
        if (!fingerprint_of(key, bindings.fingerprint[key.id])) return false;
        bindings.bound[key.id] = true;
    }
    return true;
}

KeyFileMode key_file_mode(unsigned owner, unsigned mode, unsigned server_user) noexcept {
    if (!S_ISREG(mode)) return KeyFileMode::NotRegular;
    if (owner != server_user && owner != 0) return KeyFileMode::Owner;
    if ((owner == server_user && (mode & (S_IRWXG | S_IRWXO)) != 0) ||
        (owner == 0 && (mode & (S_IWGRP | S_IXGRP | S_IRWXO)) != 0))
        return KeyFileMode::Access;
    return KeyFileMode::Ok;
}

}  // namespace snowflake
