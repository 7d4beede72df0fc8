// libFuzzer's entry for programs that have a main of their own (LLVM 11 and later). SwiftPM gives
// every executable a main that calls `<module>_main`, so the harnesses call the driver from there
// instead of letting libFuzzer's own main run.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test_one_input)(const uint8_t *data, size_t size));
