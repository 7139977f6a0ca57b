#include <iostream>

#include "harness/cli/cli.hpp"

int main(int argc, char** argv) {
  return ckpt::harness::run_cli(argc, argv, std::cout, std::cerr);
}
