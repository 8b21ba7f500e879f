// The public id key file's parser (parse_public_keys) and the bindings'
// (parse_bindings) on any bytes: an accepted key file holds 1 to 4 keys of
// 16, 24 or 32 bytes under distinct key ids 0..3, and its keys written back
// canonically parse to the same keys; a refused one leaves no key and names
// a line of the input. Accepted bindings written back read the same.
#include "fuzz.hpp"

#include "../../src/core/keyfile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // the exact bytes, in a block of their size: a read past the end is an ASan error
    std::unique_ptr<char[]> bytes(new char[size ? size : 1]);
    std::memcpy(bytes.get(), data, size);
    const char* text = bytes.get();

    snowflake::PublicKeys keys;
    unsigned line = 0;
    const char* problem = snowflake::parse_public_keys(text, size, keys, line);
    if (problem != nullptr) {
        FUZZ_CHECK(keys.count == 0);
        unsigned lines = 1;
        for (std::size_t i = 0; i < size; ++i) lines += text[i] == '\n';
        FUZZ_CHECK(line <= lines);
    } else {
        FUZZ_CHECK(keys.count >= 1 && keys.count <= snowflake::kKeyIds);
        std::string canonical = "# canonical\n";
        for (unsigned i = 0; i < keys.count; ++i) {
            const snowflake::PublicKey& key = keys.keys[i];
            FUZZ_CHECK(key.id < snowflake::kKeyIds);
            FUZZ_CHECK(key.length == 16 || key.length == 24 || key.length == 32);
            for (unsigned j = 0; j < i; ++j) FUZZ_CHECK(keys.keys[j].id != key.id);
            canonical += static_cast<char>('0' + key.id);
            canonical += ' ';
            for (std::size_t b = 0; b < key.length; ++b) {
                canonical += "0123456789ABCDEF"[key.bytes[b] >> 4];
                canonical += "0123456789ABCDEF"[key.bytes[b] & 15];
            }
            canonical += '\n';
        }
        snowflake::PublicKeys again;
        FUZZ_CHECK(snowflake::parse_public_keys(canonical.data(), canonical.size(), again, line) == nullptr);
        FUZZ_CHECK(again.count == keys.count);
        for (unsigned i = 0; i < keys.count; ++i)
            FUZZ_CHECK(again.keys[i].id == keys.keys[i].id && again.keys[i].length == keys.keys[i].length &&
                       std::memcmp(again.keys[i].bytes, keys.keys[i].bytes, keys.keys[i].length) == 0);
        snowflake::Bindings bindings{};
        unsigned key_id = 9;
        FUZZ_CHECK(snowflake::bind_keys(keys, bindings));
        FUZZ_CHECK(snowflake::check_bindings(keys, bindings, key_id) == snowflake::Binding::Same);
    }

    snowflake::Bindings bindings;
    if (snowflake::parse_bindings(text, size, bindings)) {
        char out[snowflake::kBindingsTextMax];
        const std::size_t length = snowflake::format_bindings(bindings, out);
        FUZZ_CHECK(length < sizeof out);
        snowflake::Bindings again;
        FUZZ_CHECK(snowflake::parse_bindings(out, length, again));
        FUZZ_CHECK(std::memcmp(&again, &bindings, sizeof bindings) == 0);
    }
    return 0;
}
