#include "tests/test_paths.hpp"

namespace meshsim::testing {

const char* source_dir() { return MESHSIM_TEST_SOURCE_DIR; }
const char* shared_dir() { return MESHSIM_TEST_SHARED_DIR; }

}  // namespace meshsim::testing
