#include "text.hpp"

#include "layout_names.hpp"

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace snowflake {
namespace {

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// Reads exactly `width` digits.
bool digits(const char*& p, int width, int& value) noexcept {
    value = 0;
    for (int i = 0; i < width; ++i, ++p) {
        if (!is_digit(*p)) return false;
        value = value * 10 + (*p - '0');
    }
    return true;
}

bool literal(const char*& p, char c) noexcept {
    if (*p != c) return false;
    ++p;
    return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
std::int64_t days_from_civil(int year, int month, int day) noexcept {
    year -= month <= 2;
    const int era = year / 400;
    const int yoe = year - era * 400;
    const int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return std::int64_t{era} * 146097 + doe - 719468;
}

int days_in_month(int year, int month) noexcept {
    static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : kDays[month - 1];
}

// Unsigned decimal with overflow check against `max`; at least one digit.
bool unsigned_decimal(const char*& p, std::uint64_t max, std::uint64_t& value,
                      bool& overflow) noexcept {
    value = 0;
    overflow = false;
    const char* start = p;
    for (; is_digit(*p); ++p) {
        const std::uint64_t d = static_cast<std::uint64_t>(*p - '0');
        if (value > (max - d) / 10) overflow = true;
        if (!overflow) value = value * 10 + d;
    }
    return p != start;
}

}  // namespace

ParseResult parse_snowflake(const char* text, std::int64_t& value) noexcept {
    const bool negative = *text == '-';
    const char* p = negative ? text + 1 : text;
    std::uint64_t magnitude = 0;
    bool overflow = false;
    // -2^63 is the one value whose magnitude is above 2^63-1
    if (!unsigned_decimal(p, negative ? kMaxId + 1 : kMaxId, magnitude, overflow) || *p != '\0')
        return ParseResult::Syntax;
    if (overflow) return ParseResult::OutOfRange;
    value = static_cast<std::int64_t>(negative ? 0 - magnitude : magnitude);  // modular: C++20
    return ParseResult::Ok;
}

ParseResult parse_id(const char* text, std::uint64_t& id) noexcept {
    std::int64_t value = 0;
    if (*text == '-') return ParseResult::Syntax;
    const ParseResult result = parse_snowflake(text, value);
    if (result == ParseResult::Ok) id = static_cast<std::uint64_t>(value);
    return result;
}

bool parse_timestamp(const char* text, std::int64_t& unix_ms) noexcept {
    const char* p = text;
    int year, month, day, hour = 0, minute = 0, second = 0, millis = 0;
    if (!digits(p, 4, year) || !literal(p, '-') || !digits(p, 2, month) || !literal(p, '-') ||
        !digits(p, 2, day))
        return false;
    if (*p == ' ' || *p == 'T') {
        ++p;
        if (!digits(p, 2, hour) || !literal(p, ':') || !digits(p, 2, minute)) return false;
        if (literal(p, ':')) {
            if (!digits(p, 2, second)) return false;
            if (literal(p, '.')) {
                int scale = 100;
                if (!is_digit(*p)) return false;
                for (; is_digit(*p); ++p, scale /= 10) millis += (*p - '0') * scale;
            }
        }
    }
    int offset_minutes = 0;
    if (*p == ' ' && (p[1] == 'Z' || p[1] == 'U' || p[1] == '+' || p[1] == '-'))
        ++p;  // '... 00:00:00 UTC', '... 00:00:00 +00', as PostgreSQL accepts
    if (*p == 'Z') {
        ++p;
    } else if (std::strncmp(p, "UTC", 3) == 0) {
        p += 3;
    } else if (*p == '+' || *p == '-') {
        const int sign = *p++ == '-' ? -1 : 1;
        int offset_hours, offset_mins = 0;
        if (!digits(p, 2, offset_hours)) return false;
        if (literal(p, ':') && !digits(p, 2, offset_mins)) return false;
        if (offset_hours > 15 || offset_mins > 59) return false;
        offset_minutes = sign * (offset_hours * 60 + offset_mins);
    }
    if (*p != '\0') return false;
    if (year < 1970 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) ||
        hour > 23 || minute > 59 || second > 59)
        return false;
    const std::int64_t seconds = days_from_civil(year, month, day) * 86400 + hour * 3600 +
                                 minute * 60 + second - offset_minutes * 60;
    unix_ms = seconds * 1000 + millis;
    return unix_ms >= 0;
}

namespace {

// The lease file's format. 5 is the first released (1.0): 1 to 4 were never
// released, and are not read. 6 adds the host name (1.1).
constexpr int kLeaseVersion = 6;

constexpr std::array<std::uint32_t, 256> kCrc32cTable = [] {
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t crc = i;
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (crc & 1 ? 0x82F63B78u : 0);
        table[i] = crc;
    }
    return table;
}();

// Appends to the lease text of length n in buf (kLeaseTextMax bytes), only
// while it fits (it always does: kLeaseTextMax is the longest text of any
// lease); n past the buffer marks a text cut short.
__attribute__((format(printf, 3, 4))) void appendf(char* buf, std::size_t& n, const char* format, ...) noexcept {
    if (n >= kLeaseTextMax) return;
    va_list args;
    va_start(args, format);
    const int written = std::vsnprintf(buf + n, kLeaseTextMax - n, format, args);
    va_end(args);
    n = written < 0 ? kLeaseTextMax : n + static_cast<std::size_t>(written);
}

std::size_t format_lease_text(const Lease& lease, char* buf) noexcept {
    std::size_t n = 0;
    const bool named = lease.host_name[0] != '\0';
    appendf(buf, n, "snowflake lease %d\nepoch_unix_ms %lld\nlease_ms %llu\nclock_ms %llu\n", named ? kLeaseVersion : 5,
            static_cast<long long>(lease.epoch_unix_ms), static_cast<unsigned long long>(lease.lease_ms),
            static_cast<unsigned long long>(lease.clock_ms));
    const auto append = [&](const char* text) { appendf(buf, n, "%s", text); };
    if (lease.worker_id == kNoWorker)
        append("worker_id none\n");
    else
        appendf(buf, n, "worker_id %u\n", lease.worker_id);
    append("fenced");
    if (lease.fenced_count == 0) append(" none");
    for (std::size_t i = 0; i < std::min<std::size_t>(lease.fenced_count, kMaxFenced); ++i)
        appendf(buf, n, " %u", lease.fenced[i]);
    append("\n");
    appendf(buf, n, "directory %llu %llu\n", static_cast<unsigned long long>(lease.directory_host),
            static_cast<unsigned long long>(lease.directory_inode));
    char layout[kLayoutTextMax];
    format_node_layout(lease.layout, layout);
    appendf(buf, n, "layout %s\n", layout);
    if (named) appendf(buf, n, "host_name %.*s\n", static_cast<int>(kHostNameMax), lease.host_name.data());
    if (lease.pending_worker != kNoWorker) appendf(buf, n, "pending %u\n", lease.pending_worker);
    if (n < kLeaseTextMax) appendf(buf, n, "crc32c %08x\n", crc32c(buf, n));
    return n < kLeaseTextMax ? n : 0;
}

// "<name> <decimal up to max>" at p, then `end`.
bool lease_field(const char*& p, const char* name, std::uint64_t max, std::uint64_t& value,
                 char end = '\n') noexcept {
    const std::size_t length = std::strlen(name);
    bool overflow;
    if (std::strncmp(p, name, length) != 0 || p[length] != ' ') return false;
    p += length + 1;
    if (!unsigned_decimal(p, max, value, overflow) || overflow || *p != end) return false;
    ++p;
    return true;
}

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t length) noexcept {
    const auto* bytes = static_cast<const unsigned char*>(data);
    std::uint32_t crc = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < length; ++i) crc = (crc >> 8) ^ kCrc32cTable[(crc ^ bytes[i]) & 0xFF];
    return crc ^ 0xFFFFFFFFu;
}

ChecksumLine check_checksum_line(const char* text, std::size_t length) noexcept {
    if (length < kChecksumLine) return ChecksumLine::Malformed;
    const char* line = text + length - kChecksumLine;
    if (std::strncmp(line, "crc32c ", 7) != 0 || line[kChecksumLine - 1] != '\n') return ChecksumLine::Malformed;
    std::uint32_t stored = 0;
    for (std::size_t i = 7; i < kChecksumLine - 1; ++i) {
        const char c = line[i];
        if (!is_digit(c) && !(c >= 'a' && c <= 'f')) return ChecksumLine::Malformed;
        stored = stored << 4 | static_cast<std::uint32_t>(is_digit(c) ? c - '0' : c - 'a' + 10);
    }
    return crc32c(text, length - kChecksumLine) == stored ? ChecksumLine::Matches : ChecksumLine::Differs;
}

std::size_t format_lease(const Lease& lease, char* buf) noexcept { return format_lease_text(lease, buf); }

bool recordable_host_name(const char* name) noexcept {
    std::size_t length = 0;
    for (; name[length] != '\0'; ++length)
        if (length == kHostNameMax || name[length] <= ' ' || name[length] > '~') return false;
    return length > 0;
}

LeaseText parse_lease(const char* text, std::size_t length, Lease& lease) noexcept {
    char copy[kLeaseTextMax];
    if (length == 0 || length >= sizeof copy) return LeaseText::Malformed;
    std::memcpy(copy, text, length);
    copy[length] = '\0';
    static constexpr char kHeader5[] = "snowflake lease 5\n", kHeader6[] = "snowflake lease 6\n";
    static_assert(kLeaseVersion == 6 && sizeof kHeader5 == sizeof kHeader6);
    const bool named = std::strncmp(copy, kHeader6, sizeof kHeader6 - 1) == 0;
    if (!named && std::strncmp(copy, kHeader5, sizeof kHeader5 - 1) != 0) return LeaseText::Malformed;
    const char* p = copy + sizeof kHeader5 - 1;
    // The text ends with the checksum of what precedes it: checked first, so
    // that any damage to the fields is reported as such.
    const ChecksumLine checksum = check_checksum_line(copy, length);
    if (checksum != ChecksumLine::Matches)
        return checksum == ChecksumLine::Differs ? LeaseText::BadChecksum : LeaseText::Malformed;
    const std::size_t body = length - kChecksumLine;
    copy[body] = '\0';
    Lease parsed{0, 0, 0, kNoWorker};
    std::uint64_t epoch, value;
    bool overflow;
    if (!lease_field(p, "epoch_unix_ms", kMaxId, epoch) || !lease_field(p, "lease_ms", kMaxId, parsed.lease_ms) ||
        !lease_field(p, "clock_ms", kMaxId, parsed.clock_ms))
        return LeaseText::Malformed;
    parsed.epoch_unix_ms = static_cast<std::int64_t>(epoch);
    if (std::strncmp(p, "worker_id none\n", 15) == 0) {
        p += 15;
    } else {
        if (!lease_field(p, "worker_id", kMaxAnyWorker, value)) return LeaseText::Malformed;
        parsed.worker_id = static_cast<std::uint32_t>(value);
    }
    // "fenced none" or "fenced" and up to kMaxFenced ascending worker ids
    if (std::strncmp(p, "fenced", 6) != 0) return LeaseText::Malformed;
    p += 6;
    if (std::strncmp(p, " none\n", 6) == 0) {
        p += 6;
    } else {
        while (*p == ' ') {
            ++p;
            if (parsed.fenced_count == kMaxFenced || !unsigned_decimal(p, kMaxAnyWorker, value, overflow) ||
                overflow || (parsed.fenced_count > 0 && value <= parsed.fenced[parsed.fenced_count - 1]))
                return LeaseText::Malformed;
            parsed.fenced[parsed.fenced_count++] = static_cast<std::uint32_t>(value);
        }
        if (parsed.fenced_count == 0 || *p != '\n') return LeaseText::Malformed;
        ++p;
    }
    if (!lease_field(p, "directory", UINT64_MAX, parsed.directory_host, ' ') ||
        !unsigned_decimal(p, UINT64_MAX, parsed.directory_inode, overflow) || overflow || *p != '\n')
        return LeaseText::Malformed;
    ++p;
    // "layout <snowflake.layout>", as format_node_layout writes it
    const char* problem;
    char* end = std::strchr(const_cast<char*>(p), '\n');
    if (std::strncmp(p, "layout ", 7) != 0 || end == nullptr) return LeaseText::Malformed;
    *end = '\0';
    if (!parse_node_layout(p + 7, parsed.layout, problem)) return LeaseText::Malformed;
    p = end + 1;
    // version 6: "host_name <name>"
    if (named) {
        end = std::strchr(const_cast<char*>(p), '\n');
        if (std::strncmp(p, "host_name ", 10) != 0 || end == nullptr) return LeaseText::Malformed;
        *end = '\0';
        if (!recordable_host_name(p + 10)) return LeaseText::Malformed;
        std::memcpy(parsed.host_name.data(), p + 10, static_cast<std::size_t>(end - (p + 10)));
        p = end + 1;
    }
    if (std::strncmp(p, "pending ", 8) == 0) {
        if (!lease_field(p, "pending", kMaxAnyWorker, value)) return LeaseText::Malformed;
        parsed.pending_worker = static_cast<std::uint32_t>(value);
    }
    if (static_cast<std::size_t>(p - copy) != body) return LeaseText::Malformed;
    // Exactly what format_lease writes (wrote): no leading zeros, nothing after a NUL.
    char written[kLeaseTextMax];
    if (format_lease_text(parsed, written) != length ||
        std::memcmp(written, text, length) != 0)
        return LeaseText::Malformed;
    lease = parsed;
    return LeaseText::Ok;
}

LeaseRecord lease_record(const Lease& lease) noexcept {
    LeaseRecord record;
    std::memset(&record, 0, sizeof record);
    record.version = lease.pending_worker == kNoWorker ? 1 : kLeaseRecordVersion;
    record.worker_id = lease.worker_id;
    record.epoch_unix_ms = lease.epoch_unix_ms;
    record.lease_ms = lease.lease_ms;
    record.clock_ms = lease.clock_ms;
    record.unit_ms = lease.layout.unit_ms;
    record.time_bits = static_cast<std::uint8_t>(lease.layout.time_bits);
    record.worker_bits = static_cast<std::uint8_t>(lease.layout.worker_bits);
    record.sequence_bits = static_cast<std::uint8_t>(lease.layout.sequence_bits);
    record.sequence_above_worker = lease.layout.sequence_above_worker ? 1 : 0;
    record.fenced_count = std::min<std::uint32_t>(lease.fenced_count, kMaxFenced);
    for (std::uint32_t i = 0; i < record.fenced_count; ++i) record.fenced[i] = lease.fenced[i];
    record.pending_worker = lease.pending_worker;
    return record;
}

bool lease_of_record(const void* data, std::size_t length, Lease& lease) noexcept {
    LeaseRecord record;
    std::memset(&record, 0, sizeof record);
    if (length != sizeof record && length != kLeaseRecordV1Size) return false;
    std::memcpy(&record, data, length);
    if (length == kLeaseRecordV1Size) {
        if (record.version != 1) return false;
        record.pending_worker = kNoWorker;
    } else if (record.version != kLeaseRecordVersion || record.zero != 0 ||
               (record.pending_worker > kMaxAnyWorker && record.pending_worker != kNoWorker)) {
        return false;
    }
    if (record.fenced_count > kMaxFenced || record.sequence_above_worker > 1) return false;
    const Layout layout = make_layout(record.unit_ms, record.time_bits, record.worker_bits, record.sequence_bits,
                                      record.sequence_above_worker == 1);
    char text[kLayoutTextMax];
    Layout checked;
    const char* problem;
    format_node_layout(layout, text);
    if (!parse_node_layout(text, checked, problem) || !(checked == layout)) return false;
    Lease parsed{record.epoch_unix_ms, record.lease_ms, record.clock_ms, record.worker_id};
    parsed.layout = layout;
    parsed.fenced_count = record.fenced_count;
    for (std::uint32_t i = 0; i < record.fenced_count; ++i) parsed.fenced[i] = record.fenced[i];
    parsed.pending_worker = record.pending_worker;
    lease = parsed;
    return true;
}

bool PendingRelease::operator==(const PendingRelease& other) const noexcept {
    return worker_id == other.worker_id && fencing_epoch == other.fencing_epoch &&
           std::strcmp(holder, other.holder) == 0 && used_until_ms == other.used_until_ms;
}

namespace {
bool is_holder(const char* holder) noexcept {
    std::size_t i = 0;
    for (; i < sizeof PendingRelease::holder && holder[i] != '\0'; ++i)
        if (!is_digit(holder[i]) && !(holder[i] >= 'a' && holder[i] <= 'f')) return false;
    return i == sizeof PendingRelease::holder - 1;
}
}  // namespace

std::size_t format_release(const PendingRelease& release, char* buf) noexcept {
    if (release.worker_id > kMaxAnyWorker || release.fencing_epoch < 0 || release.used_until_ms < 0 ||
        !is_holder(release.holder))
        return 0;
    std::size_t n = 0;
    appendf(buf, n, "snowflake registry release 1\nworker_id %u\nfencing_epoch %lld\nholder %s\nused_until_ms %lld\n",
            release.worker_id, static_cast<long long>(release.fencing_epoch), release.holder,
            static_cast<long long>(release.used_until_ms));
    appendf(buf, n, "crc32c %08x\n", crc32c(buf, n));
    return n;
}

bool parse_release(const char* text, std::size_t length, PendingRelease& release) noexcept {
    char copy[kReleaseTextMax];
    if (length == 0 || length >= sizeof copy || check_checksum_line(text, length) != ChecksumLine::Matches)
        return false;
    std::memcpy(copy, text, length);
    copy[length] = '\0';
    PendingRelease parsed;
    std::uint64_t worker_id, fencing_epoch, used_until;
    const char* p = copy;
    static constexpr char kHeader[] = "snowflake registry release 1\n";
    if (std::strncmp(p, kHeader, sizeof kHeader - 1) != 0) return false;
    p += sizeof kHeader - 1;
    if (!lease_field(p, "worker_id", kMaxAnyWorker, worker_id) ||
        !lease_field(p, "fencing_epoch", INT64_MAX, fencing_epoch) || std::strncmp(p, "holder ", 7) != 0)
        return false;
    p += 7;
    const char* end = std::strchr(p, '\n');
    if (end == nullptr || end - p != static_cast<std::ptrdiff_t>(sizeof parsed.holder - 1)) return false;
    std::memcpy(parsed.holder, p, sizeof parsed.holder - 1);
    p = end + 1;
    if (!lease_field(p, "used_until_ms", INT64_MAX, used_until)) return false;
    parsed.worker_id = static_cast<std::uint32_t>(worker_id);
    parsed.fencing_epoch = static_cast<std::int64_t>(fencing_epoch);
    parsed.used_until_ms = static_cast<std::int64_t>(used_until);
    // Exactly what format_release writes: no leading zeros, nothing else.
    char written[kReleaseTextMax];
    if (format_release(parsed, written) != length || std::memcmp(written, text, length) != 0) return false;
    release = parsed;
    return true;
}

}  // namespace snowflake
