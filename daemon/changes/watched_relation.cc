#include "changes/watched_relation.h"

namespace seatwatch::changes {

bool TableNameMatches(std::string_view configured, std::string_view namespace_name,
                      std::string_view name) {
  std::size_t dot = configured.find('.');
  if (dot == std::string_view::npos) return configured == name;
  return configured.substr(0, dot) == namespace_name && configured.substr(dot + 1) == name;
}

WatchedRelation ResolveRelation(const RelationMessage& relation,
                                const std::map<std::string, std::string>& tables,
                                const std::map<std::string, std::set<std::string>>& words) {
  WatchedRelation resolved;
  resolved.display_name = relation.namespace_name == "public" || relation.namespace_name.empty()
                              ? relation.name
                              : relation.namespace_name + "." + relation.name;
  resolved.replica_identity = relation.replica_identity;
  resolved.column_count = relation.columns.size();
  for (std::size_t i = 0; i < relation.columns.size(); ++i) {
    if (!relation.columns[i].key) continue;
    resolved.identity.push_back(i);
    resolved.identity_names.push_back(relation.columns[i].name);
  }
  for (const auto& [table, key_column] : tables) {
    if (!TableNameMatches(table, relation.namespace_name, relation.name)) continue;
    WatchedKey key{table, key_column, -1, false, {}};
    for (std::size_t i = 0; i < relation.columns.size(); ++i) {
      if (relation.columns[i].name != key_column) continue;
      key.column = static_cast<int>(i);
      key.in_identity =
          relation.columns[i].key || relation.replica_identity == ReplicaIdentity::kFull;
      break;
    }
    auto named = words.find(table);
    if (named != words.end()) {
      for (std::size_t i = 0; i < relation.columns.size(); ++i) {
        const RelationColumn& column = relation.columns[i];
        if (column.name == key_column || named->second.count(column.name) == 0) continue;
        key.monitored.push_back({column.name, i, column.key});
      }
    }
    resolved.watched.push_back(std::move(key));
  }
  return resolved;
}

const char* ReplicaIdentityName(ReplicaIdentity identity) {
  switch (identity) {
    case ReplicaIdentity::kDefault: return "DEFAULT";
    case ReplicaIdentity::kNothing: return "NOTHING";
    case ReplicaIdentity::kFull: return "FULL";
    case ReplicaIdentity::kIndex: return "USING INDEX";
  }
  return "?";
}

}  // namespace seatwatch::changes
