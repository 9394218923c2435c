// gtb diagnose against Holistic Trace Analysis: HTA's figures for each shared trace (fixtures written by
// ci/hta-trace-yardstick.py) beside gtb's, within 2% of a step or with the documented difference.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "harness/driver/diagnose/diagnose_symptoms.h"
#include "harness/driver/diagnose/diagnose_trace.h"

using gtb::json;
using namespace gtb::diagnose;

namespace {

const std::string kTraces = std::string(GTB_FIXTURE_DIR) + "/traces/";

json hta(const std::string& name) {
  std::ifstream in(kTraces + "hta/" + name + ".json");
  EXPECT_TRUE(in) << "missing HTA fixture for " << name;
  return json::parse(in);
}

double d(const json& j, std::initializer_list<const char*> path) {
  const json* c = &j;
  for (const char* k : path) c = &c->at(k);
  return c->get<double>();
}

// HTA's kernel-type split names overlaps ("COMPUTATION overlapping COMMUNICATION"); the union of one
// type is every row whose name mentions it.
double hta_type_union(const json& h, const std::string& type) {
  double s = 0;
  for (const auto& r : h["kernel_types"])
    if (r["kernel_type"].get<std::string>().find(type) != std::string::npos) s += r["sum"].get<double>();
  return s;
}

class Agreement : public ::testing::TestWithParam<std::string> {};

TEST_P(Agreement, BusyIdleSplitAndCopies) {
  const std::string name = GetParam();
  const json h = hta(name);
  const json g = diagnose_trace(read_trace(kTraces + name + ".json.gz"), name);
  // Copies are exact against Python's own JSON reader, by event name.
  std::map<std::string, std::pair<double, double>> ours;
  if (g["overall"].contains("gpu"))
    for (const auto& c : g["overall"]["gpu"]["copies"]) {
      auto& o = ours[c["event_name"].get<std::string>()];
      o.first += c["count"].get<double>();
      o.second += c["bytes"].is_number() ? c["bytes"].get<double>() : 0.0;
    }
  for (const auto& [ev, r] : h["copies_reference"].items()) {
    EXPECT_EQ(ours[ev].first, r["count"].get<double>()) << name << " " << ev;
    // ROCm's copy events carry no bytes (the reference reads 0); gtb takes them from the runtime call.
    if (r["bytes"].get<double>() > 0) {
      EXPECT_EQ(ours[ev].second, r["bytes"].get<double>()) << name << " " << ev;
    }
  }
  if (!h.value("loaded", false) || !h.contains("temporal")) {
    // HTA has nothing to compare (the CPU-only trace); gtb still diagnoses it.
    EXPECT_FALSE(g["overall"].contains("gpu"));
    return;
  }
  const auto& o = g["overall"]["gpu"];
  const json& t = h["temporal"][0];
  const double steps = std::max<double>(1.0, static_cast<double>(g["steps"].size()));
  const double tol = 0.02 * d(t, {"kernel_time(us)"}) / steps;  // 2% of a step
  // HTA's timestamps are whole microseconds: allow one per merged interval edge at most.
  EXPECT_NEAR(d(o, {"window_us"}), d(t, {"kernel_time(us)"}), tol) << name;
  // HTA counts cuda_sync markers (the GPU side of a host wait) as busy time; gtb does not. Where they
  // fall outside the work inside this window, HTA's idle is smaller by exactly that.
  const double markers = d(o, {"sync_markers", "us_outside_busy_in_window"});
  EXPECT_NEAR(d(o, {"idle_us"}) - markers, d(t, {"idle_time(us)"}), tol) << name;
  EXPECT_NEAR(d(o, {"split", "compute_us"}), d(t, {"compute_time(us)"}), tol) << name;
  EXPECT_NEAR(d(o, {"busy_us"}) - d(o, {"split", "compute_us"}) + markers, d(t, {"non_compute_time(us)"}), tol) << name;
  // The kernel-type split (sums of durations of each type's union).
  EXPECT_NEAR(d(o, {"split", "communication_us"}), hta_type_union(h, "COMMUNICATION"), tol) << name;
  EXPECT_NEAR(d(o, {"split", "memory_us"}), hta_type_union(h, "MEMORY"), tol) << name;
  EXPECT_NEAR(d(o, {"split", "compute_us"}), hta_type_union(h, "COMPUTATION"), tol) << name;
  // Communication overlapped with compute, as time.
  const auto& ov = h["comm_comp_overlap"][0]["comp_comm_overlap_pctg"];
  if (ov.is_number()) {
    EXPECT_NEAR(d(o, {"communication", "overlap_share"}) * d(o, {"communication", "union_us"}),
                ov.get<double>() / 100 * d(o, {"communication", "union_us"}), tol)
        << name;
  }
  // Per stream: idle between its own events; HTA's host wait is gtb's host launch + sync (gtb splits
  // the waits after a sync out of it) give or take the part gtb calls copy.
  if (h.contains("idle"))
    for (const auto& s : o["streams"]) {
      double hta_idle = 0, hta_host = 0;
      bool found = false;
      for (const auto& r : h["idle"])
        if (r["stream"].get<int>() == s["stream"].get<int>()) {
          found = true;
          hta_idle += r["idle_time"].get<double>();
          if (r["idle_category"] == "host_wait") hta_host += r["idle_time"].get<double>();
        }
      ASSERT_TRUE(found) << name << " stream " << s["stream"];
      EXPECT_NEAR(d(s, {"idle_us"}), hta_idle, tol) << name << " stream " << s["stream"];
      const double ours_host = d(s, {"idle_by_cause", "host_launch_us"}) + d(s, {"idle_by_cause", "sync_us"});
      EXPECT_NEAR(ours_host, hta_host, tol + d(s, {"idle_by_cause", "copy_us"})) << name << " stream " << s["stream"];
    }
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, Agreement,
                         ::testing::Values("a100-train-6steps", "a100-nccl-3steps", "sampled-rank0-2steps",
                                           "a100-event-sync", "mi250-minitoy-train", "cpu-only"),
                         [](const auto& case_info) {
                           std::string n = case_info.param;
                           for (auto& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// HTA rounds nanosecond-resolution traces to whole microseconds (each event's start up, its end down;
// HTA_DISABLE_NS_ROUNDING=1 turns that off). With the rounding off, HTA's temporal breakdown of the two
// such traces equals gtb's to 0.05% of a step: the rounding is the whole difference in the test above.
TEST(AgreementExplained, NanosecondTracesAgreeWithoutHtasRounding) {
  for (const std::string name : {"a100-nccl-3steps", "mi250-minitoy-train"}) {
    std::ifstream in(kTraces + "hta-ns-exact/" + name + ".json");
    ASSERT_TRUE(in) << name;
    const json h = json::parse(in);
    const json g = diagnose_trace(read_trace(kTraces + name + ".json.gz"), name);
    const auto& o = g["overall"]["gpu"];
    const json& t = h["temporal"][0];
    const double tol = 0.0005 * d(t, {"kernel_time(us)"}) / std::max<double>(1.0, static_cast<double>(g["steps"].size()));
    EXPECT_NEAR(d(o, {"window_us"}), d(t, {"kernel_time(us)"}), tol) << name;
    EXPECT_NEAR(d(o, {"idle_us"}), d(t, {"idle_time(us)"}), tol) << name;
    EXPECT_NEAR(d(o, {"split", "compute_us"}), d(t, {"compute_time(us)"}), tol) << name;
  }
}

// The fixtures themselves: a test that cannot fail is a defect, so a planted disagreement must show.
TEST(AgreementPlanted, ADifferentIdleIsCaught) {
  json h = hta("a100-train-6steps");
  const json g = diagnose_trace(read_trace(kTraces + "a100-train-6steps.json.gz"), "x");
  const double tol = 0.02 * d(h["temporal"][0], {"kernel_time(us)"}) / 6;
  const double planted = d(h["temporal"][0], {"idle_time(us)"}) + 2 * tol;
  EXPECT_GT(std::fabs(d(g["overall"]["gpu"], {"idle_us"}) - planted), tol);
}

}  // namespace

// Per rank in a job: each rank's whole-trace figures are its single-trace ones, so they agree with HTA's
// temporal breakdown and overlap of that rank's trace on the same (whole-trace) window. The shared GPU
// traces as the ranks of one job (their ranks assigned here: they come from different jobs).
#include "harness/driver/diagnose/diagnose_job.h"

TEST(AgreementPerRank, AJobsRanksAgreeWithHtaOnTheirOwnTraces) {
  const std::vector<std::string> names = {"a100-train-6steps", "a100-nccl-3steps", "sampled-rank0-2steps", "a100-event-sync",
                                          "mi250-minitoy-train"};
  std::vector<RankInput> ranks;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const Trace t = read_trace(kTraces + names[i] + ".json.gz");
    RankInput r;
    r.file = names[i];
    r.rank = static_cast<std::int64_t>(i);
    r.diagnosis = diagnose_trace(t, names[i]);
    r.calls = communication_calls(t);
    ranks.push_back(r);
  }
  const json j = diagnose_job(ranks, nullptr, "");
  ASSERT_EQ(j["ranks"].size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto& row = j["ranks"][i];
    ASSERT_EQ(row["file"], names[i]);
    const json h = hta(names[i]);
    const json& t = h["temporal"][0];
    const auto& w = row["whole_trace"];
    const double steps = std::max<double>(1.0, static_cast<double>(row["steps"].get<double>()));
    const double tol = 0.02 * d(t, {"kernel_time(us)"}) / steps;
    const double markers = d(w, {"sync_markers_outside_busy_in_window_us"});
    EXPECT_NEAR(d(w, {"window_us"}), d(t, {"kernel_time(us)"}), tol) << names[i];
    EXPECT_NEAR(d(w, {"idle_us"}) - markers, d(t, {"idle_time(us)"}), tol) << names[i];
    EXPECT_NEAR(d(w, {"compute_us"}), d(t, {"compute_time(us)"}), tol) << names[i];
    EXPECT_NEAR(d(w, {"non_compute_us"}) + markers, d(t, {"non_compute_time(us)"}), tol) << names[i];
    const auto& ov = h["comm_comp_overlap"][0]["comp_comm_overlap_pctg"];
    if (ov.is_number() && w["communication_overlap_share"].is_number())
      EXPECT_NEAR(d(w, {"communication_overlap_share"}) * d(w, {"communication_us"}),
                  ov.get<double>() / 100 * d(w, {"communication_us"}), tol)
          << names[i];
  }
}
