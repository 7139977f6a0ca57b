// Every campaign key carries its help beside its type and default (the campaign schema is the one
// declaration `ckptbench keys` and docs/campaign-keys.md come from).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "backends/registry.hpp"
#include "harness/campaign/campaign_schema.hpp"

namespace ckpt::harness {
namespace {

// The help is a Markdown table cell and a wrapped console line: one line, no cell separator,
// no final full stop (as the backends' option help).
TEST(CampaignKeyHelp, EveryKeyHasOneLineOfHelpThatFitsATableCell) {
  for (const schema::KeySpec& spec : schema::keys()) {
    SCOPED_TRACE(spec.dotted());
    EXPECT_FALSE(spec.help.empty());
    EXPECT_EQ(spec.help.find('|'), std::string_view::npos);
    EXPECT_EQ(spec.help.find('\n'), std::string_view::npos);
    EXPECT_NE(spec.help.back(), '.');
    EXPECT_NE(spec.help.front(), ' ');
  }
}

// The general keys' help is plain text: no Markdown code spans, which the console would show
// as backquotes.
TEST(CampaignKeyHelp, GeneralKeysHelpIsPlainText) {
  for (const schema::KeySpec& spec : schema::keys()) {
    if (spec.table.starts_with("backend.")) continue;
    EXPECT_EQ(spec.help.find('`'), std::string_view::npos) << spec.dotted();
  }
}

TEST(CampaignKeyHelp, ABackendKeyCarriesItsOptionsHelp) {
  const schema::KeySpec* key = schema::find("backend.posix", "throttle_percent");
  ASSERT_NE(key, nullptr);
  const auto backends = backends::list_backends();
  const auto posix = std::find_if(backends.begin(), backends.end(),
                                  [](const auto& b) { return b.name == "posix"; });
  ASSERT_NE(posix, backends.end());
  ASSERT_EQ(posix->options.size(), 1u);
  EXPECT_EQ(key->help, posix->options[0].help);
  EXPECT_EQ(key->min, 0);
  EXPECT_EQ(key->max, 1000);
}

TEST(CampaignKeyHelp, AGeneralKeysDeclarationHoldsTypeDefaultRangeAndHelp) {
  const schema::KeySpec* key = schema::find("campaign", "iterations");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->kind, schema::Kind::integer);
  EXPECT_EQ(std::get<std::int64_t>(key->fallback), 3);
  EXPECT_EQ(key->min, 1);
  EXPECT_EQ(key->max, 2147483647);
  EXPECT_TRUE(key->sweepable);
  EXPECT_EQ(key->help, "timed checkpoint and restore iterations per case");
}

}  // namespace
}  // namespace ckpt::harness
