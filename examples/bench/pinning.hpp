// CPU pinning of a benchmark's processes.
#pragma once

namespace bench {

// Pins the calling thread to `cpu`; false if that CPU is not available.
bool pin_to_cpu(int cpu);

// The n-th CPU this process may run on, or -1.
int nth_allowed_cpu(int n);

}  // namespace bench
