// Socket addresses as text, both ways.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

namespace torii::net {

// "127.0.0.1" / "::1" (no brackets, no port).
std::string address_text(const sockaddr_storage& addr);
uint16_t address_port(const sockaddr_storage& addr);
// "127.0.0.1:8080" / "[::1]:8080".
std::string address_with_port(const sockaddr_storage& addr);

}  // namespace torii::net
