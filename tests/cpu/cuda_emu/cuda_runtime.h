// The host stand-in's second name (see cuda_runtime_api.h in this folder).
#pragma once
#include "cuda_runtime_api.h"
