// Socket addresses as text, both ways.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace torii::net {

// "127.0.0.1" / "::1" (no brackets, no port).
std::string address_text(const sockaddr_storage& addr);
uint16_t address_port(const sockaddr_storage& addr);
// "127.0.0.1:8080" / "[::1]:8080".
std::string address_with_port(const sockaddr_storage& addr);
// A unix socket's address for PATH; false when PATH is empty or does not fit.
bool unix_address(std::string_view path, sockaddr_storage& addr, socklen_t& len);

}  // namespace torii::net
