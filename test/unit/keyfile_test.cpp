// The public id key file's parser, the key ids' bindings and the key file's
// ownership and permission rule (PostgreSQL's for ssl_key_file).
#include "../../src/core/keyfile.hpp"
#include "../../src/core/text.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace snowflake {
namespace {

const std::string k128 = "2B7E151628AED2A6ABF7158809CF4F3C";
const std::string k192 = "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F";
const std::string k256 = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

const char* parse(const std::string& text, PublicKeys& keys, unsigned& line) {
    return parse_public_keys(text.data(), text.size(), keys, line);
}

TEST(KeyFile, ParsesKeysCommentsAndBlankLines) {
    PublicKeys keys;
    unsigned line = 0;
    const std::string text = "# keys of public ids\n\n1\t" + k256 + "  \r\n  0 " + k128 + "\n# old\n2 " + k192 + "\n3 " +
                             "2b7e151628aed2a6abf7158809cf4f3c";
    ASSERT_EQ(parse(text, keys, line), nullptr);
    ASSERT_EQ(keys.count, 4u);
    EXPECT_EQ(keys.keys[0].id, 1u);  // the first encodes
    EXPECT_EQ(keys.keys[0].length, 32u);
    EXPECT_EQ(keys.keys[0].bytes[31], 0x1f);
    EXPECT_EQ(keys.keys[1].id, 0u);
    EXPECT_EQ(keys.keys[1].length, 16u);
    EXPECT_EQ(keys.keys[1].bytes[0], 0x2b);
    EXPECT_EQ(keys.keys[2].length, 24u);
    EXPECT_EQ(std::memcmp(keys.keys[3].bytes, keys.keys[1].bytes, 16), 0);  // either case
}

TEST(KeyFile, RefusesBadLinesNamingTheLine) {
    const struct {
        std::string text;
        unsigned line;
        const char* rule;
    } bad[] = {
        {"0 " + k128.substr(0, 31) + "G", 1, "a key is 32, 48 or 64"},
        {"# c\n0 " + k128.substr(0, 30), 2, "a key is 32, 48 or 64"},
        {"0 " + k128 + "01", 1, "a key is 32, 48 or 64"},
        {"0 " + k128 + " x", 1, "a key is 32, 48 or 64"},
        {"0 " + k128 + " # comment", 1, "a key is 32, 48 or 64"},
        {"0", 1, "a key is 32, 48 or 64"},
        {"4 " + k128, 1, "a line is a key id 0..3"},
        {"00 " + k128, 1, "a line is a key id 0..3"},
        {"0:" + k128, 1, "a line is a key id 0..3"},
        {k128, 1, "a line is a key id 0..3"},
        {"0 " + k128 + "\n\n0 " + k256, 3, "two keys have one key id"},
        {"0 " + k128 + "\n1 " + k128 + "\n2 " + k128 + "\n3 " + k128 + "\n0 " + k128, 5, "more than 4 keys"},
        {std::string("0 ") + k128 + '\0' + "\n", 1, "NUL"},
        {"# nothing\n\n", 0, "holds no key"},
        {"", 0, "holds no key"},
        {std::string(8193, '#'), 0, "larger than 8192"},
    };
    for (const auto& c : bad) {
        PublicKeys keys;
        unsigned line = 99;
        const char* problem = parse(c.text, keys, line);
        ASSERT_NE(problem, nullptr) << c.text;
        EXPECT_NE(std::strstr(problem, c.rule), nullptr) << problem;
        EXPECT_EQ(line, c.line) << c.text;
        EXPECT_EQ(keys.count, 0u);
        EXPECT_EQ(std::strstr(problem, "2B7E"), nullptr);
    }
}

TEST(KeyFile, BindsKeyIdsAndRefusesAnotherKey) {
    PublicKeys keys;
    unsigned line = 0;
    ASSERT_EQ(parse("0 " + k128 + "\n1 " + k256, keys, line), nullptr);
    Bindings bindings{};
    unsigned key_id = 9;
    EXPECT_EQ(check_bindings(keys, bindings, key_id), Binding::Unbound);
    ASSERT_TRUE(bind_keys(keys, bindings));
    EXPECT_EQ(check_bindings(keys, bindings, key_id), Binding::Same);

    // written and read back; the text holds no key
    char text[kBindingsTextMax];
    const std::size_t length = format_bindings(bindings, text);
    EXPECT_EQ(std::strstr(text, "2b7e"), nullptr);
    EXPECT_EQ(std::strstr(text, "000102"), nullptr);
    Bindings again;
    ASSERT_TRUE(parse_bindings(text, length, again));
    EXPECT_EQ(std::memcmp(&again, &bindings, sizeof bindings), 0);

    // key id 1 with another key: refused, naming key id 1
    PublicKeys other;
    ASSERT_EQ(parse("0 " + k128 + "\n1 " + k192, other, line), nullptr);
    EXPECT_EQ(check_bindings(other, again, key_id), Binding::Other);
    EXPECT_EQ(key_id, 1u);
    // a new key id beside bound ones: Unbound, and binding it keeps the others
    PublicKeys more;
    ASSERT_EQ(parse("2 " + k192 + "\n0 " + k128, more, line), nullptr);
    EXPECT_EQ(check_bindings(more, again, key_id), Binding::Unbound);
    ASSERT_TRUE(bind_keys(more, again));
    EXPECT_EQ(check_bindings(keys, again, key_id), Binding::Same);
    // retired (unbound): another key may take it
    again.bound[1] = false;
    EXPECT_EQ(check_bindings(other, again, key_id), Binding::Unbound);

    // the file: its version first, its checksum last
    const std::string written(text, length);
    EXPECT_EQ(written.rfind("snowflake public key bindings 1\n", 0), 0u) << written;
    EXPECT_EQ(written.substr(length - 16, 7), "crc32c ");
    // malformed lines, under a good version line and checksum, are refused
    const auto file = [](const std::string& lines) {
        std::string body = "snowflake public key bindings 1\n" + lines;
        char sum[17];
        snprintf(sum, sizeof sum, "crc32c %08x\n", crc32c(body.data(), body.size()));
        return body + sum;
    };
    const std::string zero = "0 00000000000000000000000000000000\n";
    ASSERT_TRUE(parse_bindings(file(zero).data(), file(zero).size(), again));
    for (const std::string& bad : {file("0 00\n"), file("5 00000000000000000000000000000000\n"), file(zero + zero)})
        EXPECT_FALSE(parse_bindings(bad.data(), bad.size(), again)) << bad;
    // a damaged file, another version, no checksum: refused
    std::string damaged = file(zero);
    damaged[damaged.find("0 0") + 2] = '1';
    std::string version2 = file(zero);
    version2[version2.find('1')] = '2';
    const std::string unsummed = "snowflake public key bindings 1\n" + zero;
    for (const std::string& bad : {damaged, version2, unsummed, zero})
        EXPECT_FALSE(parse_bindings(bad.data(), bad.size(), again)) << bad;
}

TEST(KeyFile, OwnershipAndPermissionsAsSslKeyFile) {
    const unsigned self = 1000;
    EXPECT_EQ(key_file_mode(self, S_IFREG | 0600, self), KeyFileMode::Ok);
    EXPECT_EQ(key_file_mode(self, S_IFREG | 0400, self), KeyFileMode::Ok);
    EXPECT_EQ(key_file_mode(self, S_IFREG | 0640, self), KeyFileMode::Access);
    EXPECT_EQ(key_file_mode(self, S_IFREG | 0604, self), KeyFileMode::Access);
    EXPECT_EQ(key_file_mode(self, S_IFREG | 0610, self), KeyFileMode::Access);
    EXPECT_EQ(key_file_mode(0, S_IFREG | 0640, self), KeyFileMode::Ok);
    EXPECT_EQ(key_file_mode(0, S_IFREG | 0600, self), KeyFileMode::Ok);
    EXPECT_EQ(key_file_mode(0, S_IFREG | 0660, self), KeyFileMode::Access);
    EXPECT_EQ(key_file_mode(0, S_IFREG | 0644, self), KeyFileMode::Access);
    EXPECT_EQ(key_file_mode(0, S_IFREG | 0650, self), KeyFileMode::Access);
    EXPECT_EQ(key_file_mode(1001, S_IFREG | 0600, self), KeyFileMode::Owner);
    EXPECT_EQ(key_file_mode(self, S_IFDIR | 0700, self), KeyFileMode::NotRegular);
}

}  // namespace
}  // namespace snowflake
