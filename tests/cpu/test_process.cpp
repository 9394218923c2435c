// The process helper: start, exit status, signal death, environment, redirection, time limit,
// interrupt forwarding, process groups, and the errors of a child that cannot start.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "harness/runtime/process.h"

namespace {

gtb::ProcessSpec shell(const std::string& script) {
  gtb::ProcessSpec s;
  s.program = "/bin/sh";
  s.args = {"-c", script};
  return s;
}

std::string temp_path(const char* name) {
  const char* t = std::getenv("TMPDIR");
  return std::string(t && *t ? t : "/tmp") + "/gtb-process-test-" + std::to_string(::getpid()) + "-" + name;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(Process, ExitCodeIsDecoded) {
  const gtb::ProcessResult ok = gtb::run_process(shell("exit 0"));
  EXPECT_TRUE(ok.ok()) << ok.describe();
  EXPECT_EQ(ok.exit_code, 0);
  const gtb::ProcessResult three = gtb::run_process(shell("exit 3"));
  EXPECT_TRUE(three.started());
  EXPECT_FALSE(three.ok());
  EXPECT_EQ(three.exit_code, 3);
  EXPECT_EQ(three.signal, 0);
  EXPECT_EQ(three.describe(), "exited with code 3");
}

TEST(Process, SignalDeathIsDecoded) {
  const gtb::ProcessResult r = gtb::run_process(shell("kill -SEGV $$"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_NE(r.describe().find("killed by signal 11"), std::string::npos) << r.describe();
}

TEST(Process, EnvironmentIsSetAndUnset) {
  ::setenv("GTB_PROCESS_TEST_KEEP", "kept", 1);
  ::setenv("GTB_PROCESS_TEST_DROP", "present", 1);
  ::setenv("GTB_PROCESS_TEST_OVER", "old", 1);
  gtb::ProcessSpec s = shell(
      "echo \"$GTB_PROCESS_TEST_KEEP|${GTB_PROCESS_TEST_DROP-unset}|$GTB_PROCESS_TEST_OVER|$GTB_PROCESS_TEST_NEW\"");
  s.set_env = {{"GTB_PROCESS_TEST_OVER", "new"}, {"GTB_PROCESS_TEST_NEW", "a=b"}};
  s.unset_env = {"GTB_PROCESS_TEST_DROP"};
  s.out = gtb::Redirect::capture();
  const gtb::ProcessResult r = gtb::run_process(s);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.output, "kept|unset|new|a=b\n");
  // This process's own environment is untouched.
  EXPECT_STREQ(std::getenv("GTB_PROCESS_TEST_DROP"), "present");
  EXPECT_STREQ(std::getenv("GTB_PROCESS_TEST_OVER"), "old");
}

TEST(Process, OutputGoesToFilesAppendedOrTruncated) {
  const std::string log = temp_path("log");
  {
    std::ofstream(log) << "before\n";
  }
  gtb::ProcessSpec s = shell("echo out; echo err >&2");
  s.out = gtb::Redirect::append(log);
  s.err = gtb::Redirect::to_stdout();
  EXPECT_TRUE(gtb::run_process(s).ok());
  EXPECT_EQ(read_all(log), "before\nout\nerr\n");
  s.out = gtb::Redirect::truncate(log);
  s.err = gtb::Redirect::null();
  EXPECT_TRUE(gtb::run_process(s).ok());
  EXPECT_EQ(read_all(log), "out\n");
  ::unlink(log.c_str());
}

TEST(Process, StdinFromDevNullReadsNothing) {
  gtb::ProcessSpec s = shell("if read line; then echo got; else echo eof; fi");
  s.in = gtb::Redirect::null();
  s.out = gtb::Redirect::capture();
  EXPECT_EQ(gtb::run_process(s).output, "eof\n");
}

TEST(Process, CaptureKeepsLargeOutput) {
  // More than a pipe holds: the helper must read while the child writes.
  gtb::ProcessSpec s = shell("i=0; while [ $i -lt 20000 ]; do echo 0123456789; i=$((i+1)); done");
  s.out = gtb::Redirect::capture();
  const gtb::ProcessResult r = gtb::run_process(s);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.output.size(), 20000u * 11u);
}

TEST(Process, MissingExecutableGivesAClearError) {
  gtb::ProcessSpec s;
  s.program = "/nonexistent/gtb-no-such-program";
  const gtb::ProcessResult r = gtb::run_process(s);
  EXPECT_FALSE(r.started());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "cannot start /nonexistent/gtb-no-such-program: No such file or directory");
  s.program = "gtb-no-such-program-in-path";
  s.search_path = true;
  EXPECT_FALSE(gtb::run_process(s).started());
}

TEST(Process, SearchPathFindsAProgramByName) {
  gtb::ProcessSpec s;
  s.program = "sh";
  s.args = {"-c", "exit 4"};
  s.search_path = true;
  EXPECT_EQ(gtb::run_process(s).exit_code, 4);
  s.search_path = false;  // a bare name is then a path relative to the working folder
  EXPECT_FALSE(gtb::run_process(s).started());
}

TEST(Process, BadSpecsAreRefused) {
  gtb::ProcessSpec s = shell("exit 0");
  s.in = gtb::Redirect::append("/tmp/x");
  EXPECT_THROW(gtb::run_process(s), std::invalid_argument);
  s = shell("exit 0");
  s.out = gtb::Redirect::to_stdout();
  EXPECT_THROW(gtb::run_process(s), std::invalid_argument);
  s = shell("exit 0");
  s.err = gtb::Redirect::capture();
  EXPECT_THROW(gtb::run_process(s), std::invalid_argument);
  s = shell("exit 0");
  s.out = gtb::Redirect::append("");
  EXPECT_THROW(gtb::run_process(s), std::invalid_argument);
  EXPECT_THROW(gtb::run_process(gtb::ProcessSpec{}), std::invalid_argument);
}

TEST(Process, TimeLimitStopsTheChild) {
  gtb::ProcessSpec s = shell("exec sleep 30");  // the child itself sleeps: nothing is left behind
  s.timeout_s = 0.2;
  s.grace_s = 1;
  const gtb::ProcessResult r = gtb::run_process(s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_EQ(r.describe(), "timed out after 0.2 s");
}

TEST(Process, AChildIgnoringSigtermIsKilledAfterTheGrace) {
  gtb::ProcessSpec s = shell("trap '' TERM; sleep 30");
  s.timeout_s = 0.1;
  s.grace_s = 0.3;
  s.own_group = true;
  const gtb::ProcessResult r = gtb::run_process(s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
}

TEST(Process, TheGroupGoesWithItsLeader) {
  // The grandchild writes its pid, then outlives the shell unless the whole group is stopped.
  const std::string pidfile = temp_path("grandchild");
  gtb::ProcessSpec s = shell("sleep 30 & echo $! > " + pidfile + "; wait");
  s.timeout_s = 0.3;
  s.grace_s = 0.3;
  s.own_group = true;
  EXPECT_TRUE(gtb::run_process(s).timed_out);
  std::ifstream in(pidfile);
  pid_t grandchild = 0;
  ASSERT_TRUE(in >> grandchild);
  EXPECT_NE(::kill(grandchild, 0), 0) << "the grandchild " << grandchild << " is still running";
  ::unlink(pidfile.c_str());
}

TEST(Process, AnInterruptIsForwardedOnce) {
  int polls = 0;
  gtb::ProcessSpec s = shell("exec sleep 30");
  s.interrupt = [&] { return ++polls >= 3 ? SIGINT : 0; };
  s.grace_s = 2;
  const gtb::ProcessResult r = gtb::run_process(s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.signal, SIGINT);
  EXPECT_GE(polls, 3);
}

TEST(Process, TickRunsWhileTheChildRuns) {
  int ticks = 0;
  gtb::ProcessSpec s = shell("sleep 0.7");
  s.tick = [&] { ++ticks; };
  EXPECT_TRUE(gtb::run_process(s).ok());
  EXPECT_GE(ticks, 2);
}

// ---- a child that answers requests line by line ----

TEST(LineChild, AnswersEachLineAndEndsWhenItsInputCloses) {
  gtb::LineChild c(shell("echo ready; while read l; do echo \"got $l\"; done; exit 4"));
  ASSERT_TRUE(c.started()) << c.error();
  EXPECT_EQ(c.receive(10).value_or("<none>"), "ready");
  for (const char* req : {"one", "two words", ""}) {
    ASSERT_TRUE(c.send(req));
    EXPECT_EQ(c.receive(10).value_or("<none>"), std::string("got ") + req);
  }
  const gtb::ProcessResult r = c.finish(5);
  EXPECT_EQ(r.exit_code, 4) << r.describe();
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(c.send("late")) << "a finished child takes no request";
}

TEST(LineChild, ASilentChildTimesOutAndAnEndedOneSaysSo) {
  gtb::LineChild quiet(shell("read l"));  // silent until its input closes
  ASSERT_TRUE(quiet.started());
  EXPECT_FALSE(quiet.receive(0.2).has_value());
  EXPECT_TRUE(quiet.timed_out());
  gtb::LineChild gone(shell("printf 'last words'; exit 0"));
  ASSERT_TRUE(gone.started());
  EXPECT_EQ(gone.receive(10).value_or("<none>"), "last words") << "an unterminated last line still arrives";
  EXPECT_FALSE(gone.receive(10).has_value());
  EXPECT_FALSE(gone.timed_out());
  EXPECT_EQ(gone.finish(5).exit_code, 0);
}

TEST(LineChild, WritingToAChildThatHasGoneIsAnErrorNotASignal) {
  gtb::LineChild c(shell("exit 0"));
  ASSERT_TRUE(c.started());
  EXPECT_FALSE(c.receive(10).has_value());  // it has closed its end
  std::string big(1 << 20, 'x');
  EXPECT_FALSE(c.send(big) && c.send(big)) << "the process is still here: no SIGPIPE";
}

TEST(LineChild, AChildThatKeepsRunningIsStoppedByFinish) {
  gtb::LineChild c(shell("trap '' TERM; while :; do sleep 1; done"));
  ASSERT_TRUE(c.started());
  const gtb::ProcessResult r = c.finish(0.2);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL) << r.describe();
}

TEST(LineChild, AMissingProgramAndBadSpecs) {
  gtb::ProcessSpec s;
  s.program = "/no/such/program";
  gtb::LineChild c(s);
  EXPECT_FALSE(c.started());
  EXPECT_NE(c.error().find("No such file or directory"), std::string::npos) << c.error();
  EXPECT_FALSE(c.send("x"));
  EXPECT_FALSE(c.receive(1).has_value());
  gtb::ProcessSpec captured = shell("true");
  captured.out = gtb::Redirect::capture();
  EXPECT_THROW(gtb::LineChild{captured}, std::invalid_argument);
}
