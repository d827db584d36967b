#pragma once

// Where the checkout and ../shared are, for the tests. The paths are compiled into one
// object (tests/test_paths.cpp), so no other test source carries an absolute path on its
// command line and ccache serves them to a clone in another folder (as CI makes).
namespace meshsim::testing {
const char* source_dir();
const char* shared_dir();
}  // namespace meshsim::testing

#define MESHSIM_SOURCE_DIR (::meshsim::testing::source_dir())
#define MESHSIM_SHARED_DIR (::meshsim::testing::shared_dir())
