// python/src/cli_main.cpp — the CLI's main() (engine/cli/main.cpp) compiled as proflint_cli_main(),
// so that the Python module runs exactly the command-line parsing and commands of the binary.
//
// The headers main.cpp includes come first, so that the name change below reaches main.cpp's own
// text only (their include guards keep them from being read again).
#include <CLI/CLI.hpp>

#include <iostream>

#include "engine/cli/commands.hpp"

#define main proflint_cli_main
#include "engine/cli/main.cpp"
#undef main
