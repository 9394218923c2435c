// Renamed record ids: the table and how a loaded record takes its current name.
#include "harness/document/record_ids.h"

namespace gtb {

const std::vector<VariantRename>& variant_renames() {
  // What the families declare (gtb_add_family RENAMED), generated at configure time.
  static const std::vector<VariantRename> table = {
#include "variant_renames.inc"
  };
  return table;
}

namespace {

// "family/workload/variant/backend[/params]": the variant is the third component.
bool split_id(const std::string& id, std::string& family, std::string& workload, std::string& variant,
              std::string& backend, std::string& rest) {
  std::size_t pos = 0;
  std::string* parts[] = {&family, &workload, &variant};
  for (std::string* p : parts) {
    const std::size_t slash = id.find('/', pos);
    if (slash == std::string::npos) return false;
    *p = id.substr(pos, slash - pos);
    pos = slash + 1;
  }
  const std::size_t slash = id.find('/', pos);
  backend = id.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
  rest = slash == std::string::npos ? "" : id.substr(slash);
  return true;
}

const VariantRename* rename_for(const std::string& family, const std::string& variant, const std::string& backend) {
  for (const VariantRename& v : variant_renames())
    if (family == v.family && variant == v.old_variant && backend == to_string(v.backend)) return &v;
  return nullptr;
}

}  // namespace

std::string current_record_id(const std::string& id) {
  std::string family, workload, variant, backend, rest;
  if (!split_id(id, family, workload, variant, backend, rest)) return id;
  const VariantRename* v = rename_for(family, variant, backend);
  if (!v) return id;
  return family + "/" + workload + "/" + v->new_variant + "/" + backend + rest;
}

bool upgrade_record_id(Record& r) {
  const VariantRename* v = rename_for(r.family, r.variant, to_string(r.backend));
  if (!v) return false;
  r.variant = v->new_variant;
  r.id = current_record_id(r.id);
  return true;
}

}  // namespace gtb
