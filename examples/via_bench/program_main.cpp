// main() of every VIA benchmark program: the program is its kProgram.
#include "via_bench/program.hpp"

int main(int argc, char** argv) { return via_bench::run(via_bench::kProgram, argc, argv); }
