// The cost model's answers as text and Markdown: the advice for one step (gtb advise) and the
// verdict and validation table at the top of gtb report.
#pragma once

#include <string>
#include <vector>

#include "harness/driver/common/blocks.h"
#include "harness/model/model.h"

namespace gtb::verdict {

using cost::Advice;  // computed by the model (harness/model/model.h)

std::string render_text(const Advice& a);
std::string render_markdown(const Advice& a);
json to_json(const Advice& a);

// The verdict and the validation tables for gtb report, as blocks (a level-2 heading first, then its
// paragraphs, tables and lists; the subsections' headings `close`), with a `data` block holding the
// model's answer for the reference step as to_json writes it ("gtb-advice"): none for a file without
// cost terms (one paragraph says to rerun gtb), {"error": why} for terms this version cannot read.
std::vector<blocks::Block> report_verdict_blocks(const json& doc);
// The same verdict in Markdown.
std::string render_report_verdict(const json& doc);

// The verdict's headline, for the end of gtb run: a heading naming the reference step, then per
// backend its predicted time, its three largest predicted causes and the fix with the largest saving
// (as a share of its step: measured where an A/B measured it beyond its noise, predicted otherwise),
// one line each; a backend that cannot say gets one line with the reason. One line saying why when
// the file has no cost terms or they cannot be read. Lines are not cut: the caller fits them.
std::vector<std::string> render_headline(const json& doc);

// The formatters every answer uses: seconds with their unit ("12.3 ms"), a fraction as "12%", and
// as "12.3%" where a whole percent would mislead (a median of 15.4% must not read as 15%).
std::string seconds_text(double s);
std::string pct(double f);
std::string pct1(double f);

}  // namespace gtb::verdict
