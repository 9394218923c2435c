// The entry point every gtb-<family> binary's main() calls. A header of its own, free of the heavy
// ones gtb.h includes, so that the shared main (family_main.cpp), which every family binary compiles
// with its own name, costs a fraction of a second to compile.
#pragma once

#include <string>

namespace gtb {

// Runs the family binary: parses gtb's flags, hands the rest to Google Benchmark, runs the
// selected cases, writes the results JSON. Called by the shared main.
int family_main(int argc, char** argv, const std::string& family);

}  // namespace gtb
