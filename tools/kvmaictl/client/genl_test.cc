#include "client/genl.h"

#include <gtest/gtest.h>

namespace kvmai::kvmaictl {
namespace {

TEST(AttrSet, RoundTripsScalarsAndStrings) {
  AttrSet a;
  a.put_u8(1, 7).put_u16(2, 513).put_u32(3, 70000).put_u64(4, 1ULL << 40).put_string(5, "6.12.0");
  const AttrSet b = AttrSet::parse(a.serialize());
  EXPECT_EQ(b.u8(1), 7);
  EXPECT_EQ(b.u16(2), 513);
  EXPECT_EQ(b.u32(3), 70000U);
  EXPECT_EQ(b.u64(4), 1ULL << 40);
  EXPECT_EQ(b.str(5), "6.12.0");
  EXPECT_FALSE(b.has(6));
  EXPECT_EQ(b.u32(6), std::nullopt);
}

TEST(AttrSet, FlagIsPresentWithoutPayload) {
  AttrSet a;
  a.put_flag(6).put_u32(7, 1);
  const AttrSet b = AttrSet::parse(a.serialize());
  EXPECT_TRUE(b.has(6));
  EXPECT_TRUE(b.attrs().front().payload.empty());
  EXPECT_EQ(b.u32(7), 1U);
}

TEST(AttrSet, WrongSizeIsNotAValue) {
  AttrSet a;
  a.put_u16(1, 3);
  EXPECT_EQ(a.u32(1), std::nullopt);
}

TEST(AttrSet, NestsAndRepeats) {
  AttrSet inner;
  inner.put_string(1, "gpu0").put_u32(2, 42);
  AttrSet outer;
  outer.put_nested(10, inner).put_u32(11, 1).put_u32(11, 2);
  const AttrSet parsed = AttrSet::parse(outer.serialize());
  const auto n = parsed.nested(10);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->str(1), "gpu0");
  EXPECT_EQ(n->u32(2), 42U);
  EXPECT_TRUE(parsed.attrs().front().nested);
  EXPECT_EQ(parsed.all(11).size(), 2U);
}

TEST(GenlError, FamilyNotFoundSaysModuleNotLoaded) {
  const auto e = GenlError::family_not_found("kvmai");
  EXPECT_EQ(e.kind(), GenlError::Kind::family_not_found);
  EXPECT_STREQ(e.what(), "kvmai module not loaded (generic netlink family \"kvmai\" not found)");
}

TEST(GenlError, KernelErrorCarriesExtackVerbatim) {
  const auto e = GenlError::kernel(EINVAL, "group name too long");
  EXPECT_EQ(e.error(), EINVAL);
  EXPECT_EQ(e.extack(), "group name too long");
  EXPECT_STREQ(e.what(), "group name too long (Invalid argument)");
  EXPECT_STREQ(GenlError::kernel(EPERM, "").what(), "Operation not permitted");
}

}  // namespace
}  // namespace kvmai::kvmaictl
