// lane-tune's version, and where the build found nvcc.
#pragma once

#include <string>

namespace lt {

// The version string ("0.1.0").
const char* version();
// The nvcc found when lane-tune was configured ("" when none); $LT_NVCC overrides it at run time.
std::string nvcc_path();

}  // namespace lt
