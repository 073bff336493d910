// PDF validation with poppler-glib. Documents are loaded through a GMemoryInputStream and
// poppler_document_new_from_stream: the from_data/from_bytes loaders crash on encrypted files
// (DESIGN.md, "Attachments"). poppler reports problems through the "Poppler" g_log domain, which
// is captured here: any message while loading or rendering refuses the document.
#include "rx_validate.h"

#include <cairo.h>
#include <gio/gio.h>
#include <math.h>
#include <poppler.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int count;
    char first[RX_MESSAGE_SIZE];
} log_capture;

static void on_poppler_log(const gchar *domain, GLogLevelFlags level, const gchar *text, gpointer data) {
    (void)domain; (void)level;
    log_capture *capture = data;
    if (capture->count++ == 0) {
        snprintf(capture->first, RX_MESSAGE_SIZE, "%s", text ? text : "");
        size_t n = strlen(capture->first);
        for (;;) {  // drop trailing newlines, also as g_log escapes them ("<0a>")
            if (n > 0 && (capture->first[n - 1] == '\n' || capture->first[n - 1] == '\r' || capture->first[n - 1] == ' ')) capture->first[--n] = 0;
            else if (n >= 4 && strcmp(capture->first + n - 4, "<0a>") == 0) { n -= 4; capture->first[n] = 0; }
            else break;
        }
    }
}

static int refuse(rx_pdf_result *result, int refusal, const char *format, const char *detail) {
    result->refusal = refusal;
    snprintf(result->message, RX_MESSAGE_SIZE, format, detail ? detail : "");
    return refusal;
}

// "%PDF-1.x" (any digit: readers open 1.8 and 1.9, which some producers write) or "%PDF-2.0",
// at offset 0.
static int has_pdf_header(const uint8_t *data, size_t length) {
    if (length < 8 || memcmp(data, "%PDF-", 5) != 0) return 0;
    if (data[5] == '1' && data[6] == '.' && data[7] >= '0' && data[7] <= '9') return 1;
    return data[5] == '2' && data[6] == '.' && data[7] == '0';
}

static const uint8_t *find_last(const uint8_t *data, size_t length, const char *needle) {
    size_t n = strlen(needle);
    if (length < n) return NULL;
    for (size_t i = length - n + 1; i-- > 0;) if (memcmp(data + i, needle, n) == 0) return data + i;
    return NULL;
}

static int is_pdf_space(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0; }

// The end of the file must be "startxref <offset> %%EOF" with <offset> pointing at a cross-reference
// table ("xref") or stream ("N G obj"). poppler silently rebuilds a broken one; a vault keeps only
// documents that need no repair, so what was stored is what any reader will see.
static int check_trailer(const uint8_t *data, size_t length, rx_pdf_result *result) {
    size_t tail = length > 2048 ? length - 2048 : 0;
    const uint8_t *eof = find_last(data + tail, length - tail, "%%EOF");
    if (!eof) return refuse(result, RX_PDF_DAMAGED, "PDF is damaged: no %%%%EOF marker at the end (truncated?)%s", NULL);
    for (const uint8_t *p = eof + 5; p < data + length; p++)
        if (!is_pdf_space(*p)) return refuse(result, RX_PDF_DAMAGED, "PDF is damaged: data after the final %%%%EOF%s", NULL);
    const uint8_t *startxref = find_last(data + tail, (size_t)(eof - (data + tail)), "startxref");
    if (!startxref) return refuse(result, RX_PDF_DAMAGED, "PDF is damaged: no startxref%s", NULL);
    const uint8_t *p = startxref + 9;
    while (p < eof && is_pdf_space(*p)) p++;
    unsigned long long offset = 0;
    int digits = 0;
    while (p < eof && *p >= '0' && *p <= '9' && digits < 18) { offset = offset * 10 + (unsigned)(*p - '0'); p++; digits++; }
    if (digits == 0 || offset >= length) return refuse(result, RX_PDF_DAMAGED, "PDF is damaged: startxref offset is invalid%s", NULL);
    const uint8_t *x = data + offset;
    size_t left = length - offset;
    if (left >= 4 && memcmp(x, "xref", 4) == 0) return 0;
    // "N G obj" for a cross-reference stream.
    size_t i = 0;
    int numbers = 0;
    while (numbers < 2) {
        size_t start = i;
        while (i < left && x[i] >= '0' && x[i] <= '9') i++;
        if (i == start) break;
        numbers++;
        while (i < left && is_pdf_space(x[i])) i++;
    }
    if (numbers == 2 && left - i >= 3 && memcmp(x + i, "obj", 3) == 0) return 0;
    return refuse(result, RX_PDF_DAMAGED, "PDF is damaged: startxref does not point at a cross-reference table%s", NULL);
}

// Looks for a PDF name token in the raw bytes, decoding #xx escapes ("/L#61unch"). Catches active
// content that poppler-glib does not report (a Launch OpenAction); names inside compressed object
// streams are covered by poppler's own JavaScript scan and the per-page link check below.
static int has_name(const uint8_t *data, size_t length, const char *name) {
    size_t n = strlen(name);
    for (size_t i = 0; i + 1 < length; i++) {
        if (data[i] != '/') continue;
        size_t j = i + 1, k = 0;
        while (j < length && k < n) {
            int c = data[j];
            if (c == '#' && j + 2 < length) {
                char hex[3] = { (char)data[j + 1], (char)data[j + 2], 0 };
                c = (int)strtol(hex, NULL, 16);
                j += 3;
            } else {
                j++;
            }
            if (c != name[k]) break;
            k++;
        }
        if (k == n) {
            // The name must end here (not "/JSFoo").
            if (j >= length) return 1;
            uint8_t next = data[j];
            if (is_pdf_space(next) || strchr("/<>[]()%", next)) return 1;
        }
    }
    return 0;
}

static PopplerDocument *open_document(const uint8_t *data, size_t length, GError **error) {
    GBytes *bytes = g_bytes_new(data, length);
    GInputStream *stream = g_memory_input_stream_new_from_bytes(bytes);
    PopplerDocument *document = poppler_document_new_from_stream(stream, (goffset)length, NULL, NULL, error);
    g_object_unref(stream);
    g_bytes_unref(bytes);
    return document;
}

static int action_is_active(PopplerAction *action) {
    if (!action) return 0;
    return action->type == POPPLER_ACTION_LAUNCH || action->type == POPPLER_ACTION_JAVASCRIPT
        || action->type == POPPLER_ACTION_RENDITION;
}

static int check_document(const uint8_t *data, size_t length, const rx_pdf_limits *limits, rx_pdf_result *result);

// Poppler's messages go to GLib's log, whose handlers are process-wide: two checks at once in one
// process (the test runner's parallel suites; rxvault itself checks each file in a child process
// of its own) would take each other's messages, and one file's damage would be blamed on another.
// One check at a time per process, handler installed and removed inside the lock.
G_LOCK_DEFINE_STATIC(poppler_log);

int rx_pdf_check(const uint8_t *data, size_t length, const rx_pdf_limits *limits, rx_pdf_result *result) {
    G_LOCK(poppler_log);
    int status = check_document(data, length, limits, result);
    G_UNLOCK(poppler_log);
    return status;
}

static int check_document(const uint8_t *data, size_t length, const rx_pdf_limits *limits, rx_pdf_result *result) {
    memset(result, 0, sizeof *result);
    if (!has_pdf_header(data, length)) return refuse(result, RX_PDF_NOT_PDF, "no PDF header at the start%s", NULL);
    if (check_trailer(data, length, result)) return result->refusal;
    // HTML a browser would act on is the Swift side's to find (ActiveMarkup.swift), before this.

    log_capture capture = { 0, "" };
    guint handler = g_log_set_handler("Poppler", G_LOG_LEVEL_MASK | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION, on_poppler_log, &capture);
    GError *error = NULL;
    PopplerDocument *document = open_document(data, length, &error);
    int status = 0;
    if (!document) {
        if (error && error->domain == poppler_error_quark() && error->code == POPPLER_ERROR_ENCRYPTED) {
            status = refuse(result, RX_PDF_ENCRYPTED, "PDF is password-protected%s", NULL);
        } else {
            status = refuse(result, RX_PDF_DAMAGED, "PDF is damaged: %s", error ? error->message : "poppler cannot open it");
        }
        if (error) g_error_free(error);
        g_log_remove_handler("Poppler", handler);
        return status;
    }
    // Owner-password-only (and empty-password) documents open without a password; the /Encrypt
    // entry in the trailer still says they are encrypted.
    if (has_name(data, length, "Encrypt")) {
        status = refuse(result, RX_PDF_ENCRYPTED, "PDF is encrypted (with an owner password); only unencrypted PDFs are accepted%s", NULL);
        goto done;
    }
    // Every object, as qpdf reads the file (pdfwalk.cpp). The byte scans and poppler's own
    // checks below stay as a second net.
    status = rx_pdf_walk(data, length, &limits->walk, result);
    if (status) goto done;
    // JavaScript where it acts (actions, the catalog's name tree, XFA: the walk above) and what
    // poppler itself would run; never a mere name such as a font called /JS.
    if (poppler_document_has_javascript(document)) {
        status = refuse(result, RX_PDF_ACTIVE_CONTENT, "PDF contains JavaScript%s", NULL);
        goto done;
    }
    if (has_name(data, length, "Launch")) {
        status = refuse(result, RX_PDF_ACTIVE_CONTENT, "PDF contains a launch action (it could start a program)%s", NULL);
        goto done;
    }
    int pages = poppler_document_get_n_pages(document);
    result->pages = pages;
    if (pages < 1) { status = refuse(result, RX_PDF_NO_PAGES, "PDF has no pages%s", NULL); goto done; }
    if (pages > limits->max_pages) {
        char detail[64];
        snprintf(detail, sizeof detail, "%d pages, over the %d-page limit", pages, limits->max_pages);
        status = refuse(result, RX_PDF_LIMIT, "PDF has %s", detail);
        goto done;
    }
    for (int index = 0; index < pages && status == 0; index++) {
        PopplerPage *page = poppler_document_get_page(document, index);
        if (!page) { status = refuse(result, RX_PDF_DAMAGED, "PDF is damaged: a page cannot be read%s", NULL); break; }
        double width = 0, height = 0;
        poppler_page_get_size(page, &width, &height);
        if (index == 0) { result->first_page_width = width; result->first_page_height = height; }
        if (!(width > 0 && height > 0 && isfinite(width) && isfinite(height))) {
            status = refuse(result, RX_PDF_DAMAGED, "PDF is damaged: a page has no size%s", NULL);
        } else if (width > limits->max_page_points || height > limits->max_page_points) {
            status = refuse(result, RX_PDF_LIMIT, "PDF page is larger than the page size limit%s", NULL);
        }
        GList *links = status == 0 ? poppler_page_get_link_mapping(page) : NULL;
        for (GList *l = links; l && status == 0; l = l->next) {
            PopplerLinkMapping *mapping = l->data;
            if (action_is_active(mapping->action))
                status = refuse(result, RX_PDF_ACTIVE_CONTENT, "PDF contains a launch or script action%s", NULL);
        }
        if (links) poppler_page_free_link_mapping(links);
        if (status == 0) {
            double scale = limits->render_pixels / fmax(width, height);
            int pw = (int)fmax(1, ceil(width * scale)), ph = (int)fmax(1, ceil(height * scale));
            cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, pw, ph);
            cairo_t *cr = cairo_create(surface);
            cairo_scale(cr, scale, scale);
            poppler_page_render(page, cr);
            if (cairo_status(cr) != CAIRO_STATUS_SUCCESS)
                status = refuse(result, RX_PDF_DAMAGED, "PDF page cannot be rendered: %s", cairo_status_to_string(cairo_status(cr)));
            cairo_destroy(cr);
            cairo_surface_destroy(surface);
        }
        g_object_unref(page);
    }
    if (status == 0 && capture.count > 0) {
        status = refuse(result, RX_PDF_DAMAGED, "PDF is damaged: poppler reports \"%s\"", capture.first);
    }
done:
    g_object_unref(document);
    g_log_remove_handler("Poppler", handler);
    return status;
}

static int render_first_page(const uint8_t *data, size_t length, uint32_t width,
                             uint8_t **rgba, uint32_t *out_width, uint32_t *out_height,
                             char message[RX_MESSAGE_SIZE]);

// Under the same lock as a check: what poppler logs while it renders must not land in a check's
// capture.
int rx_pdf_render_first_page(const uint8_t *data, size_t length, uint32_t width,
                             uint8_t **rgba, uint32_t *out_width, uint32_t *out_height,
                             char message[RX_MESSAGE_SIZE]) {
    G_LOCK(poppler_log);
    int status = render_first_page(data, length, width, rgba, out_width, out_height, message);
    G_UNLOCK(poppler_log);
    return status;
}

static int render_first_page(const uint8_t *data, size_t length, uint32_t width,
                             uint8_t **rgba, uint32_t *out_width, uint32_t *out_height,
                             char message[RX_MESSAGE_SIZE]) {
    *rgba = NULL;
    message[0] = 0;
    GError *error = NULL;
    PopplerDocument *document = open_document(data, length, &error);
    if (!document) {
        snprintf(message, RX_MESSAGE_SIZE, "%s", error ? error->message : "cannot open the PDF");
        if (error) g_error_free(error);
        return 1;
    }
    PopplerPage *page = poppler_document_get_page(document, 0);
    if (!page) { g_object_unref(document); snprintf(message, RX_MESSAGE_SIZE, "no first page"); return 1; }
    double pw = 0, ph = 0;
    poppler_page_get_size(page, &pw, &ph);
    double scale = (double)width / pw;
    uint32_t w = width, h = (uint32_t)fmax(1, ceil(ph * scale));
    if (h > 4 * width + 16384) h = 4 * width + 16384;
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)w, (int)h);
    cairo_t *cr = cairo_create(surface);
    cairo_set_source_rgb(cr, 1, 1, 1);   // paper is white; the page draws over it
    cairo_paint(cr);
    cairo_scale(cr, scale, scale);
    poppler_page_render(page, cr);
    cairo_surface_flush(surface);
    int status = cairo_status(cr) == CAIRO_STATUS_SUCCESS ? 0 : 1;
    if (status == 0) {
        const uint8_t *src = cairo_image_surface_get_data(surface);
        int stride = cairo_image_surface_get_stride(surface);
        uint8_t *out = malloc((size_t)w * h * 4);
        if (!out) { status = 1; snprintf(message, RX_MESSAGE_SIZE, "out of memory"); }
        for (uint32_t y = 0; out && y < h; y++) {
            const uint32_t *row = (const uint32_t *)(src + (size_t)y * stride);
            for (uint32_t x = 0; x < w; x++) {
                uint32_t argb = row[x];   // premultiplied, native endian; opaque after the white paint
                uint8_t *p = out + ((size_t)y * w + x) * 4;
                p[0] = (argb >> 16) & 0xff; p[1] = (argb >> 8) & 0xff; p[2] = argb & 0xff; p[3] = 0xff;
            }
        }
        *rgba = out;
    } else {
        snprintf(message, RX_MESSAGE_SIZE, "cannot render: %s", cairo_status_to_string(cairo_status(cr)));
    }
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
    g_object_unref(page);
    g_object_unref(document);
    *out_width = w;
    *out_height = h;
    return status;
}
