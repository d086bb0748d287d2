#include "cli/print.h"

#include <gtest/gtest.h>

#include <sstream>

namespace kvmai::kvmaictl {
namespace {

// The same calls for every format, as a command makes them.
void emit(Printer& p) {
  p.open_object("dev");
  p.print_string("name", "gpu0", {"", 6});
  p.print_uint("numa_node", 1, {"numa "});
  p.print_opt_int("iommu_group", std::nullopt, {" group "});
  p.print_bool("ats", true, {" ats "}, Show::json_only);
  p.print_string_list("bits", {"RR", "CR"}, {" "});
  p.close_object();
  p.newline();
  p.open_array("list");
  p.open_object();
  p.print_int("x", -1);
  p.close_object();
  p.close_array();
  p.finish();
}

TEST(Printer, TextUsesLabelsAndWidths) {
  std::ostringstream s;
  Printer p(s, Format::text);
  emit(p);
  EXPECT_EQ(s.str(), "gpu0  numa 1 group - RR,CR\n-1");
}

TEST(Printer, JsonKeepsOrderAndTypes) {
  std::ostringstream s;
  Printer p(s, Format::json);
  emit(p);
  EXPECT_EQ(s.str(), R"({"dev":{"name":"gpu0","numa_node":1,"iommu_group":null,"ats":true,)"
                     R"("bits":["RR","CR"]},"list":[{"x":-1}]})"
                     "\n");
}

TEST(Printer, PrettyJsonIsIndented) {
  std::ostringstream s;
  Printer p(s, Format::json_pretty);
  p.print_string("a", "b");
  p.finish();
  p.finish();  // idempotent
  EXPECT_EQ(s.str(), "{\n  \"a\": \"b\"\n}\n");
}

TEST(Printer, EmitWritesOneDocumentPerCall) {
  std::ostringstream s;
  Printer p(s, Format::json);
  p.print_string("event", "create");
  p.emit();
  p.print_string("event", "delete");
  p.emit();
  p.finish();  // nothing left to write
  EXPECT_EQ(s.str(), "{\"event\":\"create\"}\n{\"event\":\"delete\"}\n");
  p.open_object("x");
  EXPECT_THROW(p.emit(), std::logic_error);
}

TEST(Printer, ToHex) {
  EXPECT_EQ(to_hex(0x5d), "0x5d");
  EXPECT_EQ(to_hex(0x302, 4), "0x0302");
  EXPECT_EQ(to_hex(0x38000000000ULL), "0x38000000000");
}

TEST(Printer, UnbalancedCloseThrows) {
  std::ostringstream s;
  Printer p(s, Format::json);
  EXPECT_THROW(p.close_object(), std::logic_error);
  p.open_array("a");
  EXPECT_THROW(p.close_object(), std::logic_error);
}

}  // namespace
}  // namespace kvmai::kvmaictl
