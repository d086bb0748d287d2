#include "vm/nccl_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <stdexcept>
#include <vector>

#include "cli/errors.h"
#include "client/names.h"
#include "common/json.h"

namespace kvmai::kvmaictl {
namespace {

// Where a function sits whatever the firmware: "0000:20/00.0/00.0/01.0",
// its root bus, then the device.function of each bridge down to it and of
// itself.
using Locator = std::string;

// A planned function: its bus id as the plan gives it, its locator, and
// what messages call it.
struct Planned {
  std::string bdf;
  Locator where;
  std::string name;
};

std::string devfn(int slot, int function) {
  return fmt::format("{:02x}.{:x}", slot, function);
}

// The plan's bridges and devices, by locator.
std::vector<Planned> planned(std::string_view text) {
  Json plan;
  try {
    plan = Json::parse(text);
  } catch (const Json::exception&) {
    throw OpError("PLAN is not JSON (kvmaictl -j vm plan ... writes it)");
  }
  if (!plan.is_object() || !plan.contains("bridges") || !plan.contains("devices")) {
    throw OpError("PLAN has no bridges and devices (kvmaictl -j vm plan ... writes it)");
  }
  struct Bridge {
    std::string bus;
    int slot = 0;
    int bus_nr = -1;  // expanders
    int secondary = 0;
  };
  std::map<std::string, Bridge> bridges;
  try {
    for (const auto& b : plan["bridges"]) {
      Bridge br{.bus = b.at("bus"), .slot = b.value("slot", 0), .secondary = b.at("secondary")};
      if (b.at("model") == "pxb-pcie") {
        br.bus_nr = b.at("bus_nr");
      }
      bridges.emplace(b.at("id").get<std::string>(), br);
    }
    // The locator of bridge @id, and the bus number the plan gives its bus.
    const auto locate = [&](const std::string& id) {
      std::vector<std::string> down;
      std::string at = id;
      for (int hops = 0; hops <= static_cast<int>(bridges.size()); ++hops) {
        const auto it = bridges.find(at);
        if (it == bridges.end()) {
          break;
        }
        if (it->second.bus_nr >= 0) {
          Locator l = fmt::format("0000:{:02x}", it->second.bus_nr);
          for (auto d = down.rbegin(); d != down.rend(); ++d) {
            l += "/" + *d;
          }
          return l;
        }
        down.push_back(devfn(it->second.slot, 0));
        at = it->second.bus;
      }
      throw OpError("PLAN: bridge " + printable(id) + " hangs off no expander");
    };
    const auto bus_of = [&](const std::string& id) {
      const Bridge& b = bridges.at(id);
      return b.bus_nr >= 0 ? b.bus_nr : b.secondary;
    };
    std::vector<Planned> out;
    for (const auto& [id, b] : bridges) {
      if (b.bus_nr < 0) {
        out.push_back({.bdf = fmt::format("0000:{:02x}:{}", bus_of(b.bus), devfn(b.slot, 0)),
                       .where = locate(id),
                       .name = "bridge " + id});
      }
    }
    for (const auto& d : plan["devices"]) {
      const std::string bus = d.at("bus");
      if (!bridges.contains(bus)) {
        throw OpError("PLAN: device " + printable(d.at("name").get<std::string>()) +
                      " on unknown bus " + printable(bus));
      }
      out.push_back({.bdf = d.at("guest_bdf"),
                     .where = locate(bus) + "/" + devfn(d.at("slot"), d.at("function")),
                     .name = d.at("name")});
    }
    return out;
  } catch (const Json::exception&) {
    throw OpError("PLAN lacks what kvmaictl -j vm plan writes (bridges, devices)");
  }
}

// This guest's functions by locator.
std::map<Locator, const PciDevice*> located(const PciTree& guest) {
  std::map<Locator, const PciDevice*> out;
  for (const PciDevice& d : guest.devices()) {
    // "pci0000:20" -> "0000:20"; each bridge and the function: "DD.F".
    if (!d.root.starts_with("pci")) {
      continue;
    }
    Locator l = d.root.substr(3);
    for (const auto& p : d.parents) {
      l += "/" + p.substr(p.size() - 4);
    }
    l += "/" + d.bdf.substr(d.bdf.size() - 4);
    out.emplace(l, &d);
  }
  return out;
}

std::string attr(const std::string& tag, const char* name) {
  const std::regex re(std::string(" ") + name + "=\"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(tag, m, re) ? std::string(m[1]) : "";
}

// "0x10de" (NCCL's spelling), or nullopt.
std::optional<unsigned long> hex_id(const std::string& s) {
  try {
    std::size_t end = 0;
    const unsigned long v = std::stoul(s, &end, 16);
    return end == s.size() ? std::optional(v) : std::nullopt;
  } catch (const std::logic_error&) {
    return std::nullopt;
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string nccl_map(std::string_view plan_json, std::string_view nccl_xml, const PciTree& guest) {
  const auto here = located(guest);
  std::map<std::string, std::string> to;       // planned bus id -> this guest's
  std::map<std::string, std::string> missing;  // planned bus id -> why it has none
  for (const Planned& p : planned(plan_json)) {
    const auto it = here.find(p.where);
    if (it != here.end()) {
      to[p.bdf] = it->second->bdf;
    } else {
      missing[p.bdf] = fmt::format("{} (planned {}): no function at pci{} in this guest",
                                   printable(p.name), p.bdf, p.where);
    }
  }

  // Tag by tag: each <pci ...> with a busid gets this guest's.
  static const std::regex kTag(R"(<pci\b[^>]*>)");
  const std::string text(nccl_xml);
  std::string out;
  auto last = text.cbegin();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kTag); it != std::sregex_iterator();
       ++it) {
    std::string tag = (*it)[0];
    const std::string busid = lower(attr(tag, "busid"));
    out.append(last, text.cbegin() + it->position());
    last = text.cbegin() + it->position() + it->length();
    if (busid.empty() || busid.starts_with("ffff:")) {
      out += tag;
      continue;
    }
    if (missing.contains(busid)) {
      throw OpError(missing.at(busid));
    }
    if (!to.contains(busid)) {
      throw OpError("FILE names " + printable(busid) + ", which PLAN does not lay out: are they " +
                    "of one plan?");
    }
    const PciDevice* d = guest.find(to.at(busid));
    // A bridge carries the host switch's ids (NCCL flattens Broadcom
    // switches by them), which the guest's emulated ports do not have.
    const bool bridge = attr(tag, "class").starts_with("0x0604");
    const std::string vendor = bridge ? "" : attr(tag, "vendor");
    const std::string device = bridge ? "" : attr(tag, "device");
    if ((!vendor.empty() && hex_id(vendor) != d->vendor) ||
        (!device.empty() && hex_id(device) != d->device)) {
      throw OpError(fmt::format("{} (planned {}) is {:04x}:{:04x} here, not the {}:{} FILE says",
                                d->bdf, busid, d->vendor, d->device, printable(vendor),
                                printable(device)));
    }
    const std::string from = "busid=\"" + attr(tag, "busid") + "\"";
    tag.replace(tag.find(from), from.size(), "busid=\"" + d->bdf + "\"");
    out += tag;
  }
  // A planned function the file does not name (neither a GPU nor a NIC)
  // may be missing here; one it names was refused above.
  out.append(last, text.cend());
  return out;
}

}  // namespace kvmai::kvmaictl
