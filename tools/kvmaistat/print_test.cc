#include "print.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace kvmai::kvmaistat {
namespace {

const std::string kPcieTraffic =
    R"("traffic":{"sees":["dma","peer-through-root-complex"],"misses":["peer-in-switch"]})";
const std::string kMemTraffic = R"("traffic":{"sees":["cpu","dma"],"misses":["peer"]})";

Rates sample_rates() {
  Rates r;
  r.time = 1700000000.5;
  r.interval_s = 1.0;
  r.clock = ClockSource::device;
  r.pcie = {{.stack = 0, .in_gbps = 2.0, .out_gbps = 1.0},
            {.stack = 1, .in_gbps = std::nullopt, .out_gbps = 0.0004}};
  r.mem = {{.channel = 0, .read_gbps = 4.0, .write_gbps = 2.0},
           {.channel = 5, .read_gbps = 1.5, .write_gbps = std::nullopt}};
  return r;
}

TEST(Text, OneBlockPerDevice) {
  std::ostringstream s;
  s.precision(2);  // the caller's formatting is left alone
  print_text(s, "0000:01:00.0", "mock_bw", sample_rates());
  EXPECT_EQ(s.str(),
            "0000:01:00.0 mock_bw  interval 1.000 s (device clock)\n"
            "  pcie stack 0: in 2.000 GB/s  out 1.000 GB/s\n"
            "  pcie stack 1: out 0.000 GB/s\n"
            "  mem channel 0: read 4.000 GB/s  write 2.000 GB/s\n"
            "  mem channel 5: read 1.500 GB/s\n");
  EXPECT_EQ(s.precision(), 2);
}

TEST(Text, MonotonicClock) {
  Rates r;
  r.interval_s = 0.0101;
  std::ostringstream s;
  print_text(s, "0000:01:00.0", "u", r);
  EXPECT_EQ(s.str(), "0000:01:00.0 u  interval 0.010 s (monotonic clock)\n");
}

TEST(Json, KeysInOrderAndDirectionsOmitted) {
  const Json j = rates_json("0000:01:00.0", "mock_bw", sample_rates());
  EXPECT_EQ(j.dump(),
            R"({"device":"0000:01:00.0","unit":"mock_bw","time":1700000000.5,"interval_s":1.0,)"
            R"("clock":"device","pcie":[{"stack":0,"in_gbps":2.0,"out_gbps":1.0,)" +
                kPcieTraffic + R"(},{"stack":1,"out_gbps":0.0004,)" + kPcieTraffic +
                R"(}],"mem":[{"channel":0,"read_gbps":4.0,"write_gbps":2.0,)" + kMemTraffic +
                R"(},{"channel":5,"read_gbps":1.5,)" + kMemTraffic + "}]}");
}

// A stack's counters sit in the root complex: a peer transfer that a
// switch below it turns around never passes them; memory sees no peer
// transfer at all.
TEST(Json, EachStackAndChannelSaysWhatItSees) {
  const Json j = rates_json("0000:01:00.0", "mock_bw", sample_rates());
  for (const auto& p : j["pcie"]) {
    EXPECT_EQ(p["traffic"]["misses"], Json::array({"peer-in-switch"}));
    EXPECT_EQ(p["traffic"]["sees"], Json::array({"dma", "peer-through-root-complex"}));
  }
  for (const auto& m : j["mem"]) {
    EXPECT_EQ(m["traffic"]["sees"], Json::array({"cpu", "dma"}));
    EXPECT_EQ(m["traffic"]["misses"], Json::array({"peer"}));
  }
}

TEST(Json, EmptyListsStayArrays) {
  Rates r;
  r.interval_s = 0.5;
  const Json j = rates_json("0000:01:00.0", "u", r);
  EXPECT_EQ(j["clock"], "monotonic");
  EXPECT_TRUE(j["pcie"].is_array());
  EXPECT_TRUE(j["mem"].is_array());
}

TEST(Json, OneLineOrPretty) {
  std::ostringstream line;
  print_json(line, revoked_json("0000:01:00.0", "mock_bw"), false);
  EXPECT_EQ(line.str(), R"({"device":"0000:01:00.0","unit":"mock_bw","state":"revoked"})"
                        "\n");
  std::ostringstream pretty;
  print_json(pretty, revoked_json("0000:01:00.0", "mock_bw"), true);
  EXPECT_EQ(pretty.str(),
            "{\n  \"device\": \"0000:01:00.0\",\n  \"unit\": \"mock_bw\",\n"
            "  \"state\": \"revoked\"\n}\n");
}

TEST(Revoked, Message) {
  EXPECT_EQ(revoked_message("0000:01:00.0", "mock_bw"),
            "0000:01:00.0: unit mock_bw was revoked by the host");
}

}  // namespace
}  // namespace kvmai::kvmaistat
