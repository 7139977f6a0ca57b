// Campaign files: parse (toml++), check every key (read_settings against the KeySpec table),
// apply --set overrides, expand sweeps, build and validate each case (CaseBuilder).
#include "harness/campaign/campaign.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "harness/campaign/campaign_case.hpp"
#include "harness/campaign/campaign_settings.hpp"
#include "harness/common/config_error.hpp"
#include "harness/common/config_text.hpp"

namespace ckpt::harness {
namespace {

// Far more cases than any campaign runs; a guard against a sweep multiplied by mistake.
constexpr std::int64_t kMaxCases = 100'000;

toml::table parse_document(std::string_view text, const std::string& source) {
  try {
    return toml::parse(text, std::string_view(source));
  } catch (const toml::parse_error& e) {
    throw ConfigError(source, static_cast<std::int64_t>(e.source().begin.line), "",
                      "TOML syntax error: " + std::string(e.description()));
  }
}

// The number of cases: the product of the sweep lengths.
std::int64_t count_cases(const schema::Settings& settings, const std::string& source) {
  std::int64_t cases = 1;
  for (const schema::Setting& s : settings.given) {
    cases *= static_cast<std::int64_t>(s.values.size());
    if (cases > kMaxCases) {
      throw ConfigError(source, 0, "",
                        "the sweeps expand to more than " + std::to_string(kMaxCases) +
                            " cases; sweep fewer keys or fewer values");
    }
  }
  return cases;
}

// Which value of each setting case `index` takes: the cartesian product in file order, the
// last swept key varying fastest.
std::vector<std::size_t> choice_of(const schema::Settings& settings, std::int64_t index) {
  std::vector<std::size_t> choice(settings.given.size(), 0);
  auto rest = static_cast<std::size_t>(index);
  for (std::size_t i = settings.given.size(); i-- > 0;) {
    const std::size_t n = settings.given[i].values.size();
    choice[i] = rest % n;
    rest /= n;
  }
  return choice;
}

Campaign expand(const schema::Settings& settings, const std::string& source) {
  Campaign campaign;
  campaign.source = source;
  const std::int64_t cases = count_cases(settings, source);
  schema::CaseBuilder builder;
  for (std::int64_t index = 0; index < cases; ++index) {
    const schema::CaseValues values(settings, choice_of(settings, index), source, index, cases);
    campaign.cases.push_back(builder.build(values, index, source));
  }
  // The load phase reads the checkpoint of the first case that differs in [load] keys only.
  std::vector<nlohmann::json> written;
  for (Case& c : campaign.cases) {
    nlohmann::json config = c.config;
    config.erase("load");
    // Its position, which is its case index; its own when no earlier case matches.
    c.load.source_index = std::find(written.begin(), written.end(), config) - written.begin();
    written.push_back(std::move(config));
  }
  campaign.name = campaign.cases.front().campaign;
  return campaign;
}

// A note for every backend table given while no case uses that backend: its options change nothing.
std::vector<std::string> unused_backend_tables(const schema::Settings& settings,
                                               const Campaign& campaign) {
  std::vector<std::string> notes;
  std::set<std::string> noted;
  for (const schema::Setting& s : settings.given) {
    const std::string table(s.spec->table);
    if (!table.starts_with("backend.") || noted.contains(table)) continue;
    const std::string backend = table.substr(std::string_view("backend.").size());
    const bool used = std::any_of(campaign.cases.begin(), campaign.cases.end(),
                                  [&](const Case& c) { return c.backend == backend; });
    if (used) continue;
    noted.insert(table);
    notes.push_back(s.source + (s.line > 0 ? ":" + std::to_string(s.line) : std::string()) + ": [" +
                    table + "] is ignored: no case uses backend.name = \"" + backend + "\"");
  }
  return notes;
}

}  // namespace

Campaign parse_campaign(std::string_view text, const std::string& source,
                        const std::vector<std::string>& overrides) {
  const toml::table document = parse_document(text, source);
  schema::Settings settings = schema::read_settings(document, source);
  schema::apply_overrides(settings, overrides);
  schema::require_keys(settings, source);
  Campaign campaign = expand(settings, source);
  campaign.notes = unused_backend_tables(settings, campaign);
  return campaign;
}

Campaign load_campaign(const std::filesystem::path& path,
                       const std::vector<std::string>& overrides) {
  return parse_campaign(
      read_config_file(path, "campaign file does not exist", "campaign file cannot be read: "),
      path.string(), overrides);
}

}  // namespace ckpt::harness
