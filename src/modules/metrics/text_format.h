// Pieces of Prometheus's text exposition format shared by every part of
// the metrics page (the server's own counters, the cache zones...).
#pragma once

#include <string>
#include <string_view>

namespace torii::metrics {

// "# HELP name help\n# TYPE name type\n"
void head(std::string& out, const char* name, const char* type, const char* help);

// A label value with \, " and newline escaped, as the format requires.
void label_value(std::string& out, std::string_view v);

}  // namespace torii::metrics
