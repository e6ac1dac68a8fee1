// The userid cookie's bytes as nginx makes them: 16 bytes (four 32-bit
// words in memory order) in standard base64, 24 characters ending "==",
// of which only the first 22 are read back (the 23rd may be a mark).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace torii::userid {

// Appends the 24-character base64 form of the four words' bytes.
void encode_uid(const uint32_t uid[4], std::string& out);

// Decodes the first 22 characters of `value` into the four words; false
// when fewer are there or one is not base64.
bool decode_uid(std::string_view value, uint32_t uid[4]);

// "NAME=" and the words as nginx prints them ("%08X" each, host order):
// $uid_got and $uid_set.
void append_uid_text(std::string_view name, const uint32_t uid[4], std::string& out);

// nginx's cookie date: "Thu, 31-Dec-37 23:55:55 GMT" (two-digit years up
// to 2037, four after).
void append_cookie_time(int64_t unix_seconds, std::string& out);

}  // namespace torii::userid
