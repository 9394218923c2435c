// Declared A/B pairs measured as pairs: the fibers the sides run in, the rounds' stopping rule, and a
// family made for the test whose host speed steps while it runs, where the pair's paired estimate holds
// and the difference of the two medians measured apart does not.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/document/results.h"
#include "harness/runtime/fiber.h"
#include "gtb/gtb.h"
#include "kernels/common/clock.h"

namespace {

TEST(Fiber, TakesTurnsWithItsCallerAndPassesExceptionsBack) {
  std::vector<int> seen;
  gtb::Fiber a([&] {
    seen.push_back(1);
    gtb::Fiber::yield();
    seen.push_back(3);
  });
  gtb::Fiber b([&] {
    seen.push_back(2);
    gtb::Fiber::yield();
    seen.push_back(4);
  });
  EXPECT_TRUE(a.resume());
  EXPECT_TRUE(b.resume());
  EXPECT_FALSE(a.resume());
  EXPECT_FALSE(b.resume());
  EXPECT_TRUE(a.finished());
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
  gtb::Fiber thrower([] {
    gtb::Fiber::yield();
    throw std::runtime_error("from the fiber");
  });
  EXPECT_TRUE(thrower.resume());
  EXPECT_THROW(thrower.resume(), std::runtime_error);
  EXPECT_TRUE(thrower.finished());
  EXPECT_EQ(gtb::Fiber::current(), nullptr);
  EXPECT_THROW(gtb::Fiber::yield(), std::logic_error);  // outside any fiber
}

gtb::StopRule rule(double budget) {
  return gtb::RuleChange().min_samples(5).max_samples(1000).noise_target(0.01).budget_seconds(budget).hard_min_samples(3).applied_to({});
}

TEST(Rounds, APairGetsItsRoundsAndStopsOnItsBudgetOrItsNoise) {
  const std::vector<gtb::StopRule> rules = {rule(0.1), rule(0.1)};
  const std::vector<std::pair<int, int>> pair = {{0, 1}};
  auto rounds = [](int n) {
    std::vector<std::vector<double>> s(2);
    for (int i = 0; i < n; ++i) s[0].push_back(1 + i), s[1].push_back(1 + i);  // noisy: only the budget stops
    return s;
  };
  // Five rounds meet the members' min_samples, not a pair's: past the budget, a pair goes on to ten.
  EXPECT_EQ(gtb::rounds_stop_decision(rules, rounds(5), pair, 0.21), "");
  EXPECT_EQ(gtb::rounds_stop_decision(rules, rounds(5), {}, 0.21), "time_budget");  // no pair: the members' rule
  EXPECT_EQ(gtb::rounds_stop_decision(rules, rounds(9), pair, 0.21), "");
  EXPECT_EQ(gtb::rounds_stop_decision(rules, rounds(gtb::kPairRounds), pair, 0.21), "time_budget");
  EXPECT_EQ(gtb::rounds_stop_decision(rules, rounds(gtb::kPairRounds), pair, 0.19), "");  // the budget is both members'
  // Quiet sides and a quiet difference stop on the noise target.
  std::vector<std::vector<double>> quiet(2);
  for (int i = 0; i < 12; ++i) quiet[0].push_back(1.0), quiet[1].push_back(0.5);
  EXPECT_EQ(gtb::rounds_stop_decision(rules, quiet, pair, 0.01), "noise_target");
  // A slow group: where ten rounds would take longer than kSlowPairBudgets budgets (or kSlowPairSeconds,
  // the longer), it stops at six (an interval still), and where six would too, at hard_min_samples (no
  // interval: said so by the savings).
  const double slow = gtb::kSlowPairSeconds;  // over 8 x 0.2 s
  EXPECT_EQ(gtb::rounds_stop_decision(rules, rounds(6), pair, 0.65 * slow), "time_budget");
  EXPECT_EQ(gtb::rounds_stop_decision(rules, rounds(6), pair, 0.55 * slow), "");
  EXPECT_EQ(gtb::rounds_stop_decision(rules, rounds(5), pair, 0.65 * slow), "");
  EXPECT_EQ(gtb::rounds_stop_decision(rules, rounds(3), pair, 0.55 * slow), "time_budget");
  EXPECT_EQ(gtb::rounds_stop_decision(rules, rounds(3), pair, 0.45 * slow), "");
  const auto s = rounds(3);
  EXPECT_THROW(gtb::rounds_stop_decision({rules[0]}, s, pair, 0), std::invalid_argument);
}

// ---- a family whose host speed steps while it runs ----

// Seconds from which every repetition takes kSlow times as long (a host that slowed the guest), set
// when the A side is first set up; and how often each side was set up.
double g_step_at = 0;
std::map<std::string, int> g_setups;
constexpr double kRepSeconds = 20e-6, kSlow = 1.6, kStepAfter = 0.13;

void wait_one_rep() {
  const double t0 = gtb::host_seconds();
  const double want = kRepSeconds * (t0 >= g_step_at ? kSlow : 1.0);
  while (gtb::host_seconds() - t0 < want) {
  }
}

void side(gtb::State& st) {
  if (st.record().variant == "a" && g_setups.empty()) g_step_at = gtb::host_seconds() + kStepAfter;
  st.info("setups", ++g_setups[st.record().variant]);
  st.check(true, "nothing to check");
  st.exec([] { wait_one_rep(); });
}

// The pairs of a family of two variants: each "a" record with each "b" record.
std::vector<std::pair<std::string, std::string>> a_then_b(const std::vector<gtb::Record>& planned) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& a : planned)
    for (const auto& b : planned)
      if (a.variant == "a" && b.variant == "b") out.emplace_back(a.id, b.id);
  return out;
}

// A and B do the same work: the true saving is zero. Only the budget ends their sampling, so that the
// step falls inside the rounds (measured as a pair) and between the two records (measured apart).
const gtb::RuleChange kBudgetOnly = gtb::RuleChange().noise_target(1e-9).max_samples(100000).budget_seconds(0.1);
auto& side_a = gtb::add("pairstep", "wait", "a", gtb::Backend::cpu, side).time("time", "us", 1e-6).rule(kBudgetOnly);
auto& side_b = gtb::add("pairstep", "wait", "b", gtb::Backend::cpu, side).time("time", "us", 1e-6).rule(kBudgetOnly);
const bool kPairs = gtb::add_pairs("pairstep", a_then_b);

// A run of the family in a child process (family_main runs its cases once per process).
std::vector<gtb::Record> run_family(const std::string& family, const std::string& pairs_flag) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("gtb-" + family + "-" + pairs_flag + "-" + std::to_string(::getpid()) + ".json")).string();
  std::filesystem::remove(path);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    g_step_at = 1e300;
    std::vector<std::string> args = {"gtb-" + family, "--gtb_out=" + path, "--gtb_pairs=" + pairs_flag};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::FILE* devnull = std::freopen("/dev/null", "w", stdout);
    (void)devnull;
    const int code = gtb::family_main(static_cast<int>(argv.size()), argv.data(), family);
    std::fflush(nullptr);
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  if (!std::filesystem::exists(path)) return {};
  const gtb::json doc = gtb::load_document(path);
  EXPECT_NO_THROW(gtb::validate_document(doc));
  std::filesystem::remove(path);
  return gtb::records_of(doc);
}

TEST(PairedRounds, AStepOfTheHostsSpeedCancelsInAPairButNotInTwoMediansMeasuredApart) {
  // Measured apart: A before the step, B after it; the medians' difference reads as a "saving" of
  // about (1 - kSlow) x A, far outside either median's noise.
  const auto apart = run_family("pairstep", "off");
  ASSERT_EQ(apart.size(), 2u);
  const gtb::Record &a0 = apart[0], &b0 = apart[1];
  ASSERT_EQ(a0.status, gtb::Status::ok) << a0.status_detail;
  ASSERT_EQ(b0.status, gtb::Status::ok) << b0.status_detail;
  EXPECT_TRUE(a0.paired.empty());
  EXPECT_FALSE(gtb::paired_estimate(a0, 1, b0, 1));
  const double apart_diff = a0.stats->median - b0.stats->median;
  EXPECT_LT(apart_diff, -0.25 * a0.stats->median) << "A " << a0.stats->median << " B " << b0.stats->median;

  // Measured as a pair: each side set up once, the step inside the rounds, and the paired estimate
  // near the true zero, its interval estimable.
  const auto paired = run_family("pairstep", "on");
  ASSERT_EQ(paired.size(), 2u);
  const gtb::Record &a = paired[0], &b = paired[1];
  ASSERT_EQ(a.status, gtb::Status::ok) << a.status_detail;
  ASSERT_EQ(b.status, gtb::Status::ok) << b.status_detail;
  EXPECT_EQ(a.info.value("setups", 0), 1);  // each side set up, checked and warmed up once
  EXPECT_EQ(b.info.value("setups", 0), 1);
  ASSERT_EQ(a.paired.size(), 1u);
  EXPECT_EQ(a.paired[0].with, b.id);
  EXPECT_EQ(a.paired[0].a_s, a.samples);  // one sample a round, each side's own
  EXPECT_EQ(a.paired[0].b_s, b.samples);
  EXPECT_TRUE(b.paired.empty());
  std::size_t slow = 0;
  for (double x : a.samples) slow += x > 1.3 * kRepSeconds;
  EXPECT_GT(slow, a.samples.size() / 10) << "the step fell before the rounds";
  EXPECT_LT(slow, a.samples.size() * 9 / 10) << "the step fell after the rounds";
  const auto e = gtb::paired_estimate(a, 1, b, 1);
  ASSERT_TRUE(e);
  EXPECT_GE(e->rounds, gtb::kMinPairedRounds);
  ASSERT_TRUE(e->interval);
  EXPECT_LT(std::fabs(e->difference), 0.05 * a.stats->median) << e->difference;
  EXPECT_NEAR(e->ratio, 1.0, 0.05);
}

// ---- a family whose sides are slower right after the other side ran ----

// The first repetition after the other side's pays kAfterOther (its data out of the caches, its idle
// threads still spinning): measured in rounds in the order A B B A A B ..., every other sample of a
// side would pay it, unless the side settles with an untimed sample of its own first.
constexpr double kAfterOther = 500e-6;
std::string g_last_side;

// A stand-in's repetition: the host clock spun for `seconds`.
void spin(double seconds) {
  const double t0 = gtb::host_seconds();
  while (gtb::host_seconds() - t0 < seconds) {
  }
}

void after_other(gtb::State& st) {
  const std::string me = st.record().variant;
  st.check(true, "nothing to check");
  st.exec([me] {
    const double want = kRepSeconds + (!g_last_side.empty() && g_last_side != me ? kAfterOther : 0.0);
    g_last_side = me;
    spin(want);
  });
}

// A stand-in side measured in rounds: ok, its rounds, settled, and at most a tenth of its samples
// above `slow_above` (a busy machine may slow a few anyway).
void expect_settled(const gtb::Record& r, double slow_above, const char* what) {
  ASSERT_EQ(r.status, gtb::Status::ok) << r.status_detail;
  ASSERT_GE(r.samples.size(), std::size_t(gtb::kPairRounds));
  EXPECT_EQ(r.info.value("rounds_settled", false), true) << r.id;
  std::size_t slow = 0;
  for (double x : r.samples) slow += x > slow_above;
  EXPECT_LE(slow, r.samples.size() / 10) << r.id << ": " << slow << " of " << r.samples.size() << " samples " << what;
}

// A stand-in family of two sides, a and b, that `fn` measures alike, declared as a pair.
bool add_two_sides(const char* family, void (*fn)(gtb::State&), const gtb::RuleChange& rule) {
  for (const char* side : {"a", "b"})
    gtb::add(family, "wait", side, gtb::Backend::cpu, fn).time("time", "us", 1e-6).rule(rule);
  return gtb::add_pairs(family, a_then_b);
}

const bool kAfterPairs =
    add_two_sides("pairafter", after_other, gtb::RuleChange().noise_target(1e-9).max_samples(60).budget_seconds(0.05));

TEST(PairedRounds, EachSideIsMeasuredAfterItselfNotAfterTheOtherSide) {
  const auto rec = run_family("pairafter", "on");
  ASSERT_EQ(rec.size(), 2u);
  // A sample is reps_per_sample repetitions; one that followed the other side carries kAfterOther.
  // Without the settling sample every other one would (half of them).
  for (const gtb::Record& r : rec)
    expect_settled(r, kRepSeconds + 0.5 * kAfterOther / double(r.reps_per_sample), "after the other side");
}

// ---- a family whose sides come back to their speed over a time, not one repetition ----

// After the other side ran, every repetition of a side runs kComeBackSlow times slower until
// kComeBackSeconds have passed since it took over (its data coming back into the caches, its clock
// coming back up): a settle of one untimed sample (a few repetitions, well under that time) would leave
// the timed sample inside it, in every round.
constexpr double kComeBackSeconds = 0.5 * gtb::kRoundSettleSeconds, kComeBackSlow = 3.0;
std::string g_back_side;
double g_back_since = 0;

void come_back(gtb::State& st) {
  const std::string me = st.record().variant;
  st.check(true, "nothing to check");
  st.exec([me] {
    const double t0 = gtb::host_seconds();
    if (g_back_side != me) g_back_side = me, g_back_since = t0;
    spin(kRepSeconds * (t0 - g_back_since < kComeBackSeconds ? kComeBackSlow : 1.0));
  });
}

const bool kBackPairs =
    add_two_sides("pairback", come_back, gtb::RuleChange().noise_target(1e-9).max_samples(40).budget_seconds(0.1));

TEST(PairedRounds, EachSideSettlesForATimeNotOneSample) {
  const auto rec = run_family("pairback", "on");
  ASSERT_EQ(rec.size(), 2u);
  for (const gtb::Record& r : rec) {
    // One untimed sample is a few repetitions (~50 us), far inside kComeBackSeconds: a settle of one
    // sample would leave every timed one slow.
    ASSERT_LT(double(r.reps_per_sample) * kRepSeconds * kComeBackSlow, 0.5 * kComeBackSeconds) << r.id;
    expect_settled(r, 0.5 * (1.0 + kComeBackSlow) * kRepSeconds, "while the side came back to its speed");
  }
}

TEST(PairedRounds, ListShowsTheDeclaredPairs) {
  const auto planned = gtb::planned_records("pairstep", gtb::Suite::quick);
  const auto pairs = gtb::declared_pairs("pairstep", planned);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].first, planned[0].id);
  EXPECT_EQ(pairs[0].second, planned[1].id);
  // A pair whose record is not planned (another selection) is not declared.
  EXPECT_TRUE(gtb::declared_pairs("pairstep", {planned[0]}).empty());
}

}  // namespace
