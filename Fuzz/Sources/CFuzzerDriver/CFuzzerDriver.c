// Nothing to compile: the target exists for its header; libFuzzer (linked by -sanitize=fuzzer)
// defines LLVMFuzzerRunDriver.
#include "CFuzzerDriver.h"
