// What a family's findings hand the cost model: its cost terms (named by the constants of
// gtb::cost::term), the whole steps it measured and the A/B pairs among them, written into the
// findings data with write_evidence() (harness/model/cost_evidence.h, which the model reads back).
#pragma once

#include "harness/model/cost_evidence.h"
#include "harness/model/cost_terms.h"
#include "harness/model/savings.h"
#include "harness/model/term_names.h"
