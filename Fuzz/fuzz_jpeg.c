// libFuzzer harness for rx_jpeg_decode (Sources/CRxValidate/photo.c). Build and run: scripts/fuzz jpeg
#include "fuzz_photo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    photo_one_input(rx_jpeg_decode, data, size);
    return 0;
}
