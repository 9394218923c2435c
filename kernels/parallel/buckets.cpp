// DDP-style bucket plans over the train family's parameter layout.
#include "kernels/parallel/buckets.h"

#include <string>

namespace gtb::parallel {

namespace {
std::size_t layer_elems(const mlp::Layout& lay, int l) {
  return std::size_t(lay.dims[std::size_t(l - 1)]) * std::size_t(lay.dims[std::size_t(l)]) +
         std::size_t(lay.dims[std::size_t(l)]);
}
}  // namespace

std::vector<Bucket> plan_buckets(const mlp::Layout& lay, double first_mib, double cap_mib) {
  if (!(first_mib > 0) || !(cap_mib > 0)) throw std::invalid_argument("bucket sizes must be > 0 MiB");
  std::vector<Bucket> out;
  Bucket cur;
  for (int l = lay.layers(); l >= 1; --l) {
    if (cur.elems == 0) cur.first_layer = l;
    cur.last_layer = l;
    cur.elems += layer_elems(lay, l);
    const double cap = (out.empty() ? first_mib : cap_mib) * kMiB;
    if (double(cur.elems) * sizeof(float) >= cap) {
      out.push_back(cur);
      cur = Bucket{};
    }
  }
  if (cur.elems) out.push_back(cur);
  return out;
}

BucketRanges flat_ranges(const mlp::Layout& lay, const Bucket& b) {
  if (b.last_layer < 1 || b.first_layer < b.last_layer || b.first_layer > lay.layers())
    throw std::invalid_argument("flat_ranges: bucket layers out of range");
  const auto first = std::size_t(b.first_layer), last = std::size_t(b.last_layer);
  const std::size_t w_end =
      lay.w[first - 1] + mlp::Layout::pad(std::size_t(lay.dims[first - 1]) * std::size_t(lay.dims[first]));
  const std::size_t b_end = lay.b[first - 1] + mlp::Layout::pad(std::size_t(lay.dims[first]));
  return {{lay.w[last - 1], w_end - lay.w[last - 1]}, {lay.b[last - 1], b_end - lay.b[last - 1]}};
}

void check_cover(const mlp::Layout& lay, const std::vector<Bucket>& buckets) {
  std::size_t covered = 0;
  for (const Bucket& b : buckets) covered += b.elems;
  std::size_t want = 0;
  for (int l = 1; l <= lay.layers(); ++l) want += layer_elems(lay, l);
  if (covered != want) throw std::invalid_argument("buckets do not cover every layer exactly once");
}

}  // namespace gtb::parallel
