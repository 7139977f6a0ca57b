#include "harness/common/suggest.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string_view>

namespace ckpt::harness {
namespace {

constexpr std::array<std::string_view, 4> kKeys{"hidden_size", "intermediate_size",
                                                "num_hidden_layers", "vocab_size"};

TEST(EditDistance, ClassicPairs) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
  EXPECT_EQ(edit_distance("intention", "execution"), 5u);
  EXPECT_EQ(edit_distance("hiden_size", "hidden_size"), 1u);   // one insertion
  EXPECT_EQ(edit_distance("hidden_szie", "hidden_size"), 2u);  // a swap is two substitutions
}

TEST(EditDistance, EmptyAndEqual) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("vocab_size", "vocab_size"), 0u);
}

TEST(EditDistance, IsSymmetricAndCaseSensitive) {
  EXPECT_EQ(edit_distance("num_key_value_head", "num_key_value_heads"), 1u);
  EXPECT_EQ(edit_distance("num_key_value_heads", "num_key_value_head"), 1u);
  EXPECT_EQ(edit_distance("Vocab_Size", "vocab_size"), 2u);
}

TEST(ClosestMatch, FindsTheNearestCandidate) {
  EXPECT_EQ(closest_match("hiden_size", kKeys), "hidden_size");
  EXPECT_EQ(closest_match("vocab_sise", kKeys), "vocab_size");
  EXPECT_EQ(closest_match("num_hiden_layer", kKeys), "num_hidden_layers");
  EXPECT_EQ(closest_match("hidden_size", kKeys), "hidden_size");
}

TEST(ClosestMatch, NulloptForUnrelatedWords) {
  EXPECT_EQ(closest_match("rope_theta", kKeys), std::nullopt);
  EXPECT_EQ(closest_match("zzzzzzzzzzzz", kKeys), std::nullopt);
  EXPECT_EQ(closest_match("hidden_size", std::span<const std::string_view>{}), std::nullopt);
}

TEST(ClosestMatch, LimitIsAThirdOfTheWordButAtLeastTwo) {
  constexpr std::array<std::string_view, 1> twelve{"abcdefghijkl"};
  EXPECT_EQ(closest_match("abcdefghWXYZ", twelve), "abcdefghijkl");  // 4 <= 12 / 3
  EXPECT_EQ(closest_match("abcdefgVWXYZ", twelve), std::nullopt);    // 5 > 4
  constexpr std::array<std::string_view, 1> three{"abc"};
  EXPECT_EQ(closest_match("aXY", three), "abc");         // 2 <= max(2, 1)
  EXPECT_EQ(closest_match("XYZ", three), std::nullopt);  // 3 > 2
}

TEST(ClosestMatch, TiesGoToTheEarlierCandidate) {
  constexpr std::array<std::string_view, 2> keys{"head_dim", "v_head_dim"};
  EXPECT_EQ(closest_match("x_head_dim", keys), "v_head_dim");  // 1 vs 2
  constexpr std::array<std::string_view, 2> tied{"abcd", "abce"};
  EXPECT_EQ(closest_match("abcf", tied), "abcd");
}

TEST(DidYouMean, FormatsTheSuggestionOrNothing) {
  EXPECT_EQ(did_you_mean("hiden_size", kKeys), " — did you mean `hidden_size`?");
  EXPECT_EQ(did_you_mean("rope_theta", kKeys), "");
}

}  // namespace
}  // namespace ckpt::harness
