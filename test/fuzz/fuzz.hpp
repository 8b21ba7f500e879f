// Shared by the libFuzzer targets of test/fuzz (make fuzz): the input as a C
// string and a check that stops the fuzzer, with the failed condition.
#pragma once
#include "../../src/core/codec.hpp"

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

// The fuzz data and a NUL, in a block of exactly that size: a read past the
// NUL is an ASan error.
struct FuzzText {
    std::unique_ptr<char[]> bytes;
    FuzzText(const std::uint8_t* data, std::size_t size) : bytes(new char[size + 1]) {
        std::memcpy(bytes.get(), data, size);
        bytes[size] = '\0';
    }
    const char* c_str() const { return bytes.get(); }
};

#define FUZZ_CHECK(condition)                                                              \
    do {                                                                                   \
        if (!(condition)) {                                                                \
            std::fprintf(stderr, "FUZZ_CHECK failed: %s at %s:%d\n", #condition, __FILE__, \
                         __LINE__);                                                        \
            __builtin_trap();                                                              \
        }                                                                                  \
    } while (0)

// A fixed-width text form (base32, base62): `normal` maps a character to its
// canonical one, or 0 if the form refuses it. The text is accepted exactly when
// it has `length` characters of the form and, normalized, sorts at most as
// high as the form of 2^63-1; then the form of the value is the normalized text.
template <typename Normal, typename To, typename From>
void check_text_form(const char* text, std::size_t length, Normal normal, To to, From from) {
    char normalized[32] = {}, max_text[32], form[32];
    bool well_formed = std::strlen(text) == length;
    for (std::size_t i = 0; well_formed && i < length; ++i)
        well_formed = (normalized[i] = normal(text[i])) != 0;
    to(snowflake::kMaxId, max_text);
    std::uint64_t id = 0;
    const snowflake::ParseResult result = from(text, id);
    if (!well_formed) {
        FUZZ_CHECK(result == snowflake::ParseResult::Syntax);
    } else if (std::strcmp(normalized, max_text) > 0) {
        FUZZ_CHECK(result == snowflake::ParseResult::OutOfRange);
    } else {
        FUZZ_CHECK(result == snowflake::ParseResult::Ok);
        FUZZ_CHECK(id <= snowflake::kMaxId);
        to(id, form);
        FUZZ_CHECK(std::strcmp(form, normalized) == 0);
        std::uint64_t again = 0;
        FUZZ_CHECK(from(form, again) == snowflake::ParseResult::Ok && again == id);
    }
}
