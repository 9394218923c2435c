// gtb compare's configuration: thresholds, per-record overrides and ignores, from a JSON object.
#include "harness/driver/common/compare_core.h"

#include <fnmatch.h>

#include <cmath>
#include <stdexcept>

namespace gtb::compare {

namespace {

double number_in(const json& j, const char* key, const std::string& where) {
  if (!j.at(key).is_number()) throw std::runtime_error(where + ": \"" + key + "\" must be a number");
  const double v = j.at(key).get<double>();
  if (!std::isfinite(v)) throw std::runtime_error(where + ": \"" + key + "\" must be finite");
  return v;
}

void check_threshold(double t, const std::string& where) {
  if (!(t > 0.0 && t < 1.0)) throw std::runtime_error(where + ": threshold must be in (0, 1), e.g. 0.05 for 5%");
}

// A threshold given as a number, or {"threshold": x, "ignore": b}.
void parse_override(const json& v, const std::string& where, std::optional<double>& threshold, bool& ignore) {
  if (v.is_number()) {
    threshold = v.get<double>();
    check_threshold(*threshold, where);
    return;
  }
  if (!v.is_object()) throw std::runtime_error(where + ": expected a number or an object");
  for (const auto& [k, x] : v.items()) {
    if (k == "threshold") {
      threshold = number_in(v, "threshold", where);
      check_threshold(*threshold, where);
    } else if (k == "ignore") {
      if (!x.is_boolean()) throw std::runtime_error(where + ": \"ignore\" must be true or false");
      ignore = x.get<bool>();
    } else {
      throw std::runtime_error(where + ": unknown key \"" + k + "\" (expected threshold, ignore)");
    }
  }
}

bool glob_match(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}
}  // namespace

Config Config::from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error("compare config: expected a JSON object");
  Config c;
  Settings& s = c.settings;
  for (const auto& [k, v] : j.items()) {
    const std::string where = "compare config: \"" + k + "\"";
    if (k == "threshold") {
      s.threshold = number_in(j, "threshold", "compare config");
      check_threshold(s.threshold, where);
    } else if (k == "confidence") {
      s.confidence = number_in(j, "confidence", "compare config");
      if (!(s.confidence >= 0.5 && s.confidence < 1.0)) throw std::runtime_error(where + ": must be in [0.5, 1)");
    } else if (k == "alpha") {
      s.alpha = number_in(j, "alpha", "compare config");
      if (!(s.alpha > 0.0 && s.alpha <= 0.5)) throw std::runtime_error(where + ": must be in (0, 0.5]");
    } else if (k == "min_samples" || k == "resamples") {
      if (!v.is_number_integer()) throw std::runtime_error(where + ": must be an integer");
      const auto n = v.get<std::int64_t>();
      if (k == "min_samples") {
        if (n < 2 || n > 100000) throw std::runtime_error(where + ": must be in [2, 100000]");
        s.min_samples = static_cast<int>(n);
      } else {
        if (n < 100 || n > 1000000) throw std::runtime_error(where + ": must be in [100, 1000000]");
        s.resamples = static_cast<int>(n);
      }
    } else if (k == "run_confidence") {
      s.run_confidence = number_in(j, "run_confidence", "compare config");
      if (!(s.run_confidence >= 0.5 && s.run_confidence < 1.0)) throw std::runtime_error(where + ": must be in [0.5, 1)");
    } else if (k == "within_run_floor") {
      s.within_run_floor = number_in(j, "within_run_floor", "compare config");
      if (!(s.within_run_floor >= 0.0 && s.within_run_floor <= 5.0)) throw std::runtime_error(where + ": must be in [0, 5]");
    } else if (k == "single_run_threshold") {
      s.single_run_threshold = number_in(j, "single_run_threshold", "compare config");
      check_threshold(s.single_run_threshold, where);
    } else if (k == "seed") {
      if (!v.is_number_unsigned()) throw std::runtime_error(where + ": must be a non-negative integer");
      s.seed = v.get<std::uint64_t>();
    } else if (k == "families" || k == "records") {
      if (!v.is_object()) throw std::runtime_error(where + ": expected an object");
      for (const auto& [name, ov] : v.items()) {
        std::optional<double> t;
        bool ignore = false;
        parse_override(ov, where + " \"" + name + "\"", t, ignore);
        if (k == "families") {
          if (t) c.family_thresholds.emplace_back(name, *t);
          c.family_ignore.emplace_back(name, ignore);
        } else {
          c.rules.push_back({name, t, ignore});
        }
      }
    } else if (k == "comment" || k == "$comment") {
      // free text for people
    } else {
      throw std::runtime_error("compare config: unknown key \"" + k +
                               "\" (expected threshold, confidence, alpha, min_samples, resamples, seed, "
                               "single_run_threshold, run_confidence, within_run_floor, families, records, comment)");
    }
  }
  return c;
}

double Config::threshold_for(const Record& r) const {
  for (const auto& rule : rules)
    if (rule.threshold && glob_match(rule.pattern, r.id)) return *rule.threshold;
  for (const auto& [f, t] : family_thresholds)
    if (f == r.family) return t;
  return settings.threshold;
}

bool Config::ignored(const Record& r) const {
  for (const auto& rule : rules)
    if (glob_match(rule.pattern, r.id)) {
      if (rule.ignore) return true;
      if (rule.threshold) return false;  // the first matching rule decides
    }
  for (const auto& [f, ig] : family_ignore)
    if (f == r.family && ig) return true;
  return false;
}

}  // namespace gtb::compare
