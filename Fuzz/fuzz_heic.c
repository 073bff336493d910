// libFuzzer harness for rx_heif_decode (Sources/CRxValidate/photo.c). Build and run: scripts/fuzz heic
#include "fuzz_photo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    photo_one_input(rx_heif_decode, data, size);
    return 0;
}
