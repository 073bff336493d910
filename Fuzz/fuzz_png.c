// libFuzzer harness for rx_png_check (Sources/CRxValidate/png.c). Build and run: scripts/fuzz png
//
// Every input is checked twice with the vault's default limits (ValidationLimits): once without
// pixels, as AttachmentValidator does, and once with the RGBA decode, as PreviewRenderer does.
// Any crash or sanitizer report is a bug, and so is a broken invariant below (abort()).
#include "rx_validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rx_png_limits limits = {
    .max_width = 16384,
    .max_height = 16384,
    .max_pixels = 50000000,
    .max_chunk_bytes = 8u << 20,
};

// libpng is Debian's build, not compiled with coverage instrumentation, so libFuzzer sees only
// the branches of png.c and would keep just a handful of tiny inputs. Feed it the outcome as
// well: every distinct (status, colour type, bit depth, interlacing, message without digits)
// bumps one of these extra counters, so an input reaching a new libpng error or a new kind of
// image is kept in the corpus and mutated further.
__attribute__((section("__libfuzzer_extra_counters"), used))
static uint8_t outcome_counters[4096];

static void note_outcome(uint32_t key, const char *message) {
    // libpng prefixes chunk errors with the chunk's name ("IDAT: CRC error", "zXq[07]: invalid
    // chunk type"): keep the standard names, drop the made-up ones, which are endless.
    static const char standard[] = " IHDR PLTE IDAT IEND tRNS gAMA cHRM sRGB iCCP sBIT bKGD hIST pHYs"
                                   " sPLT tIME tEXt zTXt iTXt eXIf oFFs pCAL sCAL sTER ";
    const char *colon = strstr(message, ": ");
    if (colon) {
        char name[7] = " ";
        size_t n = (size_t)(colon - message);
        if (n == 4) { memcpy(name + 1, message, 4); name[5] = ' '; name[6] = 0; }
        if (n != 4 || !strstr(standard, name)) message = colon + 2;
    }
    uint32_t hash = 2166136261u ^ key;   // FNV-1a
    for (const char *p = message; *p; p++) {
        if (*p >= '0' && *p <= '9') continue;   // offsets and sizes would make every input "new"
        hash = (hash ^ (uint8_t)*p) * 16777619u;
    }
    outcome_counters[hash % sizeof outcome_counters]++;
}

static void fail(const char *what, const rx_png_result *result) {
    fprintf(stderr, "fuzz_png: invariant broken: %s (%ux%u, message \"%.*s\")\n", what,
            result->width, result->height, RX_MESSAGE_SIZE, result->message);
    abort();
}

static void check_result(const rx_png_result *result, int status) {
    if (memchr(result->message, 0, RX_MESSAGE_SIZE) == NULL) fail("message not NUL-terminated", result);
    if (status == 0) {
        if (result->width == 0 || result->height == 0) fail("accepted an empty image", result);
        if (result->width > limits.max_width || result->height > limits.max_height) fail("accepted an image over the side limit", result);
        if ((uint64_t)result->width * result->height > limits.max_pixels) fail("accepted an image over the pixel limit", result);
    } else if (result->message[0] == 0) {
        fail("refused without a message", result);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rx_png_result result;
    int status = rx_png_check(data, size, &limits, &result, NULL);
    check_result(&result, status);
    note_outcome((uint32_t)status | (uint32_t)result.color_type << 4 | (uint32_t)result.bit_depth << 8
                     | (uint32_t)result.interlaced << 13, result.message);

    if (size < (1u << 20)) {
        rx_png_result decoded;
        uint8_t *rgba = (uint8_t *)0x1;   // must be reset by rx_png_check
        int decoded_status = rx_png_check(data, size, &limits, &decoded, &rgba);
        check_result(&decoded, decoded_status);
        if (decoded_status == 0) {
            if (!rgba) fail("accepted without returning pixels", &decoded);
            // Touch the first and last pixel byte, so ASan checks the buffer is width * height * 4.
            size_t last = (size_t)decoded.width * decoded.height * 4 - 1;
            volatile uint8_t sink = rgba[0] ^ rgba[last];
            (void)sink;
        } else if (rgba) {
            fail("refused but returned pixels", &decoded);
        }
        // Both paths decode the same rows; they must agree, unless the pixel buffer alone could
        // not be allocated.
        if (decoded_status != status && strcmp(decoded.message, "out of memory") != 0) {
            fprintf(stderr, "fuzz_png: without pixels: %d \"%s\"; with pixels: %d \"%s\"\n",
                    status, result.message, decoded_status, decoded.message);
            fail("the check and the RGBA decode disagree", &decoded);
        }
        free(rgba);
    }
    return 0;
}
