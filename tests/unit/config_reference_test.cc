// The configuration reference (docs/configuration.md) against the key table:
// every key a file may hold is documented under its section.
#include <gtest/gtest.h>

#include <string>

#include "config/keys.h"
#include "support/test_env.h"

namespace seatwatch::config {
namespace {

// Where the reference starts speaking of `section`: its [section] or
// [[section]] header; 0 for the top level.
size_t SectionStart(const std::string& reference, const std::string& section) {
  if (section.empty()) return 0;
  size_t entry = reference.find("[[" + section + "]]");
  if (entry != std::string::npos) return entry;
  return reference.find("[" + section + "]");
}

// `leaf` as the reference writes a key: `leaf`, or the end of a code span
// such as `[http.basic_auth] users`.
bool Documents(const std::string& reference, size_t from, const std::string& leaf) {
  return reference.find("`" + leaf + "`", from) != std::string::npos ||
         reference.find(" " + leaf + "`", from) != std::string::npos;
}

TEST(ConfigReferenceTest, EveryKeyIsDocumented) {
  const std::string reference = testing::ReadFile(testing::SourceDir() + "/docs/configuration.md");
  for (const KeySpec& spec : AllKeys()) {
    size_t dot = spec.name.rfind('.');
    std::string section = dot == std::string::npos ? "" : spec.name.substr(0, dot);
    std::string leaf = spec.name.substr(dot + 1);
    if (spec.type == KeyType::kSection || spec.type == KeyType::kEntryTables) {
      EXPECT_NE(SectionStart(reference, spec.name), std::string::npos)
          << spec.name << ": no [" << spec.name << "] in docs/configuration.md";
      continue;
    }
    size_t start = SectionStart(reference, section);
    EXPECT_NE(start, std::string::npos) << spec.name << ": its section is not documented";
    if (start == std::string::npos) continue;
    EXPECT_TRUE(Documents(reference, start, leaf))
        << spec.name << ": `" << leaf << "` is not documented under its section";
  }
}

}  // namespace
}  // namespace seatwatch::config
