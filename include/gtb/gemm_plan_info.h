// The record form of a CPU step's per-shape GEMM plan (kernels/common/cpu/gemm_plan.h): what
// info.gemm_plan holds for every family whose step runs one.
#pragma once

#include "gtb/gtb.h"
#include "kernels/common/cpu/gemm_plan.h"

namespace gtb {

// Every site: its shape, the library chosen, and each candidate's time or why it was refused.
inline json gemm_plan_json(const cpu::plan::Plan& p) {
  json plan = json::array();
  for (const auto& c : p.choices()) {
    json tried = json::object();
    for (const auto& t : c.tried)
      tried[t.name] = !t.available ? json{{"available", false}, {"detail", t.detail}}
                      : t.verified ? json{{"verified", true}, {"ms", t.seconds * 1e3}}
                                   : json{{"verified", false}, {"detail", t.detail}};
    plan.push_back({{"site", c.shape.site},
                    {"m", c.shape.m},
                    {"n", c.shape.n},
                    {"k", c.shape.k},
                    {"library", c.tried[std::size_t(c.chosen)].name},
                    {"candidates", tried}});
  }
  return plan;
}

}  // namespace gtb
