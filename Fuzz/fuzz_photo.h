// Shared body of the photo harnesses (fuzz_jpeg.c, fuzz_heic.c): decode with the vault's default
// limits (PhotoConverter), scaled as `attach` does, then write the PNG as the converter does and
// check it with rx_png_check. Any crash or sanitizer report is a bug, and so is a broken
// invariant (abort()): an accepted image within the limits, upright and scaled as asked, whose
// PNG the validator accepts at the same size.
#include "rx_validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*photo_decoder)(const uint8_t *, size_t, const rx_photo_limits *, rx_photo_result *, uint8_t **);

// Decoding is not instrumented (Debian's libjpeg and libheif): feed libFuzzer the outcome, as
// fuzz_png.c does, so an input reaching a new decoder message is kept and mutated further.
__attribute__((section("__libfuzzer_extra_counters"), used))
static uint8_t photo_outcomes[4096];

static void photo_fail(const char *what, const rx_photo_result *result) {
    fprintf(stderr, "fuzz_photo: invariant broken: %s (%ux%u -> %ux%u, message \"%.*s\")\n", what, result->source_width,
            result->source_height, result->width, result->height, RX_MESSAGE_SIZE, result->message);
    abort();
}

static void photo_one_input(photo_decoder decode, const uint8_t *data, size_t size) {
    // A small target keeps each run fast; the scaling code is the same for any target.
    static const rx_photo_limits limits = { 16384, 50000000, 768u << 20, 500, 256 };
    rx_photo_result result;
    uint8_t *rgb = (uint8_t *)0x1;   // must be reset by the decoder
    int status = decode(data, size, &limits, &result, &rgb);
    uint32_t hash = 2166136261u ^ (uint32_t)status;
    for (const char *p = result.message; *p; p++) {
        if (*p >= '0' && *p <= '9') continue;
        hash = (hash ^ (uint8_t)*p) * 16777619u;
    }
    photo_outcomes[hash % sizeof photo_outcomes]++;
    if (memchr(result.message, 0, RX_MESSAGE_SIZE) == NULL) photo_fail("message not NUL-terminated", &result);
    if (status != 0) {
        if (rgb) photo_fail("refused but returned pixels", &result);
        if (result.message[0] == 0) photo_fail("refused without a message", &result);
        return;
    }
    if (!rgb) photo_fail("accepted without pixels", &result);
    if (result.width == 0 || result.height == 0) photo_fail("accepted an empty image", &result);
    if (result.width > limits.target_side || result.height > limits.target_side) {
        uint32_t longest = result.source_width > result.source_height ? result.source_width : result.source_height;
        if (longest > limits.target_side) photo_fail("not scaled to the target", &result);
    }
    if ((uint64_t)result.source_width * result.source_height > limits.max_pixels) photo_fail("accepted over the pixel limit", &result);
    uint8_t *png = NULL;
    size_t length = 0;
    char message[RX_MESSAGE_SIZE];
    if (rx_png_encode_rgb(rgb, result.width, result.height, &png, &length, message) != 0) photo_fail("the PNG could not be written", &result);
    rx_png_limits png_limits = { 16384, 16384, 50000000, 8u << 20 };
    rx_png_result checked;
    if (rx_png_check(png, length, &png_limits, &checked, NULL) != 0) photo_fail("the validator refused the converted PNG", &result);
    if (checked.width != result.width || checked.height != result.height) photo_fail("the PNG's size differs", &result);
    free(png);
    free(rgb);
}
