// The record a case fills and the vocabulary around it (Backend, Suite, Clock, MetricSpec, json):
// what a family's findings header needs to name its input, and GTB_JSON_WRITE, which writes a
// fixed-shape struct's JSON by declaration. Defined with the results document
// (harness/document/types.h, json_write.h), which the driver reads too.
#pragma once

#include "harness/document/types.h"
