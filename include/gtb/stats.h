// The statistics every record's numbers go through (median, intervals, the sample set): one module,
// shared with the commands that compare records (harness/document/stats.h).
#pragma once

#include "harness/document/stats.h"
