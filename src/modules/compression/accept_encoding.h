// Accept-Encoding (RFC 9110 12.5.3) read into the q-values of the codings
// torii can produce, and the choice among those the server offers.
#pragma once

#include <cstdint>
#include <string_view>

namespace torii::compression {

enum class Coding : uint8_t { identity, gzip, br, zstd };

std::string_view coding_name(Coding c);  // the Content-Encoding token

// q-values in thousandths (0..1000); -1 where the coding is not listed.
struct AcceptEncoding {
  int gzip = -1;
  int br = -1;
  int zstd = -1;
  int any = -1;  // "*": every coding not listed by name
  // The q-value that applies to `c`: its own, else "*", else 0 (not listed:
  // not acceptable).
  int quality(Coding c) const;
};

// Parses one or more comma-separated field values (several Accept-Encoding
// lines are joined by the caller with ','). Names are case-insensitive. An
// element with a malformed q-value counts as q=0, as nginx treats it: a
// client that cannot write its preference does not get a coding.
AcceptEncoding parse_accept_encoding(std::string_view value);

// Codings the response may use, in the server's order of preference.
struct Offer {
  Coding codings[3];
  int count = 0;
};

// The coding to use: the highest client q-value above 0 among those
// offered; among equal q-values the first in the server's order. identity
// when none is acceptable.
Coding choose(const AcceptEncoding& ae, const Offer& offer);

}  // namespace torii::compression
