// host::run_process: the one way pteron's tools run another program (no shell involved).
#include "runtime/host/process.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace pteron::host {
namespace {

TEST(Process, ExitStatusAndCapturedOutput) {
  std::string out;
  EXPECT_EQ(run_process_captured({"sh", "-c", "echo to out; echo to err >&2; exit 3"}, &out), 3);
  EXPECT_EQ(out, "to out\nto err\n");
}

TEST(Process, ArgumentsReachTheProgramAsGiven) {
  std::string out;
  // A quote and a space in one argument: no shell splits or unquotes it.
  EXPECT_EQ(run_process_captured({"printf", "%s|", "it's one", "two"}, &out), 0);
  EXPECT_EQ(out, "it's one|two|");
}

TEST(Process, OutputToALogFile) {
  const std::string log = testing::TempDir() + "pteron_process_test.log";
  EXPECT_EQ(run_process({"sh", "-c", "echo logged; echo also >&2"}, log), 0);
  std::ifstream f(log);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_EQ(text.str(), "logged\nalso\n");
  std::remove(log.c_str());
}

TEST(Process, AProgramThatCannotStartSaysWhy) {
  std::string out, why;
  EXPECT_EQ(run_process_captured({"pteron-no-such-program"}, &out, &why), 127);
  EXPECT_EQ(why.rfind("cannot run pteron-no-such-program: ", 0), 0u) << why;
  EXPECT_EQ(run_process({"/nonexistent/tool"}, "", &why), 127);
  EXPECT_NE(why.find("/nonexistent/tool"), std::string::npos);
}

TEST(Process, ASignalIsReportedAbove128) {
  std::string out;
  EXPECT_EQ(run_process_captured({"sh", "-c", "kill -TERM $$"}, &out), 128 + 15);
}

}  // namespace
}  // namespace pteron::host
