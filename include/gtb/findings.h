// What a family's sections are built from: the typed findings (sections, summary lines, tables,
// figures, hints) that one generic report and one plot script render (harness/document/findings.h),
// and the results document's helpers a section quotes (the unit of a ceiling: ceiling_unit()).
#pragma once

#include "harness/document/findings.h"
#include "harness/document/results.h"
