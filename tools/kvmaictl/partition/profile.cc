#include "partition/profile.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <stdexcept>

#include "client/names.h"
#include "common/format.h"
#include "partition/layout.h"

namespace kvmai::kvmaictl::partition {
namespace {

// How many VFs or mdevs a key may ask for: PCIe's TotalVFs is 16 bits, and
// no parent offers more instances than that.
constexpr std::int64_t kMostPartitions = 65535;

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw std::runtime_error(fmt::format("{}: {}: {}", source_, printable(key), what));
  }

  int count(const toml::node& n, const std::string& key) const {
    const auto v = n.value_exact<std::int64_t>();
    if (!v || *v < 0 || *v > kMostPartitions) {
      fail(key, fmt::format("want a whole number from 0 to {}", kMostPartitions));
    }
    return static_cast<int>(*v);
  }

  std::string text(const toml::node& n, const std::string& key) const {
    if (const auto v = n.value_exact<std::string>()) {
      return *v;
    }
    if (const auto i = n.value_exact<std::int64_t>(); i && *i >= 0) {
      return std::to_string(*i);  // a vGPU type by id
    }
    fail(key, "want a string");
  }

  std::string uuid(const toml::node& n, const std::string& key) const {
    const auto u = to_lower(text(n, key));
    if (!is_uuid(u)) {
      fail(key, fmt::format("\"{}\" is not a UUID", printable(u)));
    }
    return u;
  }

  Wanted parent(const std::string& name, const toml::table& t, const std::string& key) const {
    const auto p = parent_name(name);
    if (!p) {
      fail(key, "not a PCI address or mdev parent name");
    }
    Wanted w;
    w.parent = *p;
    std::string driver = "vfio-pci";
    bool driver_given = false;
    for (const auto& [k, v] : t) {
      const std::string sub = key + "." + std::string(k.str());
      if (k == "vfs") {
        w.vfs = count(v, sub);
      } else if (k == "driver") {
        driver = text(v, sub);
        driver_given = true;
        if (driver.find('/') != std::string::npos || driver == "." || driver == "..") {
          fail(sub, "not a driver name");
        }
      } else if (k == "autoprobe") {
        const auto b = v.value_exact<bool>();
        if (!b) {
          fail(sub, "want true or false");
        }
        w.autoprobe = *b;
      } else if (k == "vgpu-type") {
        if (const auto* a = v.as_array()) {
          for (std::size_t i = 0; i < a->size(); i++) {
            w.vgpu_types.push_back(text(*a->get(i), fmt::format("{}[{}]", sub, i)));
          }
        } else {
          if (!w.vfs) {
            // The count may follow the type in the file: expand at the end.
            pending_type_ = text(v, sub);
          } else {
            w.vgpu_types.assign(static_cast<std::size_t>(*w.vfs), text(v, sub));
          }
        }
      } else if (k == "mdevs") {
        w.mdevs = mdevs(v, sub);
      } else {
        fail(sub, "unknown key (want vfs, driver, autoprobe, vgpu-type or mdevs)");
      }
    }
    if (!pending_type_.empty()) {
      if (!w.vfs) {
        fail(key + ".vgpu-type", "one type for every VF needs vfs");
      }
      w.vgpu_types.assign(static_cast<std::size_t>(*w.vfs), pending_type_);
      pending_type_.clear();
    }
    if (driver_given && !w.vfs) {
      fail(key + ".driver", "a driver for the VFs needs vfs");
    }
    if (w.vfs) {
      w.drivers.assign(static_cast<std::size_t>(*w.vfs), driver);
    }
    if (w.vfs && w.vgpu_types.size() > static_cast<std::size_t>(*w.vfs)) {
      fail(key + ".vgpu-type", fmt::format("{} types for {} VFs", w.vgpu_types.size(), *w.vfs));
    }
    return w;
  }

  std::vector<WantedMdev> mdevs(const toml::node& n, const std::string& key) const {
    std::vector<WantedMdev> out;
    if (const auto* t = n.as_table()) {
      for (const auto& [type, v] : *t) {
        const std::string sub = key + "." + std::string(type.str());
        const int c = count(v, sub);
        for (int i = 0; i < c; i++) {
          out.push_back({.type = std::string(type.str()), .uuid = ""});
        }
      }
    } else if (const auto* a = n.as_array()) {
      for (std::size_t i = 0; i < a->size(); i++) {
        const std::string sub = fmt::format("{}[{}]", key, i);
        const auto* e = a->get(i)->as_table();
        if (e == nullptr || !e->contains("type")) {
          fail(sub, "want { type = \"...\", uuid = \"...\" }");
        }
        WantedMdev m{.type = text(*e->get("type"), sub + ".type"), .uuid = ""};
        if (const auto* u = e->get("uuid")) {
          m.uuid = uuid(*u, sub + ".uuid");
        }
        for (const auto& [k, v] : *e) {
          if (k != "type" && k != "uuid") {
            fail(sub + "." + std::string(k.str()), "unknown key (want type or uuid)");
          }
        }
        out.push_back(std::move(m));
      }
    } else {
      fail(key, "want a table of counts by type or a list of { type, uuid }");
    }
    for (const auto& m : out) {
      if (m.type.empty() || m.type.find('/') != std::string::npos || m.type == "." ||
          m.type == "..") {
        fail(key, fmt::format("\"{}\" is not an mdev type name", printable(m.type)));
      }
    }
    return out;
  }

 private:
  std::string_view source_;
  mutable std::string pending_type_;
};

}  // namespace

std::vector<Profile> parse_profiles(std::string_view text, std::string_view source) {
  toml::table doc;
  try {
    doc = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw std::runtime_error(
        fmt::format("{}:{}:{}: {}", source, where.line, where.column, e.description()));
  }
  const Reader r(source);
  std::vector<Profile> out;
  for (const auto& [k, v] : doc) {
    if (k != "profile" || !v.is_table()) {
      r.fail(std::string(k.str()), "unknown key (want [profile.NAME.PARENT] tables)");
    }
  }
  const auto* profiles = doc.get_as<toml::table>("profile");
  if (profiles == nullptr) {
    return out;
  }
  for (const auto& [name, body] : *profiles) {
    const std::string key = "profile." + std::string(name.str());
    const auto* parents = body.as_table();
    if (parents == nullptr) {
      r.fail(key, "want a table of parents");
    }
    Profile p{.name = std::string(name.str()), .parents = {}};
    for (const auto& [parent, t] : *parents) {
      const std::string sub = fmt::format("{}.\"{}\"", key, std::string(parent.str()));
      if (!t.is_table()) {
        r.fail(sub, "want a table (vfs, driver, vgpu-type, mdevs)");
      }
      p.parents.push_back(r.parent(std::string(parent.str()), *t.as_table(), sub));
    }
    std::sort(p.parents.begin(), p.parents.end(),
              [](const Wanted& a, const Wanted& b) { return a.parent < b.parent; });
    for (std::size_t i = 1; i < p.parents.size(); i++) {
      if (p.parents[i].parent == p.parents[i - 1].parent) {
        r.fail(key, fmt::format("{} is named twice", p.parents[i].parent));
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace kvmai::kvmaictl::partition
