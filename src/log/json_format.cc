#include "log/json_format.h"

namespace torii::log {

namespace {

// Numbers are bare (they always have a value); everything a client or an
// upstream can shape is a string. The upstream times are strings too: a
// retried request has a list ("0.001, 0.250").
constexpr const char* kJsonFormat =
    "{\"time\":\"$time_iso8601\","
    "\"remote_addr\":\"$remote_addr\","
    "\"remote_user\":\"$remote_user\","
    "\"scheme\":\"$scheme\","
    "\"host\":\"$host\","
    "\"request_method\":\"$request_method\","
    "\"request_uri\":\"$request_uri\","
    "\"server_protocol\":\"$server_protocol\","
    "\"status\":$status,"
    "\"body_bytes_sent\":$body_bytes_sent,"
    "\"request_length\":$request_length,"
    "\"request_time\":$request_time,"
    "\"http_referer\":\"$http_referer\","
    "\"http_user_agent\":\"$http_user_agent\","
    "\"http_x_forwarded_for\":\"$http_x_forwarded_for\","
    "\"upstream_addr\":\"$upstream_addr\","
    "\"upstream_status\":\"$upstream_status\","
    "\"upstream_connect_time\":\"$upstream_connect_time\","
    "\"upstream_header_time\":\"$upstream_header_time\","
    "\"upstream_response_time\":\"$upstream_response_time\"}";

}  // namespace

std::shared_ptr<config::LogFormat> builtin_json_format() {
  auto fmt = std::make_shared<config::LogFormat>();
  fmt->name = "json";
  fmt->format = *config::compile_template(kJsonFormat);
  fmt->json_escape = true;
  fmt->builtin = true;
  return fmt;
}

}  // namespace torii::log
