// A fixture of testdata/ copied to a temporary directory, for the unit
// tests that vary a file or two of it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "testing/run.h"

namespace kvmai::kvmaictl::testing {

// A fixture copied to a temporary directory, to vary a file or two of it
// for a case no committed fixture shows. Its symlinks are relative, so
// they stay inside the copy.
class FixtureCopy {
 public:
  explicit FixtureCopy(const std::string& fixture)
      : dir_(std::filesystem::path(::testing::TempDir()) /
             // The pid too: two test runs at once (a package build
             // beside a developer's ctest) must not share the copy.
             ("kvmaictl-" + fixture + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
              std::to_string(getpid()))) {
    std::filesystem::remove_all(dir_);
    std::filesystem::copy(
        testdata(fixture), dir_,
        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  }
  FixtureCopy(const FixtureCopy&) = delete;
  FixtureCopy& operator=(const FixtureCopy&) = delete;
  FixtureCopy(FixtureCopy&&) = delete;
  FixtureCopy& operator=(FixtureCopy&&) = delete;
  ~FixtureCopy() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // `rel` is below the copy: "sys/...", "proc/cmdline".
  void write(const std::string& rel, const std::string& text) const {
    const auto path = dir_ / rel;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  void append(const std::string& rel, const std::string& text) const {
    std::ofstream(dir_ / rel, std::ios::app) << text;
  }
  void remove(const std::string& rel) const { std::filesystem::remove_all(dir_ / rel); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace kvmai::kvmaictl::testing
