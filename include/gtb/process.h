// Running a helper process (a worker in another language, a line-per-request exchange): the one
// process helper of the harness (harness/runtime/process.h), which the driver uses as well.
#pragma once

#include "harness/runtime/process.h"
