#include "common/sysfs.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <system_error>

namespace fs = std::filesystem;

namespace kvmai {

FsReader::FsReader(const fs::path& root) {
  std::error_code ec;
  root_ = fs::canonical(root, ec);
  if (ec) {
    root_ = root;
  }
}

std::optional<std::string> FsReader::read(const std::string& rel) const {
  std::ifstream f(root_ / rel, std::ios::binary);
  if (!f) {
    return std::nullopt;
  }
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) {
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> FsReader::link_target(const std::string& rel) const {
  std::error_code ec;
  const auto t = fs::read_symlink(root_ / rel, ec);
  if (ec) {
    return std::nullopt;
  }
  return t.string();
}

std::optional<std::string> FsReader::resolve(const std::string& rel) const {
  std::error_code ec;
  const auto p = fs::canonical(root_ / rel, ec);
  if (ec) {
    return std::nullopt;
  }
  const auto r = p.lexically_relative(root_);
  if (r.empty() || *r.begin() == "..") {
    return std::nullopt;
  }
  return r.string();
}

std::vector<std::string> FsReader::list(const std::string& rel) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(root_ / rel, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool FsReader::exists(const std::string& rel) const {
  std::error_code ec;
  return fs::exists(fs::symlink_status(root_ / rel, ec)) && !ec;
}

std::optional<std::string> read_line(const TreeReader& r, const std::string& rel) {
  auto s = r.read(rel);
  if (!s) {
    return std::nullopt;
  }
  const auto nl = s->find('\n');
  if (nl != std::string::npos) {
    s->resize(nl);
  }
  const auto first = s->find_first_not_of(" \t");
  const auto last = s->find_last_not_of(" \t\r");
  if (first == std::string::npos) {
    return std::string();
  }
  return s->substr(first, last - first + 1);
}

std::optional<long long> read_int(const TreeReader& r, const std::string& rel, int base) {
  const auto s = read_line(r, rel);
  if (!s || s->empty()) {
    return std::nullopt;
  }
  std::string_view v = *s;
  bool negative = false;
  if (v.front() == '-') {
    negative = true;
    v.remove_prefix(1);
  }
  if ((base == 0 || base == 16) && v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    v.remove_prefix(2);
    base = 16;
  } else if (base == 0) {
    base = 10;
  }
  long long value = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), value, base);
  if (ec != std::errc() || ptr != v.data() + v.size()) {
    return std::nullopt;
  }
  return negative ? -value : value;
}

std::optional<std::string> link_name(const TreeReader& r, const std::string& rel) {
  const auto t = r.link_target(rel);
  if (!t) {
    return std::nullopt;
  }
  return fs::path(*t).filename().string();
}

}  // namespace kvmai
