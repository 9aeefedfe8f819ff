// graphguard: the command-line entry point; all logic is in cli/app.h. A build with the numeric
// runtime adds its commands, whose handlers load libgraphguard_runtime.so on first use
// (cli/runtime_plugin.h): symbolic commands never load LibTorch.
#include <iostream>
#include <string>
#include <vector>

#include "cli/app.h"
#ifdef GG_RUNTIME_PLUGIN
#include "cli/runtime_plugin.h"
#endif

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
#ifdef GG_RUNTIME_PLUGIN
  gg::cli::UseRuntimePlugin();
#endif
  int code = gg::cli::RunGraphGuard(args, std::cout, std::cerr);
  std::cout.flush();
  return code;
}
