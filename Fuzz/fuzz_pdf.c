// libFuzzer harness for rx_pdf_check (Sources/CRxValidate/pdf.c) and the qpdf object walk it runs
// (rx_pdf_walk, pdfwalk.cpp), which is also called alone on every input. Build and run: scripts/fuzz pdf
//
// Every input is checked with the vault's default limits (ValidationLimits). A document that is
// accepted also has its first page rendered the way PreviewRenderer does (800 px wide), since
// the vault renders exactly those documents. Any crash or sanitizer report is a bug, and so is a
// broken invariant below (abort()).
#include "rx_validate.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rx_pdf_limits limits = {
    .max_pages = 100,
    .max_page_points = 14400,
    .render_pixels = 200,
    .walk = {
        .max_objects = 200000,
        .max_revisions = 64,
        .max_depth = 100,
        .max_stream_bytes = 256ull << 20,
        .max_total_stream_bytes = 1ull << 30,
    },
};

enum { PREVIEW_WIDTH = 800 };

// poppler is Debian's build, not compiled with coverage instrumentation, so libFuzzer sees only
// the branches of pdf.c. Feed it the outcome as well: every distinct (status, page count up to
// 8, message without digits, which includes poppler's first complaint) bumps one of these extra
// counters, so an input reaching a new poppler error is kept in the corpus and mutated further.
__attribute__((section("__libfuzzer_extra_counters"), used))
static uint8_t outcome_counters[4096];

static void note_outcome(uint32_t key, const char *message) {
    // Offsets and object numbers, and the quoted bits of the input poppler repeats ("Unknown
    // operator 'rgm'", "Illegal character <2f>"), would make nearly every input "new": skip them.
    uint32_t hash = 2166136261u ^ key;   // FNV-1a
    char closing = 0;
    for (const char *p = message; *p; p++) {
        if (closing) { if (*p == closing) closing = 0; else continue; }
        else if (*p == '\'') closing = '\'';
        else if (*p == '<') closing = '>';
        else if (*p >= '0' && *p <= '9') continue;
        hash = (hash ^ (uint8_t)*p) * 16777619u;
    }
    outcome_counters[hash % sizeof outcome_counters]++;
}

static void fail(const char *what, const rx_pdf_result *result) {
    fprintf(stderr, "fuzz_pdf: invariant broken: %s (refusal %d, %d pages, %gx%g, message \"%.*s\")\n", what,
            result->refusal, result->pages, result->first_page_width, result->first_page_height,
            RX_MESSAGE_SIZE, result->message);
    abort();
}

// poppler's complaints about damaged input ("Poppler" domain) would flood the fuzzer's output:
// drop them (rx_pdf_check captures them with its own handler while it runs). Warnings and
// criticals from other domains (GLib, GLib-GObject, GLib-GIO) point at API misuse, so print the
// first few. g_error() still aborts, which the fuzzer reports as a crash.
static void quiet_log(const gchar *domain, GLogLevelFlags level, const gchar *text, gpointer data) {
    (void)data;
    static int printed = 0;
    if (domain && strcmp(domain, "Poppler") == 0) return;
    if (!(level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))) return;
    if (printed < 20) {
        printed++;
        fprintf(stderr, "fuzz_pdf: %s: %s%s\n", domain ? domain : "(no domain)", text ? text : "",
                printed == 20 ? " (further messages not shown)" : "");
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    g_log_set_default_handler(quiet_log, NULL);
    return 0;
}

// The object walk (qpdf) on its own, on every input: rx_pdf_check reaches it only for files
// that pass the header, trailer and poppler checks first. Its verdict must be consistent: a
// message exactly when it refuses, and one of the walk's own refusal codes.
static void check_walk(const uint8_t *data, size_t size) {
    rx_pdf_result result;
    memset(&result, 0x5a, sizeof result);
    result.refusal = 0;
    result.message[0] = 0;
    int status = rx_pdf_walk(data, size, &limits.walk, &result);
    if (memchr(result.message, 0, RX_MESSAGE_SIZE) == NULL) fail("walk: message not NUL-terminated", &result);
    if (status != result.refusal) fail("walk: return value and refusal differ", &result);
    if (status != 0 && result.message[0] == 0) fail("walk: refused without a message", &result);
    if (status != 0 && status != RX_PDF_ENCRYPTED && status != RX_PDF_ACTIVE_CONTENT && status != RX_PDF_DAMAGED
        && status != RX_PDF_LIMIT && status != RX_PDF_EMBEDDED_FILE)
        fail("walk: unexpected refusal code", &result);
    note_outcome(0x100u | (uint32_t)status, result.message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_walk(data, size);
    rx_pdf_result result;
    int status = rx_pdf_check(data, size, &limits, &result);
    if (memchr(result.message, 0, RX_MESSAGE_SIZE) == NULL) fail("message not NUL-terminated", &result);
    if (status != result.refusal) fail("return value and refusal differ", &result);
    note_outcome((uint32_t)status | (uint32_t)(result.pages < 8 ? result.pages : 8) << 4, result.message);
    if (status != 0) {
        if (result.message[0] == 0) fail("refused without a message", &result);
        return 0;
    }
    if (result.pages < 1 || result.pages > limits.max_pages) fail("accepted a page count outside the limits", &result);
    if (!(result.first_page_width > 0 && result.first_page_width <= limits.max_page_points
          && result.first_page_height > 0 && result.first_page_height <= limits.max_page_points))
        fail("accepted a first page size outside the limits", &result);

    uint8_t *rgba = NULL;
    uint32_t width = 0, height = 0;
    char message[RX_MESSAGE_SIZE];
    if (rx_pdf_render_first_page(data, size, PREVIEW_WIDTH, &rgba, &width, &height, message) == 0) {
        if (!rgba || width != PREVIEW_WIDTH || height == 0) fail("preview render returned no pixels", &result);
        volatile uint8_t sink = rgba[0] ^ rgba[(size_t)width * height * 4 - 1];
        (void)sink;
    }
    free(rgba);
    return 0;
}
