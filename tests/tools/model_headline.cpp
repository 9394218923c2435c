// Prints the verdict's headline (the lines gtb run ends with) for a results file, for
// tests/tools/model_outputs.sh: gtb prints it only after measuring, so this reads it from a file.
#include <cstdio>
#include <exception>
#include <string>

#include "harness/document/results.h"
#include "harness/driver/common/render_verdict.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: model_headline RESULTS.json\n");
    return 2;
  }
  try {
    for (const std::string& line : gtb::verdict::render_headline(gtb::load_document(argv[1])))
      std::printf("%s\n", line.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "model_headline: %s\n", e.what());
    return 2;
  }
  return 0;
}
