#include "print.h"

#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace kvmai::kvmaistat {
namespace {

// " in 2.000 GB/s", or nothing for a direction without a counter.
void print_rate(std::ostream& s, std::string_view label, const std::optional<double>& gbps,
                bool& first) {
  if (!gbps) {
    return;
  }
  s << (first ? " " : "  ") << label << ' ' << *gbps << " GB/s";
  first = false;
}

void put(Json& object, const char* key, const std::optional<double>& value) {
  if (value) {
    object[key] = *value;
  }
}

// What traffic a counter of each kind can see, from where it counts
// (counters.rst, "Which traffic each counter sees"): a PCIe stack's
// counters sit in the root complex, so a transfer between two devices that
// a PCIe switch below it turns around (a kvm-ai P2P group, ACS redirect
// off) never passes them; memory channels see no peer-to-peer transfer at
// all.  Said in every object, so that an agent reading one line alone
// cannot take a quiet stack for an idle GPU.
Json traffic(std::vector<std::string> sees, std::vector<std::string> misses) {
  Json j;
  j["sees"] = std::move(sees);
  j["misses"] = std::move(misses);
  return j;
}

const char* clock_name(ClockSource c) {
  return c == ClockSource::device ? "device" : "monotonic";
}

}  // namespace

void print_text(std::ostream& out, std::string_view bdf, std::string_view unit,
                const Rates& rates) {
  // Built apart so that the caller's stream keeps its own formatting.
  std::ostringstream s;
  s << std::fixed << std::setprecision(3);
  s << bdf << ' ' << unit << "  interval " << rates.interval_s << " s (" << clock_name(rates.clock)
    << " clock)\n";
  for (const auto& p : rates.pcie) {
    s << "  pcie stack " << p.stack << ':';
    bool first = true;
    print_rate(s, "in", p.in_gbps, first);
    print_rate(s, "out", p.out_gbps, first);
    s << '\n';
  }
  for (const auto& m : rates.mem) {
    s << "  mem channel " << m.channel << ':';
    bool first = true;
    print_rate(s, "read", m.read_gbps, first);
    print_rate(s, "write", m.write_gbps, first);
    s << '\n';
  }
  out << s.str();
}

Json rates_json(std::string_view bdf, std::string_view unit, const Rates& rates) {
  Json j;
  j["device"] = bdf;
  j["unit"] = unit;
  j["time"] = rates.time;
  j["interval_s"] = rates.interval_s;
  j["clock"] = clock_name(rates.clock);
  j["pcie"] = Json::array();
  for (const auto& p : rates.pcie) {
    Json o;
    o["stack"] = p.stack;
    put(o, "in_gbps", p.in_gbps);
    put(o, "out_gbps", p.out_gbps);
    o["traffic"] = traffic({"dma", "peer-through-root-complex"}, {"peer-in-switch"});
    j["pcie"].push_back(std::move(o));
  }
  j["mem"] = Json::array();
  for (const auto& m : rates.mem) {
    Json o;
    o["channel"] = m.channel;
    put(o, "read_gbps", m.read_gbps);
    put(o, "write_gbps", m.write_gbps);
    o["traffic"] = traffic({"cpu", "dma"}, {"peer"});
    j["mem"].push_back(std::move(o));
  }
  return j;
}

Json revoked_json(std::string_view bdf, std::string_view unit) {
  Json j;
  j["device"] = bdf;
  j["unit"] = unit;
  j["state"] = "revoked";
  return j;
}

void print_json(std::ostream& out, const Json& object, bool pretty) {
  out << json_text(object, pretty ? 2 : -1) << '\n';
}

std::string revoked_message(std::string_view bdf, std::string_view unit) {
  std::string s(bdf);
  s += ": unit ";
  s += unit;
  s += " was revoked by the host";
  return s;
}

}  // namespace kvmai::kvmaistat
