// The families this build knows, in run order, and where their binaries are.
#pragma once

#include <string>
#include <vector>

namespace gtb::driver {

std::vector<std::string> known_families();
// Parses "a,b" into families, keeping the known order ("": every family, as --family not given);
// throws std::invalid_argument naming an unknown family and the known ones.
std::vector<std::string> select_families(const std::string& csv);
// Path of gtb-<family>: GTB_BIN_DIR if set, else the driver's own folder.
std::string family_binary(const std::string& family);

}  // namespace gtb::driver
