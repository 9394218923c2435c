// libFuzzer target: the results loader and everything that reads a loaded file must never crash.
#include <cstddef>
#include <cstdint>
#include <exception>

#include "harness/driver/common/compare_core.h"
#include "harness/driver/report/render_report.h"
#include "harness/document/results.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const gtb::json doc = gtb::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  try {
    // The same input as a compare config: its parser must reject, not crash.
    (void)gtb::compare::Config::from_json(doc);
  } catch (const std::exception&) {
  }
  try {
    gtb::validate_document(doc);
  } catch (const std::exception&) {
    return 0;  // refused with a message: what the loader is for
  }
  try {
    (void)gtb::records_of(doc);
    (void)gtb::report::render_markdown(doc, "fuzz.json");
    gtb::compare::Config cfg;
    cfg.settings.resamples = 50;  // keeps each input fast; the statistics are not under test here
    const auto res = gtb::compare::compare_documents(doc, doc, cfg);
    (void)gtb::compare::render_text(res);
    (void)gtb::compare::render_markdown(res);
    (void)gtb::compare::render_json(res).dump();
  } catch (const std::exception&) {
    // A validated file may still be refused later (e.g. duplicate records); a message is fine.
  }
  return 0;
}
