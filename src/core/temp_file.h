// Temporary files laid out as nginx lays them out (ngx_create_temp_file):
// DIR/L1/L2/L3/NNNNNNNNNN, a ten-digit number whose last digits name the
// level folders (ngx_create_hashed_filename) of a `*_temp_path DIR L1 L2 L3`
// line, so no folder gathers every file. Folders are made when missing.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace torii::core {

// The LEVEL arguments of a *_temp_path line, in order; 0 ends them.
using TempLevels = std::array<uint8_t, 3>;

// "DIR/3/12/0000000123" for levels {1, 2} and n = 123.
std::string hashed_temp_name(std::string_view dir, const TempLevels& levels, uint32_t n);

// The next number of the process's temporary files.
uint32_t next_temp_number();

// Makes DIR and the level folders above `name` (a hashed_temp_name under
// DIR) where they are missing. False with errno when one cannot be made.
bool make_temp_folders(std::string_view dir, const TempLevels& levels, const std::string& name);

// A new file under DIR, named by hashed_temp_name, opened O_EXCL with mode
// 0600 (folders made on demand): its descriptor, `name` set; -1 with errno
// on failure (`name` is then the path that failed).
int create_temp_file(const std::string& dir, const TempLevels& levels, std::string& name);

}  // namespace torii::core
